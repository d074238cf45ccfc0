// --frontOps cheap, queries: on a broker with no more cores than its front and pool threads (the front shares its
// core with the pool, so every hand-off is paid in CPU and in time slices: p99 22 ms pooled against 9 inline, issue 24),
// a GET /entities bounded by its parameters whose last run read few entities runs on the front like a one-entity
// operation. An unmeasured, unbounded or large query stays in the pool, so one client's expensive query never holds
// the front: a query runs on the front only after a run that read at most FRONT_QUERY_MAX_EXAMINED entities, and a
// front run that read more sends the next ones back to the pool. Entities read, not time: a measure of the query's
// own work, the same however busy the machine (a wall time on the front counts the requests interleaved with it).
import { LdOp } from '../ngsild/operations.js';
import type { PipelineResult, PipelineTask } from './task.js';
import type { PipelineRunner, RequestClient } from './runner.js';

/** A larger page is rendered work in proportion: the pool's. */
export const FRONT_QUERY_MAX_LIMIT = 100;
/** A query whose last run read more entities (PipelineResult.examined) runs in the pool: about a millisecond's reads. */
export const FRONT_QUERY_MAX_EXAMINED = 500;
/** Query strings whose cost is kept: a client sending ever new ones replaces the oldest, never grows the map. */
export const MEASURED_QUERIES = 256;

/** Parameters that make a query's work grow with the data whatever its page: count, a sort, joins, a map. */
const UNBOUNDED = /(?:^|&)(?:count|orderBy|join|joinLevel|containedBy|entityMap)=|(?:^|&)options=[^&]*\bcount\b/;
const LIMIT = /(?:^|&)limit=([^&]*)/;

export class FrontQueries {
  /** Entities the last run read, by tenant, Link and query string (the same string may read more in another tenant). */
  private readonly costs = new Map<string, number>();

  /** The key of a query the front may run, undefined for anything else (which the pool runs). */
  keyOf(task: PipelineTask): string | undefined {
    if (task.op !== LdOp.QueryEntities || task.body !== null || task.answer !== undefined) return undefined;
    if (task.headers.entityMap !== undefined || UNBOUNDED.test(task.query)) return undefined;
    const limit = LIMIT.exec(task.query);
    if (limit !== null && !(/^\d{1,3}$/.test(limit[1]!) && Number(limit[1]) <= FRONT_QUERY_MAX_LIMIT)) return undefined;
    return `${task.headers.tenant ?? ''}\u0000${task.headers.link ?? ''}\u0000${task.query}`;
  }

  /** Runs `task` (keyed by keyOf) on the front when its last run read few entities, else in the pool; keeps its count. */
  run(key: string, task: PipelineTask, front: PipelineRunner, pool: PipelineRunner, client?: RequestClient): Promise<PipelineResult> {
    const examined = this.costs.get(key);
    // On the front a request runs as soon as it is taken; in the pool it can wait, and be cancelled if its client goes.
    const run = examined !== undefined && examined <= FRONT_QUERY_MAX_EXAMINED ? front.run(task) : pool.run(task, client);
    return run.then((result) => {
      this.measured(key, result.examined);
      return result;
    });
  }

  private measured(key: string, examined: number | undefined): void {
    // A run that says nothing (an error, a page from context sources) leaves the query to the pool.
    if (examined === undefined) {
      this.costs.delete(key);
      return;
    }
    if (!this.costs.has(key) && this.costs.size >= MEASURED_QUERIES) this.costs.delete(this.costs.keys().next().value!);
    this.costs.set(key, examined);
  }
}
