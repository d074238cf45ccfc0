// What a PATCH's history row costs the broker with --troe tsdb (issue 18: the write ratio), without QuestDB: on the
// writing thread, the row made and handed to the writer thread (one message per turn of the loop, ROWS_PER_TURN rows
// in it; the message's clone is what postMessage pays, here by structuredClone), and on the writer thread, the rows
// put into the ILP request's bytes. Before: row objects cloned field by field and written into the client's buffer
// string by string (writer.ts writeInst); now: each row's ILP line made once on the writing thread (ilp.ts), one
// string per message, one UTF-8 conversion per request.
// The hand-off itself, on a BroadcastChannel to a thread that listens (process CPU: the sender's and the listener's):
// a message per turn of the front's loop (one PATCH's rows under load), a message per 10 ms (link.ts FRONT_HOLD_MS,
// HELD PATCHes), and the alternative issue 18 weighed, the lines encoded into a SharedArrayBuffer ring (and decoded,
// as the writer would) with no message. Measured (2 cores, loaded), beyond making the lines (3.9 µs): per turn 5.6 to
// 7 µs a PATCH, held 0.6 to 1.1, the ring 2.8: the hold costs less than the ring would, so the ring was not built.
// Since facts.ts the writing thread holds and hands bytes (the facts of the rows) and the writer thread makes the
// lines: bench/micro/tsdb-record.ts measures that against the lines made here.
// Run: npm run build && node dist/bench/micro/tsdb-handoff.js
import { instRow, newInstanceId, type InstRow } from '../../src/plugins/history/tsdb/rows.js';
import { instLine, str } from '../../src/plugins/history/tsdb/ilp.js';
import { newSender, writeInst } from '../../src/plugins/history/tsdb/writer.js';
import type { TsdbSettings } from '../../src/plugins/history/tsdb/settings.js';
import { historyInstanceOf } from '../../src/store/kit/history-of-write.js';
import { run, timeIt } from './harness.js';
import { BroadcastChannel, Worker } from 'node:worker_threads';

const ROWS_PER_TURN = 20;
/** PATCHes in 10 ms of the front at about 7,000 PATCH/s (bench/temporal-tsdb.ts). */
const HELD = 70;
const QUOTED_ALL = /["\n\r\\]/g;
const TABLE = 'ldb_inst_v2_default';
const ATTR = 'https://uri.etsi.org/ngsi-ld/default-context/temperature';
let k = 0;

/** The history row of one PATCH of temperature, as the front makes it. */
function patchRow(): InstRow {
  const at = new Date(1_700_000_000_000 + k).toISOString();
  const h = historyInstanceOf({ type: 'Property', value: k % 1000 }, at, newInstanceId(Date.parse(at)));
  return instRow(`urn:ngsi-ld:Bench:${++k % 1000}`, ATTR, h);
}

run(async () => {
  const s: TsdbSettings = { host: '127.0.0.1', port: 1, name: 'ldb', buffer: 1e6 };
  const sender = await newSender(s, 1000);
  const objects = Array.from({ length: ROWS_PER_TURN }, patchRow);
  const text = objects.map((r) => instLine(TABLE, r)).join('');
  const body = objects[0]!.body;
  for (let round = 0; round < 2; round++) {
    await timeIt(
      'front before: row objects, cloned',
      () => {
        const inst: InstRow[] = [];
        for (let i = 0; i < ROWS_PER_TURN; i++) inst.push(patchRow());
        return structuredClone({ k: 'rows', b: [{ tenant: '', inst, ent: [] }] });
      },
      { per: ROWS_PER_TURN },
    );
    await timeIt(
      'front now: ILP lines, one string cloned',
      () => {
        let lines = '';
        for (let i = 0; i < ROWS_PER_TURN; i++) lines += instLine(TABLE, patchRow());
        return structuredClone({ k: 'rows', b: [{ tenant: '', lines, inst: ROWS_PER_TURN, ent: 0 }] });
      },
      { per: ROWS_PER_TURN },
    );
    await timeIt(
      'writer before: client row API',
      async () => {
        for (const r of objects) await writeInst(sender, TABLE, r);
        sender.reset();
      },
      { per: ROWS_PER_TURN },
    );
    await timeIt('writer now: one Buffer.from per request', () => Buffer.from(text, 'utf8'), { per: ROWS_PER_TURN });
    // A PATCH's body column, JSON quoted throughout: the regular expression's replace, and what ilp.ts str does now.
    await timeIt('body escaped before: replace(/["\\n\\r\\\\]/g)', () => `"${body.replace(QUOTED_ALL, '\\$&')}"`);
    await timeIt('body escaped now: ilp.ts str', () => str(body));
    // Writes under load come several to the same ms (here 8): its part of the id is made once per ms (0.22 -> 0.14 µs).
    await timeIt('newInstanceId, 8 per ms', () => newInstanceId(1_700_000_000_000 + (k++ >> 3)));
    await handOff(patchLines);
  }
});

/** A PATCH's two lines (its entity's record and its instance), about as the front makes them. */
function patchLines(): string {
  const r = patchRow();
  return instLine(TABLE, r) + instLine(TABLE, { ...r, attr: 'record' });
}

async function handOff(lines: () => string): Promise<void> {
  const name = `tsdb-handoff-${process.pid}`;
  const listener = new Worker(
    `const { BroadcastChannel } = require('node:worker_threads'); const c = new BroadcastChannel(${JSON.stringify(name)}); let n = 0; c.onmessage = (e) => { n += e.data.b[0].lines.length; };`,
    { eval: true },
  );
  await new Promise((res) => setTimeout(res, 200));
  const channel = new BroadcastChannel(name);
  const post = (per: number): void => {
    let text = '';
    for (let i = 0; i < per; i++) text += lines();
    channel.postMessage({ k: 'rows', b: [{ tenant: '', lines: text, inst: per, ent: per }] });
  };
  await timeIt("hand-off: none (a PATCH's lines made, the rows below include it)", lines, { unit: 'us' });
  await timeIt('hand-off: a message per PATCH (per turn)', () => post(1), { unit: 'us' });
  await timeIt(`hand-off: a message per ${HELD} PATCHes (10 ms held)`, () => post(HELD), { per: HELD });
  const ring = new Uint8Array(new SharedArrayBuffer(1 << 22));
  const encoder = new TextEncoder();
  const decoder = new TextDecoder();
  let at = 0;
  await timeIt(
    'hand-off: a SharedArrayBuffer ring (encoded, decoded), no message',
    () => {
      if (at > ring.length >> 1) at = 0;
      const from = at;
      at += encoder.encodeInto(lines(), ring.subarray(at)).written;
      return decoder.decode(ring.slice(from, at));
    },
    { unit: 'us' },
  );
  channel.close();
  await listener.terminate();
}
