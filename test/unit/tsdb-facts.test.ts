// The ILP lines of tsdb's record (src/plugins/history/tsdb/facts.ts): the writing thread hands the writer the facts
// of each committed write's history (walkHistoryOfWrite) as bytes, the writer makes their lines. Pinned byte for
// byte, and the same as the rows of historyOfWrite written by rows.ts and ilp.ts (the path before, which the temporal
// API's QuestDB tests read back), for every kind of attribute, escaping, unicode, values JSON cannot write, and times
// before 1970 and after 2262.
import t from 'tap';
import fc from 'fast-check';
import { WriteFacts, linesOfFacts } from '../../src/plugins/history/tsdb/facts.js';
import { entLine, historyLine, instLine } from '../../src/plugins/history/tsdb/ilp.js';
import { entRow, instRow, newInstanceId } from '../../src/plugins/history/tsdb/rows.js';
import { historyOfWrite } from '../../src/store/kit/history-of-write.js';
import { changeBetween } from '../../src/ngsild/entity/write-change.js';
import type { StoredEntity, WriteEvent } from '../../src/store/contract.js';
import type { HistoryInstance } from '../../src/history/contract.js';

const TABLES = { inst: 'ldb_inst_v2_default', ent: 'ldb_ent_default' };
const T0 = '2024-01-01T00:00:00.000Z';
const T1 = '2024-01-01T00:00:01.000Z';
const ATTR = 'https://uri.etsi.org/ngsi-ld/default-context/temperature';
/** The line of the escaping test: ILP's backslashes in names and symbols, in quoted strings, and JSON's in the body. */
const GOLDEN =
  'ldb_inst_v2_default,entity=urn:ngsi-ld:Meter:a\\ b\\,c\\=d\\\\e,attr=https://uri.etsi.org/ngsi-ld/default-context/temperature,ds=urn:ds:x\\ y,vtype=Property iid="I0",body="{\\"type\\":\\"Property\\",\\"value\\":\\"say \\\\\\"hi\\\\\\"\\\\\\\\\\\\nnext\\\\r😀 é\\",\\"datasetId\\":\\"urn:ds:x y\\",\\"createdAt\\":\\"2024-01-01T00:00:01.000Z\\",\\"modifiedAt\\":\\"2024-01-01T00:00:01.000Z\\",\\"instanceId\\":\\"I0\\"}",val="string:say \\"hi\\"\\\\\\\nnext\\\r😀 é",gone=f,str="say \\"hi\\"\\\\\\\nnext\\\r😀 é",created_at=1704067201000000t,modified_at=1704067201000000t 1704067201000000t\n';

/**
 * Instance and row ids are made per thread and per call: both paths' lines compared with them named in order. A
 * deletion's time is its own clock's (2025 on): NOW.
 */
function named(lines: string): string {
  const seen = new Map<string, string>();
  return lines
    .replace(/20(2[5-9]|[3-9]\d)-\d\d-\d\dT[\d:.]+Z/g, 'NOW')
    .replace(/\b(17[4-9]|1[89]\d)\d{13}t/g, 'NOWt')
    .replace(/urn:ngsi-ld:attribute:instance:[0-9a-f-]+|rid="[0-9a-f-]+"/g, (id) => {
      if (!seen.has(id)) seen.set(id, id.startsWith('rid') ? `rid="R${seen.size}"` : `I${seen.size}`);
      return seen.get(id)!;
    });
}

function event(before: StoredEntity | undefined, after: StoredEntity | undefined): WriteEvent {
  return { tenant: '', id: (after ?? before)!.id, seq: 1, before, after, change: changeBetween(before, after) };
}

const entity = (id: string, at: string, attrs: Record<string, unknown>, type = ['https://example.org/T']): StoredEntity => ({
  id,
  type,
  createdAt: T0,
  modifiedAt: at,
  ...attrs,
});

/** record's facts, copied as the link copies them, and the writer's lines of them; the rows counted on both sides. */
const linesNow = (evs: readonly WriteEvent[]): { lines: string; inst: number; ent: number; counted: [number, number] } => {
  const w = new WriteFacts();
  w.reset(TABLES);
  for (const ev of evs) w.add(ev);
  const b = linesOfFacts('', new Uint8Array(w.bytes.view()), TABLES);
  if (b.failed > 0) throw new Error(b.error);
  return { lines: b.lines, inst: b.inst, ent: b.ent, counted: [w.inst, w.ent] };
};

