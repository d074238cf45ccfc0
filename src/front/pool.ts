// The pipeline runner the front hands tasks to: a Piscina pool of worker threads, or, with
// --connectionPoolSize 0, the same pipeline run inline on the front thread (measured beside the pool).
import { Piscina } from 'piscina';
import { availableParallelism } from 'node:os';
import type { PipelineResult, PipelineTask } from '../pipeline/task.js';
import type { WorkerContext, WorkerInit } from '../pipeline/worker-context.js';
import { createWorkerContext } from '../pipeline/init.js';
import { runPipeline } from '../pipeline/run.js';
import { handlers } from '../ops/index.js';
import type { Logger } from '../logger.js';

export interface PoolStats {
  mode: 'pool' | 'inline';
  threads: number;
  inFlight: number;
  queued: number;
  utilization: number;
  completed: number;
}

export interface PipelineRunner {
  run(task: PipelineTask): Promise<PipelineResult>;
  stats(): PoolStats;
  /** Waits for in-flight tasks, then stops the threads. */
  close(): Promise<void>;
}

/** Tasks allowed to wait for a thread before the front answers 503 (back-pressure, not an unbounded queue). */
const MAX_QUEUE = 10_000;
/**
 * Requests one pipeline thread holds at once. A thread never blocks: while a request awaits its write's commit (the
 * LMDB writer batches the commits of every request waiting at that moment into one transaction) the thread runs the
 * next, and the next task is already posted when one ends, so the hand-off never leaves a thread idle. Measured on
 * 2 cores (PATCH of one attribute, 20 connections; GET by type limit=20, 50 connections): 1 per thread 3.2k PATCH/s
 * and 4.6k GET/s, 4 per thread 7.7k and 5.6k, 16 per thread 8.4k and 5.6k.
 */
export const TASKS_PER_THREAD = 16;

export async function createRunner(init: WorkerInit, log: Logger): Promise<PipelineRunner> {
  const size = init.config.connectionPoolSize;
  if (size === 0) return new InlineRunner(await createWorkerContext(init, 'front', log));
  const threads = Math.max(1, Math.min(size, availableParallelism()));
  const pool = new Piscina({
    filename: new URL('../../workers/pipeline.js', import.meta.url).href,
    minThreads: threads,
    maxThreads: threads,
    // --connectionPoolSize sizes the pool like a server's thread pool (capped at the cores: the work is CPU); each
    // thread serves TASKS_PER_THREAD requests at once, as an event-driven server thread serves many connections.
    concurrentTasksPerWorker: TASKS_PER_THREAD,
    idleTimeout: Number.MAX_SAFE_INTEGER,
    maxQueue: MAX_QUEUE,
    workerData: init,
    recordTiming: false,
    // Workers must keep their event loop turning between tasks: plugin state, subscription changes and other
    // BroadcastChannel mail arrive there. Piscina's default ('sync') blocks an idle worker in Atomics.wait.
    atomics: 'async',
  });
  const runner = new PoolRunner(pool, threads);
  // Store and resolver are opened by each thread before its first task: a start-up task surfaces a thread that fails to.
  await pool.run({ warmup: true } as never, { name: 'warmup' });
  return runner;
}

class PoolRunner implements PipelineRunner {
  private inFlight = 0;
  constructor(private readonly pool: Piscina, private readonly threads: number) {}

  async run(task: PipelineTask): Promise<PipelineResult> {
    this.inFlight++;
    try {
      return (await this.pool.run(task, task.body === null ? undefined : { transferList: [task.body] })) as PipelineResult;
    } finally {
      this.inFlight--;
    }
  }

  stats(): PoolStats {
    return {
      mode: 'pool',
      threads: this.threads,
      inFlight: this.inFlight,
      queued: this.pool.queueSize,
      utilization: this.pool.utilization,
      completed: this.pool.completed,
    };
  }

  async close(): Promise<void> {
    await this.pool.close();
  }
}

class InlineRunner implements PipelineRunner {
  private inFlight = 0;
  private completed = 0;
  constructor(private readonly ctx: WorkerContext) {}

  async run(task: PipelineTask): Promise<PipelineResult> {
    this.inFlight++;
    try {
      return await runPipeline(this.ctx, task, handlers);
    } finally {
      this.inFlight--;
      this.completed++;
    }
  }

  stats(): PoolStats {
    return { mode: 'inline', threads: 0, inFlight: this.inFlight, queued: 0, utilization: 0, completed: this.completed };
  }

  async close(): Promise<void> {
    await this.ctx.store.close();
  }
}
