// Latency histograms per operation, kept by the pipeline runner (README "Metrics"): the front wait (from the hand-off
// to the runner until the result is back, less the run: the queue and the trips between threads) and the pipeline run
// (measured on the thread that ran it). Fixed buckets in flat typed arrays: an observation is a few array increments,
// no label hashing, no allocation; /metrics and /health read the arrays when asked.
import { LdOp } from '../ngsild/operations.js';

/** Upper bounds of the buckets, in milliseconds (Prometheus' `le`, exported in seconds). */
export const LATENCY_BOUNDS_MS: readonly number[] = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 10_000];

/** One more than the highest LdOp: the arrays are indexed by LdOp. */
export const OP_SLOTS = Math.max(...Object.values(LdOp).filter((v): v is number => typeof v === 'number')) + 1;

const SLOTS = LATENCY_BOUNDS_MS.length + 1;

/** Counts per operation and bucket (the last slot is above every bound), with the sum of each operation's values. */
export class OpHistogram {
  readonly counts = new Float64Array(OP_SLOTS * SLOTS);
  readonly sums = new Float64Array(OP_SLOTS);
  readonly totals = new Float64Array(OP_SLOTS);

  observe(op: number, ms: number): void {
    let b = 0;
    while (b < LATENCY_BOUNDS_MS.length && ms > LATENCY_BOUNDS_MS[b]!) b++;
    this.counts[op * SLOTS + b]++;
    this.sums[op] += ms;
    this.totals[op]++;
  }

  /** Observations of `op` at or below bound `b` (b = LATENCY_BOUNDS_MS.length: all of them). */
  cumulative(op: number, b: number): number {
    let n = 0;
    for (let i = 0; i <= b; i++) n += this.counts[op * SLOTS + i]!;
    return n;
  }

  /**
   * The q-quantile of `op` in milliseconds, interpolated inside its bucket as Prometheus' histogram_quantile does;
   * one above the last bound reads as the last bound. Undefined before any observation.
   */
  quantile(op: number, q: number): number | undefined {
    const total = this.totals[op]!;
    if (total === 0) return undefined;
    const rank = q * total;
    let below = 0;
    for (let b = 0; b < SLOTS; b++) {
      const n = this.counts[op * SLOTS + b]!;
      if (below + n >= rank && n > 0) {
        if (b === LATENCY_BOUNDS_MS.length) return LATENCY_BOUNDS_MS[b - 1]!;
        const low = b === 0 ? 0 : LATENCY_BOUNDS_MS[b - 1]!;
        return low + ((LATENCY_BOUNDS_MS[b]! - low) * (rank - below)) / n;
      }
      below += n;
    }
    return LATENCY_BOUNDS_MS[LATENCY_BOUNDS_MS.length - 1];
  }
}

/** The runner's three histograms: front wait, pipeline run, and their sum (what /health's p50 and p99 read). */
export class OpLatency {
  readonly wait = new OpHistogram();
  readonly run = new OpHistogram();
  readonly total = new OpHistogram();

  observe(op: number, waitMs: number, runMs: number): void {
    // A clock read on two threads can disagree by a few microseconds: a wait is never negative.
    const wait = waitMs > 0 ? waitMs : 0;
    this.wait.observe(op, wait);
    this.run.observe(op, runMs);
    this.total.observe(op, wait + runMs);
  }
}
