// The tsdb history's ILP lines (src/plugins/history/tsdb/ilp.ts), made by the writing thread and sent by the writer
// thread as they are: for any row, byte for byte what @questdb/nodejs-client's row API (writer.ts writeInst and
// writeEnt, protocol version 1) writes for it, so the escaping of names and values is the client's, but for the
// designated timestamp: µs with its unit (`t`) where the client writes ns (which overflowed past 2262).
import t from 'tap';
import fc from 'fast-check';
import { Sender, SenderOptions } from '@questdb/nodejs-client';
import { entLine, instLine } from '../../src/plugins/history/tsdb/ilp.js';
import { writeEnt, writeInst } from '../../src/plugins/history/tsdb/writer.js';
import type { EntRow, InstRow } from '../../src/plugins/history/tsdb/rows.js';

async function clientBytes(write: (s: Sender) => Promise<void>): Promise<string> {
  // Nothing is sent: auto_flush off and no flush, so no server is needed.
  const s = new Sender(await SenderOptions.fromConfig('http::addr=127.0.0.1:9;protocol_version=1;auto_flush=off', { log: () => {} }));
  await write(s);
  return (s as unknown as { buffer: { toBufferView(): Buffer } }).buffer.toBufferView().toString('utf8');
}

const text = fc.string({ unit: fc.constantFrom('a', 'Z', '0', ' ', ',', '=', '"', '\\', '\n', '\r', 'é', '😀', '\u0000', '{', ':', "'") });
const anyText = fc.oneof(
  fc.string({ minLength: 1 }),
  text.filter((s) => s.length > 0),
  fc.json(),
);
const ms = fc.integer({ min: -(2 ** 40), max: 2 ** 43 });
const iso = fc.integer({ min: -(2 ** 40), max: 2 ** 43 }).map((n) => new Date(n).toISOString());

const instArb: fc.Arbitrary<InstRow> = fc.record(
  {
    ts: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 2 ** 43 })),
    crt: ms,
    entity: anyText,
    attr: anyText,
    iid: anyText,
    ds: fc.oneof(fc.constant('@none'), anyText),
    vtype: fc.constantFrom('Property', 'Relationship', 'GeoProperty', 'LanguageProperty'),
    num: fc.double({ noNaN: true, noDefaultInfinity: true }),
    str: anyText,
    val: anyText,
    body: fc.oneof(anyText, fc.json()),
    obs: fc.oneof(fc.constant(0), ms),
    mod: ms,
    del: ms,
    gone: fc.boolean(),
  },
  { requiredKeys: ['ts', 'crt', 'entity', 'attr', 'iid', 'ds', 'vtype', 'val', 'body', 'mod', 'gone'] },
);

const entArb: fc.Arbitrary<EntRow> = fc.record(
  {
    ts: fc.integer({ min: 0, max: 2 ** 43 }),
    rid: anyText,
    entity: anyText,
    kind: fc.constantFrom('created', 'replaced', 'deleted', 'record', 'purged', 'dropped', 'void' as const),
    rec: fc.record(
      {
        id: anyText,
        type: fc.array(anyText, { minLength: 1, maxLength: 3 }),
        scope: fc.array(anyText, { maxLength: 2 }),
        createdAt: iso,
        modifiedAt: iso,
        deletedAt: iso,
      },
      { requiredKeys: ['id', 'type', 'createdAt', 'modifiedAt'] },
    ),
    attr: anyText,
    ds: anyText,
  },
  { requiredKeys: ['ts', 'rid', 'entity', 'kind'] },
);

const TABLE = 'ldb_inst_v2_t_1';

/** A line with its designated timestamp in ns, as the client writes it (protocol version 1). */
const inNs = (line: string): string => line.replace(/ (\d+)t\n$/, (_, us: string) => ` ${us === '0' ? '0' : `${us}000`}\n`);

t.test('an instance row: the client row API bytes, for any names and values', async (t) => {
  const rows = fc.sample(instArb, { numRuns: 500, seed: 18 });
  let same = 0;
  for (const r of rows) if (inNs(instLine(TABLE, r)) === (await clientBytes((s) => writeInst(s, TABLE, r)))) same++;
  t.equal(same, rows.length, 'every row byte for byte');
  t.ok(
    rows.some((r) => /[ ,=\n\r\\"]/.test(r.entity + r.body)),
    'rows with characters ILP escapes were among them',
  );
  t.ok(rows.some((r) => r.num === undefined) && rows.some((r) => r.obs === 0), 'rows without the optional columns and at time 0 too');
});

t.test('an entity row: the client row API bytes, for any names and values', async (t) => {
  const rows = fc.sample(entArb, { numRuns: 500, seed: 18 });
  let same = 0;
  for (const r of rows) if (inNs(entLine(TABLE, r)) === (await clientBytes((s) => writeEnt(s, TABLE, r)))) same++;
  t.equal(same, rows.length, 'every row byte for byte');
});

t.test('a time the client would refuse is refused here too, before it reaches the writer', async (t) => {
  const r: InstRow = {
    ts: 1.5,
    crt: 0,
    entity: 'e',
    attr: 'a',
    iid: 'i',
    ds: '@none',
    vtype: 'Property',
    val: 'v',
    body: '{}',
    mod: 0,
    gone: false,
  };
  t.throws(() => instLine(TABLE, r), /whole ms/);
  t.throws(() => instLine(TABLE, { ...r, ts: 0, crt: Number.NaN }), /whole ms/);
  const e: EntRow = {
    ts: 0,
    rid: 'r',
    entity: 'e',
    kind: 'record',
    rec: { id: 'e', type: ['T'], createdAt: 'not a time', modifiedAt: 'x' },
  };
  t.throws(() => entLine(TABLE, e), /whole ms/);
  await t.rejects(
    clientBytes((s) => writeInst(s, TABLE, r)),
    'the client refuses the same row',
  );
});
