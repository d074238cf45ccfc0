// embdb's discovery counts are moved once per transaction (stats-batch.ts): a batch that creates, changes and
// deletes entities of one type, with a failing entry among them, leaves the counts of the entries that succeeded;
// single writes sharing one LMDB transaction carry the records to each other and keep them exact.
import t, { type Test } from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { tempEmbdb } from './helpers/embdb.js';
import type { StoredEntity } from '../../src/ngsild/entity/model.js';
import { EmbdbStore, type EmbdbSettings } from '../../src/plugins/store/embdb/embdb-store.js';
import type { AttrStat, TypeStat } from '../../src/store/contract.js';
import { addToAttrStats, addToTypeStats, entitySignature } from '../../src/store/kit/discovery-counts.js';

const NS = 'https://example.org/ns/';
const T0 = '2026-01-01T00:00:00Z';

function entity(k: number, attrs: string[]): StoredEntity {
  const e: StoredEntity = { id: `urn:ngsi-ld:A:${k}`, type: [NS + 'A'], createdAt: T0, modifiedAt: T0 };
  for (const a of attrs) e[NS + a] = [{ type: 'Property', value: k }];
  return e;
}

t.test('one batch: creates, a failing entry, a change of attributes and a delete; counts match the entities kept', async (t) => {
  const store = tempEmbdb(t);
  const put = (e: StoredEntity) => ({ id: e.id, mutation: () => ({ next: e, result: undefined }) });
  const outcomes = await store.mutateEntities('', [
    put(entity(1, ['speed'])),
    put(entity(2, ['speed'])),
    {
      id: 'urn:ngsi-ld:A:3',
      mutation: () => {
        throw new Error('refused');
      },
    },
    put(entity(4, ['speed', 'name'])),
  ]);
  t.same(
    outcomes.map((o) => o.ok),
    [true, true, false, true],
  );
  let [a] = await store.typeStats('', NS + 'A');
  t.equal(a?.count, 3);
  t.equal(a?.attrs[NS + 'speed']?.n, 3);
  t.equal(a?.attrs[NS + 'name']?.n, 1);

  await store.mutateEntities('', [
    put(entity(1, ['name'])),
    { id: 'urn:ngsi-ld:A:2', mutation: () => ({ next: null, result: undefined }) },
    put(entity(5, ['speed'])),
    { id: 'urn:ngsi-ld:A:5', mutation: () => ({ next: null, result: undefined }) },
  ]);
  [a] = await store.typeStats('', NS + 'A');
  t.equal(a?.count, 2, 'A:1 and A:4 remain');
  t.equal(a?.attrs[NS + 'speed']?.n, 1);
  t.equal(a?.attrs[NS + 'name']?.n, 2);
  t.equal((await store.attributeStats('', NS + 'speed'))[0]?.count, 1);

  await store.mutateEntities(
    '',
    [1, 4].map((k) => ({ id: `urn:ngsi-ld:A:${k}`, mutation: () => ({ next: null, result: undefined }) })),
  );
  t.same(await store.typeStats(''), [], 'a type with no entity left has no count record');
  t.same(await store.attributeStats(''), []);
});

// Single writes that lmdb's batched writer runs in one LMDB transaction carry the count records one wrote to the
// next (stats-batch.ts). The counts must stay those of the entities stored whatever runs between two of them.

/** The counts the stored entities of `tenant` make, recomputed from scratch (the oracle). */
async function recount(store: EmbdbStore, tenant: string): Promise<{ types: TypeStat[]; attrs: AttrStat[] }> {
  const types = new Map<string, TypeStat>();
  const attrs = new Map<string, AttrStat>();
  const page = await store.queryEntities(tenant, { limit: 10_000, offset: 0 });
  for (const e of page.entities) {
    const sig = entitySignature(e);
    addToTypeStats(types, sig, 1);
    addToAttrStats(attrs, sig, 1);
  }
  const byIri = <V>(m: Map<string, V>): V[] => [...m.entries()].sort((a, b) => (a[0] < b[0] ? -1 : 1)).map((e) => e[1]);
  return { types: byIri(types), attrs: byIri(attrs) };
}

async function countsMatch(t: Test, store: EmbdbStore, tenant: string, what: string): Promise<void> {
  const want = await recount(store, tenant);
  t.same(await store.typeStats(tenant), want.types, `${what}: type counts of tenant '${tenant}'`);
  t.same(await store.attributeStats(tenant), want.attrs, `${what}: attribute counts of tenant '${tenant}'`);
}

const write = (store: EmbdbStore, tenant: string, id: string, next: StoredEntity | null): Promise<unknown> =>
  store.mutateEntity(tenant, id, () => ({ next, result: undefined }), { createTenant: true });

