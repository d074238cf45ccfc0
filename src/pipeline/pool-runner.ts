// The pipeline runner of a Piscina pool of worker threads (workers/pipeline.ts runs the pipeline there with the
// operation handlers): requests go out in batches and come back on each thread's reply port.
import { Piscina } from 'piscina';
import { availableParallelism } from 'node:os';
import type { MessagePort } from 'node:worker_threads';
import type { BatchEntry, BatchReply, PipelineResult, PipelineTask } from './task.js';
import type { WorkerInit } from './worker-context.js';
import type { Logger } from '../logger.js';
import { Admission, type PipelineRunner, type PoolStats, type RequestClient } from './runner.js';
import { OpLatency } from './op-latency.js';
import { RequestFlags, requestFlagSlots } from './request-flags.js';
import { problemResult } from './problem-result.js';
import { LdError } from '../ngsild/problem.js';
import { LdOp, ldOpName } from '../ngsild/operations.js';

/**
 * Batches one pipeline thread holds at once. A thread never blocks: while a request awaits its write's commit (the
 * LMDB writer batches the commits of every request waiting at that moment into one transaction) the thread runs the
 * next, and the next batch is already posted when one ends, so the hand-off never leaves a thread idle. A request
 * waiting for a remote @context holds no part of this (src/pipeline/context-wait.ts).
 */
export const TASKS_PER_THREAD = 16;
/**
 * Batch entity operations (POST /entityOperations/*) the front has in the pool at once, per thread; the others wait
 * at the front in arrival order. A thread runs a few at once (embdb's batchesAtOnce: 4, src/ops/batch-slots.ts) and
 * the rest wait there for a slot, each holding one of the thread's TASKS_PER_THREAD places: 50 clients' batches
 * filled every place, and a query or a retrieve of another client queued in Piscina's FIFO behind all of them (p50
 * 1.4 ms alone, 14 ms and up to 278 ms under 50 connections of 100-entity upserts on one core). Twice the slots keeps
 * the next batches on the thread when one ends (no round trip to the front between them) and leaves most places to
 * everything else. FIFO among batches, and what waits at the front is bounded by --maxPendingRequests as before.
 */
export const BATCHES_PER_THREAD = 8;
/** The operations that take a batch slot on a thread (src/ops/index.ts inSlot). */
const BATCH_OPS: ReadonlySet<LdOp> = new Set([LdOp.BatchCreate, LdOp.BatchUpsert, LdOp.BatchUpdate, LdOp.BatchDelete, LdOp.BatchMerge]);
/** Requests one batch (one Piscina task) carries at most. */
export const MAX_BATCH = 64;
/**
 * The young generation of a pipeline thread, in MB (V8 default at most 48: two semi-spaces of 16 and the new large
 * object space). A batch write allocates a few hundred bytes of short-lived objects per entity (parsed body, expanded,
 * stored and encoded entities, write events), and 50 clients' batches in flight keep many alive at each scavenge:
 * with semi-spaces of 32 MB the collector runs half as often. On the loaded shared machine the collection threads'
 * CPU per 100-entity upsert fell from 116-170 to 83-91 µs in two runs each, and in process 50 batches at once took
 * 4.8-5.0 instead of 5.2-5.5 µs per entity in two of three alternated runs (bench/micro/batch-upsert.ts). What it
 * costs is memory: at most 48 MB more per thread, and only under load (the semi-spaces grow when collections keep up
 * poorly and shrink back).
 */
export const YOUNG_GENERATION_MB = 96;

/** The young generation a pipeline thread gets: none set here when Node was given a semi-space size (`make tune`). */
export function youngGeneration(execArgv: readonly string[]): { maxYoungGenerationSizeMb: number } | undefined {
  const given = (a: string): boolean => /--max[-_]semi[-_]space[-_]size/.test(a);
  if (execArgv.some(given) || given(process.env.NODE_OPTIONS ?? '')) return undefined;
  return { maxYoungGenerationSizeMb: YOUNG_GENERATION_MB };
}

/**
 * Starts the pool of --connectionPoolSize threads (at most one per core) and waits until each is up. `execArgv`: the
 * Node options of the pool's threads (default: this thread's, as node:worker_threads has it). `admission`: the bound
 * of --maxPendingRequests (a split runner holds it over both of its runners and gives this one none); `latency`: where
 * its requests are timed (a split runner's two runners share one).
 */
