// --frontOps cheap: the pipeline split between the front thread and the pool. An operation on one entity by id
// (operations.ts `oneEntity`) costs the front less to run than to hand off (copy out, wake a thread, copy back), so it
// runs inline; everything whose work grows with the data (queries, batches, temporal, joins) goes to the pool, where it
// never holds the front. Issue 24: on 2 cores the hand-off was about half of a PATCH's and a create's cost.
import { operationOf } from '../ngsild/operations.js';
import type { PipelineResult, PipelineTask } from './task.js';
import { Admission, type PipelineRunner, type PoolStats, type RequestClient } from './runner.js';
import type { OpLatency } from './op-latency.js';
import type { FrontQueries } from './front-queries.js';

/**
 * A body above this goes to the pool even for a one-entity operation: parsing and validating it would hold the front
 * (and every other client) for longer than the hand-off costs. 16 KiB is an entity of a few hundred attributes.
 */
export const FRONT_MAX_BODY = 16 * 1024;

/** URL parameters that make a retrieve read other entities (CIM 009 v1.8.1 §4.5.23 join, §6.3.x containedBy). */
const JOINS = /(?:^|&)(?:join|joinLevel|containedBy)=/;

/** Whether `task` runs on the front thread: one entity by id, a small body, no join. */
export function runsOnFront(task: PipelineTask): boolean {
  if (task.answer !== undefined || !operationOf(task.op).oneEntity) return false;
  if (task.body !== null && task.body.byteLength > FRONT_MAX_BODY) return false;
  return task.query === '' || !JOINS.test(task.query);
}

/** Both runners built with no admission of their own: this one holds --maxPendingRequests over the two. */
export class SplitRunner implements PipelineRunner {
  constructor(
    private readonly front: PipelineRunner,
    private readonly pool: PipelineRunner,
    private readonly admission: Admission,
    /** Shared with both runners, which time what they run into it. */
    readonly latency: OpLatency | undefined,
    /** Queries measured cheap run on the front too, where the cores are no more than the threads (front-queries.ts). */
    private readonly queries?: FrontQueries,
  ) {}

  run(task: PipelineTask, client?: RequestClient): Promise<PipelineResult> {
    try {
      this.admission.check(this.held());
    } catch (error) {
      return Promise.reject(error);
    }
    // On the front a request runs as soon as it is taken: only the pool's can wait long enough to be cancelled.
    if (runsOnFront(task)) return this.front.run(task);
    const query = this.queries?.keyOf(task);
    return query === undefined ? this.pool.run(task, client) : this.queries!.run(query, task, this.front, this.pool, client);
  }

  held(): number {
    return this.front.held() + this.pool.held();
  }

  stats(): PoolStats {
    const front = this.front.stats();
    const pool = this.pool.stats();
    return {
      ...pool,
      mode: 'split',
      inFlight: front.inFlight + pool.inFlight,
      completed: front.completed + pool.completed,
      onFront: front.completed,
    };
  }

  async close(): Promise<void> {
    await Promise.all([this.pool.close(), this.front.close()]);
  }
}
