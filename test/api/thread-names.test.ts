// The broker's worker threads name themselves in /proc (workers/thread-name.ts) so per-thread CPU can be told apart
// (bench/thread-cpu.ts, `top -H`): a pooled broker in this process adds one `ldb-pipeline` thread per pipeline
// thread and one `ldb-notifier`, and the process's own name (its main thread's) is left alone.
import t from 'tap';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { startBroker } from './helpers/broker.js';

const names = (): string[] => readdirSync('/proc/self/task').map((tid) => readFileSync(`/proc/self/task/${tid}/comm`, 'utf8').trim());
const count = (all: string[], name: string): number => all.filter((n) => n === name).length;

t.test(
  'a pooled broker names its pipeline threads and its notifier thread',
  { skip: !existsSync('/proc/thread-self/comm') && 'no /proc (not Linux)' },
  async (t) => {
    const before = names();
    const ownName = readFileSync('/proc/self/comm', 'utf8').trim();
    const broker = await startBroker(['--connectionPoolSize', '2'], {}, { pool: true });
    t.teardown(() => broker.stop());
    const after = names();
    // The pool is capped at the cores: one thread on a one-core machine.
    t.ok(count(after, 'ldb-pipeline') - count(before, 'ldb-pipeline') >= 1, 'pipeline threads named', { after });
    t.ok(count(after, 'ldb-pipeline') - count(before, 'ldb-pipeline') <= 2, 'no more than the pool', { after });
    t.equal(count(after, 'ldb-notifier') - count(before, 'ldb-notifier'), 1, 'one notifier thread named', { after });
    t.equal(readFileSync('/proc/self/comm', 'utf8').trim(), ownName, "the main thread's (the process's) name unchanged");
  },
);
