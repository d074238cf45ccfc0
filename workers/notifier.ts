// Notifier thread entry point: delivers the notifications pipeline workers build (src/notify/notifier-thread.ts).
import { parentPort, workerData } from 'node:worker_threads';
import { runNotifier, type NotifierData } from '../src/notify/notifier-thread.js';
import { nameThread } from './thread-name.js';

if (parentPort === null) throw new Error('workers/notifier.js runs as a worker thread');
const port = parentPort;
nameThread('ldb-notifier');
runNotifier(workerData as NotifierData, port).catch((e: unknown) => {
  port.postMessage({ kind: 'failed', error: e instanceof Error ? (e.stack ?? e.message) : String(e) });
});
