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

/**
 * The instances that hold rows a few ms before they post them (the front's, link.ts FRONT_HOLD_MS; a thread may have
 * several: the history's primary instance and the front's pipeline context). A sync of another instance first has
 * each of them post what it holds, so that a read sees a write the front answered just before (README: a client
 * reads its own writes whichever thread serves the read); so does the writer's close, so that rows an instance still
 * holds (one that is never closed, as the front's inline pipeline context) are sent or counted lost, not left behind
 * unseen. An answer comes after the holder's rows on its channel; a holder that no longer answers holds the wait
 * FLUSH_WAIT_MS at most. A holder leaves the set at its bye (closed: it posted everything before).
 */
const holders = new Set<BroadcastChannel>();
const FLUSH_WAIT_MS = 1000;
const flushes = new Map<number, () => void>();
let flushN = 0;

function flushHolder(h: BroadcastChannel): Promise<void> {
  const n = ++flushN;
  return new Promise<void>((resolve) => {
    const timer = setTimeout(() => {
      flushes.delete(n);
      resolve();
    }, FLUSH_WAIT_MS);
    flushes.set(n, () => {
      clearTimeout(timer);
      flushes.delete(n);
      resolve();
    });
    h.postMessage({ k: 'flush', n } satisfies FromWriter);
  });
}

/** Every holder but `except` has posted what it held (or did not answer in time). */
async function flushHolders(except?: BroadcastChannel): Promise<void> {
  await Promise.all([...holders].filter((h) => h !== except).map(flushHolder));
}
const writer = new Writer(data.settings, (m: Greeting) => main.postMessage(m), report);

main.onmessage = (ev: MessageEvent): void => {
  const m = ev.data as Greeting;
  if (m.k !== 'hello' || typeof m.name !== 'string' || !m.name.startsWith(`${data.channel}:`)) return;
  if (!threads.has(m.name)) {
    const own = new BroadcastChannel(m.name);
    const reply = (r: FromWriter): void => own.postMessage(r);
    own.onmessage = (e: MessageEvent): void => {
      const t = e.data as ToWriter;
      if (t.k === 'flushed') flushes.get(t.n)?.();
      else if (t.k === 'bye') {
        holders.delete(own);
        reply({ k: 'bye' });
      } else if (t.k === 'sync' && [...holders].some((h) => h !== own)) void flushHolders(own).then(() => writer.on(t, reply));
      else writer.on(t, reply);
    };
    threads.set(m.name, own);
    if (m.hold === true) holders.add(own);
  }
  main.postMessage({ k: 'welcome', name: m.name } satisfies Greeting);
};

parentPort!.on('message', (m: { k: 'close'; ms: number }) => {
  if (m.k !== 'close') return;
  void flushHolders()
    .then(() => writer.close(m.ms))
    .then((lost) => {
      main.close();
      for (const c of threads.values()) c.close();
      report({ k: 'closed', lost });
    });
});
