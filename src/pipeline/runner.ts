// What the front hands tasks to, whichever runs them: a pool of pipeline threads (pool-runner.ts) or the pipeline
// inline on the front thread (inline-runner.ts, --connectionPoolSize 0), or both (split-runner.ts, --frontOps cheap);
// the top of the broker picks one.
import type { PipelineResult, PipelineTask } from './task.js';
import { LdError } from '../ngsild/problem.js';
import type { OpLatency } from './op-latency.js';

export interface PoolStats {
  /** split: --frontOps cheap, one-entity operations inline, the rest in the pool (split-runner.ts). */
  mode: 'pool' | 'inline' | 'split';
  threads: number;
  inFlight: number;
  queued: number;
  utilization: number;
  completed: number;
  /** split: how many of `completed` ran on the front thread. */
  onFront?: number;
  /** Requests whose client went away before their answer (their result, if any comes, is dropped). */
  abandoned: number;
  /** Requests a pipeline thread did not run: cancelled (client gone, or past --requestTimeout) before they started. */
  skipped: number;
  /** Requests answered 503 at --requestTimeout (the pool's watchdog), started or not. */
  expired: number;
}

/**
 * The client of a request, as a runner sees it: `onGone` (optional: the broker's own requests have no client) is
 * called once if the client goes away before its answer, so a request not yet started is not run for no one.
 */
export interface RequestClient {
  onGone?(listener: () => void): void;
}

export interface PipelineRunner {
  /** Never rejects for a request whose client left: it resolves with a result no one reads. */
  run(task: PipelineTask, client?: RequestClient): Promise<PipelineResult>;
  /** Requests taken and not yet answered (what --maxPendingRequests bounds). */
  held(): number;
  stats(): PoolStats;
  /** Front wait and pipeline run per operation (op-latency.ts); undefined with --metrics false. */
  readonly latency: OpLatency | undefined;
  /** Waits for in-flight tasks, then stops the threads. */
  close(): Promise<void>;
}

/** The refusal of a request past --maxPendingRequests: 503 with Retry-After (RFC 9110 §15.6.4, §10.2.3). */
export class Overloaded extends LdError {
  /** Seconds: the pending requests are pipeline work of milliseconds each, so the queue is short again by then. */
  readonly retryAfterSeconds = 1;
  constructor(max: number) {
    super('Unavailable', `the broker holds ${max} requests already (--maxPendingRequests); retry later`);
  }
}

/** --maxPendingRequests: back-pressure, not an unbounded queue; a request past it is refused before any work. */
export class Admission {
  constructor(private readonly max: number) {}
  check(held: number): void {
    if (held >= this.max) throw new Overloaded(this.max);
  }
}
