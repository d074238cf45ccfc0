// embdb hands a read-only query (EntityQuery.readOnly) the entities it decoded before while their stored bytes are
// unchanged (entity-cache.ts): the same object for an unchanged entity, frozen; a new one after any write, through
// this handle or another (another thread's); fresh, mutable objects for a query that is not read-only; and the
// cache bounded in entries and bytes.
import t from 'tap';
import { join } from 'node:path';
import { tempEmbdb } from './helpers/embdb.js';
import { EmbdbStore } from '../../src/plugins/store/embdb/embdb-store.js';
import { EntityCache, ADMITTED_PER_QUERY } from '../../src/plugins/store/embdb/entity-cache.js';
import type { StoredEntity } from '../../src/ngsild/entity/model.js';
import type { EntityQuery } from '../../src/store/contract.js';
import { inBox, ofTypes, qOf } from './helpers/store-query.js';
import { parseOrderBy } from '../../src/ngsild/query/order-by.js';

const NS = 'https://example.org/ns/';
const A = NS + 'A';
const LOC = NS + 'location';
const T0 = '2026-01-01T00:00:00Z';

function entity(k: number, n = k): StoredEntity {
  return {
    id: `urn:ngsi-ld:A:${k}`,
    type: [A],
    createdAt: T0,
    modifiedAt: T0,
    [NS + 'n']: [{ type: 'Property', value: n }],
    [LOC]: [{ type: 'GeoProperty', value: { type: 'Point', coordinates: [2 + k * 0.001, 48] } }],
  };
}

async function put(store: EmbdbStore, entities: StoredEntity[]): Promise<void> {
  await store.mutateEntities(
    '',
    entities.map((e) => ({ id: e.id, mutation: () => ({ next: e, result: undefined }) })),
  );
}

const byType = (readOnly: boolean): EntityQuery => ({ type: ofTypes(A), limit: 5, offset: 0, count: false, readOnly });
const ids = (es: StoredEntity[]): string[] => es.map((e) => e.id);

t.test('an unchanged entity is the same frozen object again; a query that is not read-only gets its own', async (t) => {
  const store = tempEmbdb(t);
  await put(
    store,
    [0, 1, 2, 3, 4, 5].map((k) => entity(k)),
  );
  const first = await store.queryEntities('', byType(true));
  const again = await store.queryEntities('', byType(true));
  t.equal(first.kept, true);
  t.same(ids(first.entities), ids(again.entities));
  t.ok(
    first.entities.every((e, i) => e === again.entities[i]),
    'the same objects',
  );
  t.ok(Object.isFrozen(first.entities[0]) && Object.isFrozen(first.entities[0]![NS + 'n']), 'frozen, members too');
  t.throws(() => {
    (first.entities[0]![NS + 'n'] as Array<{ value: unknown }>)[0]!.value = 99;
  }, 'a caller changing one fails instead of changing the next answer');
  const plain = await store.queryEntities('', byType(false));
  t.equal(plain.kept, undefined);
  t.not(plain.entities[0], first.entities[0]);
  t.notOk(Object.isFrozen(plain.entities[0]), 'not read-only: its own objects, free to change');
  t.same(plain.entities, first.entities, 'the same content');
});

t.test('a write through this handle or another (another thread) is seen by the next read-only query', async (t) => {
  const store = tempEmbdb(t);
  await put(
    store,
    [0, 1, 2].map((k) => entity(k)),
  );
  const before = await store.queryEntities('', byType(true));
  // The same length of bytes (two fixints): only their content tells the entry is stale.
  await put(store, [entity(1, 7)]);
  const after = await store.queryEntities('', byType(true));
  t.equal(before.entities[0], after.entities[0], 'the unchanged entity: the same object');
  t.not(before.entities[1], after.entities[1], 'the changed one: a new object');
  t.same(after.entities[1]![NS + 'n'], [{ type: 'Property', value: 7 }]);
  // A second handle on the same files is what another thread of the broker holds.
  const other = new EmbdbStore({
    path: join((store as unknown as { settings: { path: string } }).settings.path),
    sync: 'interval',
    compress: false,
    lockPrefer: 'reads',
    ram: true,
  });
  t.teardown(() => other.close());
  await put(other, [entity(2, 9)]);
  await store.mutateEntities('', [{ id: entity(0).id, mutation: () => ({ next: null, result: undefined }) }]);
  store.freshen();
  const later = await store.queryEntities('', byType(true));
  t.same(ids(later.entities), ['urn:ngsi-ld:A:1', 'urn:ngsi-ld:A:2'], 'the deleted one is gone');
  t.same(later.entities[1]![NS + 'n'], [{ type: 'Property', value: 9 }], "the other handle's write");
});