/** tsdb-history.ts record before write-lines.ts: historyOfWrite, its rows, their lines. */
function linesBefore(evs: readonly WriteEvent[]): string {
  let lines = '';
  for (const ev of evs) {
    const w = historyOfWrite(ev.before, ev.after ?? null, ev.change, newInstanceId);
    if (w.event !== undefined) lines += entLine(TABLES.ent, entRow(ev.id, w.event.kind, w.event.at, w.entity));
    else if (w.entity !== undefined) lines += entLine(TABLES.ent, entRow(ev.id, 'record', w.entity.modifiedAt, w.entity));
    for (const { attrIri, instance } of w.instances) lines += instLine(TABLES.inst, instRow(ev.id, attrIri, instance));
  }
  return lines;
}

/**
 * The text as the writer sends it (writer.ts: one Buffer.from of the request): a lone surrogate is U+FFFD there, as it
 * is in the facts' UTF-8 (facts.ts), where the path before kept it in the line until then.
 */
const sent = (lines: string): string => Buffer.from(lines, 'utf8').toString('utf8');

const patchOf = (id: string, attrs: Record<string, unknown[]>): WriteEvent => {
  const before = entity(
    id,
    T0,
    Object.fromEntries(Object.keys(attrs).map((a) => [a, [{ type: 'Property', value: 0, createdAt: T0, modifiedAt: T0 }]])),
  );
  return event(before, entity(id, T1, attrs));
};

t.test('a PATCH of a number: the line, byte for byte', async (t) => {
  const out = linesNow([patchOf('urn:ngsi-ld:Meter:1', { [ATTR]: [{ type: 'Property', value: 21.5, createdAt: T0, modifiedAt: T1 }] })]);
  t.same([out.inst, out.ent], [1, 0], 'one instance row, no entity row');
  t.equal(
    named(out.lines),
    'ldb_inst_v2_default,entity=urn:ngsi-ld:Meter:1,attr=https://uri.etsi.org/ngsi-ld/default-context/temperature,ds=@none,vtype=Property ' +
      'iid="I0",body="{\\"type\\":\\"Property\\",\\"value\\":21.5,\\"createdAt\\":\\"2024-01-01T00:00:01.000Z\\",' +
      '\\"modifiedAt\\":\\"2024-01-01T00:00:01.000Z\\",\\"instanceId\\":\\"I0\\"}",val="number:21.5",gone=f,num=21.5,' +
      'created_at=1704067201000000t,modified_at=1704067201000000t 1704067201000000t\n',
  );
});

t.test('escaping and unicode: entity ids, datasetIds and values ILP escapes, line breaks, non-Latin text', async (t) => {
  const id = 'urn:ngsi-ld:Meter:a b,c=d\\e';
  const before = entity(id, T0, { [ATTR]: [{ type: 'Property', value: 0, datasetId: 'urn:ds:x y', createdAt: T0, modifiedAt: T0 }] });
  const after = entity(id, T1, {
    [ATTR]: [{ type: 'Property', value: 'say "hi"\\\nnext\r😀 é', datasetId: 'urn:ds:x y', createdAt: T0, modifiedAt: T1 }],
  });
  t.equal(named(linesNow([event(before, after)]).lines), GOLDEN);
});

t.test('an observedAt after 2262 is a designated timestamp QuestDB holds (µs); before 1970, the row is at 0', async (t) => {
  const at = (observedAt: string): string =>
    linesNow([patchOf('urn:x:1', { [ATTR]: [{ type: 'Property', value: 1, observedAt, createdAt: T0, modifiedAt: T1 }] })]).lines;
  t.match(
    at('2300-01-01T00:00:00.000Z'),
    /,observed_at=10413792000000000t,created_at=1704067201000000t,modified_at=1704067201000000t 10413792000000000t\n$/,
  );
  t.match(at('1960-01-01T00:00:00.000Z'), /,observed_at=-315619200000000t,.* 0t\n$/);
  t.match(
    at('9999-12-31T23:00:00-14:00'),
    / 253402347600000000000\n$/,
    'past 9999-12-31 (a DateTime with an offset): ns, which QuestDB refuses (400, the writer drops the line) where µs made it answer 500',
  );
});

