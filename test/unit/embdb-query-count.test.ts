// embdb queries by type read only what they return (issue 3, "Store and speed"): count=true comes from the type's
// count index or its own index keys, never from entities of other types, and limit=0 reads no entity at all.
import t from 'tap';
import { tempEmbdb } from './helpers/embdb.js';
import { EmbdbStore } from '../../src/plugins/store/embdb/embdb-store.js';
import type { StoredEntity } from '../../src/ngsild/entity/model.js';
import { ofTypes, qOf } from './helpers/store-query.js';

const NS = 'https://example.org/ns/';
const A = NS + 'A';
const B = NS + 'B';
const C = NS + 'C';
const T0 = '2026-01-01T00:00:00Z';
const N_A = 25;
const N_B = 3000;

function entity(typeIri: string, k: number): StoredEntity {
  return {
    id: `urn:ngsi-ld:${typeIri.slice(NS.length)}:${k}`,
    type: [typeIri],
    createdAt: T0,
    modifiedAt: T0,
    [NS + 'n']: [{ type: 'Property', value: k }],
  };
}

/** The entity reads of the store, counted by wrapping its entities database (a private member: test-only access). */
interface ReadableDb {
  get: (key: unknown) => unknown;
  getRange: (opts?: unknown) => Iterable<{ value: unknown }>;
}

async function setup(t: { teardown: (fn: () => void | Promise<void>) => void }): Promise<{ store: EmbdbStore; reads: () => number }> {
  const store = tempEmbdb(t);
  const all = [
    ...Array.from({ length: N_A }, (_, k) => entity(A, k)),
    ...Array.from({ length: N_B }, (_, k) => entity(B, k)),
    entity(C, 0),
  ];
  await store.mutateEntities(
    '',
    all.map((e) => ({ id: e.id, mutation: () => ({ next: e, result: undefined }) })),
  );
  const db = (store as unknown as { entities: ReadableDb }).entities;
  let count = 0;
  const get = db.get.bind(db);
  const getRange = db.getRange.bind(db);
  db.get = (key) => {
    count++;
    return get(key);
  };
  db.getRange = (opts) => {
    const range = getRange(opts);
    return {
      *[Symbol.iterator]() {
        for (const entry of range) {
          count++;
          yield entry;
        }
      },
    };
  };
  return { store, reads: () => count };
}

t.test('count=true of one type reads only the entities of the page, none of the other types', async (t) => {
  const { store, reads } = await setup(t);
  const page = await store.queryEntities('', { type: ofTypes(A), limit: 10, offset: 0, count: true });
  t.equal(page.count, N_A);
  t.equal(page.entities.length, 10);
  t.equal(reads(), 10, 'ten entities read for a page of ten');
});

t.test('limit=0 with count=true answers only the count and reads no entity', async (t) => {
  const { store, reads } = await setup(t);
  t.same(await store.queryEntities('', { type: ofTypes(A), limit: 0, offset: 0, count: true }), { entities: [], count: N_A });
  t.same(await store.queryEntities('', { type: ofTypes(A, C), limit: 0, offset: 0, count: true }), { entities: [], count: N_A + 1 });
  t.equal(reads(), 0);
});

t.test('a query by type with a filter and count=true reads the entities of that type only', async (t) => {
  const { store, reads } = await setup(t);
  // n is 0 to N_A - 1: its lower half. An OR is no interval of one attribute: no number index, the type's entities.
  const lowerHalf = qOf(`n<${Math.ceil(N_A / 2)}|n>${N_B * 2}`, NS);
  const page = await store.queryEntities('', { type: ofTypes(A), q: lowerHalf, limit: 5, offset: 0, count: true });
  t.equal(page.count, Math.ceil(N_A / 2));
  t.equal(page.entities.length, 5);
  t.equal(reads(), N_A, `the ${N_A} A entities are tested, none of the ${N_B} B`);
});

t.test('a query by type with a q comparing a number reads only the entities holding a number in range', async (t) => {
  const { store, reads } = await setup(t);
  // The first query of A's n and of B's n builds their number index (reading every entity of the type once).
  for (const typeIri of [A, B])
    await store.queryEntities('', { type: ofTypes(typeIri), q: qOf('n>0', NS), limit: 1, offset: 0, count: false });
  const built = reads();
  t.equal(built, N_A + N_B + 2, 'the builds read each entity of A and B once, and the two answers one each');
  const lowerHalf = qOf(`n<${Math.ceil(N_A / 2)}`, NS);
  const page = await store.queryEntities('', { type: ofTypes(A), q: lowerHalf, limit: 5, offset: 0, count: true });
  t.equal(page.count, Math.ceil(N_A / 2));
  t.equal(page.entities.length, 5);
  t.equal(reads() - built, Math.ceil(N_A / 2), 'the A entities of the lower half, none of the others');
  const before = reads();
  const top = await store.queryEntities('', { type: ofTypes(B), q: qOf(`n>=${N_B - 10}`, NS), limit: 5, offset: 0, count: false });
  t.same(
    top.entities.map((e) => e.id),
    [0, 1, 2, 3, 4].map((k) => `urn:ngsi-ld:B:${N_B - 10 + k}`),
  );
  t.equal(reads() - before, 5, `a page of 5 of the ${N_B} B reads 5`);
});

t.test('an offset past the first page skips index keys, not entities', async (t) => {
  const { store, reads } = await setup(t);
  const page = await store.queryEntities('', { type: ofTypes(B), limit: 20, offset: 2000, count: true });
  t.equal(page.count, N_B);
  t.equal(page.entities.length, 20);
  t.equal(reads(), 20);
});
