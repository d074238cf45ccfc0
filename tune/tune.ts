// `make tune WORKLOAD=<file>` (seed 001 §4.4): trains the runtime profile on the workload once per --dbLockPrefer
// value, measures --dbLockPrefer reads|writes x the allocators (each TUNE_REPEATS times, alternated, every run on an
// empty store), writes tune-result.json (§2.8) and prints one summary line on stdout; progress goes to stderr.
// Usage: node dist/tune/tune.js <workload.json> [--out tune-result.json]. Exit 0: a winner; 1: none ran without
// failed requests; 2: a bad workload or knob.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadWorkload, parseDuration, WorkloadError, type Workload } from './workload.js';
import { startReceiver } from './receiver.js';
import { dsecSetup } from './dsec-setup.js';
import { findAllocators } from './allocators.js';
import { runOnce, type Allocator, type Profile, type RunContext, type RunResult } from './run-once.js';
import { knobs, train, trialCount } from './train.js';
import { buildResult, summaryLine, type Measured } from './result.js';
import { Progress } from './progress.js';

const say = (line: string): void => {
  process.stderr.write(`${line}\n`);
};

class KnobError extends Error {}

/** TUNE_* knobs (seed 001 §4.4 and §8: repeats 2, training 20 s per lock preference, warm-up 5 s). */
interface Knobs {
  repeats: number;
  trainS: number;
  /** TUNE_TRAIN_KNOBS: the knobs trained (comma-separated names; default all). */
  trainKnobs?: string[];
  warmupS: number;
  brokerCpus?: string;
  loadCpus?: string;
}

function seconds(name: string, fallback: number): number {
  const v = process.env[name];
  if (v === undefined || v === '') return fallback;
  try {
    return /^\d+(\.\d+)?$/.test(v) ? parseDuration(`${v}s`, name) : parseDuration(v, name);
  } catch (e) {
    throw new KnobError((e as Error).message);
  }
}

function cpuList(name: string): string | undefined {
  const v = process.env[name];
  if (v === undefined || v === '') return undefined;
  if (!/^\d+(-\d+)?(,\d+(-\d+)?)*$/.test(v))
    throw new KnobError(`${name}: must be a CPU list for taskset -c, such as 0 or 1-3 (got ${JSON.stringify(v)})`);
  return v;
}

export function readKnobs(): Knobs {
  const r = process.env.TUNE_REPEATS || '2';
  if (!/^[1-9]\d{0,2}$/.test(r)) throw new KnobError(`TUNE_REPEATS: must be an integer from 1 to 999 (got ${JSON.stringify(r)})`);
  const k: Knobs = { repeats: Number(r), trainS: seconds('TUNE_TRAIN_DURATION', 20), warmupS: seconds('TUNE_WARMUP', 5) };
  const names = process.env.TUNE_TRAIN_KNOBS;
  if (names !== undefined && names !== '') {
    k.trainKnobs = names.split(',');
    const known = knobs(1).map((x) => x.name);
    for (const n of k.trainKnobs)
      if (!known.includes(n)) throw new KnobError(`TUNE_TRAIN_KNOBS: ${JSON.stringify(n)} is not one of ${known.join(', ')}`);
  }
  const b = cpuList('TUNE_BROKER_CPUS');
  if (b !== undefined) k.brokerCpus = b;
  const l = cpuList('TUNE_LOAD_CPUS');
  if (l !== undefined) k.loadCpus = l;
  return k;
}

function parseArgs(argv: string[]): { workload: string; out: string } {
  let workload = process.env.WORKLOAD;
  let out = 'tune-result.json';
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--out' && argv[i + 1] !== undefined) out = argv[++i]!;
    else if (!argv[i]!.startsWith('--')) workload = argv[i];
    else throw new KnobError(`unknown argument ${argv[i]} (usage: tune.js <workload.json> [--out tune-result.json])`);
  }
  if (workload === undefined || workload === '')
    throw new KnobError('no workload file (usage: tune.js <workload.json> [--out tune-result.json])');
  return { workload, out };
}

const outcome = (r: RunResult): string =>
  r.error !== undefined
    ? `not measured: ${r.error}`
    : `${r.rps} req/s, p99 ${r.p99us} us, ${r.notified} notified, ${r.failedRequests} failed${r.statusCodes === undefined ? '' : ` (statuses ${JSON.stringify(r.statusCodes)})`}`;

