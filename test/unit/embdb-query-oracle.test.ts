// embdb answers every query path as a full scan of what was written would (issue 13, item 3): ids of every length
// from 1 to 80 and then up to 1000 characters (ASCII and not), in the default tenant, in tenants whose names are
// prefixes of one another and in a 50-character tenant, with type IRIs short and long. Each path (a tenant scan as
// local=true, idPattern, q or attrs without type make it; one type, several types, a type with a filter, an id
// list, a geo-query with and without type) is compared page by page, with and without count, against a filter over
// everything written; so are the history's scans, the discovery counts and the document collections.
import t from 'tap';
import { tempEmbdb } from './helpers/embdb.js';
import type { EntityQuery } from '../../src/store/contract.js';
import { inBox as geoBox, ofTypes as typeQuery, qOf } from './helpers/store-query.js';
import type { StoredEntity } from '../../src/ngsild/entity/model.js';
import { MAX_ID_BYTES } from '../../src/ngsild/entity/limits.js';

const NS = 'https://example.org/ns/';
const A = NS + 'A';
const B = NS + 'B';
/** A type IRI long enough that `[tenant, type]` keys are past 64 characters in every tenant. */
const LONG_TYPE = NS + 'T'.repeat(300);
const SPEED = NS + 'speed';
const NAME = NS + 'name';
const LOC = NS + 'location';
const T0 = '2026-01-01T00:00:00Z';
const TENANTS = ['', 'a', 'ab', 'openiot', 'tenant-of-fifty-characters-'.padEnd(50, 'z')];
const LENGTHS = [
  ...Array.from({ length: 80 }, (_, k) => k + 1),
  96,
  127,
  128,
  129,
  200,
  255,
  256,
  300,
  400,
  500,
  511,
  512,
  513,
  640,
  777,
  900,
  999,
  1000,
];
/** The geo-query's box: about half the located entities fall in it. */
const BOX: [number, number, number, number] = [10, 49.9995, 10.0045, 50.0005];

/** Characters of the ids: URI characters, and two (2 and 3 UTF-8 bytes) below the surrogates, where UTF-16 and UTF-8 orders agree. */
const ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789-._~:/';

function idOf(length: number, variant: number): string {
  let seed = length * 31 + variant * 7 + 1;
  let s = variant === 0 ? 'urn:e:' : 'vrn:f:';
  while (s.length < length) {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    // Within the 1024 bytes an id may have (ngsild/entity/limits.ts) at every length.
    const room = Buffer.byteLength(s) + (length - s.length) + 2 <= MAX_ID_BYTES;
    s += variant === 1 && room && seed % 11 === 0 ? (seed % 2 === 0 ? 'é' : '中') : ALPHABET[seed % ALPHABET.length];
  }
  return s.slice(0, length);
}

function entityOf(length: number, variant: number): StoredEntity {
  const e: StoredEntity = { id: idOf(length, variant), type: [variant === 0 ? A : B], createdAt: T0, modifiedAt: T0 };
  if (length % 3 === 0) e.type.push(LONG_TYPE);
  e[SPEED] = [{ type: 'Property', value: (length * 7 + variant) % 100 }];
  if (length % 2 === 0) e[NAME] = [{ type: 'Property', value: `n${length}` }];
  if (length % 4 !== 3)
    e[LOC] = [{ type: 'GeoProperty', value: { type: 'Point', coordinates: [10 + (length % 10) * 0.001, 50 + (variant - 0.5) * 0.0008] } }];
  return e;
}

const ENTITIES = LENGTHS.flatMap((l) => [entityOf(l, 0), entityOf(l, 1)]);

const byBytes = (a: string, b: string): number => Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
const speedOf = (e: StoredEntity): number => (e[SPEED] as Array<{ value: number }>)[0]!.value;
const inBox = (e: StoredEntity): boolean => {
  const c = (e[LOC] as Array<{ value: { coordinates: [number, number] } }> | undefined)?.[0]?.value.coordinates;
  return c !== undefined && c[0] >= BOX[0] && c[0] <= BOX[2] && c[1] >= BOX[1] && c[1] <= BOX[3];
};

interface Path {
  name: string;
  query: Omit<EntityQuery, 'limit' | 'offset' | 'count'>;
  /** The answer of a full scan, in the order the path promises. */
  expected: (all: StoredEntity[]) => StoredEntity[];
}

const inIdOrder = (list: StoredEntity[]): StoredEntity[] => [...list].sort((x, y) => byBytes(x.id, y.id));
const ofTypes = (all: StoredEntity[], types: string[]): StoredEntity[] => {
  // Several types: each type's ids in id order, one after the other, an entity once (embdb-store.ts queryEntities).
  const out: StoredEntity[] = [];
  for (const typeIri of types) for (const e of inIdOrder(all.filter((x) => x.type.includes(typeIri)))) if (!out.includes(e)) out.push(e);
  return out;
};
/**
 * A type with a `q` comparing an attribute with a number: the number index's order (number-index.ts), each type's
 * entities by their number then id, the types one after the other, an entity once.
 */
