// ldbroker-import refusals (seed 001 §7 import rows, §2.5 name rule, importer behaviour 7): each refused record is
// named by its line and a reason and not written, the others are; a stream of just the fixed refused lines then goes
// in; a stream cut in the middle of a line loses only that line.
import t from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startBroker, call, NGSI } from './helpers/broker.js';
import { importInto, ndjson } from './helpers/import.js';
import { repoPath } from '../helpers/repo.js';

const EX = 'https://example.org/';
const T0 = '2023-11-14T22:13:20.123Z';

const tmp = (t: { teardown(fn: () => void): void }): string => {
  const dir = mkdtempSync(join(tmpdir(), 'ldbroker-import-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
};

const entity = (n: number, extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  kind: 'entity',
  data: {
    id: `urn:ngsi-ld:Thing:${n}`,
    type: `${EX}Thing`,
    createdAt: T0,
    modifiedAt: T0,
    [`${EX}n`]: { type: 'Property', value: n, createdAt: T0, modifiedAt: T0 },
    ...extra,
  },
});

const sub = (id: string, extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  kind: 'subscription',
  data: {
    id,
    type: 'Subscription',
    entities: [{ type: `${EX}Thing` }],
    createdAt: T0,
    modifiedAt: T0,
    notification: { endpoint: { uri: 'http://127.0.0.1:9/n' }, timesSent: 0, timesFailed: 0 },
    ...extra,
  },
});

const reg = (id: string, info: Record<string, unknown>, extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  kind: 'registration',
  data: {
    id,
    type: 'ContextSourceRegistration',
    information: [info],
    endpoint: 'http://127.0.0.1:9/r',
    createdAt: T0,
    modifiedAt: T0,
    ...extra,
  },
});

const ti = (attr: string, n: number, extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  kind: 'temporalInstance',
  data: {
    id: 'urn:ngsi-ld:Thing:1',
    type: `${EX}Thing`,
    attr,
    op: 'created',
    instance: { instanceId: `urn:ngsi-ld:attribute:instance:r${n}`, createdAt: T0, modifiedAt: T0, type: 'Property', value: n },
    ...extra,
  },
});

// Each a record a name of which is not expanded, with the term its refusal must name.
const NOT_EXPANDED: Array<[string, Record<string, unknown>, string]> = [
  ['a short entity type', { kind: 'entity', data: { ...(entity(90).data as object), type: 'Thing' } }, '"Thing"'],
  [
    'a compact attribute name',
    entity(91, { 'ex:temperature': { type: 'Property', value: 1, createdAt: T0, modifiedAt: T0 } }),
    '"ex:temperature"',
  ],
  [
    'a short Sub-Attribute name',
    entity(92, { [`${EX}t`]: { type: 'Property', value: 1, accuracy: { type: 'Property', value: 1 }, createdAt: T0, modifiedAt: T0 } }),
    '"accuracy"',
  ],
  [
    'a short vocab value',
    entity(93, { [`${EX}c`]: { type: 'VocabProperty', vocab: 'Office', createdAt: T0, modifiedAt: T0 } }),
    '"Office"',
  ],
  ['a short type in a subscription', sub('urn:ngsi-ld:Subscription:N1', { entities: [{ type: 'Thing' }] }), '"Thing"'],
  ['a short watched attribute', sub('urn:ngsi-ld:Subscription:N2', { watchedAttributes: ['temperature'] }), '"temperature"'],
  [
    'a short notified attribute',
    sub('urn:ngsi-ld:Subscription:N3', { notification: { endpoint: { uri: 'http://127.0.0.1:9/n' }, attributes: ['ex:t'] } }),
    '"ex:t"',
  ],
  ['a short name in q', sub('urn:ngsi-ld:Subscription:N4', { q: `${EX.replace('.', '%2E')}a>1;temperature<3` }), '"temperature"'],
  ['a short registered type', reg('urn:ngsi-ld:ContextSourceRegistration:N5', { entities: [{ type: 'Room' }] }), '"Room"'],
  [
    'a short registered property',
    reg('urn:ngsi-ld:ContextSourceRegistration:N6', { entities: [{ type: `${EX}Room` }], propertyNames: ['humidity'] }),
    '"humidity"',
  ],
  [
    'a short history type',
    { kind: 'temporalEntity', data: { id: 'urn:ngsi-ld:Thing:1', type: 'Thing', op: 'created', at: T0 } },
    '"Thing"',
  ],
  ['a short history attribute', ti('temperature', 1), '"temperature"'],
];

