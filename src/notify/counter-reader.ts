// Reading subscriptions' counters for GET (CIM 009 v1.8 §5.2.14) from the notifier thread, which counts each
// notification as its request goes out (counters.ts): a GET right after a notification was received shows it,
// where the store's copy lags by up to a second. When the notifier does not answer in time, the store's copy is read.
import { BroadcastChannel, threadId } from 'node:worker_threads';
import type { Store } from '../store/contract.js';
import { SUBSCRIPTION_COUNTERS, type SubscriptionCounters } from '../ngsild/subscription/model.js';
import { addCounters, counterDocId, othersCounters } from './shared-counters.js';
import { COUNTERS_CHANNEL, channelName, type CountersAnswered, type CountersAsked } from './channel.js';

/** How long a GET waits for the notifier (busy with a flood of deliveries) before it reads the store instead. */
const ASK_TIMEOUT_MS = 250;

type Waiting = (counters: Array<SubscriptionCounters | null> | undefined) => void;

export class CounterReader {
  private readonly channel: BroadcastChannel;
  private readonly waiting = new Map<number, Waiting>();
  private seq = 0;

  /**
   * `instance`: the broker's (BrokerConfig.instance), whose notifier answers; `brokerId`, on a store other brokers
   * share: this broker's, whose counters the notifier has (the others' are read from the store and added).
   */
  constructor(
    private readonly store: Store,
    instance: string | undefined,
    private readonly brokerId?: string,
  ) {
    this.channel = new BroadcastChannel(channelName(COUNTERS_CHANNEL, instance));
    this.channel.unref();
    this.channel.onmessage = (m: unknown) => {
      const answer = (m as { data?: CountersAnswered }).data;
      if (answer?.kind !== 'answer' || answer.asker !== threadId) return;
      const done = this.waiting.get(answer.seq);
      if (done !== undefined) done(answer.counters);
    };
  }

  /** The counters of each subscription id (undefined: no notification yet), in order. */
  async read(tenant: string, ids: readonly string[]): Promise<Array<SubscriptionCounters | undefined>> {
    if (ids.length === 0) return [];
    const [fromNotifier, others] = await Promise.all([
      this.ask(tenant, ids),
      this.brokerId === undefined ? undefined : othersCounters(this.store, tenant, ids, this.brokerId),
    ]);
    let own: Array<SubscriptionCounters | undefined>;
    if (fromNotifier !== undefined) own = fromNotifier.map((c) => c ?? undefined);
    else {
      const stored = this.store.collection(tenant, SUBSCRIPTION_COUNTERS);
      const docId = (id: string): string => (this.brokerId === undefined ? id : counterDocId(id, this.brokerId));
      own = await Promise.all(ids.map(async (id) => (await stored.get(docId(id))) as SubscriptionCounters | undefined));
    }
    return others === undefined ? own : own.map((c, i) => addCounters([c, ...others[i]!]));
  }

  close(): void {
    this.channel.close();
    for (const done of this.waiting.values()) done(undefined);
    this.waiting.clear();
  }

  private ask(tenant: string, ids: readonly string[]): Promise<Array<SubscriptionCounters | null> | undefined> {
    const seq = ++this.seq;
    return new Promise((resolve) => {
      const timer = setTimeout(() => finish(undefined), ASK_TIMEOUT_MS);
      const finish: Waiting = (counters) => {
        clearTimeout(timer);
        this.waiting.delete(seq);
        resolve(counters !== undefined && counters.length === ids.length ? counters : undefined);
      };
      this.waiting.set(seq, finish);
      const question: CountersAsked = { kind: 'ask', asker: threadId, seq, tenant, ids: [...ids] };
      this.channel.postMessage(question);
    });
  }
}