const byNumberOfTypes = (all: StoredEntity[], types: string[], keep: (speed: number) => boolean): StoredEntity[] => {
  const out: StoredEntity[] = [];
  for (const typeIri of types)
    for (const e of inIdOrder(all.filter((x) => x.type.includes(typeIri) && keep(speedOf(x)))).sort((x, y) => speedOf(x) - speedOf(y)))
      if (!out.includes(e)) out.push(e);
  return out;
};
const idPattern = /[0-9]$/;
const listed = [idOf(1000, 0), idOf(3, 1), 'urn:not:there', idOf(64, 0), idOf(63, 1), idOf(65, 0), idOf(512, 1), idOf(40, 0)];

const PATHS: Path[] = [
  { name: 'local=true: a scan of the tenant', query: {}, expected: (all) => inIdOrder(all) },
  {
    name: 'idPattern without type',
    query: { idPattern: idPattern.source },
    expected: (all) => inIdOrder(all.filter((e) => idPattern.test(e.id))),
  },
  { name: 'q=speed>10 without type', query: { q: qOf('speed>10', NS) }, expected: (all) => inIdOrder(all.filter((e) => speedOf(e) > 10)) },
  { name: 'attrs=name without type', query: { attrs: [NAME] }, expected: (all) => inIdOrder(all.filter((e) => NAME in e)) },
  { name: 'type=A', query: { type: typeQuery(A) }, expected: (all) => ofTypes(all, [A]) },
  { name: 'type of a 300-character IRI', query: { type: typeQuery(LONG_TYPE) }, expected: (all) => ofTypes(all, [LONG_TYPE]) },
  { name: 'type=B,long,A', query: { type: typeQuery(B, LONG_TYPE, A) }, expected: (all) => ofTypes(all, [B, LONG_TYPE, A]) },
  {
    name: 'type=A with q speed>40 (the number index)',
    query: { type: typeQuery(A), q: qOf('speed>40', NS) },
    expected: (all) => byNumberOfTypes(all, [A], (v) => v > 40),
  },
  {
    name: 'type=B,long,A with q speed==20..60;speed!=41 (the number index, the rest of q on each candidate)',
    query: { type: typeQuery(B, LONG_TYPE, A), q: qOf('speed==20..60;speed!=41', NS) },
    expected: (all) => byNumberOfTypes(all, [B, LONG_TYPE, A], (v) => v >= 20 && v <= 60 && v !== 41),
  },
  {
    name: 'type=A with q speed!=40 (no index: the type order)',
    query: { type: typeQuery(A), q: qOf('speed!=40', NS) },
    expected: (all) => ofTypes(all, [A]).filter((e) => speedOf(e) !== 40),
  },
  {
    name: 'an id list',
    query: { ids: listed },
    expected: (all) => listed.map((id) => all.find((e) => e.id === id)).filter((e): e is StoredEntity => e !== undefined),
  },
  { name: 'a geo-query without type', query: { geo: geoBox(LOC, BOX) }, expected: (all) => inIdOrder(all.filter(inBox)) },
  {
    name: 'a geo-query with type=B',
    query: { type: typeQuery(B), geo: geoBox(LOC, BOX) },
    expected: (all) => inIdOrder(all.filter((e) => inBox(e) && e.type.includes(B))),
  },
];

const ids = (list: StoredEntity[]): string[] => list.map((e) => e.id);

t.test('every query path of every tenant answers what a full scan answers, page by page', async (t) => {
  const store = tempEmbdb(t, { troe: 'embdb' });
  for (const tenant of TENANTS)
    await store.mutateEntities(
      tenant,
      ENTITIES.map((e) => ({ id: e.id, mutation: () => ({ next: e, result: undefined }) })),
      { createTenant: true },
    );
  t.same((await store.listTenants()).sort(), TENANTS.filter((x) => x !== '').sort(), 'every named tenant is listed');

  for (const tenant of TENANTS) {
    for (const path of PATHS) {
      const all = path.expected(ENTITIES);
      t.ok(
        all.some((e) => e.id.length + tenant.length + 1 >= 64) || path.name === 'an id list',
        `${path.name}: the oracle holds long keys`,
      );
      const pages: Array<[number, number]> = [
        [0, 1000],
        [0, 20],
        [7, 13],
        [150, 50],
        [Math.max(0, all.length - 3), 10],
        [all.length + 5, 10],
      ];
      for (const [offset, limit] of pages) {
        for (const count of [true, false]) {
          const page = await store.queryEntities(tenant, { ...path.query, offset, limit, count });
          const where = `tenant '${tenant}', ${path.name}, offset ${offset}, limit ${limit}, count ${count}`;
          t.same(ids(page.entities), ids(all.slice(offset, offset + limit)), where);
          if (count) t.equal(page.count, all.length, `${where}: count`);
          else t.equal(page.count, undefined, `${where}: no count unless asked`);
        }
      }
    }
    for (const e of [entityOf(1, 0), entityOf(63, 1), entityOf(64, 0), entityOf(1000, 1)])
      t.same(await store.getEntity(tenant, e.id), e, `tenant '${tenant}': the entity of a ${e.id.length}-character id by its key`);
    const stats = new Map((await store.typeStats(tenant)).map((s) => [s.typeIri, s.count]));
    t.same(
      stats,
      new Map([A, B, LONG_TYPE].map((typeIri) => [typeIri, ENTITIES.filter((e) => e.type.includes(typeIri)).length])),
      `tenant '${tenant}': the type counts of a range over the tenant`,
    );
    const attrs = new Map((await store.attributeStats(tenant)).map((s) => [s.attrIri, s.count]));
    t.same(
      attrs,
      new Map([SPEED, NAME, LOC].map((a) => [a, ENTITIES.filter((e) => a in e).length])),
      `tenant '${tenant}': the attribute counts`,
    );
  }
});

