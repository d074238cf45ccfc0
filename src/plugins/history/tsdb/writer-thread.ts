// Entry of the tsdb history's writer thread (writer.ts): started by the history's primary instance. It answers each
// instance's hello on the broker instance's channel by opening that instance's own channel, and reports log lines
// and its end to its parent.
import { writeFileSync } from 'node:fs';
import { BroadcastChannel, parentPort, workerData } from 'node:worker_threads';
import type { FromWriter, Greeting, ToWriter, WriterData, WriterReport } from './channel.js';
import { Writer } from './writer.js';

// Named in /proc like the broker's other threads (workers/thread-name.ts, which a plugin may not import): `top -H` and
// the benchmark's CPU per thread (bench/thread-cpu.ts) tell the writer's share apart. Best effort, as there.
try {
  writeFileSync('/proc/thread-self/comm', 'ldb-tsdb-writer');
} catch {
  // No /proc: the name only helps observation.
}

const data = workerData as WriterData;
const main = new BroadcastChannel(data.channel);
const threads = new Map<string, BroadcastChannel>();
const report = (m: WriterReport): void => parentPort!.postMessage(m);
const writer = new Writer(data.settings, (m: Greeting) => main.postMessage(m), report);

main.onmessage = (ev: MessageEvent): void => {
  const m = ev.data as Greeting;
  if (m.k !== 'hello' || typeof m.name !== 'string' || !m.name.startsWith(`${data.channel}:`)) return;
  if (!threads.has(m.name)) {
    const own = new BroadcastChannel(m.name);
    const reply = (r: FromWriter): void => own.postMessage(r);
    own.onmessage = (e: MessageEvent): void => writer.on(e.data as ToWriter, reply);
    threads.set(m.name, own);
  }
  main.postMessage({ k: 'welcome', name: m.name } satisfies Greeting);
};

parentPort!.on('message', (m: { k: 'close'; ms: number }) => {
  if (m.k !== 'close') return;
  void writer.close(m.ms).then((lost) => {
    main.close();
    for (const c of threads.values()) c.close();
    report({ k: 'closed', lost });
  });
});
