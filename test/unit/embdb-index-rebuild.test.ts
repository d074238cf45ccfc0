// embdb on disk: a store written before the type index and discovery counts existed (or with an older format
// marker) gets them rebuilt when the primary opens it, and queries by type and counts are right afterwards.
import t from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { open } from 'lmdb';
import { storeOpen } from '../../src/plugins/store/embdb/index.js';
import type { EmbdbStore } from '../../src/plugins/store/embdb/embdb-store.js';
import { INDEX_FORMAT_KEY, INDEX_FORMAT_VERSION, indexFormatOf } from '../../src/plugins/store/embdb/index-rebuild.js';
import { KEY_CODEC } from '../../src/plugins/store/embdb/keys.js';
import type { StoredEntity } from '../../src/ngsild/entity/model.js';
import { ofTypes } from './helpers/store-query.js';

const NS = 'https://example.org/ns/';
const T0 = '2026-01-01T00:00:00Z';

function entity(type: string, k: number): StoredEntity {
  return {
    id: `urn:ngsi-ld:${type}:${k}`,
    type: [NS + type],
    createdAt: T0,
    modifiedAt: T0,
    [NS + 'temperature']: [{ type: 'Property', value: k % 40 }],
  };
}

interface Logged {
  msg: string;
  obj: Record<string, unknown>;
}

function recorder(): {
  lines: Logged[];
  log: { debug: () => void; info: (o: object | string, m?: string) => void; warn: () => void; error: () => void };
} {
  const lines: Logged[] = [];
  return {
    lines,
    log: {
      debug: () => {},
      info: (o, m) => {
        lines.push(typeof o === 'string' ? { msg: o, obj: {} } : { msg: m ?? '', obj: o as Record<string, unknown> });
      },
      warn: () => {},
      error: () => {},
    },
  };
}

async function openStore(path: string, log = recorder().log): Promise<EmbdbStore> {
  return (await storeOpen({ options: { dbPath: path, ram: false }, primary: true, log })) as EmbdbStore;
}

