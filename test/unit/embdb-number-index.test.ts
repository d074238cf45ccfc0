// embdb's number index (number-index.ts, issue 24): built for a (tenant, type, attribute) on the first query asking,
// its entries are then exactly those derived from the entities stored after every kind of write (create, update,
// replace, type change, delete, batch, an aborted batch, purge-like deletes, tenants, writes during its build), a
// query by type with a `q` comparing a number answers what `q` over every entity of the type answers, page by page,
// and a store written without the index gets it on use.
import t, { type Test } from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EmbdbStore, MAX_NUMBER_PAIRS_PER_TYPE } from '../../src/plugins/store/embdb/embdb-store.js';
import { CHUNK, MAX_NUMBERS_PER_ATTRIBUTE, NUMBER_READ_KEY_CODEC, numberEntriesOf } from '../../src/plugins/store/embdb/number-index.js';
import { readKey, writeKey } from 'ordered-binary';
import { compileQ } from '../../src/ngsild/query/q-eval.js';
import { asWritten } from '../../src/ngsild/query/q-resolve.js';
import type { StoredEntity } from '../../src/ngsild/entity/model.js';
import type { EntityQuery } from '../../src/store/contract.js';
import { ofTypes, qOf } from './helpers/store-query.js';

const NS = 'https://example.org/ns/';
const A = NS + 'A';
const B = NS + 'B';
const SPEED = NS + 'speed';
const T0 = '2026-01-01T00:00:00Z';
const TENANTS = ['', 't1'];

type Value = StoredEntity[string];

function entity(id: string, types: string[], speed: Value | undefined, extra: Record<string, Value> = {}): StoredEntity {
  const e: StoredEntity = { id, type: types, createdAt: T0, modifiedAt: T0, ...extra };
  if (speed !== undefined) e[SPEED] = speed;
  return e;
}
const prop = (value: unknown, datasetId?: string): Record<string, unknown> =>
  datasetId === undefined ? { type: 'Property', value } : { type: 'Property', value, datasetId };

/** Every kind of value a comparison with a number reads (q-eval.ts comparableNumbers), and some it does not. */
const SHAPES: Array<{ name: string; speed: Value | undefined; extra?: Record<string, Value> }> = [
  { name: 'a number', speed: [prop(42)] },
  { name: 'a negative number', speed: [prop(-7.5)] },
  { name: '-0', speed: [prop(-0)] },
  { name: 'an array of numbers', speed: [prop([3, 55, 'x'])] },
  { name: 'two instances (datasetIds)', speed: [prop(10), prop(90, 'urn:ds:2')] },
  { name: 'a value object', speed: [prop({ '@value': 38 })] },
  { name: 'a ListProperty', speed: [{ type: 'ListProperty', valueList: [1, 38, 99] }] },
  { name: 'a JsonProperty holding a number', speed: [{ type: 'JsonProperty', json: 40 }] },
  { name: 'a string', speed: [prop('40')] },
  { name: 'a Relationship', speed: [{ type: 'Relationship', object: 'urn:x:1' }] },
  { name: 'an object value', speed: [prop({ a: 40 })] },
  { name: 'a long list of numbers (WIDE)', speed: [prop(Array.from({ length: MAX_NUMBERS_PER_ATTRIBUTE + 5 }, (_, k) => k * 2))] },
  { name: 'no speed', speed: undefined },
  { name: 'speed and another numeric attribute', speed: [prop(5)], extra: { [NS + 'load']: [prop(77)] } },
];

const QUERIES = [
  'speed>=38',
  'speed>38',
  'speed<0',
  'speed<=0',
  'speed==0',
  'speed==40',
  'speed==10..50',
  'speed>=38;speed<90',
  'speed>1e9',
];

/** The pairs the index covers, complete. */
function completePairs(store: EmbdbStore): string[][] {
  const out: string[][] = [];
  for (const { key, value } of store.indexedDbs().numberPairs.getRange({})) if (value === 'complete') out.push(key);
  return out;
}

