// Requests that wait for a remote @context (issue 13). Such a request gives back its share of the thread's capacity
// (the Piscina slot its batch holds, workers/pipeline.ts) so that a client naming slow contexts slows only itself;
// at most MAX_PARKED of them wait at once per thread, and one more is refused 503 at once (Retry-After).
import { LdError } from '../ngsild/problem.js';
import type { FetchWaiter } from '../ngsild/context/shared-build.js';

/** Requests of one thread that may wait for remote @contexts at once. */
export const MAX_PARKED = 256;
/** Retry-After of a refused request: by then the fetches it queued behind have ended (5 s deadline). */
const RETRY_AFTER_S = 5;

/** The requests of one thread that wait for remote @contexts. */
export class ParkingLot {
  parked = 0;
  constructor(readonly max = MAX_PARKED) {}
}

/** What a batch holds its Piscina slot for: released once per request, when it ends or parks. */
export interface Slot {
  release(): void;
}

/** One request's wait: parks it (once) in the thread's lot, releasing its slot, until the request ends. */
export class ContextWait implements FetchWaiter {
  /** Set when the request parked; it stays parked until it ends. */
  parked = false;

  constructor(
    private readonly lot: ParkingLot,
    private readonly slot: Slot | undefined,
  ) {}

  park(): void {
    if (this.parked) return;
    if (this.lot.parked >= this.lot.max) {
      const error = new LdError(
        'Unavailable',
        `${this.lot.max} requests of this pipeline thread already wait for remote @contexts; retry later`,
      );
      error.retryAfter = RETRY_AFTER_S;
      throw error;
    }
    this.lot.parked++;
    this.parked = true;
    this.slot?.release();
  }

  /** The request has its result: it leaves the lot, or releases its slot if it never parked. */
  end(): void {
    if (this.parked) {
      this.parked = false;
      this.lot.parked--;
    } else {
      this.slot?.release();
    }
  }
}

/** The slot of a batch of `size` requests: `freed` resolves once every one of them has ended or parked. */
export class BatchSlot implements Slot {
  readonly freed: Promise<void>;
  private holding: number;
  private resolveFreed!: () => void;

  constructor(size: number) {
    this.holding = size;
    this.freed = new Promise((resolve) => {
      this.resolveFreed = resolve;
    });
    if (size === 0) this.resolveFreed();
  }

  release(): void {
    if (--this.holding === 0) this.resolveFreed();
  }
}