for (const lockPrefer of ['reads', 'writes'] as const) {
  t.test(
    `dbLockPrefer ${lockPrefer}: waves of single writes (creates, attribute changes, deletes, two tenants) keep exact counts`,
    async (t) => {
      const store = tempEmbdb(t, { lockPrefer });
      const ids = Array.from({ length: 12 }, (_, k) => k);
      await Promise.all(ids.map((k) => write(store, k % 3 === 0 ? 'other' : '', `urn:ngsi-ld:A:${k}`, entity(k, ['speed']))));
      await countsMatch(t, store, '', 'creates');
      await countsMatch(t, store, 'other', 'creates');
      await Promise.all(
        ids.map((k) =>
          write(
            store,
            k % 3 === 0 ? 'other' : '',
            `urn:ngsi-ld:A:${k}`,
            k % 2 === 0 ? null : entity(k, k % 4 === 1 ? ['name'] : ['speed', 'name']),
          ),
        ),
      );
      await countsMatch(t, store, '', 'deletes and attribute changes');
      await countsMatch(t, store, 'other', 'deletes and attribute changes');
      // The same entity created, changed and deleted within one transaction.
      await Promise.all([
        write(store, '', 'urn:ngsi-ld:A:99', entity(99, ['speed'])),
        write(store, '', 'urn:ngsi-ld:A:99', entity(99, ['name'])),
        write(store, '', 'urn:ngsi-ld:A:99', null),
        write(store, '', 'urn:ngsi-ld:A:98', entity(98, ['speed'])),
      ]);
      await countsMatch(t, store, '', 'one entity three times in a transaction');
    },
  );
}

t.test('a write that throws after moving the counts, between others of its transaction, moves none', async (t) => {
  const store = tempEmbdb(t);
  const entities = (store as unknown as { entities: { putSync: (key: unknown, value: unknown) => boolean } }).entities;
  const putSync = entities.putSync.bind(entities);
  entities.putSync = (key, value) => {
    if ((value as StoredEntity).id === 'urn:ngsi-ld:A:boom') throw new Error('injected');
    return putSync(key, value);
  };
  const settled = await Promise.allSettled([
    write(store, '', 'urn:ngsi-ld:A:1', entity(1, ['speed'])),
    write(store, '', 'urn:ngsi-ld:A:boom', { ...entity(7, ['speed', 'name']), id: 'urn:ngsi-ld:A:boom' }),
    write(store, '', 'urn:ngsi-ld:A:2', entity(2, ['speed'])),
    write(store, '', 'urn:ngsi-ld:A:boom', { ...entity(8, ['name']), id: 'urn:ngsi-ld:A:boom' }),
    write(store, '', 'urn:ngsi-ld:A:3', entity(3, ['name'])),
  ]);
  t.same(
    settled.map((s) => s.status),
    ['fulfilled', 'rejected', 'fulfilled', 'rejected', 'fulfilled'],
  );
  await countsMatch(t, store, '', 'after the failed writes');
  t.equal((await store.typeStats('', NS + 'A'))[0]?.count, 3);
});

t.test('two handles on one store in one thread (its path written two ways) write in the same transactions: exact counts', async (t) => {
  const store = tempEmbdb(t);
  const path = (store as unknown as { settings: EmbdbSettings }).settings.path;
  // The path written another way: the same environment, the same transactions.
  const other = new EmbdbStore({
    path: path.replace(/\/embdb$/, '/./embdb'),
    sync: 'interval',
    compress: false,
    lockPrefer: 'reads',
    ram: true,
  });
  t.teardown(() => other.close());
  await Promise.all(
    Array.from({ length: 10 }, (_, k) =>
      write(k % 2 === 0 ? store : other, '', `urn:ngsi-ld:A:${k}`, entity(k, k % 3 === 0 ? ['name'] : ['speed'])),
    ),
  );
  await countsMatch(t, store, '', 'both handles');
  t.equal((await store.typeStats('', NS + 'A'))[0]?.count, 10);
});

t.test('a count record another writer changed between two transactions is read again', async (t) => {
  const store = tempEmbdb(t);
  await write(store, '', 'urn:ngsi-ld:A:1', entity(1, ['speed']));
  // Another broker on the same store (or another thread) writes the record in a transaction of its own.
  const dbs = store.indexedDbs();
  dbs.env.transactionSync(() => {
    const rec = dbs.typeStats.get(['', NS + 'A'])!;
    dbs.typeStats.putSync(['', NS + 'A'], { ...rec, count: rec.count + 40 });
  });
  await write(store, '', 'urn:ngsi-ld:A:2', entity(2, ['speed']));
  t.equal((await store.typeStats('', NS + 'A'))[0]?.count, 42, "the other writer's 40 kept");
});

t.test('a store made again at the same path (its transaction ids start afresh) carries nothing from the one before', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'ldbroker-embdb-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const path = join(dir, 'embdb');
  const settings: EmbdbSettings = { path, sync: 'interval', compress: false, lockPrefer: 'reads', ram: true };
  const first = new EmbdbStore(settings);
  // The same writes in both: the second store's write runs in a transaction of the id the first one's did.
  await write(first, '', 'urn:ngsi-ld:A:1', entity(1, ['speed']));
  await first.close();
  rmSync(path, { recursive: true, force: true });
  const second = new EmbdbStore(settings);
  t.teardown(() => second.close());
  await write(second, '', 'urn:ngsi-ld:A:3', entity(3, ['speed']));
  await countsMatch(t, second, '', 'the new store');
  t.equal((await second.typeStats('', NS + 'A'))[0]?.count, 1);
});
