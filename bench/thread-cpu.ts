// CPU time per thread of a server under test, from /proc/<pid>/task/<tid>/stat (Linux): Node 20 has no
// process.threadCpuUsage(), and the broker's worker threads name themselves (workers/thread-name.ts) so the front
// (the main thread: its tid is the pid) and the pipeline (`ldb-pipeline`) can be told apart from the rest (the
// notifier, V8's and libuv's helper threads: garbage collection, file I/O).
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

/** Clock ticks per second of utime/stime (USER_HZ; 100 on Linux almost everywhere). */
const TICKS_PER_S = ((): number => {
  try {
    const n = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());
    return Number.isFinite(n) && n > 0 ? n : 100;
  } catch {
    return 100;
  }
})();

export const PIPELINE_THREAD = 'ldb-pipeline';

/** One reading: thread id → its name and user + system CPU in µs. */
export interface CpuSnapshot {
  pid: number;
  threads: Map<number, { name: string; us: number }>;
}

/** CPU of the interval between two snapshots, in µs, split by thread role. */
export interface CpuSpent {
  front: number;
  pipeline: number;
  /** Each pipeline thread's share, in thread-id order: the hand-off spreads requests when these are even. */
  pipelineThreads: number[];
  other: number;
}

/** Undefined when /proc cannot be read (not Linux, or the process is gone). */
export function cpuSnapshot(pid: number): CpuSnapshot | undefined {
  const threads = new Map<number, { name: string; us: number }>();
  let tids: string[];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return undefined;
  }
  for (const tid of tids) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      // `tid (name) state ...`: the name may hold spaces and parentheses, so fields are counted after the last ')'.
      const open = stat.indexOf('(');
      const close = stat.lastIndexOf(')');
      const fields = stat.slice(close + 2).split(' ');
      // Fields 14 and 15 of proc(5) (utime, stime); fields[0] is field 3 (state).
      const ticks = Number(fields[11]) + Number(fields[12]);
      threads.set(Number(tid), { name: stat.slice(open + 1, close), us: (ticks * 1e6) / TICKS_PER_S });
    } catch {
      // The thread ended between the listing and the read: its time is lost to both readings alike.
    }
  }
  return { pid, threads };
}

export function cpuSpent(before: CpuSnapshot, after: CpuSnapshot): CpuSpent {
  const out: CpuSpent = { front: 0, pipeline: 0, pipelineThreads: [], other: 0 };
  for (const [tid, t] of [...after.threads].sort((a, b) => a[0] - b[0])) {
    const spent = t.us - (before.threads.get(tid)?.us ?? 0);
    if (tid === after.pid) out.front += spent;
    else if (t.name === PIPELINE_THREAD) {
      out.pipeline += spent;
      out.pipelineThreads.push(spent);
    } else out.other += spent;
  }
  return out;
}

/** The resolution of the readings, in µs (one clock tick). */
export const CPU_TICK_US = 1e6 / TICKS_PER_S;

/**
 * CPU of the interval between two snapshots, in µs, of the front (the main thread), of each thread name asked (all
 * threads of that name together: `ldb-pipeline`, `ldb-notifier`) and of the rest.
 */
export function cpuSpentByName(
  before: CpuSnapshot,
  after: CpuSnapshot,
  names: readonly string[],
): { front: number; other: number; named: number[] } {
  const out = { front: 0, other: 0, named: names.map(() => 0) };
  for (const [tid, t] of after.threads) {
    const spent = t.us - (before.threads.get(tid)?.us ?? 0);
    const k = names.indexOf(t.name);
    if (tid === after.pid) out.front += spent;
    else if (k >= 0) out.named[k]! += spent;
    else out.other += spent;
  }
  return out;
}
