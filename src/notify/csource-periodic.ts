// Periodic context source notifications (CIM 009 v1.8.1 §5.11.7 with §5.2.12 timeInterval): a csource subscription
// with a timeInterval is told every timeInterval seconds about the registrations it matches then (the first at its
// creation, by ops/csource-subscriptions.ts). Runs on the notifier thread, one timer per such subscription; the
// subscriptions come from the store at start and then from the changes the pipeline threads broadcast. On a store
// several brokers share (a high-availability set on docdb) they are also read again every --subCacheIval seconds, as
// a change made on another broker is broadcast only there, and one broker of the set sends each (SetOwner).
import { BroadcastChannel } from 'node:worker_threads';
import type { Store } from '../store/contract.js';
import type { Logger } from '../logger.js';
import type { ContextSource } from '../pipeline/worker-context.js';
import { MIN_TIME_INTERVAL_S, subscriptionStatus } from '../ngsild/subscription/model.js';
import { REGISTRATIONS, type RegistrationDoc } from '../ngsild/subscription/registration.js';
import { isLive } from '../ngsild/registration/match.js';
import { registrationMatches, subscriptionSelections } from '../ngsild/registration/csource-match.js';
import { CSOURCE_SUBSCRIPTIONS_CHANNEL, channelName, type CsourceSubscriptionChanged } from './channel.js';
import { CSOURCE_SUBSCRIPTIONS, sendCsourceNotification, type CsourceSubscriptionDoc } from './csource-notification.js';
import { subscriptionTenants } from './subscription-sync.js';
import type { SetOwner } from './set-owner.js';

/** The longest delay a Node.js timer keeps; a longer one fires after 1 ms (a TimeoutOverflowWarning). */
const MAX_TIMER_MS = 2 ** 31 - 1;

interface Timer {
  tenant: string;
  id: string;
  doc: CsourceSubscriptionDoc;
  periodMs: number;
  dueAt: number;
  timer?: NodeJS.Timeout;
}

/** How soon the csource subscriptions are read again when the store was out of reach. */
const LOAD_RETRY_MS = 1000;

export class CsourcePeriodic {
  private readonly timers = new Map<string, Timer>();
  private channel: BroadcastChannel | undefined;
  private refresh: NodeJS.Timeout | undefined;
  private reloading = false;

  constructor(
    private readonly store: Store,
    private readonly contexts: ContextSource,
    private readonly log: Logger,
    private readonly instance: string | undefined,
    /** On a shared store: which broker of the set sends each subscription's notifications. */
    private readonly owner?: SetOwner,
  ) {}

  /**
   * On a shared store: reads the csource subscriptions again every `seconds`, so that one created, changed or deleted
   * through another broker of the set gets, changes or loses its timer here too.
   */
  refreshEvery(seconds: number): void {
    if (this.owner === undefined || seconds <= 0 || this.refresh !== undefined) return;
    this.refresh = setInterval(() => void this.reload(), seconds * 1000);
    this.refresh.unref();
  }

  private async reload(): Promise<void> {
    if (this.reloading || this.channel === undefined) return;
    this.reloading = true;
    try {
      const seen = new Set<string>();
      for (const tenant of await subscriptionTenants(this.store))
        for (const { id, doc } of await this.store.collection(tenant, CSOURCE_SUBSCRIPTIONS).list()) {
          const key = `${tenant}\n${id}`;
          seen.add(key);
          const next = doc as unknown as CsourceSubscriptionDoc;
          const old = this.timers.get(key);
          // A timer kept for an unchanged subscription keeps its phase; a changed one starts again as on an update.
          if (old === undefined || JSON.stringify(old.doc.body) !== JSON.stringify(next.body)) this.update(tenant, id, next);
        }
      for (const [key, t] of [...this.timers]) if (!seen.has(key)) this.update(t.tenant, t.id, null);
    } catch (e) {
      this.log.warn({ err: e instanceof Error ? e.message : String(e) }, 'csource subscriptions cannot be read again');
    } finally {
      this.reloading = false;
    }
  }

  async start(): Promise<void> {
    this.channel = new BroadcastChannel(channelName(CSOURCE_SUBSCRIPTIONS_CHANNEL, this.instance));
    this.channel.unref();
    this.channel.onmessage = (m: unknown) => {
      const c = (m as { data?: CsourceSubscriptionChanged }).data;
      if (typeof c?.tenant === 'string' && typeof c.id === 'string') this.update(c.tenant, c.id, c.doc as CsourceSubscriptionDoc | null);
    };
    await this.load();
  }