t.test('filters, the number index, the spatial index and orderBy read kept entities alike', async (t) => {
  const store = tempEmbdb(t);
  await put(
    store,
    [0, 1, 2, 3, 4, 5, 6, 7].map((k) => entity(k)),
  );
  const queries: EntityQuery[] = [
    { type: ofTypes(A), q: qOf('n>=3', NS), limit: 3, offset: 0, count: true },
    { type: ofTypes(A), q: qOf('n<2|n>6', NS), limit: 3, offset: 0, count: true },
    { type: ofTypes(A), geo: inBox(LOC, [2.0015, 47.9, 2.0045, 48.1]), limit: 10, offset: 0, count: false },
    { ids: ['urn:ngsi-ld:A:5', 'urn:ngsi-ld:A:1', 'urn:ngsi-ld:A:x'], limit: 10, offset: 0, count: false },
    { type: ofTypes(A), orderBy: parseOrderBy('n;desc', (term) => NS + term), limit: 3, offset: 1, count: true },
  ];
  for (const query of queries) {
    const plain = await store.queryEntities('', query);
    const kept = await store.queryEntities('', { ...query, readOnly: true });
    const again = await store.queryEntities('', { ...query, readOnly: true });
    t.same(kept.entities, plain.entities, 'the same page as read afresh');
    t.equal(kept.count, plain.count);
    t.ok(
      kept.entities.every((e, i) => e === again.entities[i]),
      'kept objects',
    );
  }
  t.same(ids((await store.queryEntities('', queries[2]!)).entities), ['urn:ngsi-ld:A:2', 'urn:ngsi-ld:A:3', 'urn:ngsi-ld:A:4']);
});

t.test(`one query adds at most ${ADMITTED_PER_QUERY} entities; past them its candidates are decoded as usual`, async (t) => {
  const store = tempEmbdb(t);
  const n = ADMITTED_PER_QUERY + 50;
  await put(
    store,
    Array.from({ length: n }, (_, k) => entity(k)),
  );
  // No entity has n above the count: every one is read, tested and left out.
  const page = await store.queryEntities('', {
    type: ofTypes(A),
    q: qOf(`n>${n}|n<0`, NS),
    limit: 5,
    offset: 0,
    count: true,
    readOnly: true,
  });
  t.equal(page.count, 0);
  t.equal(page.examined, n, 'every candidate read is counted (EntityPage.examined)');
  t.equal((await store.queryEntities('', byType(true))).examined, 5, 'a page by type reads its entities only');
  t.equal((store as unknown as { entityCache: EntityCache }).entityCache.size, ADMITTED_PER_QUERY);
});

t.test('EntityCache: the same bytes only, at most its entries and bytes, oldest first, large ones not kept', async (t) => {
  const e = (k: number): StoredEntity => ({ id: `urn:x:${k}`, type: [A] });
  const c = new EntityCache(2, 100);
  c.set('a', Uint8Array.of(1), e(1));
  t.ok(c.get('a', Uint8Array.of(1)));
  t.equal(c.get('a', Uint8Array.of(2)), undefined, 'other bytes');
  t.equal(c.size, 0, 'the stale entry is dropped');
  c.set('a', Uint8Array.of(1), e(1));
  c.set('b', Uint8Array.of(2), e(2));
  c.set('c', Uint8Array.of(3), e(3));
  t.equal(c.size, 2);
  t.equal(c.get('a', Uint8Array.of(1)), undefined, 'the oldest went');
  const small = new EntityCache(10, 100);
  small.set('a', new Uint8Array(60), e(1));
  small.set('b', new Uint8Array(60), e(2));
  t.equal(small.size, 1, '120 bytes do not fit in 100');
  const big = new EntityCache();
  big.set('x', new Uint8Array(20 * 1024), e(1));
  t.equal(big.size, 0);
});
