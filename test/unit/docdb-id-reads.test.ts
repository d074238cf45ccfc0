// How docdb reads a list of ids (layout.ts IdReads, issue 17): one `$in` on MongoDB, one find by `_id` per id on
// FerretDB, which does not push a `$in` down (it reads the whole collection). The chooser decides from the server's
// buildInfo answer; both paths read the same documents at the same versions, and a batch on either still refuses a
// lost update (its conditional write depends on the versions read). On the tests' server (FerretDB), each path forced.
import t from 'tap';
import type { Test } from 'tap';
import { Collection, FindCursor, MongoClient } from 'mongodb';
import { DocdbStore, findByIds } from '../../src/plugins/store/docdb/docdb-store.js';
import { ENTITIES, idReadsOf, serverKind, type IdReads } from '../../src/plugins/store/docdb/layout.js';
import type { EntityDoc } from '../../src/plugins/store/docdb/entity-doc.js';
import type { EntityQuery, StoredEntity } from '../../src/store/contract.js';
import { dropDatabases, freshDbName, mongoUrl } from '../api/helpers/docdb.js';
import { counter, valueOf } from '../helpers/counter-entity.js';

const log = { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} };
const NS = 'https://example.org/ns/';

const inc = (cur: StoredEntity | undefined) => ({ next: counter(cur!.id, valueOf(cur) + 1), result: 'ok' });

/** A fake admin database answering buildInfo with `info`. */
const answering = (info: Record<string, unknown>) => ({ command: () => Promise.resolve({ ...info, ok: 1 }) }) as never;

t.test('the chooser: MongoDB reads a list of ids with $in, FerretDB (its buildInfo says so) one _id at a time', async (t) => {
  // MongoDB 7's answer has no ferretdbVersion; FerretDB 1.24 adds ferretdbVersion on its SQLite and PostgreSQL backends.
  const mongo = await serverKind(answering({ version: '7.0.14', gitVersion: 'ce59cfc6a3c5e5c067dca0d30697edd68d4f5188', modules: [] }));
  t.equal(mongo, 'mongodb');
  t.equal(idReadsOf(mongo), 'in');
  const ferret = await serverKind(answering({ version: '7.0.42', gitVersion: 'unknown', ferretdbVersion: 'v1.24.0' }));
  t.equal(ferret, 'ferretdb');
  t.equal(idReadsOf(ferret), 'each');
  // Something else in that field is not FerretDB's version: MongoDB's path, the one round trip.
  t.equal(await serverKind(answering({ version: '7.0.14', ferretdbVersion: 1 })), 'mongodb');
  const client = new MongoClient(mongoUrl(), { serverSelectionTimeoutMS: 5000 });
  t.teardown(() => client.close());
  t.equal(await serverKind(client.db('admin')), 'ferretdb', "the tests' server is FerretDB");
});

/** Two stores on one fresh database (two brokers of a set), both reading lists of ids as `how`. */
async function two(t: Test, how: IdReads): Promise<[DocdbStore, DocdbStore]> {
  const dbName = freshDbName();
  const open = async (primary: boolean) => {
    const s = new DocdbStore({ uri: mongoUrl(), dbName, poolSize: 10, timeoutMs: 5000, sync: 'interval', log, idReads: how });
    await s.start(primary);
    return s;
  };
  const a = await open(true);
  const b = await open(false);
  t.teardown(async () => {
    await a.close();
    await b.close();
    await dropDatabases(dbName);
  });
  return [a, b];
}

/** Counts the reads of the entities collection while `fn` runs: finds by `_id` alone, and `$in` finds. */
async function countingReads<R>(fn: () => Promise<R>): Promise<{ r: R; findOne: number; find: number }> {
  const findOne = Collection.prototype.findOne;
  const find = Collection.prototype.find;
  const n = { findOne: 0, find: 0 };
  Collection.prototype.findOne = function (this: Collection, ...args: unknown[]) {
    if (this.collectionName === ENTITIES) n.findOne++;
    return (findOne as (...a: unknown[]) => unknown).apply(this, args);
  } as typeof findOne;
  Collection.prototype.find = function (this: Collection, ...args: unknown[]) {
    // findOne is a find underneath: only a find of a `$in` on _id is counted here.
    const filter = args[0] as { _id?: { $in?: unknown } } | undefined;
    if (this.collectionName === ENTITIES && filter?._id?.$in !== undefined) n.find++;
    return (find as (...a: unknown[]) => unknown).apply(this, args);
  } as typeof find;
  try {
    return { r: await fn(), ...n };
  } finally {
    Collection.prototype.findOne = findOne;
    Collection.prototype.find = find;
  }
}