t.test('a name that is not expanded refuses its record, naming the term; the others go in', async (t) => {
  const dir = tmp(t);
  const stream = [entity(1), ...NOT_EXPANDED.map(([, r]) => r), entity(2)];
  const out = await importInto(dir, stream);
  t.equal(out.anyRefused, true);
  t.same(
    out.refusedLines,
    NOT_EXPANDED.map((_, i) => i + 2),
  );
  const lines = out.err.split('\n');
  NOT_EXPANDED.forEach(([what, , term], i) => {
    const line = lines.find((l) => l.startsWith(`line ${i + 2}: `));
    t.match(line, term, `${what}: the line names ${term}`);
    t.match(line, /is not expanded .*the stream must hold full IRIs/, `${what}: says why`);
  });
  t.equal(out.line('entities'), 'entities: 2 imported, 4 refused');
  t.equal(out.line('subscriptions'), 'subscriptions: 0 imported, 4 refused');
  t.equal(out.line('registrations'), 'registrations: 0 imported, 2 refused');
  t.equal(out.line('temporal entity events'), 'temporal entity events: 0 imported, 1 refused');
  t.equal(out.line('temporal instances'), 'temporal instances: 0 imported, 1 refused');

  const broker = await startBroker(['--dbDir', dir, '--troe', 'embdb']);
  t.teardown(() => broker.stop());
  const all = await call(broker, 'GET', `${NGSI}/entities?type=${encodeURIComponent(`${EX}Thing`)}&count=true`);
  t.equal(all.headers.get('ngsild-results-count'), '2', 'only the two good entities were written');
  t.equal((await call(broker, 'GET', `${NGSI}/entities/urn:ngsi-ld:Thing:90`)).status, 404);
  t.same((await call(broker, 'GET', `${NGSI}/subscriptions`)).json, []);
  // A refused history record writes nothing, and its entity gets no created history in its place.
  t.equal((await call(broker, 'GET', `${NGSI}/temporal/entities/urn:ngsi-ld:Thing:1`)).status, 404);
  t.equal((await call(broker, 'GET', `${NGSI}/temporal/entities/urn:ngsi-ld:Thing:2`)).status, 200);
});

t.test('bad records: refused with the reason, never half-written', async (t) => {
  const dir = tmp(t);
  const stream: Array<Record<string, unknown> | string> = [
    entity(1),
    '{"kind":"entity","data":',
    '[1,2]',
    { kind: 'folder', data: {} },
    { kind: 'entity', tenant: 'Not A Tenant!', data: entity(3).data as object },
    { kind: 'entity', data: entity(4).data as object, extra: 1 },
    entity(5, { createdAt: 'yesterday' }),
    { kind: 'entity', data: { id: 'urn:ngsi-ld:Thing:6', type: `${EX}Thing`, modifiedAt: T0 } },
    entity(7, { [`${EX}g`]: { type: 'GeoProperty', value: { type: 'Point', coordinates: [1] }, createdAt: T0, modifiedAt: T0 } }),
    sub('urn:ngsi-ld:Subscription:X1', { q: 'https://example%2Eorg/a>>' }),
    sub('urn:ngsi-ld:Subscription:X2', { notification: { endpoint: { uri: 'ftp://127.0.0.1/x' } } }),
    sub('urn:ngsi-ld:Subscription:X3', { expiresAt: '2020-01-01T00:00:00Z' }),
    { kind: 'header', format: 'broker-migration', version: 1, source: 'late' },
    entity(8),
  ];
  const out = await importInto(dir, stream);
  const reason = (n: number): string => out.err.split('\n').find((l) => l.startsWith(`line ${n}: `)) ?? '';
  t.match(reason(2), /not JSON/);
  t.match(reason(3), /not a record of the stream/);
  t.match(reason(4), /not a record of the stream \(kind "folder"\)/);
  t.match(reason(5), /NGSILD-Tenant 'Not A Tenant!' is not a valid tenant name/);
  t.match(reason(6), /extra: not a member of a record/);
  t.match(reason(7), /createdAt: "yesterday" is not an ISO 8601 date-time/);
  t.match(reason(8), /createdAt: missing/);
  t.match(reason(9), /GeoJSON/);
  t.match(reason(10), /subscription urn:ngsi-ld:Subscription:X1 refused: BadRequestData: q/);
  t.match(reason(11), /ftp/);
  t.match(reason(12), /expiresAt.*in the past/, 'an expiry before the subscription was created');
  t.match(reason(13), /a header may only be the first line/);
  t.same(out.refusedLines, [2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13]);
  t.equal(out.line('entities'), 'entities: 2 imported, 5 refused');
  t.equal(out.line('other lines'), 'other lines: 4 refused');
});