export async function createPoolRunner(
  init: WorkerInit,
  log: Logger,
  execArgv?: string[],
  admission = new Admission(init.config.maxPendingRequests),
  latency = init.config.metrics ? new OpLatency() : undefined,
): Promise<PipelineRunner> {
  const threads = Math.max(1, Math.min(init.config.connectionPoolSize, availableParallelism()));
  const flags = RequestFlags.create(requestFlagSlots(init.config.maxPendingRequests));
  const pool = new Piscina({
    filename: new URL('../../workers/pipeline.js', import.meta.url).href,
    minThreads: threads,
    maxThreads: threads,
    // --connectionPoolSize sizes the pool like a server's thread pool (capped at the cores: the work is CPU); each
    // thread serves many requests at once, as an event-driven server thread serves many connections.
    concurrentTasksPerWorker: TASKS_PER_THREAD,
    idleTimeout: Number.MAX_SAFE_INTEGER,
    workerData: { ...init, requestFlags: flags.buffer } satisfies WorkerInit,
    execArgv,
    resourceLimits: youngGeneration(execArgv ?? process.execArgv),
    recordTiming: false,
    // Workers must keep their event loop turning between tasks: plugin state, subscription changes and other
    // BroadcastChannel mail arrive there. Piscina's default ('sync') blocks an idle worker in Atomics.wait.
    atomics: 'async',
    // At close the pool waits for the tasks in flight. Past --requestTimeout each was answered 503 already (its
    // client waits no more), so a thread still busy then is wedged: the pool ends it instead of waiting Piscina's 30 s.
    closeTimeout: init.config.requestTimeout > 0 ? init.config.requestTimeout : undefined,
  });
  // Piscina reports that timeout as an 'error' event; the threads are ended all the same.
  pool.on('error', (e: unknown) =>
    log.warn({ err: e instanceof Error ? e.message : String(e) }, 'pipeline: threads still busy at close were ended'),
  );
  // Store and resolver are opened by each thread before its first task: a start-up task surfaces a thread that fails to.
  await pool.run({ warmup: true } as never, { name: 'warmup' });
  const ports = await replyPorts(pool, threads);
  if (ports.length < threads)
    log.warn({ threads, replyPorts: ports.length }, 'pipeline: some threads answer through Piscina only (slower)');
  return new PoolRunner(pool, threads, ports, admission, latency, flags, init.config.requestTimeout, log);
}

/**
 * Asks every thread for the receiving end of its reply channel (workers/pipeline.ts `replyPort`). Piscina cannot address
 * a thread, so rounds of one request per thread run at once, each holding its slot a moment so the balancer spreads
 * them; a thread hands its port over once. Bounded: a thread that never answered keeps replying through Piscina.
 */
async function replyPorts(pool: Piscina, threads: number): Promise<MessagePort[]> {
  const ports: MessagePort[] = [];
  for (let round = 0; round < 10 && ports.length < threads; round++) {
    const answers = await Promise.all(
      Array.from({ length: threads }, () => pool.run(null, { name: 'replyPort' }) as Promise<MessagePort | null>),
    );
    for (const port of answers) if (port !== null) ports.push(port);
  }
  return ports;
}

interface Waiter {
  resolve: (result: PipelineResult) => void;
  reject: (error: unknown) => void;
  op: number;
  /** performance.now() at the hand-off (0 without --metrics). */
  start: number;
  /** The watchdog's tick at the hand-off (see `sweep`). */
  tick: number;
}

/** What a request whose client went away resolves with: no one reads it (the front writes nothing to a gone client). */
const GONE: PipelineResult = { status: 499, headers: [], body: null };

/**
 * The answer at --requestTimeout. 503, not 504: the broker is the origin server, not a gateway (RFC 9110 §15.6.5 is
 * a proxy's upstream not answering), and a load balancer takes 503 as this server's retryable failure. A request a
 * thread started may still complete: the detail says so, since a write is applied whole or not at all, never half.
 */
function expiredResult(timeoutMs: number, started: boolean): PipelineResult {
  const detail = started
    ? `no answer within --requestTimeout (${timeoutMs} ms); the request was started and may still complete`
    : `no answer within --requestTimeout (${timeoutMs} ms); the request was not started and will not be`;
  return problemResult(new LdError('Unavailable', detail).toProblem(), []);
}

/** Watchdog ticks per --requestTimeout: a request is answered at most a tenth of it late (and at least 5 ms). */
const TICKS = 10;