/** The index entries the entities derive for the complete pairs (what the index must hold), as sorted strings. */
function expectedEntries(store: EmbdbStore, byTenant: Map<string, StoredEntity[]>): string[] {
  const out: string[] = [];
  for (const [tenant, typeIri, attrIri] of completePairs(store))
    for (const e of byTenant.get(tenant!) ?? [])
      if (e.type.includes(typeIri!))
        for (const entry of numberEntriesOf(e, attrIri!) ?? [])
          out.push(JSON.stringify([tenant, typeIri, attrIri, entry === 'wide' ? 'WIDE' : entry, e.id]));
  return out.sort();
}

function storedEntries(store: EmbdbStore): string[] {
  const out: string[] = [];
  for (const { key, value } of store.indexedDbs().attrNumbers.getRange({}))
    out.push(JSON.stringify([key[0], key[1], key[2], key.length === 3 ? 'WIDE' : key[3], value]));
  return out.sort();
}

async function check(t: Test, store: EmbdbStore, byTenant: Map<string, StoredEntity[]>, step: string): Promise<void> {
  for (const [tenant, entities] of byTenant)
    for (const text of QUERIES)
      for (const types of [[A], [B, A]]) {
        const q = qOf(text, NS);
        const match = compileQ(q, asWritten);
        const want = entities.filter((e) => types.some((ty) => e.type.includes(ty)) && match(e)).map((e) => e.id);
        const query: EntityQuery = { type: ofTypes(...types), q, limit: 1000, offset: 0, count: true };
        const page = await store.queryEntities(tenant, query);
        const got = page.entities.map((e) => e.id);
        t.same([...got].sort(), [...want].sort(), `${step}: tenant '${tenant}' type ${types.length} q=${text}`);
        t.equal(new Set(got).size, got.length, `${step}: q=${text}: each entity once`);
        t.equal(page.count, want.length, `${step}: q=${text}: count`);
        // Pages of two do not overlap and cover the answer.
        const paged: string[] = [];
        for (let offset = 0; offset < want.length + 2; offset += 2)
          paged.push(...(await store.queryEntities(tenant, { ...query, limit: 2, offset, count: false })).entities.map((e) => e.id));
        t.same(paged, got, `${step}: q=${text}: pages of two in the order of the whole`);
      }
  t.equal(completePairs(store).length, byTenant.size * 2, `${step}: speed of A and of B in each tenant is indexed`);
  t.same(storedEntries(store), expectedEntries(store, byTenant), `${step}: the index holds what the entities derive`);
}