t.test('a history batch with an instanceId already present is refused as a whole', async (t) => {
  const dir = tmp(t);
  t.equal((await importInto(dir, [entity(1), ti(`${EX}n`, 1)])).anyRefused, false);
  const out = await importInto(dir, [ti(`${EX}n`, 2), ti(`${EX}n`, 3), ti(`${EX}n`, 1), ti(`${EX}n`, 4)]);
  t.equal(out.line('temporal instances'), 'temporal instances: 0 imported, 4 refused');
  t.match(
    out.err,
    /line 3: history of urn:ngsi-ld:Thing:1 refused with its batch \(lines 1 to 4\): instanceId urn:ngsi-ld:attribute:instance:r1 of urn:ngsi-ld:Thing:1 is present already/,
  );
  const broker = await startBroker(['--dbDir', dir, '--troe', 'embdb']);
  t.teardown(() => broker.stop());
  const te = await call(broker, 'GET', `${NGSI}/temporal/entities/urn:ngsi-ld:Thing:1`);
  t.same(
    te.json[`${EX}n`].map((i: { instanceId: string }) => i.instanceId),
    ['urn:ngsi-ld:attribute:instance:r1'],
    'nothing of the refused batch written',
  );
});

t.test('an exclusive registration over a local entity is refused (registrations come before entities)', async (t) => {
  const dir = tmp(t);
  const exclusive = reg(
    'urn:ngsi-ld:ContextSourceRegistration:E1',
    { entities: [{ id: 'urn:ngsi-ld:Thing:1', type: `${EX}Thing` }], propertyNames: [`${EX}n`] },
    { mode: 'exclusive' },
  );
  const out = await importInto(dir, [entity(1), exclusive]);
  t.match(out.err, /line 2: registration urn:ngsi-ld:ContextSourceRegistration:E1 refused: Conflict: .*holds it locally/);
  const inOrder = await importInto(tmp(t), [exclusive, entity(1)]);
  t.equal(inOrder.anyRefused, false, 'in stream order, the registration first, both go in');
});

t.test('history without a history store is refused; all records imported is no refusal', async (t) => {
  const out = await importInto(tmp(t), [entity(1), ti(`${EX}n`, 1)], 'none');
  t.match(out.err, /line 2: temporalInstance urn:ngsi-ld:Thing:1 refused: BadRequestData: no history store/);
  t.equal(out.line('created rows (history)'), 'created rows (history): 0 written, 0 failed');
  const ok = await importInto(tmp(t), [entity(1)], 'none');
  t.equal(ok.anyRefused, false);
});

