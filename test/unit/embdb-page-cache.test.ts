// embdb answers a frozen read-only query asked again (EntityQuery.readOnly, GET /entities' compiled queries) with the
// page it gave that query object before while nothing in the tenant was written (page-cache.ts): any write of an
// entity of the tenant, through this handle or another (another thread's), or a number index pair completing, makes
// the next query read its page again; a query that is not frozen or not read-only is read every time; and the cache
// is bounded in pages and entities.
import t from 'tap';
import { tempEmbdb } from './helpers/embdb.js';
import { EmbdbStore } from '../../src/plugins/store/embdb/embdb-store.js';
import { PAGE_CACHE_PAGES, PageCache } from '../../src/plugins/store/embdb/page-cache.js';
import { options as embdbOptions } from '../../src/plugins/store/embdb/index.js';
import { OptionError, parseOptions, splitArgs } from '../../src/options.js';
import type { StoredEntity } from '../../src/ngsild/entity/model.js';
import type { EntityPage, EntityQuery } from '../../src/store/contract.js';
import { ofTypes, qOf } from './helpers/store-query.js';

const NS = 'https://example.org/ns/';
const A = NS + 'A';
const B = NS + 'B';
const T0 = '2026-01-01T00:00:00Z';

function entity(k: number, n = k, type = A): StoredEntity {
  return { id: `urn:ngsi-ld:X:${k}`, type: [type], createdAt: T0, modifiedAt: T0, [NS + 'n']: [{ type: 'Property', value: n }] };
}

async function put(store: EmbdbStore, entities: StoredEntity[], tenant = ''): Promise<void> {
  await store.mutateEntities(
    tenant,
    entities.map((e) => ({ id: e.id, mutation: () => ({ next: e, result: undefined }) })),
  );
}

const ids = (page: EntityPage): string[] => page.entities.map((e) => e.id);
const values = (page: EntityPage): unknown[] => page.entities.map((e) => (e[NS + 'n'] as Array<{ value: unknown }>)[0]!.value);

/** Counts the pages the store reads (its private pageOf): a page from the cache reads none. */
function countReads(store: EmbdbStore): { reads: number } {
  const counter = { reads: 0 };
  const s = store as unknown as { pageOf: (...args: unknown[]) => EntityPage };
  const pageOf = s.pageOf.bind(store);
  s.pageOf = (...args) => {
    counter.reads++;
    return pageOf(...args);
  };
  return counter;
}

const frozen = (q: EntityQuery): EntityQuery => Object.freeze({ ...q, readOnly: true });

t.test('the same frozen read-only query again: the same page, not read again; the caller may cut its array', async (t) => {
  const store = tempEmbdb(t);
  await put(
    store,
    [0, 1, 2, 3].map((k) => entity(k)),
  );
  const counter = countReads(store);
  const query = frozen({ type: ofTypes(A), limit: 3, offset: 0, count: true });
  const first = await store.queryEntities('', query);
  first.entities.length = 2;
  const again = await store.queryEntities('', query);
  t.equal(counter.reads, 1, 'read once');
  t.same(ids(again), ['urn:ngsi-ld:X:0', 'urn:ngsi-ld:X:1', 'urn:ngsi-ld:X:2'], 'the whole page, whatever the first caller cut');
  t.equal(again.count, 4);
  t.equal(again.kept, true);
  t.equal(again.examined, 3);
  t.equal(again.entities[0], first.entities[0], 'the same objects');
  // Another object with the same content, or a query that is not read-only, is read again.
  await store.queryEntities('', frozen({ type: ofTypes(A), limit: 3, offset: 0, count: true }));
  await store.queryEntities('', { type: ofTypes(A), limit: 3, offset: 0, count: true, readOnly: true });
  await store.queryEntities('', Object.freeze({ type: ofTypes(A), limit: 3, offset: 0, count: true }));
  t.equal(counter.reads, 4);
});