t.test('findByIds: the same documents at the same versions on both paths, absent and repeated ids left out', async (t) => {
  const dbName = freshDbName();
  const client = new MongoClient(mongoUrl(), { serverSelectionTimeoutMS: 5000 });
  t.teardown(async () => {
    await client.close();
    await dropDatabases(dbName);
  });
  const coll = client.db(dbName).collection<EntityDoc>(ENTITIES);
  const ids = Array.from({ length: 40 }, (_, i) => `urn:ngsi-ld:Counter:f${i}`);
  await coll.insertMany(ids.map((id, i) => ({ _id: id, v: 1000 + i, t: [NS + 'Counter'] }) as unknown as EntityDoc));
  const asked = [...ids.slice(0, 30), 'urn:ngsi-ld:Counter:absent', ids[3]!, ''];
  const byId = ([x]: readonly [string, number], [y]: readonly [string, number]) => (x < y ? -1 : x > y ? 1 : 0);
  const sorted = (docs: EntityDoc[]) => docs.map((d) => [d._id, d.v] as const).sort(byId);
  const viaIn = await countingReads(() => findByIds(coll, asked, { v: 1 }, 'in', 10));
  const viaEach = await countingReads(() => findByIds(coll, asked, { v: 1 }, 'each', 10));
  t.same(viaIn.find, 1, 'in: one find');
  t.same(viaIn.findOne, 0);
  t.same(viaEach.find, 0, 'each: no $in');
  t.same(viaEach.findOne, asked.length, 'each: one find by _id per id asked');
  const want = ids
    .slice(0, 30)
    .map((id, i) => [id, 1000 + i] as const)
    .sort(byId);
  t.same(sorted(viaIn.r), want, 'in: the 30 that exist, at their versions');
  // A repeated id is read twice one by one: the caller's lists have no repeats (mutateEntities dedups its ids).
  t.same(
    sorted(viaEach.r).filter(([id], i, all) => i === 0 || all[i - 1]![0] !== id),
    want,
    'each: the same documents at the same versions',
  );
  t.same(await findByIds(coll, [], { v: 1 }, 'each', 10), [], 'no ids: nothing read');
  t.same(await findByIds(coll, ['urn:ngsi-ld:Counter:absent'], { v: 1 }, 'in', 10), [], 'absent only: nothing');
});

for (const how of ['in', 'each'] as const) {
  t.test(`${how}: a batch's read goes the chosen way`, async (t) => {
    const [a] = await two(t, how);
    const ids = Array.from({ length: 20 }, (_, i) => `urn:ngsi-ld:Counter:p${i}`);
    await a.mutateEntities(
      '',
      ids.map((id) => ({ id, mutation: () => ({ next: counter(id, 0), result: 'ok' }) })),
    );
    const { r, find, findOne } = await countingReads(() =>
      a.mutateEntities(
        '',
        ids.map((id) => ({ id, mutation: inc })),
      ),
    );
    t.ok(
      r.every((o) => o.ok),
      'every entry applied',
    );
    if (how === 'in') t.equal(findOne, 0, 'no read by _id alone');
    else t.equal(find, 0, 'no $in');
    t.ok(how === 'in' ? find >= 1 : findOne >= ids.length, 'the batch read its entities');
    for (const id of ids) t.equal(valueOf(await a.getEntity('', id)), 1, `${id} incremented once`);
  });

  t.test(`${how}: a write between a batch's read and its write is not lost (the batch runs again on it)`, async (t) => {
    const [a, b] = await two(t, how);
    const ids = ['urn:ngsi-ld:Counter:x', 'urn:ngsi-ld:Counter:y', 'urn:ngsi-ld:Counter:z'];
    await a.mutateEntities(
      '',
      ids.map((id) => ({ id, mutation: () => ({ next: counter(id, 0), result: 'ok' }) })),
    );
    // A's first read of its batch returns, then B increments every entity before A's mutations run.
    let armed = true;
    const between = async () => {
      armed = false;
      await b.mutateEntities(
        '',
        ids.map((id) => ({ id, mutation: inc })),
      );
    };
    const findOne = Collection.prototype.findOne;
    const toArray = FindCursor.prototype.toArray;
    let pendingEach: Promise<void> | undefined;
    Collection.prototype.findOne = function (this: Collection, ...args: unknown[]) {
      const read = (findOne as (...a: unknown[]) => Promise<unknown>).apply(this, args);
      if (!armed || this.collectionName !== ENTITIES) return read;
      // Every read of A's first round waits for B's write, which starts once the first of them is answered.
      pendingEach ??= read.then(between);
      return read.then((doc) => pendingEach!.then(() => doc));
    } as typeof findOne;
    FindCursor.prototype.toArray = function (this: FindCursor) {
      const read = toArray.apply(this);
      if (!armed || this.namespace.collection !== ENTITIES) return read;
      return read.then((docs) => between().then(() => docs));
    } as typeof toArray;
    t.teardown(() => {
      Collection.prototype.findOne = findOne;
      FindCursor.prototype.toArray = toArray;
    });
    let runs = 0;
    const outcomes = await a.mutateEntities(
      '',
      ids.map((id) => ({ id, mutation: (cur: StoredEntity | undefined) => (runs++, inc(cur)) })),
    );
    Collection.prototype.findOne = findOne;
    FindCursor.prototype.toArray = toArray;
    t.equal(armed, false, "B wrote between A's read and A's write");
    t.ok(
      outcomes.every((o) => o.ok),
      "A's batch applied",
    );
    for (const id of ids) t.equal(valueOf(await a.getEntity('', id)), 2, `${id}: both increments counted`);
    t.equal(runs, 2 * ids.length, "A's mutations ran again on B's writes");
  });

  t.test(`${how}: two writers batch-increment the same 30 entities at once: no update is lost`, async (t) => {
    const [a, b] = await two(t, how);
    const ids = Array.from({ length: 30 }, (_, i) => `urn:ngsi-ld:Counter:c${i}`);
    await a.mutateEntities(
      '',
      ids.map((id) => ({ id, mutation: () => ({ next: counter(id, 0), result: 'ok' }) })),
    );
    const N = 4;
    const runs: Promise<unknown>[] = [];
    const batch = () => ids.map((id) => ({ id, mutation: inc }));
    for (let i = 0; i < N; i++) runs.push(a.mutateEntities('', batch()), b.mutateEntities('', batch()));
    await Promise.all(runs);
    for (const id of ids) t.equal(valueOf(await b.getEntity('', id)), 2 * N, `${id}: every increment counted`);
  });
}

