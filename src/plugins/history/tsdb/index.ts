// The tsdb history plugin (`--troe tsdb`, seed 001 §2.8): the temporal history on QuestDB, beside the store. The
// primary instance starts the writer thread (writer-thread.ts) that appends every thread's rows; each instance
// (every thread) links to it and reads QuestDB in SQL. QuestDB away at start is no failure: entity writes go on,
// their history waits in the writer's buffer, temporal reads answer 503 until it is back.
import { Worker } from 'node:worker_threads';
import type { History, HistoryOpenParams } from '../../../history/contract.js';
import type { PluginLogger } from '../../../plugin/contract.js';
import { channelName, type WriterData, type WriterReport } from './channel.js';
import { WriterLink } from './link.js';
import { exec } from './sql.js';
import { endpointOf, options, settingsOf, type TsdbSettings } from './settings.js';
import { TsdbHistory } from './tsdb-history.js';

export { options };

/** How long the writer may try, at exit, to send what it still holds. */
const CLOSE_MS = 5_000;

/** The writer thread of a broker instance (one per channel). */
const writers = new Map<string, Worker>();

function startWriter(s: TsdbSettings, channel: string, log: PluginLogger): Worker {
  const worker = new Worker(new URL('./writer-thread.js', import.meta.url), { workerData: { settings: s, channel } satisfies WriterData });
  worker.on('message', (m: WriterReport) => {
    if (m.k === 'log') log[m.level](m.obj, m.msg);
  });
  worker.on('error', (err) => log.error({ err }, 'tsdb: the writer thread failed'));
  worker.unref();
  writers.set(channel, worker);
  return worker;
}

async function stopWriter(channel: string, log: PluginLogger): Promise<void> {
  const worker = writers.get(channel);
  if (worker === undefined) return;
  writers.delete(channel);
  const lost = await new Promise<number | undefined>((resolve) => {
    const timer = setTimeout(() => resolve(undefined), CLOSE_MS + 2_000);
    worker.on('message', (m: WriterReport) => {
      if (m.k !== 'closed') return;
      clearTimeout(timer);
      resolve(m.lost);
    });
    worker.postMessage({ k: 'close', ms: CLOSE_MS });
  });
  if (lost === undefined || lost > 0) log.error({ rows: lost ?? 'unknown' }, 'tsdb: history rows not written to QuestDB at exit are lost');
  await worker.terminate();
}

export async function historyOpen(params: HistoryOpenParams): Promise<History> {
  const s = settingsOf(params.options);
  if (params.instance === undefined) throw new Error('--troe tsdb: the broker gave no instance id to name its channel');
  const channel = channelName(params.instance);
  if (params.primary) {
    startWriter(s, channel, params.log);
    try {
      await exec(s, 'SELECT 1', 3_000);
      params.log.info({ endpoint: endpointOf(s), tables: `${s.name}_*` }, 'tsdb: QuestDB history');
    } catch (e) {
      params.log.warn(
        { endpoint: endpointOf(s), err: (e as Error).message },
        'tsdb: QuestDB cannot be reached: entity writes go on, their history is buffered, temporal reads answer 503',
      );
    }
  }
  const link = await WriterLink.open(channel);
  const history = new TsdbHistory(s, link, params.log);
  if (!params.primary) return history;
  // The primary's close also stops the writer, once every other thread closed its link.
  return Object.assign(history, {
    close: async (): Promise<void> => {
      await link.close();
      await stopWriter(channel, params.log);
    },
  });
}