t.test('--dbPageCache 0: the same frozen query reads the store each time, and sees a write', async (t) => {
  const store = tempEmbdb(t, { pageCachePages: 0 });
  await put(
    store,
    [0, 1, 2].map((k) => entity(k)),
  );
  const counter = countReads(store);
  const query = frozen({ type: ofTypes(A), limit: 5, offset: 0, count: true });
  for (let i = 0; i < 3; i++) t.same(values(await store.queryEntities('', query)), [0, 1, 2]);
  t.equal(counter.reads, 3, 'read every time');
  await put(store, [entity(1, 7)]);
  const page = await store.queryEntities('', query);
  t.same(values(page), [0, 7, 2]);
  t.equal(page.count, 3);
  t.equal(counter.reads, 4);
});

t.test('--dbPageCache N keeps N pages per handle', async (t) => {
  const store = tempEmbdb(t, { pageCachePages: 1 });
  await put(
    store,
    [0, 1, 2].map((k) => entity(k)),
  );
  const counter = countReads(store);
  const q1 = frozen({ type: ofTypes(A), limit: 1, offset: 0, count: false });
  const q2 = frozen({ type: ofTypes(A), limit: 1, offset: 1, count: false });
  await store.queryEntities('', q1);
  await store.queryEntities('', q1);
  t.equal(counter.reads, 1, 'one page kept');
  await store.queryEntities('', q2);
  await store.queryEntities('', q1);
  t.equal(counter.reads, 3, 'a second page put the first out');
});

t.test('--dbPageCache parses (default, BROKER_DBPAGECACHE) and refuses bad values', async (t) => {
  const parse = (args: string[], env: NodeJS.ProcessEnv = {}): unknown => parseOptions(splitArgs(args), embdbOptions, env).dbPageCache;
  t.equal(parse([]), PAGE_CACHE_PAGES, 'the default');
  t.equal(parse(['--dbPageCache', '0']), 0);
  t.equal(parse([], { BROKER_DBPAGECACHE: '1024' }), 1024, 'the environment twin');
  t.equal(parse(['--dbPageCache', '8'], { BROKER_DBPAGECACHE: '1024' }), 8, 'the command line wins');
  for (const [args, says] of [
    [['--dbPageCache', '-1'], /--dbPageCache: -1 is below 0/],
    [['--dbPageCache', '2.5'], /--dbPageCache: '2\.5' is not an integer/],
    [['--dbPageCache', 'many'], /--dbPageCache: 'many' is not an integer/],
    [['--dbPageCache'], /--dbPageCache needs a value/],
  ] as const)
    t.throws(() => parse([...args]), { constructor: OptionError, message: says }, args.join(' '));
  t.throws(() => parse([], { BROKER_DBPAGECACHE: 'off' }), { constructor: OptionError, message: /dbPageCache/ }, 'a bad twin');
});

t.test('a write of any entity of the tenant, through this handle or another, makes the page read again', async (t) => {
  const store = tempEmbdb(t);
  await put(
    store,
    [0, 1, 2].map((k) => entity(k)),
  );
  const counter = countReads(store);
  const query = frozen({ type: ofTypes(A), limit: 5, offset: 0, count: true });
  t.same(values(await store.queryEntities('', query)), [0, 1, 2]);
  await put(store, [entity(1, 7)]);
  t.same(values(await store.queryEntities('', query)), [0, 7, 2], 'a changed entity');
  await put(store, [entity(3)]);
  const created = await store.queryEntities('', query);
  t.same(values(created), [0, 7, 2, 3], 'a created one');
  t.equal(created.count, 4, 'counted');
  await store.mutateEntity('', entity(0).id, () => ({ next: null, result: undefined }));
  t.same(values(await store.queryEntities('', query)), [7, 2, 3], 'a deleted one (a single write)');
  t.equal(counter.reads, 4, 'each write read again');
  // Another tenant's write leaves the page as it is.
  await put(store, [entity(9)], 'other');
  await store.queryEntities('', query);
  t.equal(counter.reads, 4, "another tenant's write: the page kept");
  // Another type of the same tenant: the generation is the tenant's, the page read again (and still right).
  await put(store, [entity(5, 5, B)]);
  t.same(values(await store.queryEntities('', query)), [7, 2, 3]);
  t.equal(counter.reads, 5);
  // A second handle on the same files is what another thread of the broker holds.
  const other = new EmbdbStore({
    path: (store as unknown as { settings: { path: string } }).settings.path,
    sync: 'interval',
    compress: false,
    lockPrefer: 'reads',
    ram: true,
  });
  t.teardown(() => other.close());
  await put(other, [entity(2, 9)]);
  store.freshen();
  t.same(values(await store.queryEntities('', query)), [7, 9, 3], "the other handle's write");
});

