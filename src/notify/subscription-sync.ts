// Keeps a thread's subscription index equal to the store: loaded whole at start, then refreshed by the
// SubscriptionChanged broadcasts of the threads that write subscriptions (BroadcastChannel never echoes to the
// sender, so a writer applies its own change at once). On a store other brokers share (docdb), whose changes no
// broadcast tells, the whole list is also read again every --subCacheIval seconds and the differences applied.
import { BroadcastChannel } from 'node:worker_threads';
import type { Store } from '../store/contract.js';
import type { Logger } from '../logger.js';
import type { ContextSource } from '../pipeline/worker-context.js';
import { compileSubscription, type CompiledSubscription } from '../ngsild/subscription/compile.js';
import { SubscriptionIndex } from '../ngsild/subscription/match.js';
import { SUBSCRIPTIONS, type SubscriptionDoc } from '../ngsild/subscription/model.js';
import { SUBSCRIPTIONS_CHANNEL, channelName, type SubscriptionChanged } from './channel.js';
import { isSnapshotSpace } from '../ngsild/snapshot/snapshot-store.js';

/** How soon a thread that could not load the subscriptions at start tries again. */
const LOAD_RETRY_MS = 1000;
/**
 * The longest a request waits for subscription changes announced elsewhere (caughtUp): a broadcast arrives within
 * milliseconds; one that never does (a thread gone) must not hold requests, so past this they run, and it is logged.
 */
export const CATCH_UP_MS = 2000;

export class SubscriptionSync {
  readonly index = new SubscriptionIndex();
  private channel: BroadcastChannel | undefined;
  /** Applies run one after the other, so a later change never lands before an earlier one. */
  private queue: Promise<void> = Promise.resolve();
  /** Each subscription as last applied (its document as JSON), and the count of applies when it was. */
  private readonly known = new Map<string, { json: string; at: number }>();
  private applies = 0;
  private timer: NodeJS.Timeout | undefined;
  private reloading = false;
  /** Every change numbered up to this one is applied here (or was in the store when this thread loaded it). */
  private heard = 0;
  /** Changes applied out of their order (numbers above heard + 1). */
  private readonly early = new Set<number>();
  private waiters: Array<{ target: number; resolve: () => void }> = [];

  constructor(
    private readonly store: Store,
    private readonly contexts: ContextSource,
    private readonly log: Logger,
    /** The broker instance (BrokerConfig.instance) whose threads this one hears. */
    readonly instance: string | undefined,
    /** Told after each change is applied (the notifier's periodic timers). */
    private readonly onChange?: (tenant: string, id: string, sub: CompiledSubscription | undefined, doc: SubscriptionDoc | null) => void,
    /** --brokerUrl, when given: the address notifications name the @contexts the broker serves with. */
    private readonly brokerUrl?: string,
    /** WorkerInit.subscriptionChanges: the count of changes every thread announced; absent, nothing is counted. */
    private readonly changes?: Int32Array,
  ) {}

  async start(): Promise<void> {
    this.channel = new BroadcastChannel(channelName(SUBSCRIPTIONS_CHANNEL, this.instance));
    this.channel.unref();
    this.channel.onmessage = (m: unknown) => {
      const msg = (m as { data?: SubscriptionChanged }).data;
      if (msg !== undefined && typeof msg.id === 'string') void this.apply(msg);
    };
    // Read once the channel listens and before the store is: a change counted by then was written before, so the
    // store holds it; one counted after is heard on the channel.
    if (this.changes !== undefined) this.heard = Atomics.load(this.changes, 0);
    try {
      for (const tenant of await subscriptionTenants(this.store)) {
        for (const { id, doc } of await this.store.collection(tenant, SUBSCRIPTIONS).list())
          await this.apply({ tenant, id, doc: doc as unknown as SubscriptionDoc });
      }
    } catch (e) {
      // A store on a network server may be out of reach at start (503: docdb down): the thread starts all the same
      // and reads the subscriptions again until they are loaded. Anything else stops the start as before.
      if ((e as { status?: unknown }).status !== 503) throw e;
      this.log.warn({ err: e }, 'subscriptions cannot be loaded yet: reading them again every second');
      this.loadLater();
    }
  }

  private loadLater(): void {
    const timer = setTimeout(() => {
      if (this.channel === undefined) return; // closed
      void this.reload().then((loaded) => {
        if (!loaded) this.loadLater();
      });
    }, LOAD_RETRY_MS);
    timer.unref();
  }

  /** Reads the subscriptions again every `seconds` (0: never), for the changes of other brokers on a shared store. */
  refreshEvery(seconds: number): void {
    if (seconds <= 0 || this.timer !== undefined) return;
    this.timer = setInterval(() => void this.reload(), seconds * 1000);
    this.timer.unref();
  }

