// Notification counters of every subscription (CIM 009 v1.8 §5.2.14: timesSent, timesFailed, lastNotification,
// lastSuccess, lastFailure), kept by the notifier in memory and written to the tenant's `subscriptionCounters`
// collection in batches (at most every FLUSH_MS, and at stop), so they survive a restart of the disk store.
// A notification is counted as sent when its request goes out, before the receiver can see it; GET reads the
// counters from here (counter-reader.ts), so it shows a notification as soon as it was received.
import type { Store } from '../store/contract.js';
import type { Logger } from '../logger.js';
import { subscriptionTenants } from './subscription-sync.js';
import { counterDocId } from './shared-counters.js';
import { SUBSCRIPTION_COUNTERS, type SubscriptionCounters } from '../ngsild/subscription/model.js';

const FLUSH_MS = 1000;

const keyOf = (tenant: string, id: string): string => `${tenant}\n${id}`;

export class CounterBook {
  private readonly counters = new Map<string, SubscriptionCounters>();
  private readonly dirty = new Set<string>();
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> = Promise.resolve();
  private closed = false;

  constructor(
    private readonly store: Store,
    private readonly log: Logger,
    /** On a store other brokers share: this broker's id, which names its own counter documents (shared-counters.ts). */
    private readonly brokerId?: string,
  ) {}

  async load(): Promise<void> {
    // A broker of a set starts its own documents afresh; the others' stay theirs, and GET adds them up.
    if (this.brokerId !== undefined) return;
    try {
      for (const tenant of await subscriptionTenants(this.store)) {
        for (const { id, doc } of await this.store.collection(tenant, SUBSCRIPTION_COUNTERS).list())
          this.counters.set(keyOf(tenant, id), doc as unknown as SubscriptionCounters);
      }
    } catch (e) {
      // The store's server out of reach at start (503, docdb): counting starts from zero rather than not at all.
      if ((e as { status?: unknown }).status !== 503) throw e;
      this.log.warn({ err: e }, 'stored subscription counters cannot be read: counting from zero');
    }
  }

  /** The counters of a subscription; undefined before its first notification (sent or dropped). */
  get(tenant: string, id: string): SubscriptionCounters | undefined {
    return this.counters.get(keyOf(tenant, id));
  }

  /** A notification's request goes out now (`at`): it is sent, whatever its outcome. */
  sending(tenant: string, id: string, at: string): void {
    const c = this.of(tenant, id);
    c.timesSent++;
    c.lastNotification = at;
  }

  /** The outcome of a notification: sent at `at` and answered, or failed (sent or not: dropped by a queue limit). */
  record(tenant: string, id: string, ok: boolean, at: string, reason?: string): void {
    const c = this.of(tenant, id);
    if (ok) {
      c.lastSuccess = at;
    } else {
      c.timesFailed++;
      c.lastFailure = at;
      if (reason !== undefined) c.lastErrorReason = reason;
    }
  }

  /** A subscription's counters, made at its first notification, marked to be written. */
  private of(tenant: string, id: string): SubscriptionCounters {
    const key = keyOf(tenant, id);
    let c = this.counters.get(key);
    if (c === undefined) {
      c = { timesSent: 0, timesFailed: 0 };
      this.counters.set(key, c);
    }
    this.dirty.add(key);
    this.timer ??= setTimeout(() => {
      this.timer = undefined;
      void this.flush();
    }, FLUSH_MS);
    return c;
  }

  /** The subscription was deleted: its counters go (the deleting request removed the stored ones). */
  forget(tenant: string, id: string): void {
    const key = keyOf(tenant, id);
    this.counters.delete(key);
    this.dirty.delete(key);
  }

  flush(): Promise<void> {
    this.flushing = this.flushing.then(() => this.write());
    return this.flushing;
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    await this.flush();
  }

  private async write(): Promise<void> {
    if (this.dirty.size === 0) return;
    const keys = [...this.dirty];
    this.dirty.clear();
    const writes: Promise<void>[] = [];
    const written: string[] = [];
    for (const key of keys) {
      const c = this.counters.get(key);
      if (c === undefined) continue;
      const nl = key.indexOf('\n');
      written.push(key);
      writes.push(
        this.store
          .collection(key.slice(0, nl), SUBSCRIPTION_COUNTERS)
          .put(this.brokerId === undefined ? key.slice(nl + 1) : counterDocId(key.slice(nl + 1), this.brokerId), {
            ...c,
          } as unknown as Record<string, unknown>),
      );
    }
    const results = await Promise.allSettled(writes);
    let failed = 0;
    results.forEach((r, i) => {
      if (r.status === 'fulfilled') return;
      failed++;
      this.log.error({ err: r.reason }, 'subscription counters cannot be written: trying again');
      // Written again at the next flush (a store out of reach for a while, docdb), unless deleted meanwhile.
      if (this.counters.has(written[i]!)) this.dirty.add(written[i]!);
    });
    if (failed > 0 && this.dirty.size > 0 && !this.closed)
      this.timer ??= setTimeout(() => {
        this.timer = undefined;
        void this.flush();
      }, FLUSH_MS);
  }
}
