// Notifications of subscriptions with `join` (CIM 009 v1.8.1 §5.2.14, §4.5.23), built on the notifier thread: the
// linked entities are read from the store, which a pipeline worker's write path must not wait for. Delivery builds a
// due notification as it sends it (so it keeps its place in the order of its subscription and entity, and a waiting
// one holds its notified entities only); periodic notifications are built when their timer fires.
import type { Store } from '../store/contract.js';
import type { StoredEntity } from '../ngsild/entity/model.js';
import type { CompiledSubscription } from '../ngsild/subscription/compile.js';
import type { NotificationTrigger } from '../ngsild/subscription/model.js';
import { buildJoinedNotification, type NotificationPayload } from '../ngsild/subscription/payload.js';
import type { DueNotification } from './channel.js';
import type { NotificationEntityFilter } from './subscription-sink.js';

/** The subscription a due notification belongs to as this thread knows it now; undefined once it is deleted. */
export type SubscriptionLookup = (tenant: string, id: string) => Promise<CompiledSubscription | undefined>;

export class JoinedNotifications {
  /**
   * Which linked entities a notification's subscription owner may read (seed 000 §5.3): issue 16 sets it, with the
   * filter of the notified entities (SubscriptionSink.entityFilter). Undefined: every linked entity is sent.
   */
  entityFilter: NotificationEntityFilter | undefined;

  constructor(
    private readonly store: Store,
    private readonly lookup?: SubscriptionLookup,
  ) {}

  /** The notification of `entities` with the entities they link to, as the store has them now. */
  build(
    sub: CompiledSubscription,
    entities: readonly StoredEntity[],
    trigger: NotificationTrigger | undefined,
  ): Promise<NotificationPayload> {
    return buildJoinedNotification(sub, entities, trigger, async (tenant, ids) => {
      const found = await Promise.all(ids.map((id) => this.store.getEntity(tenant, id)));
      const filter = this.entityFilter;
      return found.filter((e): e is StoredEntity => e !== undefined && (filter === undefined || filter(sub, e)));
    });
  }

  /**
   * Sets the body and headers of a due notification the worker left unbuilt (DueNotification.join), with the
   * subscription as it is now (a PATCH since the change applies); false when the subscription is gone.
   */
  async complete(due: DueNotification): Promise<boolean> {
    const unbuilt = due.join;
    if (unbuilt === undefined) return true;
    const sub = await this.lookup?.(due.tenant, due.subscriptionId);
    if (sub === undefined) return false;
    const payload = await this.build(sub, unbuilt.entities, unbuilt.trigger);
    due.body = payload.body;
    due.headers = payload.headers;
    due.join = undefined;
    return true;
  }
}
