// The tsdb writer thread (writer-thread.ts) and the instances that hold rows before they post them (link.ts: the
// front's, FRONT_HOLD_MS). Rows an instance still holds are asked for (flush) before the writer closes, so they are
// sent or counted lost, never left behind unseen: the front's inline pipeline context is never closed, and its timer
// posted its rows after the writer had closed (tsdb.faults 'stopped while QuestDB is away': the error line named no
// loss). A sync of another instance asks every holder, not only the last to say hello.
import t from 'tap';
import { createServer } from 'node:net';
import { randomBytes } from 'node:crypto';
import { BroadcastChannel, Worker } from 'node:worker_threads';
import { channelName, type Greeting, type WriterData, type WriterReport } from '../../src/plugins/history/tsdb/channel.js';
import { WriterLink } from '../../src/plugins/history/tsdb/link.js';
import { WriteFacts } from '../../src/plugins/history/tsdb/facts.js';

/** A port nothing listens on: QuestDB is away, so every row the writer holds at its close is counted lost. */
async function deadPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((res) => s.listen(0, '127.0.0.1', res));
  const port = (s.address() as { port: number }).port;
  await new Promise<void>((res) => s.close(() => res()));
  return port;
}

/** A held link never posts by its timer within a test: what reaches the writer comes by a flush or a close. */
const NEVER_MS = 600_000;

async function startWriter(buffer = 1_000_000): Promise<{ channel: string; stop: () => Promise<number> }> {
  const channel = channelName(`unit-${randomBytes(4).toString('hex')}`);
  const data: WriterData = { settings: { host: '127.0.0.1', port: await deadPort(), name: 'unit', buffer }, channel };
  const worker = new Worker(new URL('../../src/plugins/history/tsdb/writer-thread.js', import.meta.url), { workerData: data });
  const closed = new Promise<number>((resolve) =>
    worker.on('message', (m: WriterReport) => {
      if (m.k === 'closed') resolve(m.lost);
    }),
  );
  return {
    channel,
    stop: async (): Promise<number> => {
      worker.postMessage({ k: 'close', ms: 1_000 });
      const lost = await closed;
      await worker.terminate();
      return lost;
    },
  };
}

/** Facts of `inst` and `ent` rows (what a link sends): lines made on the writing thread, as the temporal API's writes. */
function rows(inst: number, ent: number): WriteFacts {
  const f = new WriteFacts();
  f.reset({ inst: 'unit_inst', ent: 'unit_ent' });
  f.addLines('x\n'.repeat(inst + ent), inst, ent);
  return f;
}

t.test('rows an instance still holds when the writer closes reach it first: counted lost with QuestDB away', async (t) => {
  const w = await startWriter();
  // As the front: the history's primary instance, closed before the writer, and the inline pipeline's, never closed.
  const primary = await WriterLink.open(w.channel, NEVER_MS);
  const front = await WriterLink.open(w.channel, NEVER_MS);
  t.equal(front.send('t1', rows(2, 1)), undefined, 'queued at once');
  t.equal(front.send('t2', rows(1, 0)), undefined);
  await primary.close();
  t.equal(await w.stop(), 4, 'every row the front held is sent or counted lost');
});

t.test('a holder that closed is not asked again; what it posted at close counts', async (t) => {
  const w = await startWriter();
  const a = await WriterLink.open(w.channel, NEVER_MS);
  const b = await WriterLink.open(w.channel, NEVER_MS);
  a.send('t1', rows(3, 0));
  await a.close();
  b.send('t1', rows(1, 1));
  t.equal(await w.stop(), 5);
  await b.close();
});

t.test('nothing held: the close counts nothing lost', async (t) => {
  const w = await startWriter();
  const a = await WriterLink.open(w.channel, NEVER_MS);
  const b = await WriterLink.open(w.channel, 0);
  await b.close();
  t.equal(await w.stop(), 0);
  await a.close();
});

t.test('a sync of another instance asks every holder for its rows, not only the last to say hello', async (t) => {
  // A buffer of 2 rows: the writer says full once it received the 3 rows the first holder holds.
  const w = await startWriter(2);
  const first = await WriterLink.open(w.channel, NEVER_MS);
  const second = await WriterLink.open(w.channel, NEVER_MS);
  const reader = await WriterLink.open(w.channel, 0);
  const watch = new BroadcastChannel(w.channel);
  const full = new Promise<boolean>((resolve) => {
    const timer = setTimeout(() => resolve(false), 10_000);
    watch.onmessage = (ev: MessageEvent): void => {
      if ((ev.data as Greeting).k === 'pressure' && (ev.data as { full: boolean }).full) {
        clearTimeout(timer);
        resolve(true);
      }
    };
  });
  first.send('t1', rows(3, 0));
  // QuestDB is away: the sync fails, after the holders were asked.
  await t.rejects(reader.sync());
  t.ok(await full, "the first holder's rows reached the writer");
  watch.close();
  for (const l of [first, second, reader]) await l.close();
  t.equal(await w.stop(), 3);
});
