// docdb beyond the contract suite, on the tests' MongoDB-wire server: writers on two handles (two brokers) never
// lose an update, a create race ends in one entity and one refusal, geometries that are nested arrays (lines,
// polygons) are stored and queried end to end, and what the server only prefilters (q on values it does not hold,
// idPattern, projections) is decided in the worker with the right pages and counts.
import t from 'tap';
import type { Test } from 'tap';
import { storeOpen } from '../../src/plugins/store/docdb/index.js';
import { literalPrefix, scopeRegex } from '../../src/plugins/store/docdb/query-filter.js';
import type { Store, StoredEntity, EntityQuery } from '../../src/store/contract.js';
import { LdError } from '../../src/ngsild/problem.js';
import { parseQ } from '../../src/ngsild/query/q-parser.js';
import { resolveQ, asWritten } from '../../src/ngsild/query/q-resolve.js';
import { compileQ } from '../../src/ngsild/query/q-eval.js';
import { parseGeoQueryObject } from '../../src/ngsild/query/geoq.js';
import { dropDatabases, freshDbName, mongoUrl } from '../api/helpers/docdb.js';
import { counter, valueOf } from '../helpers/counter-entity.js';
import { Collection, MongoClient } from 'mongodb';
import { HOLD_MS } from '../../src/plugins/store/docdb/claims.js';

const log = { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} };
const NS = 'https://example.org/ns/';
const T0 = '2026-01-01T00:00:00.000Z';
const expand = (term: string): string => (term.includes(':') ? term : NS + term);

/** Two handles on one fresh database: what two brokers of a set hold. */
async function two(t: Test): Promise<[Store, Store]> {
  const dbName = freshDbName();
  const a = await storeOpen({ options: { dbURI: mongoUrl(), dbName }, primary: true, log });
  const b = await storeOpen({ options: { dbURI: mongoUrl(), dbName }, primary: false, log });
  t.teardown(async () => {
    await a.close();
    await b.close();
    await dropDatabases(dbName);
  });
  return [a, b];
}

t.test('two writers increment one entity at once: no update is lost', async (t) => {
  const [a, b] = await two(t);
  const id = 'urn:ngsi-ld:Counter:1';
  await a.mutateEntity('', id, () => ({ next: counter(id, 0), result: undefined }));
  const inc = (cur: StoredEntity | undefined) => ({ next: counter(id, valueOf(cur) + 1), result: undefined });
  const N = 15;
  const seqs: number[] = [];
  const writes: Promise<unknown>[] = [];
  for (let i = 0; i < N; i++) {
    for (const s of [a, b]) {
      const events: import('../../src/store/contract.js').WriteEvent[] = [];
      writes.push(s.mutateEntity('', id, inc, { events }).then(() => seqs.push(events[0]!.seq)));
    }
  }
  await Promise.all(writes);
  t.equal(valueOf(await b.getEntity('', id)), 2 * N, 'every increment of both writers counted');
  t.equal(new Set(seqs).size, 2 * N, 'each write its own seq');
});

t.test('two writers batch-increment the same entities at once: no update is lost', async (t) => {
  const [a, b] = await two(t);
  const ids = ['urn:ngsi-ld:Counter:a', 'urn:ngsi-ld:Counter:b', 'urn:ngsi-ld:Counter:c'];
  await a.mutateEntities(
    '',
    ids.map((id) => ({ id, mutation: () => ({ next: counter(id, 0), result: undefined }) })),
  );
  const batch = () =>
    ids.map((id) => ({ id, mutation: (cur: StoredEntity | undefined) => ({ next: counter(id, valueOf(cur) + 1), result: 'ok' }) }));
  const N = 8;
  const runs: Promise<unknown>[] = [];
  for (let i = 0; i < N; i++) runs.push(a.mutateEntities('', batch()), b.mutateEntities('', batch()));
  await Promise.all(runs);
  for (const id of ids) t.equal(valueOf(await a.getEntity('', id)), 2 * N, `${id}: every increment counted`);
});

