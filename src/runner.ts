// The pipeline runner of this broker: the pool of pipeline threads, or with --connectionPoolSize 0 the pipeline
// inline on the front thread with the operation handlers, or with --frontOps cheap both (one-entity operations
// inline). Chosen here, at the top, so the pipeline never imports ops.
import type { WorkerInit } from './pipeline/worker-context.js';
import type { Logger } from './logger.js';
import type { PipelineRunner } from './pipeline/runner.js';
import { createPoolRunner } from './pipeline/pool-runner.js';
import { createInlineRunner } from './pipeline/inline-runner.js';
import { handlers } from './ops/index.js';
import { SplitRunner } from './pipeline/split-runner.js';
import { Admission } from './pipeline/runner.js';
import { OpLatency } from './pipeline/op-latency.js';
import { FrontQueries } from './pipeline/front-queries.js';
import { availableParallelism } from 'node:os';

export type { PipelineRunner } from './pipeline/runner.js';

/** `execArgv`: the Node options of the pool's threads (default: this thread's, as node:worker_threads has it). */
export async function createRunner(init: WorkerInit, log: Logger, execArgv?: string[]): Promise<PipelineRunner> {
  if (init.config.connectionPoolSize === 0) return createInlineRunner(init, log, handlers);
  if (init.config.frontOps === 'none') return createPoolRunner(init, log, execArgv);
  // --frontOps cheap: each runner unbounded, the split one holds --maxPendingRequests over both.
  const unbounded = new Admission(Number.POSITIVE_INFINITY);
  const latency = init.config.metrics ? new OpLatency() : undefined;
  const [front, pool] = await Promise.all([
    createInlineRunner(init, log, handlers, unbounded, latency),
    createPoolRunner(init, log, execArgv, unbounded, latency),
  ]);
  // Cores no more than the front and the pool threads: the front shares a core with the pool, cheap queries run there.
  const queries = availableParallelism() <= 1 + init.config.connectionPoolSize ? new FrontQueries() : undefined;
  return new SplitRunner(front, pool, new Admission(init.config.maxPendingRequests), latency, queries);
}