  /**
   * Applies what the store holds and this index does not: new and changed subscriptions, and those gone. A
   * subscription this thread applied a change to while the list was read is left as it is (its change is newer).
   */
  async reload(): Promise<boolean> {
    if (this.reloading) return false;
    this.reloading = true;
    try {
      const since = this.applies;
      const seen = new Set<string>();
      for (const tenant of await subscriptionTenants(this.store)) {
        for (const { id, doc } of await this.store.collection(tenant, SUBSCRIPTIONS).list()) {
          const key = `${tenant}\n${id}`;
          seen.add(key);
          const known = this.known.get(key);
          if (known !== undefined && (known.at > since || known.json === JSON.stringify(doc))) continue;
          void this.apply({ tenant, id, doc: doc as unknown as SubscriptionDoc });
        }
      }
      for (const [key, known] of this.known) {
        if (seen.has(key) || known.at > since) continue;
        if (known.json === '') {
          this.known.delete(key);
          continue;
        }
        const nl = key.indexOf('\n');
        void this.apply({ tenant: key.slice(0, nl), id: key.slice(nl + 1), doc: null });
      }
      await this.queue;
      return true;
    } catch (e) {
      this.log.warn({ err: e }, 'subscriptions cannot be read again from the store: the index stays as it was');
      return false;
    } finally {
      this.reloading = false;
    }
  }

  close(): void {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
    this.channel?.close();
    this.channel = undefined;
  }

  /** A change made by this thread (once written): applied here, and told to every other thread. */
  async announce(change: SubscriptionChanged): Promise<void> {
    if (this.changes !== undefined) change.gen = Atomics.add(this.changes, 0, 1) + 1;
    this.channel?.postMessage(change);
    await this.apply(change);
  }

  /** Some thread announced a change this one has not applied yet. */
  behind(): boolean {
    return this.changes !== undefined && Atomics.load(this.changes, 0) > this.heard;
  }

  /** Resolves once every change announced by now is applied here, or after CATCH_UP_MS (logged). */
  caughtUp(): Promise<void> {
    const target = this.changes === undefined ? 0 : Atomics.load(this.changes, 0);
    if (this.heard >= target) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w.resolve !== done);
        this.log.warn(
          { heard: this.heard, target },
          'subscription changes of other threads not heard in time: the request runs without them',
        );
        resolve();
      }, CATCH_UP_MS);
      timer.unref();
      const done = (): void => {
        clearTimeout(timer);
        resolve();
      };
      this.waiters.push({ target, resolve: done });
    });
  }

  /** Counts an applied change by its number, and lets the requests go that waited for it. */
  private counted(gen: number | undefined): void {
    if (gen === undefined || gen <= this.heard) return;
    this.early.add(gen);
    while (this.early.delete(this.heard + 1)) this.heard++;
    if (this.waiters.length === 0) return;
    const still: typeof this.waiters = [];
    for (const w of this.waiters) {
      if (w.target <= this.heard) w.resolve();
      else still.push(w);
    }
    this.waiters = still;
  }

  /** Resolves when the changes received so far are applied. */
  settled(): Promise<void> {
    return this.queue;
  }

  apply(change: SubscriptionChanged): Promise<void> {
    this.queue = this.queue.then(() => this.applyNow(change)).then(() => this.counted(change.gen));
    return this.queue;
  }

  private async applyNow({ tenant, id, doc }: SubscriptionChanged): Promise<void> {
    const key = `${tenant}\n${id}`;
    const at = ++this.applies;
    // A deleted one is remembered (json '') until a reload no longer lists it, so a list read before the delete
    // does not bring it back.
    this.known.set(key, { json: doc === null ? '' : JSON.stringify(doc), at });
    if (doc === null) {
      this.index.remove(tenant, id);
      this.onChange?.(tenant, id, undefined, null);
      return;
    }
    try {
      const matchContext = await this.contexts.resolve(doc.context);
      let notifyContext = matchContext;
      if (doc.body.jsonldContext !== undefined) {
        try {
          notifyContext = await this.contexts.resolve(doc.body.jsonldContext);
        } catch (e) {
          this.log.warn(
            { err: e, subscription: id, jsonldContext: doc.body.jsonldContext },
            "jsonldContext cannot be resolved: notifying with the subscription's own @context",
          );
        }
      }
      const sub = compileSubscription(tenant, doc, matchContext, notifyContext, this.brokerUrl);
      this.index.upsert(sub);
      this.onChange?.(tenant, id, sub, doc);
    } catch (e) {
      this.index.remove(tenant, id);
      this.log.error({ err: e, tenant, subscription: id }, 'subscription cannot be compiled: it does not notify');
    }
  }
}

/** Tells every thread about a change when this thread keeps no index itself (nothing to apply here). */
export function broadcastSubscriptionChange(change: SubscriptionChanged, instance: string | undefined): void {
  const channel = new BroadcastChannel(channelName(SUBSCRIPTIONS_CHANNEL, instance));
  channel.postMessage(change);
  channel.close();
}

/**
 * Every tenant that may hold subscriptions: the default one and the store's (a subscription's create registers its
 * tenant); not the entity spaces of Snapshots, which hold entities only (README "Snapshots").
 */
export async function subscriptionTenants(store: Store): Promise<string[]> {
  return ['', ...(await store.listTenants()).filter((t) => !isSnapshotSpace(t))];
}