/**
 * Hands requests to the pool in batches: every request that arrived in one turn of the event loop (uWS delivers all
 * ready sockets in one poll) goes out at setImmediate as at most one Piscina task per thread. The per-task cost of the
 * hand-off (Piscina's bookkeeping, one message to serialize and a thread to wake) was a third of the front thread on
 * cheap requests; a batch pays it once. Results come back one by one on each thread's reply port as soon as each is
 * done (a slow request, such as one fetching a remote @context, delays no other), several per message when they are
 * ready together.
 */
class PoolRunner implements PipelineRunner {
  private nextId = 1;
  private completed = 0;
  private abandoned = 0;
  private expired = 0;
  /** Requests abandoned or expired since the last flush: the flush leaves them out. */
  private dropped = 0;
  /** Requests left out by a flush: skipped before any thread saw them. */
  private unposted = 0;
  /** Ticks of the watchdog since start; a request past its deadline is `ticks` behind (the sweep). */
  private tick = 0;
  private readonly ticks: number;
  private readonly watchdog: NodeJS.Timeout | undefined;
  private readonly waiting = new Map<number, Waiter>();
  private pending: BatchEntry[] = [];
  /** Batch operations waiting at the front for room in the pool (BATCHES_PER_THREAD), in arrival order. */
  private batches: BatchEntry[] = [];
  /** Batch operations in tasks the pool has not finished. */
  private batchesInPool = 0;
  private readonly maxBatchesInPool: number;
  /** At close: every queued batch goes to the pool, whose close waits for them. */
  private draining = false;
  private flushScheduled = false;
  /** performance.now() when the first request of this turn was handed over (with --metrics). */
  private turnStart = 0;

  constructor(
    private readonly pool: Piscina,
    private readonly threads: number,
    ports: MessagePort[],
    private readonly admission: Admission,
    readonly latency: OpLatency | undefined,
    private readonly flags: RequestFlags,
    /** --requestTimeout in ms; 0: no deadline. */
    private readonly timeoutMs: number,
    private readonly log: Logger,
  ) {
    for (const port of ports) {
      port.on('message', (reply: BatchReply) => this.settleAll(reply));
      port.unref();
    }
    // One timer for every request, not one each: a request carries the tick it came in (no clock read, no timer to
    // arm and clear per request), and the sweep answers those `ticks` behind.
    const every = Math.max(5, timeoutMs / TICKS);
    this.ticks = Math.ceil(timeoutMs / every);
    this.watchdog = timeoutMs > 0 ? setInterval(this.sweep, every).unref() : undefined;
    this.maxBatchesInPool = threads * BATCHES_PER_THREAD;
  }

  run(task: PipelineTask, client?: RequestClient): Promise<PipelineResult> {
    try {
      this.admission.check(this.waiting.size);
    } catch (error) {
      return Promise.reject(error);
    }
    const id = this.nextId;
    // Ids stay Int32s (RequestFlags keeps them in an Int32Array); wrapping takes 2^31 requests.
    this.nextId = id === 0x7fffffff ? 1 : id + 1;
    if (!this.flushScheduled) {
      // One clock read per turn, not per request: the requests of a turn arrived in one poll of the sockets, and
      // their wait is counted from it.
      if (this.latency !== undefined) this.turnStart = performance.now();
      this.scheduleFlush();
    }
    const start = this.turnStart;
    return new Promise<PipelineResult>((resolve, reject) => {
      this.waiting.set(id, { resolve, reject, op: task.op, start, tick: this.tick });
      this.pending.push({ id, task });
      client?.onGone?.(() => this.abandon(id));
    });
  }

  /**
   * The client went away: its place under --maxPendingRequests is free at once, and a thread that has not started
   * the request skips it (RequestFlags); one that has finishes it and its answer is dropped (settleAll).
   */
  private abandon(id: number): void {
    const waiter = this.waiting.get(id);
    if (waiter === undefined) return;
    this.waiting.delete(id);
    this.abandoned++;
    this.dropped++;
    this.flags.cancel(id);
    waiter.resolve(GONE);
  }

