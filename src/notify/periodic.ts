// Periodic notifications (CIM 009 v1.8 §5.2.12 timeInterval): every timeInterval seconds the entities a live
// subscription selects are read from the store and sent in one notification. Runs on the notifier thread.
import type { Store } from '../store/contract.js';
import type { StoredEntity } from '../ngsild/entity/model.js';
import type { Logger } from '../logger.js';
import type { CompiledSubscription } from '../ngsild/subscription/compile.js';
import { MIN_TIME_INTERVAL_S } from '../ngsild/subscription/model.js';
import { isLive } from '../ngsild/subscription/match.js';
import { anyTypeOf } from '../ngsild/query/type-expression.js';
import { buildNotification } from '../ngsild/subscription/payload.js';
import type { DueNotification } from './channel.js';
import { JoinedNotifications } from './joined-notifications.js';
import type { SetOwner } from './set-owner.js';

/** Entities in one periodic notification at most. */
const PERIODIC_MAX_ENTITIES = 1000;

/** The longest delay a Node.js timer keeps; a longer one fires after 1 ms (a TimeoutOverflowWarning). */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** The timer of one periodic subscription: when its next notification is due, and the leg now waiting for it. */
interface Periodic {
  sub: CompiledSubscription;
  periodMs: number;
  dueAt: number;
  timer?: NodeJS.Timeout;
}

export class PeriodicNotifications {
  private readonly timers = new Map<string, Periodic>();

  constructor(
    private readonly store: Store,
    private readonly enqueue: (due: DueNotification) => void,
    private readonly log: Logger,
    private readonly joined = new JoinedNotifications(store),
    /** On a store several brokers share: which broker of the set sends each subscription's notifications. */
    private readonly owner?: SetOwner,
  ) {}

  /** A subscription was added, changed (sub) or deleted (undefined). */
  update(tenant: string, id: string, sub: CompiledSubscription | undefined): void {
    const key = `${tenant}\n${id}`;
    const old = this.timers.get(key);
    if (old !== undefined) {
      clearTimeout(old.timer);
      this.timers.delete(key);
    }
    if (sub?.periodMs === undefined) return;
    // The bound is checked when a subscription is written; one stored by an older build may be shorter.
    const periodMs = Math.max(sub.periodMs, MIN_TIME_INTERVAL_S * 1000);
    const p: Periodic = { sub, periodMs, dueAt: Date.now() + periodMs };
    this.timers.set(key, p);
    this.arm(key, p);
  }

  close(): void {
    for (const { timer } of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
  }

  /**
   * Waits for `p.dueAt` in legs a timer can hold (a timeInterval past 24.8 days takes several), notifies, and
   * waits for the next one; a notification late by more than a period is not caught up.
   */
  private arm(key: string, p: Periodic): void {
    const wait = p.dueAt - Date.now();
    const last = wait <= MAX_TIMER_MS;
    p.timer = setTimeout(
      () => {
        if (this.timers.get(key) !== p) return;
        if (last) {
          void this.tick(p.sub);
          const now = Date.now();
          p.dueAt = p.dueAt + p.periodMs > now ? p.dueAt + p.periodMs : now + p.periodMs;
        }
        this.arm(key, p);
      },
      last ? Math.max(0, wait) : MAX_TIMER_MS,
    );
  }

  private async tick(sub: CompiledSubscription): Promise<void> {
    if (!isLive(sub, Date.now())) return;
    try {
      // Every broker of a high-availability set keeps every subscription's timer; one of them sends (issue 17:
      // each due notification once). When it goes, its lease goes stale and the next in rank takes the timer over.
      if (this.owner !== undefined && !(await this.owner.owns(`periodic\n${sub.tenant}\n${sub.id}`))) return;
      // seed 000 §5.3: only what the subscription's owner may read; a notification left empty is not sent
      const entities = await this.joined.readable(sub, await this.selected(sub));
      if (entities.length === 0) return;
      // With join, the linked entities are read now, with the selected ones (§5.2.12 timeInterval, §5.2.14 join).
      const payload =
        sub.join === undefined ? buildNotification(sub, entities, undefined) : await this.joined.build(sub, entities, undefined);
      this.enqueue({
        tenant: sub.tenant,
        subscriptionId: sub.id,
        uri: sub.endpoint.uri,
        headers: payload.headers,
        body: payload.body,
        orderKey: sub.id,
        seq: 0,
        timeoutMs: sub.endpoint.timeoutMs,
        throttlingMs: 0,
        ...(sub.endpoint.mqtt === undefined ? {} : { mqtt: sub.endpoint.mqtt }),
      });
    } catch (e) {
      this.log.error({ err: e, subscription: sub.id }, 'periodic notification cannot be built');
    }
  }

  /**
   * The entities the subscription selects now, at most PERIODIC_MAX_ENTITIES. Selectors that name an id are found by
   * id (compile.ts keeps them out of typeIris), the others by type, or by a scan when some selector is a wildcard.
   */
  private async selected(sub: CompiledSubscription): Promise<StoredEntity[]> {
    const query = { ...sub.selection, offset: 0, count: false, limit: PERIODIC_MAX_ENTITIES };
    if (sub.typeIris === undefined) return (await this.store.queryEntities(sub.tenant, query)).entities;
    const found: StoredEntity[] = [];
    if (sub.ids !== undefined)
      found.push(...(await this.store.queryEntities(sub.tenant, { ...query, ids: [...new Set(sub.ids)] })).entities);
    if (sub.typeIris.length > 0 && found.length < PERIODIC_MAX_ENTITIES) {
      const byId = new Set(found.map((e) => e.id));
      const byType = await this.store.queryEntities(sub.tenant, { ...query, type: anyTypeOf(sub.typeIris) });
      for (const e of byType.entities) if (!byId.has(e.id) && found.length < PERIODIC_MAX_ENTITIES) found.push(e);
    }
    return found;
  }
}
