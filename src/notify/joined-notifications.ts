// Notifications built on the notifier thread: those of subscriptions with `join` (CIM 009 v1.8.1 §5.2.14, §4.5.23),
// whose linked entities are read from the store, which a pipeline worker's write path must not wait for, and, with
// an auth plugin that keeps subscription owners, every notification, each of its entities (linked ones too) decided
// for the owner (seed 000 §5.3, owner-filter.ts). Delivery builds a due notification as it sends it (so it keeps its
// place in the order of its subscription and entity, and a waiting one holds its notified entities only); periodic
// notifications are built when their timer fires.
import type { Store } from '../store/contract.js';
import type { StoredEntity } from '../ngsild/entity/model.js';
import type { CompiledSubscription } from '../ngsild/subscription/compile.js';
import type { NotificationTrigger } from '../ngsild/subscription/model.js';
import { buildJoinedNotification, buildNotification, type NotificationPayload } from '../ngsild/subscription/payload.js';
import type { DueNotification } from './channel.js';
import type { OwnerFilter } from './owner-filter.js';

/** The subscription a due notification belongs to as this thread knows it now; undefined once it is deleted. */
export type SubscriptionLookup = (tenant: string, id: string) => Promise<CompiledSubscription | undefined>;

/**
 * What became of a notification left unbuilt: built and ready to send, its subscription gone (a failure not sent),
 * or left with no entity the owner may read (seed 000 §5.3 rule 2: not sent, and counted nowhere).
 */
export type Completion = 'ready' | 'gone' | 'empty';

export class JoinedNotifications {
  constructor(
    private readonly store: Store,
    private readonly lookup?: SubscriptionLookup,
    /** seed 000 §5.3: which entities a subscription's owner may read; undefined without an auth plugin keeping owners. */
    readonly owners?: OwnerFilter,
  ) {}

  /** The entities of a notification its subscription's owner may read (all of them without an owner filter). */
  readable(sub: CompiledSubscription, entities: readonly StoredEntity[]): Promise<readonly StoredEntity[]> | readonly StoredEntity[] {
    return this.owners === undefined ? entities : this.owners.readable(sub.tenant, sub.id, entities);
  }

  /** The notification of `entities` with the entities they link to (those the owner may read), as the store has them now. */
  build(
    sub: CompiledSubscription,
    entities: readonly StoredEntity[],
    trigger: NotificationTrigger | undefined,
  ): Promise<NotificationPayload> {
    return buildJoinedNotification(sub, entities, trigger, async (tenant, ids) => {
      const found = (await Promise.all(ids.map((id) => this.store.getEntity(tenant, id)))).filter(
        (e): e is StoredEntity => e !== undefined,
      );
      return [...(await this.readable(sub, found))];
    });
  }

  /**
   * Sets the body and headers of a due notification the worker left unbuilt (DueNotification.join), with the
   * subscription as it is now (a PATCH since the change applies) and the entities its owner may read.
   */
  async complete(due: DueNotification): Promise<Completion> {
    const unbuilt = due.join;
    if (unbuilt === undefined) return 'ready';
    const sub = await this.lookup?.(due.tenant, due.subscriptionId);
    if (sub === undefined) return 'gone';
    const entities = await this.readable(sub, unbuilt.entities);
    if (entities.length === 0) return 'empty';
    const payload =
      sub.join === undefined ? buildNotification(sub, entities, unbuilt.trigger) : await this.build(sub, entities, unbuilt.trigger);
    due.body = payload.body;
    due.headers = payload.headers;
    due.join = undefined;
    return 'ready';
  }
}