t.test('a writer slow between its read and its claim loses to the write that came between (FerretDB: writes by _id)', async (t) => {
  // On FerretDB a claimed write goes by `_id` alone (claims.ts): what keeps it from overwriting a newer version is
  // the claim's hold and the check of the version by a writer that took HOLD_MS or more from its read to its claim.
  // Here A reads, then B writes the entity and B's claim is released (flushed at once, not held), and only then does
  // A claim, more than HOLD_MS after its read: A must see B's write and run its mutation again on it.
  const [a, b] = await two(t);
  const id = 'urn:ngsi-ld:Counter:slow';
  await a.mutateEntity('', id, () => ({ next: counter(id, 0), result: undefined }));
  const inc = (cur: StoredEntity | undefined) => ({ next: counter(id, valueOf(cur) + 1), result: undefined });
  const insertMany = Collection.prototype.insertMany;
  let between: Promise<void> | undefined;
  // The first claim A sends waits for B's whole write (and the release of B's claim), and for HOLD_MS to pass.
  Collection.prototype.insertMany = function (this: Collection, ...args: Parameters<typeof insertMany>) {
    if (this.collectionName === 'writeClaims' && between === undefined) {
      between = (async () => {
        await b.mutateEntity('', id, inc);
        await (b as unknown as { releases: { flush(): Promise<void> } }).releases.flush();
        await new Promise((r) => setTimeout(r, HOLD_MS + 50));
      })();
      return between.then(() => insertMany.apply(this, args)) as ReturnType<typeof insertMany>;
    }
    return insertMany.apply(this, args);
  } as typeof insertMany;
  t.teardown(() => void (Collection.prototype.insertMany = insertMany));
  let runs = 0;
  await a.mutateEntity('', id, (cur) => (runs++, inc(cur)));
  Collection.prototype.insertMany = insertMany;
  t.equal(valueOf(await a.getEntity('', id)), 2, "both increments counted: A's ran again on B's write");
  if (between !== undefined) t.equal(runs, 2, "A's mutation ran twice");
  else t.pass('MongoDB: no claims; the condition on the version decides');
});

t.test('a batch replacing 150 entities is answered (FerretDB held every connection on one update command of them)', async (t) => {
  const [a, b] = await two(t);
  const ids = Array.from({ length: 150 }, (_, i) => `urn:ngsi-ld:Counter:r${i}`);
  const batch = (n: number) => ids.map((id) => ({ id, mutation: () => ({ next: counter(id, n), result: n }) }));
  await a.mutateEntities('', batch(0));
  // Two replacing batches at once on the two handles, then one more: each answers, and the last one's values stay.
  let timer: NodeJS.Timeout | undefined;
  const hung = new Promise<string>((r) => (timer = setTimeout(() => r('no answer within 60 s'), 60_000)));
  const answered = Promise.all([a.mutateEntities('', batch(1)), b.mutateEntities('', batch(2))]).then(() => 'answered');
  t.equal(await Promise.race([answered, hung]), 'answered', 'both replacing batches answered');
  clearTimeout(timer);
  const outcomes = await b.mutateEntities('', batch(3));
  t.ok(
    outcomes.every((o) => o.ok && o.result === 3),
    'every entry of the last batch applied',
  );
  const page = await a.queryEntities('', { type: { kind: 'type', name: NS + 'Counter' }, limit: 1000, offset: 0, count: true });
  t.equal(page.count, 150, 'no entity lost or doubled');
  t.ok(
    page.entities.every((e) => valueOf(e) === 3),
    "every entity holds the last batch's value",
  );
});

t.test('two brokers create one id at once: one entity, the other create refused', async (t) => {
  const [a, b] = await two(t);
  const id = 'urn:ngsi-ld:Counter:race';
  const create = (n: number) => (cur: StoredEntity | undefined) => {
    if (cur !== undefined) throw new LdError('AlreadyExists', `${id} exists`);
    return { next: counter(id, n), result: n };
  };
  const results = await Promise.allSettled([a.mutateEntity('', id, create(1)), b.mutateEntity('', id, create(2))]);
  const ok = results.filter((r) => r.status === 'fulfilled');
  const refused = results.filter((r) => r.status === 'rejected') as PromiseRejectedResult[];
  t.equal(ok.length, 1, 'one create succeeds');
  t.equal(refused.length, 1);
  t.equal((refused[0]!.reason as LdError).status, 409, 'the other is refused as existing (409), never a server error');
  t.equal(valueOf(await a.getEntity('', id)), (ok[0] as PromiseFulfilledResult<number>).value, 'the stored entity is the winner');
});

