// The pipeline run inline on the front thread (--connectionPoolSize 0, measured beside the pool): one WorkerContext
// for the front, the operation handlers given by the caller (the pipeline never imports the operations).
import type { PipelineResult, PipelineTask } from './task.js';
import type { WorkerContext, WorkerInit } from './worker-context.js';
import type { OpHandlers } from './handler.js';
import type { Logger } from '../logger.js';
import { createWorkerContext } from './init.js';
import { runPipeline } from './run.js';
import { ContextWait, ParkingLot } from './context-wait.js';
import { Admission, type PipelineRunner, type PoolStats } from './runner.js';
import { OpLatency } from './op-latency.js';

/**
 * Opens the front thread's store and resolver, then runs every task here with `handlers`. `admission`: the bound of
 * --maxPendingRequests (a split runner holds it over both of its runners and gives this one none); `latency`: where its requests are
 * timed (a split runner's two runners share one).
 */
export async function createInlineRunner(
  init: WorkerInit,
  log: Logger,
  handlers: OpHandlers,
  admission = new Admission(init.config.maxPendingRequests),
  latency = init.config.metrics ? new OpLatency() : undefined,
): Promise<PipelineRunner> {
  return new InlineRunner(await createWorkerContext(init, 'front', log), handlers, admission, latency);
}

class InlineRunner implements PipelineRunner {
  private inFlight = 0;
  private completed = 0;
  /** No slots to give back here, but the same bound on requests waiting for remote @contexts as a pool thread's. */
  private readonly lot = new ParkingLot();
  constructor(
    private readonly ctx: WorkerContext,
    private readonly handlers: OpHandlers,
    private readonly admission: Admission,
    readonly latency: OpLatency | undefined,
  ) {}

  async run(task: PipelineTask): Promise<PipelineResult> {
    this.admission.check(this.inFlight);
    this.inFlight++;
    const wait = new ContextWait(this.lot, undefined);
    const start = this.latency === undefined ? 0 : performance.now();
    try {
      return await runPipeline(this.ctx, task, this.handlers, wait);
    } finally {
      // Inline, nothing waits between the front and the pipeline: the whole time is the run.
      if (this.latency !== undefined) this.latency.observe(task.op, 0, performance.now() - start);
      wait.end();
      this.inFlight--;
      this.completed++;
    }
  }

  held(): number {
    return this.inFlight;
  }

  stats(): PoolStats {
    // Nothing waits here to be skipped: a request runs as soon as it is taken.
    return {
      mode: 'inline',
      threads: 0,
      inFlight: this.inFlight,
      queued: 0,
      utilization: 0,
      completed: this.completed,
      abandoned: 0,
      skipped: 0,
      expired: 0,
    };
  }

  async close(): Promise<void> {
    // A history beside the store has an instance of its own here (the tsdb link, which may hold rows): closed first,
    // it hands them over before the primary's close ends the writer.
    if (this.ctx.history !== this.ctx.store.history) await this.ctx.history?.close?.();
    await this.ctx.store.close();
  }
}
