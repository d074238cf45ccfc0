// Which broker of a high-availability set (brokers sharing a docdb, README "Deployment on docdb") does what one of
// them must do alone, such as keeping a subscription's subordinate subscriptions on the sources (issue 22): the live
// brokers are those with a fresh presence lease (Store.liveBrokers), and each piece of work goes to the broker that
// ranks highest for its key (rendezvous hashing). Every broker computes the same owner from the same leases, without
// talking to the others; when a broker goes (its lease removed or stale), only its keys move, each to the next in
// rank, and a broker that joins takes over only the keys it now ranks first for.
import { createHash } from 'node:crypto';
import type { Store } from '../store/contract.js';

/** How long a read of the leases is used before the store is read again. */
const LIVE_TTL_MS = 1000;

/** The broker that ranks highest for `key` among `live`. */
export function ownerOf(key: string, live: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestRank = '';
  for (const id of live) {
    const rank = createHash('sha256').update(`${key}\n${id}`).digest('hex');
    if (best === undefined || rank > bestRank) {
      best = id;
      bestRank = rank;
    }
  }
  return best;
}

export class SetOwner {
  private live: { ids: string[]; at: number } | undefined;

  constructor(
    private readonly store: Store,
    readonly brokerId: string,
  ) {}

  /**
   * True when this broker owns `key`. This broker counts as live even before its lease is read back (written by the
   * front at start, possibly after this thread's first look). A store out of reach throws: nobody acts then.
   */
  async owns(key: string): Promise<boolean> {
    const now = Date.now();
    if (this.live === undefined || now - this.live.at > LIVE_TTL_MS) {
      const ids = (await this.store.liveBrokers?.()) ?? [];
      if (!ids.includes(this.brokerId)) ids.push(this.brokerId);
      this.live = { ids, at: now };
    }
    return ownerOf(key, this.live.ids) === this.brokerId;
  }
}
