// Notifier thread entry point: delivers the notifications pipeline workers build (src/notify/notifier-thread.ts).
import { parentPort, workerData } from 'node:worker_threads';
import { runNotifier } from '../src/notify/notifier-thread.js';
import type { WorkerInit } from '../src/pipeline/worker-context.js';

if (parentPort === null) throw new Error('workers/notifier.js runs as a worker thread');
const port = parentPort;
runNotifier(workerData as WorkerInit, port).catch((e: unknown) => {
  port.postMessage({ kind: 'failed', error: e instanceof Error ? e.stack ?? e.message : String(e) });
});