t.test('a write that fails leaves the kept page right', async (t) => {
  const store = tempEmbdb(t);
  await put(
    store,
    [0, 1].map((k) => entity(k)),
  );
  const query = frozen({ type: ofTypes(A), limit: 5, offset: 0, count: false });
  t.same(values(await store.queryEntities('', query)), [0, 1]);
  // The entry's mutation throws: nothing of it is written, the entities generation included.
  const outcomes = await store.mutateEntities('', [
    {
      id: entity(0).id,
      mutation: () => {
        throw new Error('refused');
      },
    },
    { id: entity(1).id, mutation: () => ({ next: entity(1, 5), result: undefined }) },
  ]);
  t.equal(outcomes[0]!.ok, false);
  t.same(values(await store.queryEntities('', query)), [0, 5], "the other entry's write is seen");
});

t.test('a number index pair completing moves the generation: its pages are in its order', async (t) => {
  const store = tempEmbdb(t);
  await put(
    store,
    [0, 1, 2, 3].map((k) => entity(k, 10 - k)),
  );
  const generation = (): number => (store as unknown as { entitiesGeneration: (t: string) => number }).entitiesGeneration('');
  const before = generation();
  const query = frozen({ type: ofTypes(A), q: qOf('n>=8', NS), limit: 5, offset: 0, count: false });
  // The first query builds the pair (number-index.ts) and pages in its order: by number, then id.
  t.same(values(await store.queryEntities('', query)), [8, 9, 10]);
  t.ok(generation() > before, 'moved by the completion');
  t.same(values(await store.queryEntities('', query)), [8, 9, 10], 'kept');
});

t.test('PageCache: by query object, tenant and generation; at most its pages and entities, oldest first', async (t) => {
  const e = (k: number): StoredEntity => ({ id: `urn:x:${k}`, type: [A] });
  const page = (...ks: number[]): EntityPage => ({ entities: ks.map(e), kept: true, examined: ks.length });
  const q = (): EntityQuery => Object.freeze({ limit: 5, offset: 0, count: false, readOnly: true });
  const c = new PageCache(2, 4);
  const [q1, q2, q3] = [q(), q(), q()];
  c.set(q1, '', 7, page(1, 2));
  t.same(
    c.get(q1, '', 7)?.entities.map((x) => x.id),
    ['urn:x:1', 'urn:x:2'],
  );
  t.equal(c.get(q1, 'other', 7), undefined, 'another tenant');
  t.equal(c.get(q2, '', 7), undefined, 'another query object');
  t.equal(c.get(q1, '', 8), undefined, 'another generation: stale, dropped');
  t.equal(c.size, 0);
  c.set(q1, '', 1, page(1));
  c.set(q2, '', 1, page(2));
  c.set(q3, '', 1, page(3));
  t.equal(c.size, 2, 'at most 2 pages');
  t.equal(c.get(q1, '', 1), undefined, 'the oldest went');
  c.set(q1, '', 1, page(1, 2, 3));
  t.equal(c.size, 2, 'at most 4 entities: the oldest page went');
  t.equal(c.get(q2, '', 1), undefined);
  t.ok(c.get(q3, '', 1) && c.get(q1, '', 1));
  c.set(q2, '', 1, page(1, 2, 3, 4, 5));
  t.equal(c.get(q2, '', 1), undefined, 'a page larger than the whole cache is not kept');
});
