// What the pipeline micro-benchmarks share: a pipeline worker's context on a RAM embdb opened in this process (no
// HTTP, no pool hop), and CPU time per call in rounds, which a loaded machine disturbs far less than wall time.
import { brokerConfig, brokerOptions, parseOptions, splitArgs } from '../../src/options.js';
import { storeDispose, storeOpen, storePrepare } from '../../src/plugins/store/embdb/index.js';
import { createWorkerContext } from '../../src/pipeline/init.js';
import { createLogger } from '../../src/logger.js';
import type { Store } from '../../src/store/contract.js';
import type { WorkerContext } from '../../src/pipeline/worker-context.js';
import type { PipelineTask } from '../../src/pipeline/task.js';
import { LdOp } from '../../src/ngsild/operations.js';

const ROUND_MS = 200;
const ROUNDS = 9;

export interface BenchPipeline {
  /** The worker's context, as a pipeline thread has it. */
  ctx: WorkerContext;
  /** The store as the primary opened it (for seeding beside the worker's). */
  primary: Store;
  close(): Promise<void>;
}

/** A RAM embdb and a pipeline worker's context on it, with the broker's default options. */
export async function openPipeline(): Promise<BenchPipeline> {
  const config = brokerConfig(parseOptions(splitArgs(['--logLevel', 'warn']), brokerOptions));
  const log = createLogger('warn', 'bench');
  const params = { options: {} as Record<string, unknown>, primary: true, log };
  params.options = { ...(await storePrepare(params)) };
  const primary = await storeOpen(params);
  const ctx = await createWorkerContext({ config, storeOptions: params.options }, 'bench', log);
  return {
    ctx,
    primary,
    async close() {
      await ctx.store.close();
      await primary.close();
      await storeDispose(params);
    },
  };
}

/** A request body as the front hands it over: an ArrayBuffer of exactly the text's bytes. */
export function bytesOf(text: string): ArrayBuffer {
  const b = new TextEncoder().encode(text);
  return b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength) as ArrayBuffer;
}

export interface TimeOptions {
  /** What one call stands for: the figure printed is CPU µs per call divided by it (default 1). */
  per?: number;
  /** The unit printed after the figure (default 'us'). */
  unit?: string;
  /** Calls before the first round (default 50). */
  warmup?: number;
  /** Calls between two readings of the clock (default 1). */
  step?: number;
}

/** Prints the median and range over rounds of 200 ms of the process's CPU time (every thread) per call / `per`. */
export async function timeIt(name: string, fn: () => unknown, opts: TimeOptions = {}): Promise<void> {
  const { per = 1, unit = 'us', warmup = 50, step = 1 } = opts;
  for (let i = 0; i < warmup; i++) await fn();
  const rounds: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    const until = process.hrtime.bigint() + BigInt(ROUND_MS) * 1_000_000n;
    const cpu0 = process.cpuUsage();
    let n = 0;
    do {
      for (let i = 0; i < step; i++) await fn();
      n += step;
    } while (process.hrtime.bigint() < until);
    const cpu = process.cpuUsage(cpu0);
    rounds.push((cpu.user + cpu.system) / n / per);
  }
  rounds.sort((a, b) => a - b);
  process.stdout.write(
    `${name.padEnd(44)} ${rounds[ROUNDS >> 1]!.toFixed(2).padStart(8)} ${unit}  (rounds ${rounds[0]!.toFixed(2)}-${rounds[ROUNDS - 1]!.toFixed(2)})\n`,
  );
}

/** Runs a micro-benchmark's main, its failure on stderr with exit status 1. */
export function run(main: () => Promise<void>): void {
  main().catch((e: unknown) => {
    process.stderr.write(`${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
    process.exit(1);
  });
}

/** POST /entityOperations/upsert of a JSON array text, as the front hands it to the pipeline. */
export function upsertTask(text: string): PipelineTask {
  return {
    op: LdOp.BatchUpsert,
    route: '/entityOperations/upsert',
    method: 'POST',
    path: '/ngsi-ld/v1/entityOperations/upsert',
    query: '',
    params: [],
    headers: { contentType: 'application/json' },
    body: bytesOf(text),
  };
}

/** PATCH /entities/{id}/attrs of temperature to `value`, as the front hands it to the pipeline. */
export function patchTask(id: string, value: number): PipelineTask {
  return {
    op: LdOp.UpdateAttrs,
    route: '/ngsi-ld/v1/entities/:entityId/attrs',
    method: 'PATCH',
    path: `/ngsi-ld/v1/entities/${id}/attrs`,
    query: '',
    params: [id],
    headers: { contentType: 'application/json' },
    body: bytesOf(JSON.stringify({ temperature: { type: 'Property', value } })),
  };
}