function tempPath(t: { teardown: (fn: () => void) => void }): string {
  const dir = mkdtempSync(join(tmpdir(), 'embdb-rebuild-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return join(dir, 'embdb');
}

async function create(store: EmbdbStore, tenant: string, e: StoredEntity): Promise<void> {
  await store.mutateEntity(tenant, e.id, () => ({ next: e, result: undefined }), { createTenant: true });
}

t.test('a new store is marked with the current index format, without announcing a rebuild', async (t) => {
  const path = tempPath(t);
  const rec = recorder();
  const store = await openStore(path, rec.log);
  t.equal(indexFormatOf(store.indexedDbs()), INDEX_FORMAT_VERSION);
  t.notOk(
    rec.lines.some((l) => l.msg.includes('rebuil')),
    'nothing to rebuild in an empty store',
  );
  await store.close();
});

t.test('indexes removed and an older marker: reopening rebuilds them; query by type and count are right', async (t) => {
  const path = tempPath(t);
  let store = await openStore(path);
  for (let k = 0; k < 30; k++) await create(store, '', entity('A', k));
  for (let k = 0; k < 50; k++) await create(store, '', entity('B', k));
  for (let k = 0; k < 7; k++) await create(store, 'tenant1', entity('A', k));
  const dbs = store.indexedDbs();
  dbs.env.transactionSync(() => {
    dbs.typeMembers.clearSync();
    dbs.typeStats.clearSync();
    dbs.attrStats.clearSync();
    dbs.meta.putSync(INDEX_FORMAT_KEY, 1);
  });
  t.same(
    (await store.queryEntities('', { type: ofTypes(NS + 'A'), limit: 100, offset: 0, count: true })).entities,
    [],
    'the index is gone',
  );
  await store.close();

  const { lines, log } = recorder();
  store = await openStore(path, log);
  t.ok(
    lines.some((l) => l.msg === 'embdb: indexes rebuilt' && l.obj.entities === 87),
    'the rebuild is logged with the entities visited',
  );
  const a = await store.queryEntities('', { type: ofTypes(NS + 'A'), limit: 20, offset: 0, count: true });
  t.equal(a.entities.length, 20);
  t.equal(a.count, 30);
  t.ok(a.entities.every((e) => e.type[0] === NS + 'A'));
  const b = await store.queryEntities('', { type: ofTypes(NS + 'B'), limit: 0, offset: 0, count: true });
  t.same(b, { entities: [], count: 50 });
  const other = await store.queryEntities('tenant1', { type: ofTypes(NS + 'A'), limit: 100, offset: 0, count: true });
  t.equal(other.count, 7);
  t.equal(other.entities.length, 7);
  t.same((await store.typeStats('')).map((s) => [s.typeIri, s.count]).sort(), [
    [NS + 'A', 30],
    [NS + 'B', 50],
  ]);
  t.equal((await store.attributeStats('', NS + 'temperature'))[0]?.count, 80);
  t.equal(indexFormatOf(store.indexedDbs()), INDEX_FORMAT_VERSION);
  await store.close();

  const again = recorder();
  store = await openStore(path, again.log);
  t.notOk(
    again.lines.some((l) => l.msg.startsWith('embdb: ')),
    'a current store is not rebuilt',
  );
  await store.close();
});

t.test('a format-2 store (type index keys [tenant, typeIri, id]) is migrated to the sorted-duplicates index', async (t) => {
  const path = tempPath(t);
  let store = await openStore(path);
  for (let k = 0; k < 12; k++) await create(store, '', entity(k % 2 === 0 ? 'A' : 'B', k));
  for (let k = 0; k < 3; k++) await create(store, 'tenant1', entity('A', k));
  // Back to what format 2 wrote: the old index filled, the new one absent, the marker at 2.
  const dbs = store.indexedDbs();
  const legacy = dbs.env.openDB<null, [string, string, string]>({ name: 'typeIds' });
  dbs.env.transactionSync(() => {
    dbs.typeMembers.clearSync();
    for (let k = 0; k < 12; k++) legacy.putSync(['', NS + (k % 2 === 0 ? 'A' : 'B'), `urn:ngsi-ld:${k % 2 === 0 ? 'A' : 'B'}:${k}`], null);
    dbs.meta.putSync(INDEX_FORMAT_KEY, 2);
  });
  await store.close();

  const { lines, log } = recorder();
  store = await openStore(path, log);
  t.ok(
    lines.some((l) => l.msg === 'embdb: indexes rebuilt' && l.obj.entities === 15),
    'the rebuild ran',
  );
  const a = await store.queryEntities('', { type: ofTypes(NS + 'A'), limit: 20, offset: 0, count: true });
  t.same(
    a.entities.map((e) => e.id),
    ['urn:ngsi-ld:A:0', 'urn:ngsi-ld:A:10', 'urn:ngsi-ld:A:2', 'urn:ngsi-ld:A:4', 'urn:ngsi-ld:A:6', 'urn:ngsi-ld:A:8'],
    'ids of a type in id order',
  );
  t.equal(a.count, 6);
  t.equal((await store.queryEntities('tenant1', { type: ofTypes(NS + 'A'), limit: 20, offset: 1, count: true })).entities.length, 2);
  const after = store.indexedDbs().env.openDB<null, [string, string, string]>({ name: 'typeIds' });
  t.equal([...after.getKeys()].length, 0, 'the format-2 index is dropped');
  t.equal(indexFormatOf(store.indexedDbs()), INDEX_FORMAT_VERSION);
  await store.close();
});

t.test('a store of entities only, written with lmdb default encoding, opens with indexes and progress lines', async (t) => {
  const path = tempPath(t);
  const N = 60_000;
  const env = open({ path, maxDbs: 32 });
  const entities = env.openDB<StoredEntity, string>({ name: 'entities' });
  env.transactionSync(() => {
    for (let k = 0; k < N; k++) {
      const e = entity(k % 3 === 0 ? 'A' : 'B', k);
      entities.putSync('\u0000' + e.id, e);
    }
  });
  await env.close();

  const { lines, log } = recorder();
  const store = await openStore(path, log);
  t.ok(
    lines.some((l) => l.msg === 'embdb: key rewrite progress' && l.obj.keys === 50_000),
    'the rewrite of its keys joined with NUL logs progress',
  );
  t.ok(
    lines.some((l) => l.msg === 'embdb: keys rewritten' && l.obj.keys === N),
    'every key is rewritten before the rebuild',
  );
  t.ok(
    lines.some((l) => l.msg === 'embdb: index rebuild progress' && l.obj.entities === 50_000),
    'progress is logged on a large store',
  );
  // Written under lmdb's own key comparator, read under LMDB's memcmp (keys.ts): the same byte order, nothing lost.
  t.ok(
    lines.some((l) => l.msg === 'embdb: indexes rebuilt' && l.obj.entities === N),
    'the rebuild visited every entity',
  );
  let found = 0;
  for (let k = 0; k < N; k += 97) if ((await store.getEntity('', entity(k % 3 === 0 ? 'A' : 'B', k).id)) !== undefined) found++;
  t.equal(found, Math.ceil(N / 97), 'every entity sampled is found by key');
  const a = await store.queryEntities('', { type: ofTypes(NS + 'A'), limit: 5, offset: 10, count: true });
  t.equal(a.count, N / 3);
  t.same(a.entities.map((e) => e.id).length, 5);
  const one = await store.getEntity('', 'urn:ngsi-ld:A:300');
  t.same(one, entity('A', 300), 'an entity written with the old encoding reads back the same after the rewrite');
  t.equal((await store.queryEntities('', { limit: 1, offset: 0, count: true })).count, N, 'a scan of the tenant sees every entity');
  await store.close();
});

t.test('a format-6 dbCompress store whose type index holds an id of 1000 bytes compressed: rebuilt at open', async (t) => {
  const path = tempPath(t);
  const long = 'urn:ngsi-ld:A:-' + 'x'.repeat(1000); // 1015 bytes: within MAX_ID_BYTES, past lmdb's 1000
  const ids = [long, 'urn:ngsi-ld:A:0', 'urn:ngsi-ld:A:1'];
  let store = (await storeOpen({
    options: { dbPath: path, ram: false, dbCompress: true },
    primary: true,
    log: recorder().log,
  })) as EmbdbStore;
  for (const id of ids) await create(store, '', { ...entity('A', 0), id });
  const typeKey = store.indexedDbs().typeMembers.getKeys().asArray[0];
  await store.close();
  // The index as code before format 7 wrote it in a compressed store: the values compressed like any other.
  const env = open({ path, maxDbs: 32, compression: true, encoder: { useRecords: false } });
  const old = env.openDB({ ...KEY_CODEC, name: 'typeMembers', dupSort: true, encoding: 'ordered-binary', compression: true });
  const meta = env.openDB({ ...KEY_CODEC, name: 'meta' });
  env.transactionSync(() => {
    old.clearSync();
    for (const id of ids) old.putSync(typeKey, id);
    meta.putSync(INDEX_FORMAT_KEY, 6);
  });
  await env.close();

  const rec = recorder();
  store = (await storeOpen({ options: { dbPath: path, ram: false, dbCompress: true }, primary: true, log: rec.log })) as EmbdbStore;
  t.teardown(() => store.close());
  t.ok(
    rec.lines.some((l) => l.msg === 'embdb: indexes rebuilt'),
    'a format-6 store is rebuilt',
  );
  const page = await store.queryEntities('', { type: ofTypes(NS + 'A'), limit: 10, offset: 0, count: true });
  t.same(
    page.entities.map((e) => e.id),
    [...ids].sort(),
    'every id once, in id order',
  );
  t.equal(page.count, 3);
  t.equal(indexFormatOf(store.indexedDbs()), INDEX_FORMAT_VERSION);
});
