// Starts and stops the notifier thread from the main thread (ARCHITECTURE.md "Threads": notification delivery
// runs on its own thread, never on the front or a pipeline worker).
import { Worker } from 'node:worker_threads';
import type { WorkerInit } from '../pipeline/worker-context.js';
import type { Logger } from '../logger.js';
import type { NotifierData, NotifierMessage } from './notifier-thread.js';
import { gaugeOf, readGauge, sharedGauge, type NotificationQueueStats } from './queue-gauge.js';
import type { HostRow } from './host-counts.js';

export interface NotifierHandle {
  /** Stops delivery, writes the counters, closes the thread's store handle. */
  stop(): Promise<void>;
  /** The notification queue as the notifier thread last wrote it (for /health). */
  queueStats(): NotificationQueueStats;
  /**
   * Sent, failed and queued per endpoint host (/metrics), asked of the notifier thread once per scrape; when it does
   * not answer within HOSTS_WAIT_MS (busy with a flood of deliveries), its previous answer.
   */
  hostStats(): Promise<HostRow[]>;
}

const STOP_WAIT_MS = 5000;
const HOSTS_WAIT_MS = 250;

/** `execArgv`: the Node options of the thread (default: this thread's, as node:worker_threads has it). */
export async function startNotifier(init: WorkerInit, log: Logger, execArgv?: string[]): Promise<NotifierHandle> {
  const queueGauge = sharedGauge();
  const gauge = gaugeOf(queueGauge);
  const workerData: NotifierData = { ...init, queueGauge };
  const worker = new Worker(new URL('../../workers/notifier.js', import.meta.url), { workerData, execArgv });
  await new Promise<void>((resolve, reject) => {
    const onMessage = (m: NotifierMessage): void => {
      if (m.kind === 'ready') {
        cleanup();
        resolve();
      }
      if (m.kind === 'failed') {
        cleanup();
        reject(new Error(`the notifier cannot start: ${m.error}`));
      }
    };
    const onError = (e: Error): void => {
      cleanup();
      reject(e);
    };
    const onExit = (code: number): void => {
      cleanup();
      reject(new Error(`the notifier exited with ${code} at start`));
    };
    const cleanup = (): void => {
      worker.off('message', onMessage);
      worker.off('error', onError);
      worker.off('exit', onExit);
    };
    worker.on('message', onMessage);
    worker.once('error', onError);
    worker.once('exit', onExit);
  });
  worker.on('error', (e) => log.error({ err: e }, 'notifier thread failed'));
  let hostRows: HostRow[] = [];
  let hostSeq = 0;
  const hostWaiters = new Map<number, () => void>();
  worker.on('message', (m: NotifierMessage) => {
    if (m.kind !== 'hosts') return;
    hostRows = m.rows;
    hostWaiters.get(m.seq)?.();
  });
  return {
    queueStats: () => readGauge(gauge),
    hostStats: () => {
      const seq = ++hostSeq;
      return new Promise<HostRow[]>((resolve) => {
        const done = (): void => {
          clearTimeout(timer);
          hostWaiters.delete(seq);
          resolve(hostRows);
        };
        const timer = setTimeout(done, HOSTS_WAIT_MS);
        hostWaiters.set(seq, done);
        worker.postMessage({ kind: 'hosts', seq });
      });
    },
    async stop() {
      const stopped = new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, STOP_WAIT_MS);
        worker.on('message', (m: NotifierMessage) => {
          if (m.kind === 'stopped') {
            clearTimeout(timer);
            resolve();
          }
        });
        worker.once('exit', () => {
          clearTimeout(timer);
          resolve();
        });
      });
      worker.postMessage({ kind: 'stop' });
      await stopped;
      await worker.terminate();
    },
  };
}