t.test('the history of every tenant answers what a full scan answers, ids of every length', async (t) => {
  const store = tempEmbdb(t, { lockPrefer: 'writes', troe: 'embdb' });
  const history = store.history!;
  for (const tenant of TENANTS)
    await store.mutateEntities(
      tenant,
      ENTITIES.map((e) => ({ id: e.id, mutation: () => ({ next: e, result: undefined }) })),
      { createTenant: true },
    );
  for (const tenant of TENANTS) {
    const all = ids(inIdOrder(ENTITIES));
    const scan = await history.queryTemporalEntities(tenant, { limit: 1000, offset: 0, count: true });
    t.same(
      scan.entities.map((r) => r.id),
      all,
      `tenant '${tenant}': a scan of the history`,
    );
    t.equal(scan.count, all.length);
    const walked: string[] = [];
    for (let afterId: string | undefined; ;) {
      const page = await history.queryTemporalEntities(tenant, { afterId, limit: 17, offset: 0, count: false });
      if (page.entities.length === 0) break;
      walked.push(...page.entities.map((r) => r.id));
      afterId = walked[walked.length - 1];
    }
    t.same(walked, all, `tenant '${tenant}': keyset pages (afterId) of the scan`);
    const typed = await history.queryTemporalEntities(tenant, { type: typeQuery(LONG_TYPE, B), limit: 1000, offset: 0, count: true });
    t.same(
      typed.entities.map((r) => r.id),
      ids(inIdOrder(ENTITIES.filter((e) => e.type.includes(LONG_TYPE) || e.type.includes(B)))),
      `tenant '${tenant}': the history by types`,
    );
    const withName = await history.queryTemporalEntities(tenant, { attrs: [NAME], limit: 1000, offset: 0, count: true });
    t.equal(withName.count, ENTITIES.filter((e) => NAME in e).length, `tenant '${tenant}': the history by attribute`);
    for (const e of [entityOf(2, 1), entityOf(64, 0), entityOf(999, 1)]) {
      const page = await history.instances(tenant, e.id, { limit: 100 });
      t.same(
        Object.keys(page.attrs).sort(),
        Object.keys(e)
          .filter((k) => k.startsWith(NS))
          .sort(),
        `tenant '${tenant}': the instances of a ${e.id.length}-character id`,
      );
      t.same(
        (await history.entityEvents(tenant, e.id)).map((ev) => ev.kind),
        ['created'],
      );
    }
  }
});

t.test('document collections keep ids of every length apart per tenant and collection', async (t) => {
  const store = tempEmbdb(t);
  const docIds = LENGTHS.filter((l) => l % 5 === 0).map((l) => idOf(l, l % 2));
  for (const tenant of TENANTS)
    for (const name of ['subscriptions', 'registrations']) {
      const c = store.collection(tenant, name);
      for (const id of docIds) t.equal(await c.insert(id, { id, tenant, name }), true);
    }
  for (const tenant of TENANTS)
    for (const name of ['subscriptions', 'registrations']) {
      const c = store.collection(tenant, name);
      t.same(
        (await c.list()).map((d) => d.doc),
        docIds.map((id) => ({ id, tenant, name })),
        `tenant '${tenant}', ${name}: every document once`,
      );
      for (const id of [docIds[0]!, docIds[docIds.length - 1]!]) t.same(await c.get(id), { id, tenant, name });
    }
  t.equal(await store.collection('a', 'subscriptions').delete(docIds[docIds.length - 1]!), true);
  t.equal(
    (await store.collection('ab', 'subscriptions').get(docIds[docIds.length - 1]!)) !== undefined,
    true,
    'a delete in one tenant leaves the other',
  );
});
