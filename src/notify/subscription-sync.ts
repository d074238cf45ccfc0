// Keeps a thread's subscription index equal to the store: loaded whole at start, then refreshed by the
// SubscriptionChanged broadcasts of the threads that write subscriptions (BroadcastChannel never echoes to the
// sender, so a writer applies its own change at once).
import { BroadcastChannel } from 'node:worker_threads';
import type { Store } from '../store/contract.js';
import type { Logger } from '../logger.js';
import type { ContextSource } from '../pipeline/worker-context.js';
import { compileSubscription, type CompiledSubscription } from '../ngsild/subscription/compile.js';
import { SubscriptionIndex } from '../ngsild/subscription/match.js';
import { SUBSCRIPTIONS, type SubscriptionDoc } from '../ngsild/subscription/model.js';
import { SUBSCRIPTIONS_CHANNEL, channelName, type SubscriptionChanged } from './channel.js';
import { isSnapshotSpace } from '../ngsild/snapshot/snapshot-store.js';

export class SubscriptionSync {
  readonly index = new SubscriptionIndex();
  private channel: BroadcastChannel | undefined;
  /** Applies run one after the other, so a later change never lands before an earlier one. */
  private queue: Promise<void> = Promise.resolve();

  constructor(
    private readonly store: Store,
    private readonly contexts: ContextSource,
    private readonly log: Logger,
    /** The broker instance (BrokerConfig.instance) whose threads this one hears. */
    readonly instance: string | undefined,
    /** Told after each change is applied (the notifier's periodic timers). */
    private readonly onChange?: (tenant: string, id: string, sub: CompiledSubscription | undefined) => void,
    /** --brokerUrl, when given: the address notifications name the @contexts the broker serves with. */
    private readonly brokerUrl?: string,
  ) {}

  async start(): Promise<void> {
    this.channel = new BroadcastChannel(channelName(SUBSCRIPTIONS_CHANNEL, this.instance));
    this.channel.unref();
    this.channel.onmessage = (m: unknown) => {
      const msg = (m as { data?: SubscriptionChanged }).data;
      if (msg !== undefined && typeof msg.id === 'string') void this.apply(msg);
    };
    for (const tenant of await subscriptionTenants(this.store)) {
      for (const { id, doc } of await this.store.collection(tenant, SUBSCRIPTIONS).list())
        await this.apply({ tenant, id, doc: doc as unknown as SubscriptionDoc });
    }
  }

  close(): void {
    this.channel?.close();
    this.channel = undefined;
  }

  /** A change made by this thread: applied here, and told to every other thread. */
  async announce(change: SubscriptionChanged): Promise<void> {
    this.channel?.postMessage(change);
    await this.apply(change);
  }

  /** Resolves when the changes received so far are applied. */
  settled(): Promise<void> {
    return this.queue;
  }

  apply(change: SubscriptionChanged): Promise<void> {
    this.queue = this.queue.then(() => this.applyNow(change));
    return this.queue;
  }

  private async applyNow({ tenant, id, doc }: SubscriptionChanged): Promise<void> {
    if (doc === null) {
      this.index.remove(tenant, id);
      this.onChange?.(tenant, id, undefined);
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
      this.onChange?.(tenant, id, sub);
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
