// Bridge-host thread entry point: runs the bridge plugins and their I/O (src/bridge/host-thread.ts).
import { parentPort, workerData } from 'node:worker_threads';
import { runBridgeHost, type BridgeHostData } from '../src/bridge/host-thread.js';
import { nameThread } from './thread-name.js';

if (parentPort === null) throw new Error('workers/bridge-host.js runs as a worker thread');
const port = parentPort;
nameThread('ldb-bridge');
runBridgeHost(workerData as BridgeHostData, port).catch((e: unknown) => {
  port.postMessage({ kind: 'failed', error: e instanceof Error ? (e.stack ?? e.message) : String(e) });
});