const place = (id: string, value: unknown, extra: Partial<StoredEntity> = {}): StoredEntity => ({
  id,
  type: [NS + 'Place'],
  createdAt: T0,
  modifiedAt: T0,
  [NS + 'location']: [{ type: 'GeoProperty', value }],
  ...extra,
});
const square = (w: number, s: number, e: number, n: number) => ({
  type: 'Polygon',
  coordinates: [
    [
      [w, s],
      [e, s],
      [e, n],
      [w, n],
      [w, s],
    ],
  ],
});

t.test('lines and polygons (nested arrays) are stored whole and found by geo-queries', async (t) => {
  const [a, b] = await two(t);
  const line = {
    type: 'LineString',
    coordinates: [
      [10, 50],
      [10.1, 50.1],
      [10.2, 50.1],
    ],
  };
  const poly = square(10, 50, 10.05, 50.05);
  const far = square(20, 10, 20.1, 10.1);
  const multi = {
    type: 'MultiPolygon',
    coordinates: [square(30, 30, 30.1, 30.1).coordinates, square(10.01, 50.01, 10.02, 50.02).coordinates],
  };
  const entities = [
    place('urn:ngsi-ld:Place:line', line),
    place('urn:ngsi-ld:Place:poly', poly),
    place('urn:ngsi-ld:Place:far', far),
    place('urn:ngsi-ld:Place:multi', multi),
    place('urn:ngsi-ld:Place:point', { type: 'Point', coordinates: [10.03, 50.03] }),
  ];
  const outcomes = await a.mutateEntities(
    '',
    entities.map((e) => ({ id: e.id, mutation: () => ({ next: e, result: undefined }) })),
  );
  t.ok(outcomes.every((o) => o.ok));
  t.same(await b.getEntity('', 'urn:ngsi-ld:Place:line'), entities[0], 'a LineString read back whole on another handle');
  t.same(await b.getEntity('', 'urn:ngsi-ld:Place:multi'), entities[3], 'a MultiPolygon read back whole');
  const geoQuery = async (geoQ: unknown): Promise<string[]> => {
    const q: EntityQuery = { geo: parseGeoQueryObject(geoQ, expand), limit: 100, offset: 0, count: true };
    const page = await b.queryEntities('', q);
    t.equal(page.count, page.entities.length);
    return page.entities.map((e) => e.id.split(':').pop()!).sort();
  };
  const area = { geometry: 'Polygon', coordinates: square(9.9, 49.9, 10.11, 50.11).coordinates };
  t.same(await geoQuery({ georel: 'within', ...area }), ['point', 'poly'], 'within (a MultiPolygon partly outside is not)');
  t.same(await geoQuery({ georel: 'intersects', ...area }), ['line', 'multi', 'point', 'poly'], 'intersects a polygon');
  t.same(
    await geoQuery({
      georel: 'intersects',
      geometry: 'LineString',
      coordinates: [
        [10.025, 49],
        [10.025, 51],
      ],
    }),
    ['line', 'poly'].sort(),
    'intersects a line (the query geometry a nested array too)',
  );
  t.same(await geoQuery({ georel: 'near;maxDistance==3000', geometry: 'Point', coordinates: [20.05, 10.05] }), ['far'], 'near a polygon');
  t.same(await geoQuery({ georel: 'disjoint', ...area }), ['far'], 'disjoint: nothing for the server to narrow');
});

