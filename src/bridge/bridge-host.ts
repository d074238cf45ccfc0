// Starts and stops the bridge-host thread from the main thread (seed 001 §1), and runs its inbound samples as
// attribute writes through the pipeline (seed 001 §6.2): a batch upsert with update of the Channel's entity, so
// subscriptions, a history and the store see them as any write; not asked to the auth plugin (PipelineTask.internal).
import { Worker } from 'node:worker_threads';
import type { BrokerConfig } from '../config.js';
import type { Logger } from '../logger.js';
import type { PipelineRunner } from '../pipeline/runner.js';
import type { PipelineTask } from '../pipeline/task.js';
import { LdOp, API_PREFIX } from '../ngsild/operations.js';
import type { BridgeHostMessage } from './wire.js';

export interface BridgeHostHandle {
  stop(): Promise<void>;
}

const STOP_WAIT_MS = 5000;
/** Failed sample writes logged per Channel: the first, then one in this many. */
const FAILURES_LOGGED_EVERY = 1000;

const encoder = new TextEncoder();

/** The write of one sample: its entity upserted with the attribute, other attributes kept (options=update). */
export function sampleTask(entityId: string, entityType: string, attribute: string, value: unknown): PipelineTask {
  const body = encoder.encode(JSON.stringify([{ id: entityId, type: entityType, [attribute]: { type: 'Property', value } }]));
  return {
    op: LdOp.BatchUpsert,
    route: `${API_PREFIX}/entityOperations/upsert`,
    method: 'POST',
    path: `${API_PREFIX}/entityOperations/upsert`,
    query: 'options=update',
    params: [],
    headers: { contentType: 'application/json' },
    body: body.buffer as ArrayBuffer,
    internal: true,
  };
}

export async function startBridgeHost(
  config: BrokerConfig,
  runner: PipelineRunner,
  log: Logger,
  execArgv?: string[],
): Promise<BridgeHostHandle> {
  const worker = new Worker(new URL('../../workers/bridge-host.js', import.meta.url), { workerData: { config }, execArgv });
  const failures = new Map<string, number>();
  const write = async (m: Extract<BridgeHostMessage, { kind: 'sample' }>): Promise<void> => {
    const result = await runner.run(sampleTask(m.entityId, m.entityType, m.attribute, m.value));
    const body = result.body === null ? '' : new TextDecoder().decode(result.body);
    // A batch answers 204 when every entry was written; 207 names the entry that was not.
    if (result.status === 201 || result.status === 204) return;
    const key = `${m.entityId} ${m.attribute}`;
    const n = (failures.get(key) ?? 0) + 1;
    failures.set(key, n);
    if (n === 1 || n % FAILURES_LOGGED_EVERY === 0)
      log.warn(
        { entityId: m.entityId, attribute: m.attribute, status: result.status, detail: body.slice(0, 500), failures: n },
        'sample not written',
      );
  };
  // Listened to before the thread is ready: a bridge may send samples as it starts. The samples of one entity are
  // written one after the other, in the order they came: pipeline threads run writes concurrently, and the last
  // sample must be the attribute's value (and history keep their order).
  const chains = new Map<string, Promise<void>>();
  worker.on('message', (m: BridgeHostMessage) => {
    if (m.kind !== 'sample') return;
    const next = (chains.get(m.entityId) ?? Promise.resolve())
      .then(() => write(m))
      .catch((e: unknown) => log.error({ err: e }, 'sample not written'));
    chains.set(m.entityId, next);
    void next.then(() => {
      if (chains.get(m.entityId) === next) chains.delete(m.entityId);
    });
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
