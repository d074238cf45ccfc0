// The tsdb writer's fast path through @questdb/nodejs-client's escaping (src/plugins/history/tsdb/fast-escape.ts):
// whatever the strings, a sender with it writes the same ILP bytes as the client's own per-character loop.
import t from 'tap';
import fc from 'fast-check';
import { Sender, SenderOptions } from '@questdb/nodejs-client';
import { fastEscape } from '../../src/plugins/history/tsdb/fast-escape.js';

interface Row {
  table: string;
  sym: string;
  str: string;
  ts: number;
}

async function sender(): Promise<Sender> {
  // Nothing is sent: auto_flush off and no flush, so no server is needed.
  return new Sender(await SenderOptions.fromConfig('http::addr=127.0.0.1:9;protocol_version=1;auto_flush=off', { log: () => {} }));
}

async function bytesOf(s: Sender, rows: readonly Row[]): Promise<string> {
  for (const r of rows) await s.table(r.table).symbol('entity', r.sym).stringColumn('body', r.str).at(r.ts, 'ms');
  // The bytes the next flush would send (the client's buffer; Sender itself does not expose them).
  return (s as unknown as { buffer: { toBufferView(): Buffer } }).buffer.toBufferView().toString('utf8');
}

const text = fc.string({ unit: fc.constantFrom('a', 'Z', '0', ' ', ',', '=', '"', '\\', '\n', '\r', 'é', '😀', '\u0000', '{', ':') });
const row = fc.record({
  table: fc.constantFrom('inst', 'ent_t1'),
  sym: fc.oneof(fc.string(), text),
  str: fc.oneof(fc.string(), text, fc.json()),
  ts: fc.integer({ min: 0, max: 2 ** 40 }),
});

t.test('the same bytes as the client writes, for any names and values', async (t) => {
  // Reference bytes first, from the client as shipped (the fast path changes its buffer class for the process).
  const cases = fc.sample(fc.array(row, { minLength: 1, maxLength: 5 }), { numRuns: 300, seed: 7 });
  const expected: string[] = [];
  for (const rows of cases) expected.push(await bytesOf(await sender(), rows));
  const probe = await sender();
  t.equal(fastEscape(probe), true, 'the client is shaped as the fast path expects (4.2.0)');
  t.equal(fastEscape(probe), true, 'once per process, a second call is a no-op');
  let same = 0;
  for (let i = 0; i < cases.length; i++) if ((await bytesOf(await sender(), cases[i]!)) === expected[i]) same++;
  t.equal(same, cases.length, 'every case byte for byte');
  // The plain strings take the fast path, the others the client's loop: both kinds were in the cases.
  const plain = cases.flat().filter((r) => !/[ ,=\n\r\\"]/.test(r.sym + r.str)).length;
  t.ok(plain > 0 && plain < cases.flat().length, `${plain} plain rows of ${cases.flat().length}`);
});

t.test('a client of another shape is left as it is', async (t) => {
  t.equal(fastEscape({ buffer: {} } as unknown as Sender), false);
  t.equal(fastEscape({} as unknown as Sender), false);
});
