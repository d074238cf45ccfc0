// Piscina task entry points: one WorkerContext per thread, then runPipeline per request of a batch; response bodies
// go back as transferred buffers, never cloned (src/pipeline/pool-runner.ts says how batches and reply ports work).
import { workerData, threadId, MessageChannel, type MessagePort } from 'node:worker_threads';
import { Piscina } from 'piscina';
import { createWorkerContext } from '../src/pipeline/init.js';
import { runPipeline } from '../src/pipeline/run.js';
import { handlers } from '../src/ops/index.js';
import type { PipelineResult } from '../src/pipeline/task.js';
import type { WorkerInit } from '../src/pipeline/worker-context.js';
import type { BatchEntry, BatchReply } from '../src/pipeline/task.js';
import { BatchSlot, ContextWait, ParkingLot } from '../src/pipeline/context-wait.js';
import { nameThread } from './thread-name.js';
import { problemResult } from '../src/pipeline/problem-result.js';
import { LdError } from '../src/ngsild/problem.js';
import { RequestFlags } from '../src/pipeline/request-flags.js';

// No top-level await: Piscina loads this file with require() first, and Node 20's require() of an ES module
// that awaits at top level fails and can leave the module half-registered for the import() that follows.
nameThread('ldb-pipeline');
const ready = createWorkerContext(workerData as WorkerInit, `pipeline-${threadId}`);
/** --metrics: each result's time on this thread goes back with it (BatchReply.runMs). */
const timed = (workerData as WorkerInit).config.metrics;
/** Requests the front cancelled (client gone, --requestTimeout): skipped here if not started. */
const flagBuffer = (workerData as WorkerInit).requestFlags;
const flags = flagBuffer === undefined ? undefined : new RequestFlags(flagBuffer);
/** The result of a skipped request, in a reply the front reads whole (no reply port): it has no waiter for it. */
const SKIPPED: PipelineResult = { status: 499, headers: [], body: null };

/** Moves a value to the front with the buffers (or port) it names transferred. */
class Moved<T> {
  constructor(
    private readonly value: T,
    private readonly transfer: Array<ArrayBuffer | MessagePort>,
  ) {}
  get [Piscina.transferableSymbol](): Array<ArrayBuffer | MessagePort> {
    return this.transfer;
  }
  get [Piscina.valueSymbol](): T {
    return this.value;
  }
}

/** The buffers to transfer with results (each once: a transfer list naming one twice is refused). */
function bodiesOf(results: readonly PipelineResult[]): ArrayBuffer[] {
  const out = new Set<ArrayBuffer>();
  for (const r of results) if (r.body !== null) out.add(r.body.buffer as ArrayBuffer);
  return [...out];
}

/** This thread's reply channel: its sending end here, the other end handed to the front once (`replyPort`). */
let reply: MessagePort | undefined;

/**
 * Results done and not yet sent: those that finish in the same turn of the event loop go out in one message. Until
 * then `runMs` holds the start of each one's batch, made a duration as the message leaves.
 */
let outbox: BatchReply = { ids: [], results: [], runMs: [] };
let outboxScheduled = false;

function sendOutbox(): void {
  outboxScheduled = false;
  const out = outbox;
  outbox = { ids: [], results: [], runMs: [] };
  // Two clock reads per batch and per message, not per request (a read costs ~0.2 µs on a busy VM): a request's run
  // is its time on this thread, from its batch's arrival until its result leaves.
  if (timed) {
    const now = performance.now();
    for (let i = 0; i < out.runMs.length; i++) out.runMs[i] = now - out.runMs[i]!;
  }
  try {
    reply!.postMessage(out, bodiesOf(out.results));
  } catch (error) {
    // A body that cannot be transferred (a detached buffer: a defect) must not leave every request of the message
    // unanswered, and their clients waiting for ever: each result goes alone, a failing one as a 500.
    void ready.then((ctx) => ctx.log.error({ err: error }, 'pipeline: results could not be sent to the front'));
    for (let i = 0; i < out.ids.length; i++) {
      const one: BatchReply = { ids: [out.ids[i]!], results: [out.results[i]!], runMs: [out.runMs[i]!] };
      try {
        reply!.postMessage(one, bodiesOf(one.results));
      } catch {
        one.results[0] = problemResult(new LdError('InternalError', 'the answer could not be handed to the front').toProblem(), []);
        reply!.postMessage(one, bodiesOf(one.results));
      }
    }
  }
}

/** This thread's requests waiting for remote @contexts (src/pipeline/context-wait.ts). */
const lot = new ParkingLot();

/**
 * Runs every request of a batch at once; each result is sent as soon as it is ready (a slow one delays no other).
 * The task, and so its Piscina slot, ends once every request has ended or parked to wait for a remote @context:
 * a parked request finishes on its own and answers through the reply port, holding none of the thread's capacity.
 */
export async function batch(entries: BatchEntry[]): Promise<unknown> {
  const ctx = await ready;
  if (reply === undefined) {
    // The front never got this thread's port (see replyPorts): the results go back with the task, which must wait for all.
    const runMs: number[] = [];
    const results = await Promise.all(
      entries.map(async (e, i) => {
        runMs[i] = 0;
        if (flags !== undefined && !flags.start(e.id, threadId)) return SKIPPED;
        const wait = new ContextWait(lot, undefined);
        const start = performance.now();
        const result = await runPipeline(ctx, e.task, handlers, wait);
        runMs[i] = performance.now() - start;
        wait.end();
        return result;
      }),
    );
    const out: BatchReply = { ids: entries.map((e) => e.id), results, runMs };
    return Piscina.move(new Moved(out, bodiesOf(results)) as never);
  }
  const slot = new BatchSlot(entries.length);
  const start = timed ? performance.now() : 0;
  for (const e of entries) {
    // Checked as each request starts, not as the batch comes: a request ahead of it in the batch may have run long.
    if (flags !== undefined && !flags.start(e.id, threadId)) {
      slot.release();
      continue;
    }
    const wait = new ContextWait(lot, slot);
    void runPipeline(ctx, e.task, handlers, wait).then((result) => {
      wait.end();
      outbox.ids.push(e.id);
      outbox.results.push(result);
      outbox.runMs.push(start);
      if (!outboxScheduled) {
        outboxScheduled = true;
        setImmediate(sendOutbox);
      }
    });
  }
  await slot.freed;
  return null;
}

/** Hands the front the receiving end of this thread's reply channel, once; null when it has it already. */
export async function replyPort(): Promise<unknown> {
  await ready;
  // Hold the slot a moment so the other requests of the front's round go to the other threads.
  await new Promise((resolve) => setTimeout(resolve, 20));
  if (reply !== undefined) return null;
  const channel = new MessageChannel();
  reply = channel.port1;
  reply.unref();
  return Piscina.move(new Moved(channel.port2, [channel.port2]) as never);
}

/** Run once at start-up so the front knows a thread is up with its store and resolver open. */
export async function warmup(): Promise<boolean> {
  return (await ready).store.status().open;
}