const A = 'https://example.org/a';
const B = 'https://example.org/b';
const representative: Array<[string, WriteEvent]> = [
  ['Property (number)', patchOf('urn:x:1', { [A]: [{ type: 'Property', value: 3, unitCode: 'CEL', createdAt: T0, modifiedAt: T1 }] })],
  [
    'GeoProperty',
    patchOf('urn:x:1', {
      [A]: [{ type: 'GeoProperty', value: { type: 'Point', coordinates: [8.5, 47.3] }, createdAt: T0, modifiedAt: T1 }],
    }),
  ],
  [
    'LanguageProperty',
    patchOf('urn:x:1', { [A]: [{ type: 'LanguageProperty', languageMap: { en: 'red', de: 'rot' }, createdAt: T0, modifiedAt: T1 }] }),
  ],
  [
    'JsonProperty',
    patchOf('urn:x:1', { [A]: [{ type: 'JsonProperty', json: { a: [1, { b: null }], c: 'x"y' }, createdAt: T0, modifiedAt: T1 }] }),
  ],
  [
    'Relationship',
    patchOf('urn:x:1', { [A]: [{ type: 'Relationship', object: 'urn:ngsi-ld:Building:b1', createdAt: T0, modifiedAt: T1 }] }),
  ],
  [
    'datasetIds, with a sub-property and observedAt',
    patchOf('urn:x:1', {
      [A]: [
        { type: 'Property', value: true, createdAt: T0, modifiedAt: T1 },
        {
          type: 'Property',
          value: 'x',
          datasetId: 'urn:ds:1',
          observedAt: '2023-05-01T10:00:00Z',
          [B]: { type: 'Property', value: 1 },
          createdAt: T0,
          modifiedAt: T1,
        },
      ],
    }),
  ],
  [
    'an attribute deleted (tombstones)',
    event(
      entity('urn:x:1', T0, {
        [A]: [
          { type: 'Relationship', object: 'urn:y', createdAt: T0, modifiedAt: T0 },
          { type: 'Relationship', object: 'urn:z', datasetId: 'urn:ds:2', createdAt: T0, modifiedAt: T0 },
        ],
        [B]: [{ type: 'Property', value: 1, createdAt: T0, modifiedAt: T0 }],
      }),
      entity('urn:x:1', T1, { [B]: [{ type: 'Property', value: 1, createdAt: T0, modifiedAt: T0 }] }),
    ),
  ],
  [
    'a create (an entity row first)',
    event(undefined, entity('urn:x:2', T0, { [A]: [{ type: 'Property', value: 1, createdAt: T0, modifiedAt: T0 }] })),
  ],
  [
    'types changed (a record row)',
    event(entity('urn:x:1', T0, {}), entity('urn:x:1', T1, {}, ['https://example.org/T', 'https://example.org/U'])),
  ],
  [
    'a value JSON writes as null (1e400 in a request is Infinity): the line made on the writing thread',
    patchOf('urn:x:1', { [A]: [{ type: 'Property', value: Number.POSITIVE_INFINITY, createdAt: T0, modifiedAt: T1 }] }),
  ],
  [
    'lone surrogates and a NUL in the entity id, the attribute and the value',
    patchOf('urn:x:\ud800\u0000', { [`${A}\udc00`]: [{ type: 'Property', value: '\ud83d x \u2028', createdAt: T0, modifiedAt: T1 }] }),
  ],
  [
    'a replace (a replaced row)',
    ((before: StoredEntity, after: StoredEntity): WriteEvent => ({
      ...event(before, after),
      change: changeBetween(before, after, 'replace'),
    }))(
      entity('urn:x:1', T0, { [A]: [{ type: 'Property', value: 1, createdAt: T0, modifiedAt: T0 }] }),
      entity('urn:x:1', T1, { [B]: [{ type: 'Property', value: 2, createdAt: T1, modifiedAt: T1 }] }),
    ),
  ],
  [
    'a deletion (an entity row, a tombstone per instance)',
    event(entity('urn:x:1', T0, { [A]: [{ type: 'Property', value: 1, createdAt: T0, modifiedAt: T0 }] }), undefined),
  ],
];