  /**
   * The watchdog: every request still waiting `ticks` after its hand-off (a request that waits for a remote @context
   * included: its fetch has its own, shorter, deadline) is answered 503 and cancelled; a thread skips it if not
   * started, and a reply that comes late is dropped. The waiting map is in hand-off order, so the sweep stops at
   * the first request still in time.
   */
  private readonly sweep = (): void => {
    this.tick++;
    const due = this.tick - this.ticks - 1;
    for (const [id, waiter] of this.waiting) {
      if (waiter.tick > due) break;
      this.waiting.delete(id);
      this.expired++;
      this.dropped++;
      const thread = this.flags.cancel(id);
      // The operation and thread only: nothing of the client's request.
      this.log.warn(
        { op: ldOpName(waiter.op), pipelineThread: thread === 0 ? undefined : thread, requestTimeout: this.timeoutMs },
        thread === 0
          ? 'pipeline: a request waited past --requestTimeout before a thread started it; answered 503, it will not run'
          : 'pipeline: a request started on a pipeline thread got no answer within --requestTimeout; answered 503, a late answer is dropped',
      );
      waiter.resolve(expiredResult(this.timeoutMs, thread !== 0));
    }
  };

  private scheduleFlush(): void {
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    setImmediate(this.flush);
  }

  private readonly flush = (): void => {
    this.flushScheduled = false;
    let all = this.pending;
    this.pending = [];
    if (this.dropped > 0) {
      this.dropped = 0;
      const before = all.length + this.batches.length;
      all = all.filter((e) => this.waiting.has(e.id));
      this.batches = this.batches.filter((e) => this.waiting.has(e.id));
      this.unposted += before - all.length - this.batches.length;
    }
    // Batch operations join the front's queue; what the pool has room for leaves it, oldest first, after the rest.
    if (this.batches.length > 0 || all.some((e) => BATCH_OPS.has(e.task.op))) {
      const others: BatchEntry[] = [];
      for (const e of all) (BATCH_OPS.has(e.task.op) ? this.batches : others).push(e);
      const room = this.draining ? this.batches.length : this.maxBatchesInPool - this.batchesInPool;
      if (room > 0) for (const e of this.batches.splice(0, room)) others.push(e);
      all = others;
    }
    if (all.length === 0) return;
    const size = Math.min(MAX_BATCH, Math.ceil(all.length / this.threads));
    for (let i = 0; i < all.length; i += size) this.post(all.slice(i, i + size));
  };

  private post(batch: BatchEntry[]): void {
    const transferList: ArrayBuffer[] = [];
    let batchOps = 0;
    for (const { task } of batch) {
      if (task.body !== null) transferList.push(task.body);
      if (BATCH_OPS.has(task.op)) batchOps++;
    }
    this.batchesInPool += batchOps;
    // A thread without a reply port answers with the task; one with a port answers null once every result is sent.
    (this.pool.run(batch, { name: 'batch', transferList }) as Promise<BatchReply | null>).then(
      (reply) => {
        this.tasksEnded(batchOps);
        if (reply !== null) this.settleAll(reply);
      },
      // The thread died: what it had not answered fails (a result that is already on its way still wins).
      (error: unknown) => {
        this.tasksEnded(batchOps);
        for (const { id } of batch) this.fail(id, error);
      },
    );
  }

  /**
   * A task ended (every request of it answered, skipped or parked for a remote @context): its batch operations
   * leave the pool's count, whether answered, abandoned or expired, since only then is their place on the thread free.
   */
  private tasksEnded(batchOps: number): void {
    if (batchOps === 0) return;
    this.batchesInPool -= batchOps;
    if (this.batches.length > 0) this.scheduleFlush();
  }

  private settleAll(reply: BatchReply): void {
    const latency = this.latency;
    const now = latency === undefined ? 0 : performance.now();
    for (let i = 0; i < reply.ids.length; i++) {
      const waiter = this.waiting.get(reply.ids[i]!);
      if (waiter === undefined) continue;
      this.waiting.delete(reply.ids[i]!);
      this.completed++;
      if (latency !== undefined) {
        const run = reply.runMs[i]!;
        latency.observe(waiter.op, now - waiter.start - run, run);
      }
      waiter.resolve(reply.results[i]!);
    }
  }

  private fail(id: number, error: unknown): void {
    const waiter = this.waiting.get(id);
    if (waiter === undefined) return;
    this.waiting.delete(id);
    waiter.reject(error);
  }

  held(): number {
    return this.waiting.size;
  }

  stats(): PoolStats {
    return {
      mode: 'pool',
      threads: this.threads,
      inFlight: this.waiting.size,
      queued: this.pending.length + this.batches.length + this.pool.queueSize,
      utilization: this.pool.utilization,
      completed: this.completed,
      abandoned: this.abandoned,
      skipped: this.flags.skipped() + this.unposted,
      expired: this.expired,
    };
  }

  async close(): Promise<void> {
    clearInterval(this.watchdog);
    this.draining = true;
    if (this.batches.length > 0) this.flush();
    await this.pool.close();
  }
}
