// Piscina task entry point: one WorkerContext per thread, then runPipeline per task; the response body
// goes back as a transferred buffer, never cloned.
import { workerData, threadId } from 'node:worker_threads';
import { Piscina } from 'piscina';
import { createWorkerContext } from '../src/pipeline/init.js';
import { runPipeline } from '../src/pipeline/run.js';
import { handlers } from '../src/ops/index.js';
import type { PipelineResult, PipelineTask } from '../src/pipeline/task.js';
import type { WorkerInit } from '../src/pipeline/worker-context.js';

// No top-level await: Piscina loads this file with require() first, and Node 20's require() of an ES module
// that awaits at top level fails and can leave the module half-registered for the import() that follows.
const ready = createWorkerContext(workerData as WorkerInit, `pipeline-${threadId}`);

class MovedResult {
  constructor(private readonly result: PipelineResult) {}
  get [Piscina.transferableSymbol](): ArrayBuffer[] {
    const body = this.result.body;
    return body === null ? [] : [body.buffer as ArrayBuffer];
  }
  get [Piscina.valueSymbol](): PipelineResult {
    return this.result;
  }
}

export default async function pipelineTask(task: PipelineTask): Promise<unknown> {
  const result = await runPipeline(await ready, task, handlers);
  return Piscina.move(new MovedResult(result) as never);
}

/** Run once at start-up so the front knows a thread is up with its store and resolver open. */
export async function warmup(): Promise<boolean> {
  return (await ready).store.status().open;
}