t.test('a query by ids (id=, a join level) reads the same way, and answers alike on both paths', async (t) => {
  const [viaIn] = await two(t, 'in');
  const viaEach = new DocdbStore({
    uri: mongoUrl(),
    dbName: (viaIn as unknown as { settings: { dbName: string } }).settings.dbName,
    poolSize: 10,
    timeoutMs: 5000,
    sync: 'interval',
    log,
    idReads: 'each',
  });
  await viaEach.start(false);
  t.teardown(() => viaEach.close());
  const ids = Array.from({ length: 12 }, (_, i) => `urn:ngsi-ld:Counter:q${String(i).padStart(2, '0')}`);
  await viaIn.mutateEntities(
    '',
    ids.map((id, i) => ({ id, mutation: () => ({ next: counter(id, i), result: 'ok' }) })),
  );
  // A few ids asked, out of order, one absent.
  const asked = [ids[7]!, ids[2]!, 'urn:ngsi-ld:Counter:absent', ids[9]!, ids[4]!, ids[11]!];
  const orderByValue = {
    keyOf: (e: StoredEntity) => [valueOf(e)],
    compare: (a: number[], b: number[]) => b[0]! - a[0]!,
  } as unknown as EntityQuery['orderBy'];
  const queries: Array<[string, EntityQuery]> = [
    ['ids alone', { ids: asked, limit: 20, offset: 0, count: true }],
    ['a page of them', { ids: asked, limit: 2, offset: 1, count: true }],
    ['and their type', { ids: asked, type: { kind: 'type', name: NS + 'Counter' }, limit: 20, offset: 0, count: true }],
    ['and another type', { ids: asked, type: { kind: 'type', name: NS + 'Nothing' }, limit: 20, offset: 0, count: true }],
    ['and attrs they hold', { ids: asked, attrs: [NS + 'n'], limit: 20, offset: 0, count: true }],
    ['and attrs they lack', { ids: asked, attrs: [NS + 'absent'], limit: 20, offset: 0, count: true }],
    ['ordered', { ids: asked, orderBy: orderByValue, limit: 3, offset: 0, count: true }],
  ];
  for (const [what, query] of queries) {
    const a = await countingReads(() => viaIn.queryEntities('', query));
    const e = await countingReads(() => viaEach.queryEntities('', query));
    t.same(
      e.r.entities.map((x) => x.id),
      a.r.entities.map((x) => x.id),
      `${what}: the same page`,
    );
    t.equal(e.r.count, a.r.count, `${what}: the same count`);
    t.equal(e.find, 0, `${what}: each: no $in`);
    t.equal(e.findOne, asked.length, `${what}: each: one find by _id per id`);
    t.equal(a.findOne, 0, `${what}: in: no find by _id alone`);
  }
  t.same(
    (await viaEach.queryEntities('', queries[0]![1])).entities.map((x) => x.id),
    [ids[7], ids[2], ids[9], ids[4], ids[11]],
    'in the order of the ids',
  );
});
