// Periodic notifications (CIM 009 v1.8 §5.2.12 timeInterval): every timeInterval seconds the entities a live
// subscription selects are read from the store and sent in one notification. Runs on the notifier thread.
import type { Store } from '../store/contract.js';
import type { Logger } from '../logger.js';
import type { CompiledSubscription } from '../ngsild/subscription/compile.js';
import { isLive } from '../ngsild/subscription/match.js';
import { buildNotification } from '../ngsild/subscription/payload.js';
import type { DueNotification } from './channel.js';

/** Entities in one periodic notification at most. */
const PERIODIC_MAX_ENTITIES = 1000;

export class PeriodicNotifications {
  private readonly timers = new Map<string, { sub: CompiledSubscription; timer: NodeJS.Timeout }>();

  constructor(private readonly store: Store, private readonly enqueue: (due: DueNotification) => void, private readonly log: Logger) {}

  /** A subscription was added, changed (sub) or deleted (undefined). */
  update(tenant: string, id: string, sub: CompiledSubscription | undefined): void {
    const key = `${tenant}\n${id}`;
    const old = this.timers.get(key);
    if (old !== undefined) {
      clearInterval(old.timer);
      this.timers.delete(key);
    }
    if (sub?.periodMs === undefined) return;
    const timer = setInterval(() => void this.tick(sub), sub.periodMs);
    this.timers.set(key, { sub, timer });
  }

  close(): void {
    for (const { timer } of this.timers.values()) clearInterval(timer);
    this.timers.clear();
  }

  private async tick(sub: CompiledSubscription): Promise<void> {
    if (!isLive(sub, Date.now())) return;
    try {
      const selects = sub.selects;
      const filter = sub.filter;
      const page = await this.store.queryEntities(sub.tenant, {
        typeIris: sub.typeIris,
        filter: (e) => (selects === undefined || selects(e)) && (filter === undefined || filter(e)),
        limit: PERIODIC_MAX_ENTITIES,
        offset: 0,
        count: false,
      });
      if (page.entities.length === 0) return;
      const payload = buildNotification(sub, page.entities, undefined);
      this.enqueue({
        tenant: sub.tenant, subscriptionId: sub.id, uri: sub.endpoint.uri, headers: payload.headers, body: payload.body,
        orderKey: sub.id, seq: 0, timeoutMs: sub.endpoint.timeoutMs, throttlingMs: 0,
      });
    } catch (e) {
      this.log.error({ err: e, subscription: sub.id }, 'periodic notification cannot be built');
    }
  }
}