  /**
   * The periodic csource subscriptions the store holds. A store out of reach at start (503: docdb down) does not stop
   * the notifier, as it does not stop the broker: they are read again every second until they are loaded.
   */
  private async load(): Promise<void> {
    try {
      for (const tenant of await subscriptionTenants(this.store))
        for (const { id, doc } of await this.store.collection(tenant, CSOURCE_SUBSCRIPTIONS).list())
          if (!this.timers.has(`${tenant}\n${id}`)) this.update(tenant, id, doc as unknown as CsourceSubscriptionDoc);
    } catch (e) {
      if ((e as { status?: unknown }).status !== 503) throw e;
      this.log.warn({ err: e }, 'csource subscriptions cannot be loaded yet: reading them again every second');
      const retry = setTimeout(() => {
        if (this.channel !== undefined) void this.load();
      }, LOAD_RETRY_MS);
      retry.unref();
    }
  }

  close(): void {
    clearInterval(this.refresh);
    this.refresh = undefined;
    this.channel?.close();
    this.channel = undefined;
    for (const { timer } of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
  }

  /** A csource subscription was created, changed (doc) or deleted (null). */
  update(tenant: string, id: string, doc: CsourceSubscriptionDoc | null): void {
    const key = `${tenant}\n${id}`;
    const old = this.timers.get(key);
    if (old !== undefined) {
      clearTimeout(old.timer);
      this.timers.delete(key);
    }
    const interval = doc?.body.timeInterval;
    if (doc === null || interval === undefined) return;
    const periodMs = Math.max(interval, MIN_TIME_INTERVAL_S) * 1000;
    const t: Timer = { tenant, id, doc, periodMs, dueAt: Date.now() + periodMs };
    this.timers.set(key, t);
    this.arm(key, t);
  }

  /** Waits for `t.dueAt` in legs a timer can hold, notifies, and waits for the next; a late one is not caught up. */
  private arm(key: string, t: Timer): void {
    const wait = t.dueAt - Date.now();
    const last = wait <= MAX_TIMER_MS;
    t.timer = setTimeout(
      () => {
        if (this.timers.get(key) !== t) return;
        if (last) {
          void this.tick(t);
          const now = Date.now();
          t.dueAt = t.dueAt + t.periodMs > now ? t.dueAt + t.periodMs : now + t.periodMs;
        }
        this.arm(key, t);
      },
      last ? Math.max(0, wait) : MAX_TIMER_MS,
    );
    t.timer.unref();
  }

  private async tick(t: Timer): Promise<void> {
    const now = Date.now();
    if (subscriptionStatus(t.doc.body, now) !== 'active') return;
    try {
      // Every broker of a set keeps the timer; one sends (issue 17: each due notification once).
      if (this.owner !== undefined && !(await this.owner.owns(`csource-periodic\n${t.tenant}\n${t.id}`))) return;
      const sels = subscriptionSelections(t.doc.body);
      const matching = [];
      for (const { doc } of await this.store.collection(t.tenant, REGISTRATIONS).list()) {
        const reg = (doc as unknown as RegistrationDoc).body;
        if (isLive(reg, now) && registrationMatches(sels, reg)) matching.push(reg);
      }
      // Nothing matching: nothing to tell (as a periodic entity notification with no entity is not sent).
      if (matching.length === 0) return;
      // The registrations as they are now: `updated` is the trigger the spec's list has for that (§5.3.3).
      await sendCsourceNotification(this.store, this.contexts, t.tenant, t.id, t.doc, matching, 'updated');
    } catch (e) {
      this.log.warn({ err: e instanceof Error ? e.message : String(e), subscription: t.id }, 'periodic csource notification failed');
    }
  }
}

/** Tells the notifier about a csource subscription created, changed or deleted (from the thread that did it). */
export function broadcastCsourceSubscriptionChange(change: CsourceSubscriptionChanged, instance: string | undefined): void {
  const channel = new BroadcastChannel(channelName(CSOURCE_SUBSCRIPTIONS_CHANNEL, instance));
  channel.postMessage(change);
  channel.close();
}
