// What crosses threads for subscriptions (ARCHITECTURE.md step 11): due notifications from pipeline workers to the
// notifier, and subscription changes to every thread that keeps a subscription index. Plain data only.
import type { StoredEntity } from '../ngsild/entity/model.js';
import type { MqttNotifierInfo } from '../ngsild/subscription/mqtt-endpoint.js';
import type { RegistrationBody } from '../ngsild/subscription/registration.js';
import type { NotificationTrigger, SubscriptionCounters, SubscriptionDoc } from '../ngsild/subscription/model.js';

/** Pipeline workers post DueBatch messages here; the notifier thread listens. */
export const NOTIFY_CHANNEL = 'ldbroker:notifications';
/** Every create, update and delete of a subscription is posted here (SubscriptionChanged). */
export const SUBSCRIPTIONS_CHANNEL = 'ldbroker:subscriptions';
/** Pipeline threads ask the notifier for counters here (CountersAsked); it answers on the same channel. */
export const COUNTERS_CHANNEL = 'ldbroker:counters';
/** Every create, update and delete of a registration is posted here (RegistrationChanged): subordinate subscriptions. */
export const REGISTRATIONS_CHANNEL = 'ldbroker:registrations';
/** Every create, update and delete of a csource subscription is posted here (CsourceSubscriptionChanged). */
export const CSOURCE_SUBSCRIPTIONS_CHANNEL = 'ldbroker:csourceSubscriptions';

/** A channel of one broker (BrokerConfig.instance): brokers sharing a process never hear each other. */
export function channelName(channel: string, instance: string | undefined): string {
  return instance === undefined ? channel : `${channel}:${instance}`;
}

/** One notification to deliver: built (matched, rendered, serialized) by the pipeline worker. */
export interface DueNotification {
  tenant: string;
  subscriptionId: string;
  uri: string;
  /** Flat name/value list (Content-Type, Link, receiverInfo). */
  headers: string[];
  /** The Notification's JSON text without `notifiedAt` (the notifier adds it when it sends). */
  body: string;
  /** Notifications with the same key are delivered in the order they were due (subscription and entity). */
  orderKey: string;
  /** Position among the notifications of its order key: the store's write sequence of the change (WriteEvent.seq). */
  seq: number;
  timeoutMs: number | undefined;
  throttlingMs: number;
  /** An MQTT endpoint's QoS and protocol version (seed 001 §2.1); absent for HTTP. */
  mqtt?: MqttNotifierInfo;
  /**
   * Set when the subscription joins linked entities (CIM 009 v1.8.1 §5.2.14 join), or an auth plugin keeps owners
   * (seed 000 §5.3): the notification is built on the notifier thread as it is sent, with the linked entities as the
   * store has them then and what the owner may read (joined-notifications.ts); until then `body` is '' and `headers`
   * empty.
   */
  join?: UnbuiltNotification;
}

/** What a notification that joins linked entities is built from: the entities it notifies and why. */
export interface UnbuiltNotification {
  entities: StoredEntity[];
  trigger: NotificationTrigger | undefined;
}

export interface DueBatch {
  due: DueNotification[];
}

export interface SubscriptionChanged {
  tenant: string;
  id: string;
  /** null: deleted. */
  doc: SubscriptionDoc | null;
  /** Its number in the broker's count of subscription changes (WorkerInit.subscriptionChanges), when counted. */
  gen?: number;
}

/** Which subscriptions' counters a thread wants; `asker` and `seq` pair the answer with the question. */
export interface CountersAsked {
  kind: 'ask';
  asker: number;
  seq: number;
  tenant: string;
  ids: string[];
}

/** The counters of each id asked, in order; null: no notification yet. */
export interface CountersAnswered {
  kind: 'answer';
  asker: number;
  seq: number;
  counters: Array<SubscriptionCounters | null>;
}

/** A registration was created, updated or deleted: the subordinate subscriptions of its tenant are looked at again. */
export interface RegistrationChanged {
  tenant: string;
  id: string;
  /** Its names expanded; null: deleted. */
  body: RegistrationBody | null;
}

/** A csource subscription was created, updated or deleted (periodic csource notifications). */
export interface CsourceSubscriptionChanged {
  tenant: string;
  id: string;
  /** null: deleted. */
  doc: SubscriptionDoc | null;
}