t.test('every kind of write: the lines of the rows the path before wrote, in the same order', async (t) => {
  for (const [name, ev] of representative) {
    const now = linesNow([ev]);
    t.equal(sent(named(now.lines)), sent(named(linesBefore([ev]))), name);
    t.equal(now.lines.split('\n').length - 1, now.inst + now.ent, `${name}: the rows counted`);
    t.same(now.counted, [now.inst, now.ent], `${name}: the writing thread counts them alike`);
  }
  const all = representative.map(([, ev]) => ev);
  t.equal(sent(named(linesNow(all).lines)), sent(named(linesBefore(all))), 'several writes in one record');
});

t.test('historyLine: instLine of instRow, for any instance', async (t) => {
  const text = fc.string({ unit: fc.constantFrom('a', ' ', ',', '=', '"', '\\', '\n', '\r', 'é', '😀', '\u0000', '\u2028', '\ud800') });
  const value = fc.oneof(
    fc.json().map((j) => JSON.parse(j) as unknown),
    text,
    fc.double(),
    fc.constant(Number.NaN),
  );
  const time = fc.integer({ min: -(2 ** 40), max: 2 ** 46 }).map((ms) => new Date(ms).toISOString());
  const inst = fc.record(
    {
      type: fc.constantFrom('Property', 'Relationship', 'GeoProperty', 'LanguageProperty', 'JsonProperty', 'VocabProperty', 'ListProperty'),
      value,
      object: text,
      languageMap: fc.dictionary(fc.constantFrom('en', 'de'), text),
      json: value,
      vocab: text,
      valueList: fc.array(value, { maxLength: 3 }),
      datasetId: text,
      observedAt: time,
      deletedAt: time,
      unitCode: text,
      [B]: fc.record({ type: fc.constant('Property'), value }),
      instanceId: text,
      createdAt: time,
    },
    { requiredKeys: ['type', 'instanceId', 'createdAt'] },
  );
  const samples = fc.sample(
    fc.tuple(
      inst,
      text.filter((s) => s.length > 0),
      time,
    ),
    { numRuns: 500, seed: 18 },
  );
  let same = 0;
  for (const [i, entityId, modifiedAt] of samples) {
    const h = { ...i, modifiedAt: modifiedAt } as HistoryInstance;
    if (historyLine(TABLES.inst, entityId, A, h, Date.parse(h.createdAt)) === instLine(TABLES.inst, instRow(entityId, A, h))) same++;
  }
  t.equal(same, samples.length, 'every instance byte for byte');
});

t.test("the temporal API's lines (tsdb-history.ts write) pass as they are, with the rows of each table they hold", async (t) => {
  const w = new WriteFacts();
  w.reset(TABLES);
  const ent = entLine(TABLES.ent, entRow('urn:x:1', 'purged', T1));
  const inst = instLine(TABLES.inst, instRow('urn:x:1', A, { type: 'Property', value: 1, instanceId: 'i', createdAt: T0, modifiedAt: T1 }));
  w.addLines(inst + ent, 1, 1);
  w.add(patchOf('urn:x:2', { [A]: [{ type: 'Property', value: 2, createdAt: T0, modifiedAt: T1 }] }));
  const b = linesOfFacts('t1', new Uint8Array(w.bytes.view()), TABLES);
  t.same([b.tenant, b.inst, b.ent, b.failed], ['t1', 2, 1, 0]);
  t.ok(b.lines.startsWith(inst + ent), 'the lines first, as handed');
  t.match(b.lines.slice((inst + ent).length), /^ldb_inst_v2_default,entity=urn:x:2,.*,num=2,/);
});

t.test('a fact whose line cannot be made is left out and counted, the others are written', async (t) => {
  const w = new WriteFacts();
  w.reset(TABLES);
  // A create whose entity's times are not times: entLine refuses its row (NaN is no time in whole ms).
  w.add(event(undefined, { ...entity('urn:x:3', T0, {}), createdAt: 'never', modifiedAt: 'never' }));
  w.add(patchOf('urn:x:4', { [A]: [{ type: 'Property', value: 4, createdAt: T0, modifiedAt: T1 }] }));
  const b = linesOfFacts('', new Uint8Array(w.bytes.view()), TABLES);
  t.same([b.inst, b.ent, b.failed], [1, 0, 1]);
  t.match(b.error, /not a time in whole ms/);
  t.match(b.lines, /^ldb_inst_v2_default,entity=urn:x:4,[^\n]*\n$/);
});