t.test('re-running a stream of just the refused lines, fixed, imports them', async (t) => {
  const dir = tmp(t);
  const first = [entity(1), entity(2, { type: 'Thing' }), sub('urn:ngsi-ld:Subscription:F1', { watchedAttributes: ['n'] }), entity(3)];
  const out = await importInto(dir, first);
  t.same(out.refusedLines, [2, 3]);
  // The user fixes the lines the report named and imports a stream of just them.
  const text = ndjson(first).split('\n');
  const fixed = out.refusedLines.map((n) => text[n - 1]!.replace('"type":"Thing"', `"type":"${EX}Thing"`).replace('["n"]', `["${EX}n"]`));
  const again = await importInto(dir, fixed.join('\n') + '\n');
  t.equal(again.anyRefused, false, again.err);
  t.equal(again.line('entities'), 'entities: 1 imported, 0 refused');
  t.equal(again.line('subscriptions'), 'subscriptions: 1 imported, 0 refused');
  const broker = await startBroker(['--dbDir', dir, '--troe', 'embdb']);
  t.teardown(() => broker.stop());
  const all = await call(broker, 'GET', `${NGSI}/entities?type=${encodeURIComponent(`${EX}Thing`)}&count=true`);
  t.equal(all.headers.get('ngsild-results-count'), '3');
});

t.test('a stream cut in the middle of a line: that line refused, every line before it imported', async (t) => {
  const dir = tmp(t);
  const whole = ndjson([entity(1), entity(2), entity(3)]);
  const cut = whole.slice(0, whole.length - 40);
  const out = await importInto(dir, cut);
  t.same(out.refusedLines, [3]);
  t.match(out.err, /line 3: the stream ends in the middle of this line \(cut short\?\)/);
  t.equal(out.line('entities'), 'entities: 2 imported, 0 refused');
  // A last line without its newline that is whole is a record like any other.
  const unterminated = await importInto(tmp(t), whole.slice(0, -1));
  t.equal(unterminated.line('entities'), 'entities: 3 imported, 0 refused');
});

t.test('a history batch is refused whole on an instanceId twice in it, and on an entity event already there', async (t) => {
  const dir = tmp(t);
  const twice = await importInto(dir, [entity(1), ti(`${EX}n`, 1), ti(`${EX}n`, 2), ti(`${EX}n`, 1)]);
  t.equal(twice.line('temporal instances'), 'temporal instances: 0 imported, 3 refused');
  t.match(twice.err, /instanceId urn:ngsi-ld:attribute:instance:r1 of urn:ngsi-ld:Thing:1 is present already/);
  const event = { kind: 'temporalEntity', data: { id: 'urn:ngsi-ld:Thing:1', type: `${EX}Thing`, op: 'deleted', at: T0 } };
  t.equal((await importInto(dir, [event])).anyRefused, false);
  const again = await importInto(dir, [event, ti(`${EX}n`, 5)]);
  t.equal(again.line('temporal entity events'), 'temporal entity events: 0 imported, 1 refused');
  t.equal(again.line('temporal instances'), 'temporal instances: 0 imported, 1 refused');
  t.match(again.err, /entity urn:ngsi-ld:Thing:1 has a deleted event at 2023-11-14T22:13:20.123Z already/);
});

t.test('a header of another format or version: refused; a version this importer cannot read stops the import', async (t) => {
  const other = await importInto(tmp(t), [{ kind: 'header', format: 'something-else', version: 1 }, entity(1)]);
  t.match(other.err, /line 1: header: format "something-else" is not broker-migration/);
  t.equal(other.line('entities'), 'entities: 1 imported, 0 refused');
  const v2 = await importInto(tmp(t), [{ kind: 'header', format: 'broker-migration', version: 2 }, entity(1)]);
  t.match(v2.err, /line 1: header: version 2 is not 1, the only version this importer reads: nothing imported/);
  t.equal(v2.line('entities'), 'entities: 0 imported, 0 refused');
  t.equal(v2.anyRefused, true);
});

t.test('a history plugin beside the store without importBatch: its records refused naming it, nothing recorded', async (t) => {
  const recorder = repoPath('test/fixtures/history/recorder.js');
  const out = await importInto(tmp(t), [entity(1), ti(`${EX}n`, 1)], recorder);
  t.equal(out.line('entities'), 'entities: 1 imported, 0 refused');
  t.match(
    out.err,
    /line 2: temporalInstance urn:ngsi-ld:Thing:1 refused: OperationNotSupported: the history 'recorder' cannot import history/,
  );
  t.equal(out.line('created rows (history)'), 'created rows (history): 0 written, 0 failed', 'no history of the current state either');
});
