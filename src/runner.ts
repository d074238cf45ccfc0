// The pipeline runner of this broker: the pool of pipeline threads, or with --connectionPoolSize 0 the pipeline
// inline on the front thread with the operation handlers. Chosen here, at the top, so the pipeline never imports ops.
import type { WorkerInit } from './pipeline/worker-context.js';
import type { Logger } from './logger.js';
import type { PipelineRunner } from './pipeline/runner.js';
import { createPoolRunner } from './pipeline/pool-runner.js';
import { createInlineRunner } from './pipeline/inline-runner.js';
import { handlers } from './ops/index.js';

export type { PipelineRunner } from './pipeline/runner.js';

/** `execArgv`: the Node options of the pool's threads (default: this thread's, as node:worker_threads has it). */
export function createRunner(init: WorkerInit, log: Logger, execArgv?: string[]): Promise<PipelineRunner> {
  return init.config.connectionPoolSize === 0 ? createInlineRunner(init, log, handlers) : createPoolRunner(init, log, execArgv);
}
