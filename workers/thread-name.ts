// Names this OS thread in /proc (Linux), so `top -H`, `ps -L` and the benchmark's per-thread CPU
// (bench/thread-cpu.ts) tell the broker's threads apart: Node 20 leaves every thread named "node" and has no
// process.threadCpuUsage(). The front is the process's main thread (its tid is the pid) and keeps its name, which
// is the process's name in `ps`. Best effort: elsewhere than Linux, or without /proc, the thread keeps its name.
import { writeFileSync } from 'node:fs';

/** The kernel keeps 15 bytes of a thread's name. */
const COMM_BYTES = 15;

export function nameThread(name: string): void {
  try {
    // A synchronous write runs on the calling thread, so /proc/thread-self is this thread.
    writeFileSync('/proc/thread-self/comm', name.slice(0, COMM_BYTES));
  } catch {
    // No /proc (not Linux) or a read-only one: the name only helps observation, nothing depends on it.
  }
}