t.test('what the server only prefilters is decided in the worker: pages and counts stay right', async (t) => {
  const [a] = await two(t);
  const make = (k: number): StoredEntity => {
    const e: StoredEntity = { id: `urn:ngsi-ld:V:${String(k).padStart(2, '0')}`, type: [NS + 'V'], createdAt: T0, modifiedAt: T0 };
    // a number, a list holding it (no qv value: qx), a long string, a language map, a JSON object
    if (k % 5 === 0) e[NS + 'v'] = [{ type: 'Property', value: k }];
    if (k % 5 === 1) e[NS + 'v'] = [{ type: 'ListProperty', valueList: [k, 'x'] }];
    if (k % 5 === 2) e[NS + 'v'] = [{ type: 'Property', value: 'y'.repeat(300) + k }];
    if (k % 5 === 3) e[NS + 'v'] = [{ type: 'LanguageProperty', languageMap: { en: 'n' + k } }];
    if (k % 5 === 4) e[NS + 'v'] = [{ type: 'Property', value: [k, k + 100] }];
    return e;
  };
  const data = Array.from({ length: 30 }, (_, k) => make(k));
  await a.mutateEntities(
    '',
    data.map((e) => ({ id: e.id, mutation: () => ({ next: e, result: undefined }) })),
  );
  const run = async (q: Omit<EntityQuery, 'limit' | 'offset' | 'count'>, limit = 100, offset = 0) =>
    a.queryEntities('', { ...q, limit, offset, count: true });
  const ids = (p: { entities: StoredEntity[] }) => p.entities.map((e) => Number(e.id.slice(-2)));
  const q = (text: string) => resolveQ(parseQ(text), expand);
  const oracle = (text: string) => data.filter(compileQ(q(text), asWritten)).map((e) => Number(e.id.slice(-2)));
  for (const [text, what] of [
    ['v>=10', 'numbers, list elements, array elements'],
    ['v==21', 'a value only a list holds'],
    ['v==' + JSON.stringify('y'.repeat(300) + 12), 'a long string, not copied for the server'],
    ['v[en]=="n13"', 'a language map'],
    ['v==114', 'an element of an array value'],
    ['v!=5', '!='],
    ['v<3|v=="n8"', 'or'],
  ] as const) {
    const expected = oracle(text);
    t.ok(expected.length > 0, `${what}: something matches`);
    t.same(ids(await run({ q: q(text) })), expected, what);
  }
  const page = await run({ q: q('v>=10') }, 3, 4);
  t.same(
    [ids(page), page.count],
    [oracle('v>=10').slice(4, 7), oracle('v>=10').length],
    'a page of worker-decided matches, and their count',
  );
  t.same(ids(await run({ idPattern: '^urn:ngsi-ld:V:0[1-3]$' })), [1, 2, 3], 'idPattern: a literal prefix on the server, RE2 here');
  t.same(ids(await run({ idPattern: '[13]$' }, 4)), [1, 3, 11, 13], 'idPattern without a prefix');
  t.same(ids(await run({ projection: { pick: [NS + 'nothing'] } })), [], 'a projection that leaves every entity empty selects none');
});

t.test('--dbSync request: writes with write concern majority and journal, read back', async (t) => {
  const dbName = freshDbName();
  const store = await storeOpen({ options: { dbURI: mongoUrl(), dbName, dbSync: 'request' }, primary: true, log });
  t.teardown(async () => {
    await store.close();
    await dropDatabases(dbName);
  });
  const id = 'urn:ngsi-ld:Counter:sync';
  await store.mutateEntity('', id, () => ({ next: counter(id, 1), result: undefined }));
  await store.mutateEntities('', [{ id, mutation: (cur) => ({ next: counter(id, valueOf(cur) + 1), result: undefined }) }]);
  await store.collection('', 'subscriptions').put('urn:s:1', { a: 1 });
  t.equal(valueOf(await store.getEntity('', id)), 2);
  t.same(await store.collection('', 'subscriptions').get('urn:s:1'), { a: 1 });
});