async function tune(w: Workload, k: Knobs, out: string): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), 'ldbroker-tune-'));
  const receiver = await startReceiver();
  try {
    const notes = new Set<string>();
    const ctx: RunContext = {
      workload: w,
      receiver,
      auth: w.auth === 'dsec' ? await dsecSetup(w, dir) : { args: [], headers: {} },
      note: (line) => {
        if (!notes.has(line)) say(`tune: note: ${line}`);
        notes.add(line);
      },
    };
    if (k.brokerCpus !== undefined) ctx.brokerCpus = k.brokerCpus;
    const { found, missing } = findAllocators();
    for (const m of missing) say(`tune: allocator ${m} not found: left out of the table`);
    const locks: ('reads' | 'writes')[] = w.store.database === 'embdb' ? ['reads', 'writes'] : ['reads'];
    if (locks.length === 1) say('tune: --dbLockPrefer is an option of the embedded store only: docdb is measured once per allocator');
    const cpus = k.brokerCpus === undefined ? availableParallelism() : countCpus(k.brokerCpus);
    const ks = knobs(cpus).filter((x) => k.trainKnobs === undefined || k.trainKnobs.includes(x.name));
    const trainRuns = trialCount(ks) * locks.length;
    const combos = locks.flatMap((lockPrefer) => found.map((allocator) => ({ lockPrefer, allocator })));
    const planned = [
      ...Array<number>(trainRuns).fill(k.warmupS + k.trainS),
      ...Array<number>(combos.length * k.repeats).fill(k.warmupS + w.durationS),
    ];
    const progress = new Progress(planned, say);
    say(`tune: ${progress.total} runs (${trainRuns} training, ${combos.length} combinations x ${k.repeats}); ${progress.left()}`);

    const system: Allocator = { name: 'system' };
    const trained: Record<string, Profile> = {};
    for (const lockPrefer of locks) {
      trained[lockPrefer] = await train(ks, async (profile, label) => {
        progress.begin(`training --dbLockPrefer ${lockPrefer}, ${label}`);
        const r = await runOnce(ctx, { lockPrefer, allocator: system, profile, durationS: k.trainS, warmupS: k.warmupS });
        progress.end(outcome(r));
        return r;
      });
      say(`tune: trained for --dbLockPrefer ${lockPrefer}: ${JSON.stringify(trained[lockPrefer])}`);
    }

    const measured: Measured[] = combos.map((c) => ({ ...c, runs: [] }));
    for (let rep = 0; rep < k.repeats; rep++) {
      // Alternated, the order reversed every other round: a machine's drift falls on every combination alike.
      const order = rep % 2 === 0 ? measured : [...measured].reverse();
      for (const m of order) {
        progress.begin(`--dbLockPrefer ${m.lockPrefer}, allocator ${m.allocator.name}, repeat ${rep + 1} of ${k.repeats}`);
        const r = await runOnce(ctx, {
          lockPrefer: m.lockPrefer,
          allocator: m.allocator,
          profile: trained[m.lockPrefer]!,
          durationS: w.durationS,
          warmupS: k.warmupS,
        });
        progress.end(outcome(r));
        m.runs.push(r);
      }
    }
    const result = buildResult(measured, trained, w.store.database !== 'embdb');
    writeFileSync(out, `${JSON.stringify(result, null, 2)}\n`);
    say(`tune: done in ${progress.elapsed()}`);
    process.stdout.write(`${summaryLine(result, out)}\n`);
    return result.best === null ? 1 : 0;
  } finally {
    await receiver.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** CPUs in a taskset list (`0,2-3` is 3). */
function countCpus(list: string): number {
  return list.split(',').reduce((n, part) => {
    const [a, b] = part.split('-').map(Number);
    return n + (b === undefined ? 1 : b - a! + 1);
  }, 0);
}

async function main(): Promise<number> {
  let args: { workload: string; out: string };
  let k: Knobs;
  let w: Workload;
  try {
    args = parseArgs(process.argv.slice(2));
    k = readKnobs();
    w = loadWorkload(args.workload);
  } catch (e) {
    const file = process.argv.slice(2).find((a, i, all) => !a.startsWith('--') && all[i - 1] !== '--out') ?? process.env.WORKLOAD;
    if (e instanceof WorkloadError) say(`tune: workload ${file}: ${e.message}`);
    else if (e instanceof KnobError) say(`tune: ${e.message}`);
    else throw e;
    return 2;
  }
  // TUNE_LOAD_CPUS: the load generator (this process) runs on those CPUs, the brokers on TUNE_BROKER_CPUS.
  if (k.loadCpus !== undefined && process.env.TUNE_PINNED !== '1') {
    const r = spawnSync('taskset', ['-c', k.loadCpus, process.execPath, ...process.execArgv, ...process.argv.slice(1)], {
      stdio: 'inherit',
      env: { ...process.env, TUNE_PINNED: '1' },
    });
    return r.status ?? 1;
  }
  return tune(w, k, args.out);
}

process.exitCode = await main();
