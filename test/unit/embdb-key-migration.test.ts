// embdb on disk: a store written with entity and document keys joined by NUL (index format 4 and older, where a
// tenant's scan missed every key of 64 characters or more) has them rewritten as array keys when the primary opens
// it, and every entity and document is then found by every path.
import t from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Database, Key } from 'lmdb';
import { storeOpen } from '../../src/plugins/store/embdb/index.js';
import type { EmbdbStore } from '../../src/plugins/store/embdb/embdb-store.js';
import { INDEX_FORMAT_KEY, INDEX_FORMAT_VERSION, indexFormatOf } from '../../src/plugins/store/embdb/index-rebuild.js';
import type { StoredEntity } from '../../src/ngsild/entity/model.js';
import { ofTypes, qOf } from './helpers/store-query.js';

const NS = 'https://example.org/ns/';
const T0 = '2026-01-01T00:00:00Z';
const TENANTS = ['', 'openiot'];
const LENGTHS = [3, 20, 40, 55, 56, 57, 62, 63, 64, 65, 70, 100, 300, 1000];
const idOf = (length: number): string => `urn:ngsi-ld:Vehicle:${'5f1c6a2e-2b7e-4d43-9a57-0d6b8d1f3c21'.repeat(30)}`.slice(0, length);

function entity(length: number): StoredEntity {
  return { id: idOf(length), type: [NS + 'Vehicle'], createdAt: T0, modifiedAt: T0, [NS + 'speed']: [{ type: 'Property', value: 50 }] };
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

async function openStore(path: string, compress: boolean, log = recorder().log): Promise<EmbdbStore> {
  return (await storeOpen({ options: { dbPath: path, ram: false, dbCompress: compress }, primary: true, log })) as EmbdbStore;
}

/** Puts every array key of `db` back as the string its parts joined with NUL: what format 4 wrote. */
function joinKeys(store: EmbdbStore, db: Database<unknown, Key>): number {
  const { env } = store.indexedDbs();
  let short = 0;
  env.transactionSync(() => {
    for (const { key, value } of [...db.getRange()]) {
      if (!Array.isArray(key)) continue;
      const joined = key.join('\u0000');
      if (joined.length < 64) short++;
      db.removeSync(key);
      db.putSync(joined, value);
    }
  });
  return short;
}

for (const compress of [false, true]) {
  t.test(`a format-4 store with keys joined by NUL gets array keys at open (compression ${compress ? 'on' : 'off'})`, async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'embdb-keys-'));
    t.teardown(() => rmSync(dir, { recursive: true, force: true }));
    const path = join(dir, 'embdb');
    let store = await openStore(path, compress);
    for (const tenant of TENANTS) {
      await store.mutateEntities(
        tenant,
        LENGTHS.map((l) => ({ id: idOf(l), mutation: () => ({ next: entity(l), result: undefined }) })),
        { createTenant: true },
      );
      for (const l of LENGTHS) await store.collection(tenant, 'subscriptions').insert(idOf(l), { n: l });
    }
    const dbs = store.indexedDbs();
    const shortEntities = joinKeys(store, dbs.entities as Database<unknown, Key>);
    const shortDocs = joinKeys(store, dbs.docs as Database<unknown, Key>);
    await dbs.meta.put(INDEX_FORMAT_KEY, 4);
    t.ok(shortEntities > 0 && shortEntities < LENGTHS.length * TENANTS.length, 'the old layout holds short and long keys');
    const before = await store.queryEntities('openiot', { limit: 100, offset: 0, count: true });
    t.equal(
      before.count,
      LENGTHS.filter((l) => l + 'openiot'.length + 1 >= 64).length,
      'as written by format 4, the scan sees only one of its two encodings',
    );
    await store.close();

    const { lines, log } = recorder();
    store = await openStore(path, compress, log);
    t.ok(
      lines.some((l) => l.msg === 'embdb: keys rewritten' && l.obj.database === 'entities' && l.obj.keys === shortEntities),
      'the entity keys rewritten are logged',
    );
    t.ok(
      lines.some((l) => l.msg === 'embdb: keys rewritten' && l.obj.database === 'docs' && l.obj.keys === shortDocs),
      'so are the document keys',
    );
    // Format 6 put each geometry's box in the spatial index entries: a format-4 store's indexes are rebuilt too.
    t.ok(
      lines.some((l) => l.msg === 'embdb: indexes rebuilt'),
      'the indexes of format 4 are rebuilt after the keys',
    );
    t.equal(indexFormatOf(store.indexedDbs()), INDEX_FORMAT_VERSION);
    for (const tenant of TENANTS) {
      const scan = await store.queryEntities(tenant, { q: qOf('speed>10', NS), limit: 100, offset: 0, count: true });
      t.equal(scan.count, LENGTHS.length, `tenant '${tenant}': q=speed>10 finds every entity`);
      t.same(
        scan.entities.map((e) => e.id),
        LENGTHS.map(idOf).sort(),
        'in id order',
      );
      const typed = await store.queryEntities(tenant, { type: ofTypes(NS + 'Vehicle'), limit: 100, offset: 0, count: true });
      t.equal(typed.entities.length, LENGTHS.length, `tenant '${tenant}': type=Vehicle reads every entity by its new key`);
      for (const l of LENGTHS) t.same(await store.getEntity(tenant, idOf(l)), entity(l));
      const docs = store.collection(tenant, 'subscriptions');
      t.same(
        (await docs.list()).map((d) => d.doc),
        LENGTHS.map((l) => ({ n: l })),
        `tenant '${tenant}': every document`,
      );
      for (const l of LENGTHS) t.same(await docs.get(idOf(l)), { n: l });
    }
    const keys = [...store.indexedDbs().entities.getKeys()].filter((k) => typeof k !== 'symbol');
    t.ok(
      keys.every((k) => Array.isArray(k) && k.length === 2),
      'no key joined with NUL is left',
    );
    await store.close();

    const again = recorder();
    store = await openStore(path, compress, again.log);
    t.notOk(
      again.lines.some((l) => l.msg.startsWith('embdb: ')),
      'a store of format 5 is not rewritten again',
    );
    await store.close();
  });
}

t.test('a key rewrite cut short runs on at the next open: the marker is written last', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'embdb-keys-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const path = join(dir, 'embdb');
  let store = await openStore(path, false);
  await store.mutateEntities(
    'openiot',
    LENGTHS.map((l) => ({ id: idOf(l), mutation: () => ({ next: entity(l), result: undefined }) })),
    { createTenant: true },
  );
  const dbs = store.indexedDbs();
  const short = joinKeys(store, dbs.entities as Database<unknown, Key>);
  // Half the keys moved back already, as if the previous open stopped between two chunks.
  const entities = dbs.entities as Database<unknown, Key>;
  dbs.env.transactionSync(() => {
    let k = 0;
    for (const key of [...entities.getKeys()]) {
      if (typeof key !== 'string' || k++ % 2 === 1) continue;
      const value = entities.get(key);
      entities.removeSync(key);
      entities.putSync(key.split('\u0000'), value);
    }
  });
  await dbs.meta.put(INDEX_FORMAT_KEY, 4);
  await store.close();
  const { lines, log } = recorder();
  store = await openStore(path, false, log);
  t.ok(
    lines.some((l) => l.msg === 'embdb: keys rewritten' && (l.obj.keys as number) < short),
    'the keys left are rewritten',
  );
  t.equal((await store.queryEntities('openiot', { limit: 100, offset: 0, count: true })).count, LENGTHS.length);
  await store.close();
});