function tempStore(t: Test): { store: EmbdbStore; path: string } {
  const dir = mkdtempSync(join(tmpdir(), 'embdb-numbers-'));
  const path = join(dir, 'embdb');
  const store = new EmbdbStore({ path, sync: 'interval', compress: false, lockPrefer: 'reads', ram: false });
  t.teardown(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return { store, path };
}

t.test('the number index follows every write and answers what q over every entity answers', async (t) => {
  const { store } = tempStore(t);
  const byTenant = new Map<string, StoredEntity[]>(TENANTS.map((tenant) => [tenant, []]));
  const put = async (tenant: string, e: StoredEntity | null, id: string): Promise<void> => {
    await store.mutateEntity(tenant, id, () => ({ next: e, result: undefined }), { createTenant: true });
    const list = byTenant.get(tenant)!;
    const at = list.findIndex((x) => x.id === id);
    if (at >= 0) list.splice(at, 1);
    if (e !== null) list.push(e);
  };
  // Create: every shape, type A in both tenants, some of type B or both types too.
  for (const tenant of TENANTS)
    for (const [k, shape] of SHAPES.entries()) {
      const types = k % 3 === 0 ? [A, B] : k % 3 === 1 ? [A] : [B];
      await put(tenant, entity(`urn:e:${k}`, types, shape.speed, shape.extra), `urn:e:${k}`);
    }
  await check(t, store, byTenant, 'created');

  // Update: a number changed (old entry gone), an array shortened, a WIDE list down to a few numbers and back.
  await put('', entity('urn:e:0', [A, B], [prop(41)]), 'urn:e:0');
  await put('', entity('urn:e:3', [A], [prop([55])]), 'urn:e:3');
  await put('', entity('urn:e:11', [B], [prop([1, 2])]), 'urn:e:11');
  await put('t1', entity('urn:e:2', [B], [prop(Array.from({ length: 200 }, (_, k) => k))]), 'urn:e:2');
  await check(t, store, byTenant, 'updated');

  // Replace with other types (entries move between types) and without the attribute; a type dropped.
  await put('', entity('urn:e:1', [B], [prop(-7.5)]), 'urn:e:1');
  await put('', entity('urn:e:4', [A, B], undefined, { [NS + 'name']: [prop('x')] }), 'urn:e:4');
  await put('t1', entity('urn:e:0', [B], [prop(42)]), 'urn:e:0');
  await check(t, store, byTenant, 'replaced');

  // Delete one in each tenant, then a batch creating, updating, deleting, with a failing entry left out.
  await put('', null, 'urn:e:5');
  await put('t1', null, 'urn:e:7');
  const batch: Array<{ id: string; next: StoredEntity | null | 'fail' }> = [
    { id: 'urn:b:1', next: entity('urn:b:1', [A], [prop(39)]) },
    { id: 'urn:e:6', next: entity('urn:e:6', [A], [prop(1000)]) },
    { id: 'urn:e:8', next: null },
    { id: 'urn:b:2', next: 'fail' },
  ];
  const outcomes = await store.mutateEntities(
    '',
    batch.map(({ id, next }) => ({
      id,
      mutation: () => {
        if (next === 'fail') throw new Error('refused');
        return { next, result: undefined };
      },
    })),
  );
  t.same(
    outcomes.map((o) => o.ok),
    [true, true, true, false],
  );
  const list = byTenant.get('')!;
  for (const { id, next } of batch) {
    if (next === 'fail') continue;
    const at = list.findIndex((x) => x.id === id);
    if (at >= 0) list.splice(at, 1);
    if (next !== null) list.push(next);
  }
  await check(t, store, byTenant, 'batch');

  // A batch whose write fails (injected) after its number entries were written leaves the index as it was.
  const entitiesDb = (store as unknown as { entities: { putSync: (key: unknown, value: StoredEntity) => boolean } }).entities;
  const putSync = entitiesDb.putSync.bind(entitiesDb);
  entitiesDb.putSync = (key, value) => {
    if (value.id === 'urn:boom') throw new Error('injected: the write of urn:boom fails');
    return putSync(key, value);
  };
  await t.rejects(
    store.mutateEntities('', [
      { id: 'urn:e:9', mutation: () => ({ next: entity('urn:e:9', [A], [prop(12345)]), result: undefined }) },
      { id: 'urn:boom', mutation: () => ({ next: entity('urn:boom', [A], [prop(38)]), result: undefined }) },
    ]),
  );
  entitiesDb.putSync = putSync;
  await check(t, store, byTenant, 'aborted batch');

  // Every entity of the default tenant deleted, as a purge does: no entry of it is left, the other tenant's stay.
  for (const e of [...byTenant.get('')!]) await put('', null, e.id);
  await check(t, store, byTenant, 'purged');
  t.ok(
    storedEntries(store).every((s) => (JSON.parse(s) as string[])[0] === 't1'),
    'only the other tenant has entries',
  );
});

t.test('writes while a pair is being built are indexed, and a store written without the index gets it on use', async (t) => {
  const lines: Array<{ msg: string; obj: Record<string, unknown> }> = [];
  const log = {
    debug: () => {},
    info: (o: object | string, m?: string) => {
      lines.push(typeof o === 'string' ? { msg: o, obj: {} } : { msg: m ?? '', obj: o as Record<string, unknown> });
    },
    warn: () => {},
    error: () => {},
  };
  const dir = mkdtempSync(join(tmpdir(), 'embdb-numbers-'));
  const store = new EmbdbStore({ path: join(dir, 'embdb'), sync: 'interval', compress: false, lockPrefer: 'reads', ram: false, log });
  t.teardown(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  // More entities than a build chunk: the build takes several write transactions, other writes run between them.
  const n = CHUNK * 2 + 500;
  const list: StoredEntity[] = Array.from({ length: n }, (_, k) => entity(`urn:many:${String(k).padStart(5, '0')}`, [A], [prop(k % 50)]));
  await store.mutateEntities(
    '',
    list.map((e) => ({ id: e.id, mutation: () => ({ next: e, result: undefined }) })),
  );
  t.same(completePairs(store), [], 'nothing is indexed before a query asks');
  const q = qOf('speed>=45', NS);
  const first = store.queryEntities('', { type: ofTypes(A), q, limit: 10, offset: 0, count: true });
  const writes: Array<Promise<unknown>> = [];
  const byId = new Map(list.map((e) => [e.id, e]));
  for (let k = 0; k < n; k += 97) {
    const id = list[k]!.id;
    const next = k % 2 === 0 ? entity(id, [A], [prop(49)]) : null;
    writes.push(store.mutateEntity('', id, () => ({ next, result: undefined })));
    if (next === null) byId.delete(id);
    else byId.set(id, next);
  }
  for (let k = 0; k < 50; k++) {
    const e = entity(`urn:late:${k}`, [A], [prop(45 + (k % 5))]);
    writes.push(store.mutateEntity('', e.id, () => ({ next: e, result: undefined })));
    byId.set(e.id, e);
  }
  const [page] = await Promise.all([first, ...writes]);
  t.ok((page as { count: number }).count > 0, 'the first query waited for the build and answered');
  t.ok(
    lines.some((l) => l.msg === 'embdb: number index built' && l.obj.typeIri === A),
    'the build is logged',
  );
  const all = [...byId.values()];
  const want = all.filter((e) => compileQ(q, asWritten)(e)).map((e) => e.id);
  const after = await store.queryEntities('', { type: ofTypes(A), q, limit: 100_000, offset: 0, count: true });
  t.same(after.entities.map((e) => e.id).sort(), want.sort(), 'the query answers every match after the writes');
  t.same(storedEntries(store), expectedEntries(store, new Map([['', all]])), 'the index holds what the entities derive');
  lines.length = 0;
  await store.queryEntities('', { type: ofTypes(A), q: qOf('speed<3', NS), limit: 10, offset: 0, count: false });
  t.notOk(
    lines.some((l) => l.msg === 'embdb: number index built'),
    'a complete pair is not built again',
  );
});

t.test('a query cannot make the writes of a type keep pairs without end: held attributes only, at most eight', async (t) => {
  const { store } = tempStore(t);
  const attrs = Array.from({ length: MAX_NUMBER_PAIRS_PER_TYPE + 2 }, (_, k) => `a${k}`);
  const list = Array.from({ length: 30 }, (_, k) =>
    entity(`urn:c:${k}`, [A], undefined, Object.fromEntries(attrs.map((a, i) => [NS + a, [prop((k + i) % 10)]]))),
  );
  await store.mutateEntities(
    '',
    list.map((e) => ({ id: e.id, mutation: () => ({ next: e, result: undefined }) })),
  );
  const ask = async (text: string): Promise<string[]> => {
    const page = await store.queryEntities('', { type: ofTypes(A), q: qOf(text, NS), limit: 100, offset: 0, count: false });
    return page.entities.map((e) => e.id).sort();
  };
  const want = (text: string): string[] =>
    list
      .filter((e) => compileQ(qOf(text, NS), asWritten)(e))
      .map((e) => e.id)
      .sort();
  t.same(await ask('nobodyHasThis>1'), [], 'an attribute no entity of the type holds: nothing to find');
  t.same(completePairs(store), [], 'and no pair for it');
  for (const a of attrs) t.same(await ask(`${a}>=7`), want(`${a}>=7`), `${a}>=7 answers its matches`);
  t.equal(
    store.indexedDbs().numberPairs.getKeysCount({}),
    MAX_NUMBER_PAIRS_PER_TYPE,
    'the first eight attributes asked are indexed, no more',
  );
  t.same(storedEntries(store), expectedEntries(store, new Map([['', list]])), 'the index holds what the entities derive');
});

t.test('a range of the index reads the number of each key alone, as the whole key holds it', (t) => {
  const bytes = Buffer.alloc(4096);
  const long = 'https://example.org/ns/\u00e9t\u00e9/' + 'x'.repeat(70);
  const numbers = [0, -0, 38, -7.5, 0.1, 1e-300, -1e300, Number.MAX_VALUE, -Number.MAX_VALUE, 5e-324, 2 ** 53 + 2, Infinity, -Infinity];
  for (const [tenant, typeIri, attrIri] of [
    ['', A, SPEED],
    ['t\u00fcnant-' + 'y'.repeat(60), long + 'Type', long + 'speed'],
  ])
    for (const n of numbers) {
      const end = writeKey([tenant, typeIri, attrIri, n], bytes, 0);
      const whole = (readKey(bytes, 0, end) as unknown[])[3];
      t.same(NUMBER_READ_KEY_CODEC.keyEncoder.readKey(bytes, 0, end), whole, `${n} under a tenant of ${tenant.length} characters`);
    }
  const wide = writeKey(['', A, SPEED], bytes, 0);
  t.equal(NUMBER_READ_KEY_CODEC.keyEncoder.readKey(bytes, 0, wide), undefined, 'the WIDE key holds no number');
  t.end();
});

t.test('long tenant, type and attribute names, long ids and ties: pages from the index as from q over every entity', async (t) => {
  const { store } = tempStore(t);
  const tenant = 't\u00fcnant-' + 'y'.repeat(60);
  const ns = 'https://example.org/\u00e9t\u00e9/' + 'n'.repeat(70) + '/';
  const type = ns + 'Sensor';
  const speed = ns + 'speed';
  const entities: StoredEntity[] = [];
  for (let k = 0; k < 120; k++) {
    // Ids past 64 characters, in an order unlike their numbers; numbers in ties of six.
    const id = `urn:ngsi-ld:Sensor:${'z'.repeat(60)}:${(k * 37) % 120}`;
    const e: StoredEntity = { id, type: [type], createdAt: T0, modifiedAt: T0, [speed]: [prop((k % 20) - 5.5)] };
    entities.push(e);
    await store.mutateEntity(tenant, id, () => ({ next: e, result: undefined }), { createTenant: true });
  }
  // One deleted: it leaves the answers.
  await store.mutateEntity(tenant, entities[7]!.id, () => ({ next: null, result: undefined }));
  entities.splice(7, 1);
  for (const text of ['speed>=4.5', 'speed>-2.5;speed<=3.5', 'speed==0.5', 'speed<-5']) {
    const q = qOf(text, ns);
    const match = compileQ(q, asWritten);
    const want = entities.filter((e) => match(e)).map((e) => e.id);
    const query: EntityQuery = { type: ofTypes(type), q, limit: 1000, offset: 0, count: true };
    const page = await store.queryEntities(tenant, query);
    const got = page.entities.map((e) => e.id);
    t.ok(want.length > 0, `q=${text} matches some`);
    t.same([...got].sort(), [...want].sort(), `q=${text}: the entities q matches`);
    t.equal(page.count, want.length, `q=${text}: count`);
    const paged: string[] = [];
    for (let offset = 0; offset < want.length + 3; offset += 3)
      paged.push(...(await store.queryEntities(tenant, { ...query, limit: 3, offset, count: false })).entities.map((e) => e.id));
    t.same(paged, got, `q=${text}: pages of three in the order of the whole`);
    // The index's order: by number, ties by id.
    const key = (id: string): [number, string] => [entities.find((e) => e.id === id)![speed]![0]!.value as number, id];
    const ordered = [...got].sort((a, b) => key(a)[0] - key(b)[0] || (a < b ? -1 : a > b ? 1 : 0));
    t.same(got, ordered, `q=${text}: by number, then id`);
  }
  t.same(completePairs(store), [[tenant, type, speed]], 'the answers came from the index');
});
