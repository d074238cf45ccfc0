// Starts and stops the bridge-host thread from the main thread (seed 001 §1), and hands its inbound samples to the
// sample writer (sample-writer.ts), which writes them through the pipeline.
import { Worker } from 'node:worker_threads';
import type { BrokerConfig } from '../config.js';
import type { Logger } from '../logger.js';
import type { PipelineRunner } from '../pipeline/runner.js';
import { SampleWriter } from './sample-writer.js';
import type { BridgeHostMessage } from './wire.js';

export interface BridgeHostHandle {
  stop(): Promise<void>;
}

const STOP_WAIT_MS = 5000;

export async function startBridgeHost(
  config: BrokerConfig,
  runner: PipelineRunner,
  log: Logger,
  execArgv?: string[],
): Promise<BridgeHostHandle> {
  const worker = new Worker(new URL('../../workers/bridge-host.js', import.meta.url), { workerData: { config }, execArgv });
  // Listened to before the thread is ready: a bridge may send samples as it starts.
  const samples = new SampleWriter(runner, log);
  worker.on('message', (m: BridgeHostMessage) => {
    if (m.kind === 'sample') samples.add(m);
  });
  await new Promise<void>((resolve, reject) => {
    const onMessage = (m: BridgeHostMessage): void => {
      if (m.kind === 'ready') {
        cleanup();
        resolve();
      }
      if (m.kind === 'failed') {
        cleanup();
        reject(new Error(`the bridge host cannot start: ${m.error}`));
      }
    };
    const onError = (e: Error): void => {
      cleanup();
      reject(e);
    };
    const onExit = (code: number): void => {
      cleanup();
      reject(new Error(`the bridge host exited with ${code} at start`));
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
  worker.on('error', (e) => log.error({ err: e }, 'bridge host thread failed'));
  return {
    async stop() {
      const stopped = new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, STOP_WAIT_MS);
        worker.on('message', (m: BridgeHostMessage) => {
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
