// --frontOps cheap, queries: on a broker with no more cores than its front and pool threads (the front shares its
// core with the pool, so every hand-off is paid in CPU and in time slices: p99 22 ms pooled against 9 inline, issue 24),
// a GET /entities bounded by its parameters whose runs were measured cheap runs on the front like a one-entity
// operation. An unmeasured, unbounded or slow query stays in the pool, so one client's expensive query never holds the
// front: a query runs on the front only after runs measured under FRONT_QUERY_MAX_MS, and a front run measured above
// it sends the next ones back to the pool.
import { LdOp } from '../ngsild/operations.js';
import type { PipelineResult, PipelineTask } from './task.js';
import type { PipelineRunner } from './runner.js';

/** A larger page is rendered work in proportion: the pool's. */
export const FRONT_QUERY_MAX_LIMIT = 100;
/** A query whose measured cost (a moving average of its runs) is above this runs in the pool. */
export const FRONT_QUERY_MAX_MS = 0.5;
/** Query strings whose cost is kept: a client sending ever new ones replaces the oldest, never grows the map. */
export const MEASURED_QUERIES = 256;
/** Weight of the newest run in the moving average: a few cheap runs outweigh a cold first one. */
const WEIGHT = 0.25;

/** Parameters that make a query's work grow with the data whatever its page: count, a sort, joins, a map. */
const UNBOUNDED = /(?:^|&)(?:count|orderBy|join|joinLevel|containedBy|entityMap)=|(?:^|&)options=[^&]*\bcount\b/;
const LIMIT = /(?:^|&)limit=([^&]*)/;

export class FrontQueries {
  /** Milliseconds per run, by tenant, Link and query string (the same string may cost otherwise in another tenant). */
  private readonly costs = new Map<string, number>();

  /** The key of a query the front may run, undefined for anything else (which the pool runs). */
  keyOf(task: PipelineTask): string | undefined {
    if (task.op !== LdOp.QueryEntities || task.body !== null || task.answer !== undefined) return undefined;
    if (task.headers.entityMap !== undefined || UNBOUNDED.test(task.query)) return undefined;
    const limit = LIMIT.exec(task.query);
    if (limit !== null && !(/^\d{1,3}$/.test(limit[1]!) && Number(limit[1]) <= FRONT_QUERY_MAX_LIMIT)) return undefined;
    return `${task.headers.tenant ?? ''}\u0000${task.headers.link ?? ''}\u0000${task.query}`;
  }

  /** Runs `task` (keyed by keyOf) on the front when its runs were measured cheap, else in the pool; measures it. */
  run(key: string, task: PipelineTask, front: PipelineRunner, pool: PipelineRunner): Promise<PipelineResult> {
    const cost = this.costs.get(key);
    if (cost === undefined || cost > FRONT_QUERY_MAX_MS) {
      // The pool thread measured its run (PipelineResult.costMs): the hand-off and the queue are not the query's.
      return pool.run(task).then((result) => {
        if (result.costMs !== undefined) this.measured(key, result.costMs);
        return result;
      });
    }
    const start = performance.now();
    return front.run(task).then((result) => {
      this.measured(key, performance.now() - start);
      return result;
    });
  }

  /** The cost kept for `key` (tests, /health). */
  costOf(key: string): number | undefined {
    return this.costs.get(key);
  }

  private measured(key: string, ms: number): void {
    const cost = this.costs.get(key);
    if (cost === undefined) {
      if (this.costs.size >= MEASURED_QUERIES) this.costs.delete(this.costs.keys().next().value!);
      this.costs.set(key, ms);
    } else {
      this.costs.set(key, cost + WEIGHT * (ms - cost));
    }
  }
}