t.test('reads and refused writes naming a tenant leave no database behind; a write lays it out', async (t) => {
  const dbName = freshDbName();
  const store = await storeOpen({ options: { dbURI: mongoUrl(), dbName }, primary: true, log });
  const client = new MongoClient(mongoUrl());
  t.teardown(async () => {
    await store.close();
    await client.close();
    await dropDatabases(dbName);
  });
  const databases = async () => (await client.db('admin').admin().listDatabases({ nameOnly: true })).databases.map((d) => d.name);
  const id = 'urn:ngsi-ld:Counter:g';
  t.equal(await store.getEntity('ghost', id), undefined);
  t.same(await store.queryEntities('ghost', { limit: 10, offset: 0, count: true }), { entities: [], count: 0 });
  t.same(await store.typeStats('ghost'), []);
  t.same(await store.collection('ghost', 'subscriptions').list(), []);
  t.equal(await store.collection('ghost', 'subscriptions').get('x'), undefined);
  await t.rejects(
    store.mutateEntity(
      'ghost',
      id,
      () => {
        throw new LdError('BadRequestData', 'refused');
      },
      { createTenant: true },
    ),
  );
  await store.mutateEntities('ghost', [
    {
      id,
      mutation: () => {
        throw new LdError('BadRequestData', 'refused');
      },
    },
  ]);
  t.notOk((await databases()).includes(`${dbName}-ghost`), 'no database for a tenant only read or refused');
  await store.mutateEntity('ghost', id, () => ({ next: counter(id, 1), result: undefined }), { createTenant: true });
  t.ok((await databases()).includes(`${dbName}-ghost`), 'a write creates it');
  t.equal(valueOf(await store.getEntity('ghost', id)), 1);
  t.same(await store.listTenants(), ['ghost']);
});

t.test('the server-side pieces: scope patterns and literal prefixes', async (t) => {
  const re = (levels: string[]) => new RegExp(scopeRegex(levels));
  t.ok(re(['a', '#']).test('/a') && re(['a', '#']).test('/a/b/c') && !re(['a', '#']).test('/ab'));
  t.ok(re(['a', '+']).test('/a/x') && !re(['a', '+']).test('/a/x/y') && !re(['a', '+']).test('/a'));
  t.ok(re(['#']).test('/anything'));
  t.ok(re(['a.b']).test('/a.b') && !re(['a.b']).test('/axb'), 'levels are literals');
  t.equal(literalPrefix('^urn:ngsi-ld:Car:'), 'urn:ngsi-ld:Car:');
  t.equal(literalPrefix('^urn:x\\.y'), 'urn:x.y');
  t.equal(literalPrefix('^urn:ab*'), 'urn:a', 'a quantified character is not certain');
  t.equal(literalPrefix('^(a|b)'), undefined, 'a group: no prefix');
  t.equal(literalPrefix('^a|b'), undefined, 'an alternation leaves the anchor behind');
  t.equal(literalPrefix('urn:x'), undefined, 'unanchored');
});

t.test('documents handed one order number are paged in a total order (id), none repeated or dropped', async (t) => {
  // FerretDB 1.24 runs findAndModify's $inc as a read, then a write: two brokers inserting at once can get one number.
  const dbName = freshDbName();
  const store = await storeOpen({ options: { dbURI: mongoUrl(), dbName }, primary: true, log });
  const client = new MongoClient(mongoUrl());
  t.teardown(async () => {
    await store.close();
    await client.close();
    await dropDatabases(dbName);
  });
  const subs = store.collection('', 'subscriptions');
  // Inserted in the reverse of the ids' order, so the server's natural order and the id order differ.
  for (const id of ['urn:s:e', 'urn:s:d', 'urn:s:c', 'urn:s:b', 'urn:s:a']) t.ok(await subs.insert(id, { id }));
  const raw = client.db(dbName).collection<{ _id: string; o: number }>('subscriptions');
  await raw.updateMany({ _id: { $in: ['urn:s:b', 'urn:s:c', 'urn:s:d'] } }, { $set: { o: 7 } });
  await raw.updateOne({ _id: 'urn:s:e' }, { $set: { o: 1 } });
  await raw.updateOne({ _id: 'urn:s:a' }, { $set: { o: 9 } });
  const expected = ['urn:s:e', 'urn:s:b', 'urn:s:c', 'urn:s:d', 'urn:s:a'];
  t.same(
    (await subs.list()).map((d) => d.id),
    expected,
  );
  const paged: string[] = [];
  for (let offset = 0; offset < 5; offset += 2) paged.push(...(await subs.list(offset, 2)).map((d) => d.id));
  t.same(paged, expected, 'pages of 2 cover every document once, in the same order');
});
