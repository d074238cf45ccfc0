// The stored subscription (CIM 009 v1.8 §5.2.12): the validated body with its names expanded (names.ts), the
// @context its q, scopeQ and geoQ are read with, and system times. Counters live apart (collection
// `subscriptionCounters`, written by the notifier).
import { mapSubscriptionNames } from './names.js';

export const SUBSCRIPTIONS = 'subscriptions';
export const SUBSCRIPTION_COUNTERS = 'subscriptionCounters';
/** seed 000 §2.6: the auth plugin's owner record of each subscription, beside it and never rendered. */
export const SUBSCRIPTION_OWNERS = 'subscriptionOwners';

export type NotificationTrigger =
  'entityCreated' | 'entityUpdated' | 'entityDeleted' | 'attributeCreated' | 'attributeUpdated' | 'attributeDeleted';

export const NOTIFICATION_TRIGGERS: readonly NotificationTrigger[] = [
  'entityCreated',
  'entityUpdated',
  'entityDeleted',
  'attributeCreated',
  'attributeUpdated',
  'attributeDeleted',
];

/** CIM 009 v1.8 §5.2.12: without notificationTrigger, attribute creation and update notify. */
export const DEFAULT_TRIGGERS: readonly NotificationTrigger[] = ['attributeCreated', 'attributeUpdated'];

export type NotificationFormat = 'normalized' | 'keyValues' | 'concise';

export type NotificationAccept = 'application/json' | 'application/ld+json' | 'application/geo+json';

export interface KeyValuePair {
  key: string;
  value: string;
}

export interface EntitySelector {
  id?: string;
  idPattern?: string;
  type: string;
}

export interface EndpointBody {
  uri: string;
  accept?: NotificationAccept;
  /** Milliseconds the receiver has to answer (v1.8 Endpoint.timeout). */
  timeout?: number;
  receiverInfo?: KeyValuePair[];
  notifierInfo?: KeyValuePair[];
}

export interface NotificationParamsBody {
  attributes?: string[];
  pick?: string[];
  omit?: string[];
  format?: NotificationFormat;
  sysAttrs?: boolean;
  showChanges?: boolean;
  /** Linked entity retrieval in the notifications (CIM 009 v1.8.1 §5.2.14, §4.5.23). */
  join?: 'flat' | 'inline' | '@none';
  /** Hops of the join, 1 to MAX_JOIN_LEVEL; only with join flat or inline (default 1). */
  joinLevel?: number;
  endpoint: EndpointBody;
}

/**
 * The shortest timeInterval, in seconds. CIM 009 v1.8 §5.2.12 sets no bound, but each periodic subscription reads
 * its entities from the store on the notifier thread every timeInterval: a few milliseconds would let one client
 * load that thread for every subscription; a change more often than each second is what watchedAttributes is for.
 */
export const MIN_TIME_INTERVAL_S = 1;

/** The subscription as the client gave it (validated, compact terms), without the computed members. */
export interface SubscriptionBody {
  id: string;
  type: 'Subscription';
  subscriptionName?: string;
  description?: string;
  entities?: EntitySelector[];
  watchedAttributes?: string[];
  notificationTrigger?: NotificationTrigger[];
  timeInterval?: number;
  q?: string;
  geoQ?: Record<string, unknown>;
  scopeQ?: string;
  csf?: string;
  isActive?: boolean;
  notification: NotificationParamsBody;
  expiresAt?: string;
  throttling?: number;
  lang?: string;
  datasetId?: string[];
  jsonldContext?: string;
}

export interface SubscriptionDoc {
  body: SubscriptionBody;
  /** The @context of the request that created (or last updated) the subscription, as it carried it. */
  context: unknown;
  /**
   * The broker's address as the latest request that created or updated the subscription reached it (`http://` and
   * its Host, validated as host[:port]): where its notifications' Link names the @contexts the broker serves, unless
   * --brokerUrl is set. Absent when no such request had a usable Host.
   */
  brokerUrl?: string;
  createdAt: string;
  modifiedAt: string;
}

/** What the notifier counts per subscription (CIM 009 v1.8 §5.2.14 NotificationParams). */
export interface SubscriptionCounters {
  timesSent: number;
  timesFailed: number;
  lastNotification?: string;
  lastSuccess?: string;
  lastFailure?: string;
  /** Why the last failure failed (kept for the log and for GET). */
  lastErrorReason?: string;
}

export type SubscriptionStatus = 'active' | 'paused' | 'expired';

/** CIM 009 v1.8 §5.2.12: status is computed, never stored. */
export function subscriptionStatus(body: SubscriptionBody, now: number): SubscriptionStatus {
  if (body.expiresAt !== undefined && Date.parse(body.expiresAt) <= now) return 'expired';
  return body.isActive === false ? 'paused' : 'active';
}

/** The notification status: `failed` while the last attempt failed (§5.2.14); undefined before the first one. */
export function notificationStatus(c: SubscriptionCounters | undefined): 'ok' | 'failed' | undefined {
  if (c === undefined) return undefined;
  if (c.lastFailure === undefined) return 'ok';
  return c.lastSuccess === undefined || Date.parse(c.lastFailure) >= Date.parse(c.lastSuccess) ? 'failed' : 'ok';
}

/**
 * The subscription as GET shows it: the body (its names compacted with `compact`, the @context of the request:
 * names.ts), the default notificationTrigger when it has none, the computed status and the counters. The
 * counters and notification status come with the first notification (sent or dropped): before it there is no
 * attempt to report (§5.2.14; Orion-LD leaves them out too).
 */
export function renderSubscription(
  doc: SubscriptionDoc,
  counters: SubscriptionCounters | undefined,
  now: number,
  sysAttrs: boolean,
  compact?: (iri: string) => string,
): Record<string, unknown> {
  const b = compact === undefined ? doc.body : mapSubscriptionNames(doc.body, compact);
  const out: Record<string, unknown> = { ...b };
  out.notificationTrigger ??= [...DEFAULT_TRIGGERS];
  out.isActive = b.isActive !== false;
  out.status = subscriptionStatus(b, now);
  const n: Record<string, unknown> = { ...b.notification };
  n.format ??= 'normalized';
  n.endpoint = { accept: 'application/json', ...b.notification.endpoint };
  if (counters !== undefined) {
    n.status = notificationStatus(counters);
    n.timesSent = counters.timesSent;
    n.timesFailed = counters.timesFailed;
  }
  if (counters?.lastNotification !== undefined) n.lastNotification = counters.lastNotification;
  if (counters?.lastSuccess !== undefined) n.lastSuccess = counters.lastSuccess;
  if (counters?.lastFailure !== undefined) n.lastFailure = counters.lastFailure;
  out.notification = n;
  if (sysAttrs) {
    out.createdAt = doc.createdAt;
    out.modifiedAt = doc.modifiedAt;
  }
  return out;
}
