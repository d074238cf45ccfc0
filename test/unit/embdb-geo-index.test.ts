// embdb's spatial index (geo-index.ts) only narrows a geo-query: with it, every query answers exactly what a scan of
// the same types with the same predicate answers. Random geometries (points in clusters and worldwide, lines,
// polygons, some too wide for cells, several instances, geometries held by a plain Property) and random queries of
// every georel with an index box, before and after moves, type changes and deletions.
import t from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { storeOpen } from '../../src/plugins/store/embdb/index.js';
import type { EmbdbStore } from '../../src/plugins/store/embdb/embdb-store.js';
import type { StoredEntity } from '../../src/ngsild/entity/model.js';
import { compileGeoQuery, geoQuerySearchBox, parseGeoQueryObject } from '../../src/ngsild/query/geoq.js';
import { geoCandidates, geoIndexOf, WIDE, type GeoCandidates } from '../../src/plugins/store/embdb/geo-index.js';
import { compareIds } from '../../src/plugins/store/embdb/keys.js';
import { INDEX_FORMAT_VERSION } from '../../src/plugins/store/embdb/index-rebuild.js';
import { rng } from './helpers/rng.js';
import { ofTypes } from './helpers/store-query.js';

const NS = 'https://example.org/ns/';
const LOC = NS + 'location';
const T0 = '2026-01-01T00:00:00Z';
const expand = (term: string): string => NS + term;

type Geo = { type: string; coordinates: unknown };

function geometryAt(r: () => number, lon: number, lat: number): Geo {
  const k = r();
  const d = 0.001 + r() * 0.05;
  if (k < 0.6) return { type: 'Point', coordinates: [lon, lat] };
  if (k < 0.75)
    return {
      type: 'LineString',
      coordinates: [
        [lon, lat],
        [lon + d, lat + d / 2],
      ],
    };
  if (k < 0.9)
    return {
      type: 'Polygon',
      coordinates: [
        [
          [lon, lat],
          [lon + d, lat],
          [lon + d, lat + d],
          [lon, lat + d],
          [lon, lat],
        ],
      ],
    };
  if (k < 0.95)
    return {
      type: 'MultiPoint',
      coordinates: [
        [lon, lat],
        [lon + d, lat - d],
      ],
    };
  // Far too wide for cells: the shared WIDE cell.
  return {
    type: 'Polygon',
    coordinates: [
      [
        [lon - 5, lat - 5],
        [lon + 5, lat - 5],
        [lon + 5, lat + 5],
        [lon - 5, lat + 5],
        [lon - 5, lat - 5],
      ],
    ],
  };
}

function place(r: () => number): [number, number] {
  if (r() < 0.8) {
    const [clon, clat] = [
      [2.35, 48.85],
      [13.4, 52.5],
      [-0.12, 51.5],
    ][Math.floor(r() * 3)]!;
    return [clon + (r() - 0.5) * 0.4, clat + (r() - 0.5) * 0.3];
  }
  return [(r() - 0.5) * 340, (r() - 0.5) * 160];
}

function entity(r: () => number, k: number): StoredEntity {
  const e: StoredEntity = { id: `urn:ngsi-ld:Thing:${k}`, type: [NS + (k % 3 === 0 ? 'A' : 'B')], createdAt: T0, modifiedAt: T0 };
  const [lon, lat] = place(r);
  const kind = r();
  if (kind < 0.8) e[LOC] = [{ type: 'GeoProperty', value: geometryAt(r, lon, lat) }];
  else if (kind < 0.9)
    e[LOC] = [
      { type: 'GeoProperty', value: geometryAt(r, lon, lat) },
      { type: 'GeoProperty', datasetId: 'urn:ds:2', value: geometryAt(r, ...place(r)) },
    ];
  else if (kind < 0.95) e[LOC] = [{ type: 'Property', value: { type: 'Point', coordinates: [lon, lat] } }];
  return e;
}

function randomQuery(r: () => number): Record<string, unknown> {
  const [lon, lat] = place(r);
  const k = r();
  if (k < 0.4)
    return {
      georel: `near;maxDistance==${Math.round(100 + r() * (r() < 0.8 ? 20_000 : 400_000))}`,
      geometry: 'Point',
      coordinates: [lon, lat],
    };
  const d = r() < 0.8 ? 0.01 + r() * 0.3 : 2 + r() * 20;
  const box = [
    [lon, lat],
    [lon + d, lat],
    [lon + d, lat + d],
    [lon, lat + d],
    [lon, lat],
  ];
  const rel = ['within', 'intersects', 'contains', 'overlaps', 'equals'][Math.floor(r() * 5)]!;
  if (rel === 'contains' || rel === 'equals') return { georel: rel, geometry: 'Point', coordinates: [lon, lat] };
  return { georel: rel, geometry: 'Polygon', coordinates: [box] };
}

async function openStore(t: { teardown: (fn: () => void) => void }): Promise<EmbdbStore> {
  const dir = mkdtempSync(join(tmpdir(), 'embdb-geo-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const log = { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} };
  return (await storeOpen({ options: { dbPath: join(dir, 'embdb'), ram: false }, primary: true, log })) as EmbdbStore;
}

async function put(store: EmbdbStore, e: StoredEntity | null, id: string): Promise<void> {
  await store.mutateEntity('', id, () => ({ next: e, result: undefined }));
}

/** Every id the spatial index visits. */
function idsOf(candidates: GeoCandidates): string[] {
  const ids: string[] = [];
  candidates((id) => {
    ids.push(id);
    return true;
  });
  return ids;
}

/** The cells of each geoproperty of an entity. */
const geoCellsOf = (e: StoredEntity): Map<string, Set<number>> => new Map([...geoIndexOf(e)].map(([iri, g]) => [iri, g.cells]));

t.test('cells: a point one cell, a wide polygon the WIDE cell, a plain Property holding a geometry too', async (t) => {
  const cells = geoCellsOf({
    id: 'x',
    type: [],
    createdAt: T0,
    modifiedAt: T0,
    [LOC]: [{ type: 'GeoProperty', value: { type: 'Point', coordinates: [2.35, 48.85] } }],
  });
  t.equal(cells.get(LOC)?.size, 1);
  const wide = geoCellsOf({
    id: 'x',
    type: [],
    createdAt: T0,
    modifiedAt: T0,
    [LOC]: [
      {
        type: 'GeoProperty',
        value: {
          type: 'Polygon',
          coordinates: [
            [
              [0, 0],
              [10, 0],
              [10, 10],
              [0, 10],
              [0, 0],
            ],
          ],
        },
      },
    ],
  });
  t.same([...wide.get(LOC)!], [WIDE]);
  const plain = geoCellsOf({
    id: 'x',
    type: [],
    createdAt: T0,
    modifiedAt: T0,
    [LOC]: [{ type: 'Property', value: { type: 'Point', coordinates: [0, 0] } }],
  });
  t.equal(plain.get(LOC)?.size, 1);
  t.equal(geoCellsOf({ id: 'x', type: [], createdAt: T0, modifiedAt: T0, [LOC]: [{ type: 'Property', value: 3 }] }).size, 0);
  // A malformed stored geometry (no positions, a position that is not a number) is not indexed, and nothing throws.
  for (const coordinates of [[], [[]], [['a', 'b']]])
    t.equal(
      geoCellsOf({
        id: 'x',
        type: [],
        createdAt: T0,
        modifiedAt: T0,
        [LOC]: [{ type: 'GeoProperty', value: { type: 'LineString', coordinates } }],
      }).size,
      0,
      JSON.stringify(coordinates),
    );
});

t.test('with the index, every geo-query answers what the scan answers', async (t) => {
  const store = await openStore(t);
  const r = rng(20261121);
  const N = 3000;
  const items = Array.from({ length: N }, (_, k) => entity(r, k));
  await store.mutateEntities(
    '',
    items.map((e) => ({ id: e.id, mutation: () => ({ next: e, result: undefined }) })),
  );

  let narrowed = 0;
  const check = async (round: string): Promise<void> => {
    for (let i = 0; i < 150; i++) {
      const q = parseGeoQueryObject(randomQuery(r), expand);
      const box = geoQuerySearchBox(q);
      if (box === undefined) continue;
      const filter = compileGeoQuery(q);
      const type = r() < 0.5 ? ofTypes(NS + 'A') : undefined;
      const base = { type, limit: 100_000, offset: 0, count: true };
      // The scan: every entity (of the type) read, the geo-query's predicate applied here.
      const every = await store.queryEntities('', base);
      const scanned = every.entities.filter(filter);
      const scan = { entities: scanned, count: scanned.length };
      const indexed = await store.queryEntities('', { ...base, geo: q });
      const ids = (p: { entities: StoredEntity[] }): string[] => p.entities.map((e) => e.id).sort();
      if (JSON.stringify(ids(indexed)) !== JSON.stringify(ids(scan))) {
        t.fail(
          `${round}: ${JSON.stringify(q.geometry).slice(0, 100)} ${q.georel} ${q.maxDistance ?? ''}: ${ids(indexed).length} vs ${ids(scan).length}`,
        );
        return;
      }
      t.equal(indexed.count, scan.count);
      const read = geoCandidates(store.indexedDbs().geoCells, '', LOC, box);
      const candidates = read === undefined ? undefined : idsOf(read);
      if (candidates !== undefined) {
        t.same(candidates, [...new Set(candidates)].sort(compareIds), `${round}: the candidates in key order, each once`);
        if (scan.entities.length > 0) {
          narrowed++;
          t.ok(candidates.length < N, 'the index narrowed the search');
        }
      }
      // Paging through the index: offset and limit cut the same sorted list.
      if (scan.entities.length > 3) {
        const page = await store.queryEntities('', { ...base, geo: q, offset: 1, limit: 2 });
        t.same(
          page.entities.map((e) => e.id),
          indexed.entities.slice(1, 3).map((e) => e.id),
          `${round}: a page of the index's answer`,
        );
      }
    }
  };
  await check('created');
  // Moves, type changes, removed geometries and deletions keep the index in step.
  for (let k = 0; k < N; k += 7) {
    const e = entity(r, k);
    if (k % 3 === 1) e.type = [NS + 'A'];
    if (k % 5 === 0) delete e[LOC];
    await put(store, k % 11 === 0 ? null : e, e.id);
  }
  await check('changed');
  t.ok(narrowed > 50, `queries with matches answered through the index: ${narrowed}`);
  await store.close();
});

t.test('a store from before the spatial index gets it at open', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'embdb-geo-rebuild-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const log = { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} };
  const open = async (): Promise<EmbdbStore> =>
    (await storeOpen({ options: { dbPath: join(dir, 'embdb'), ram: false }, primary: true, log })) as EmbdbStore;
  let store = await open();
  const here = {
    id: 'urn:ngsi-ld:Thing:here',
    type: [NS + 'A'],
    createdAt: T0,
    modifiedAt: T0,
    [LOC]: [{ type: 'GeoProperty', value: { type: 'Point', coordinates: [2.35, 48.85] } }],
  };
  await put(store, here, here.id);
  const dbs = store.indexedDbs();
  dbs.env.transactionSync(() => {
    dbs.geoCells.clearSync();
    dbs.meta.putSync('indexFormat', 3);
  });
  await store.close();
  store = await open();
  t.same(idsOf(geoCandidates(store.indexedDbs().geoCells, '', LOC, [2.3, 48.8, 2.4, 48.9])!), [here.id]);
  await store.close();
});

t.test('compareIds orders ids as their UTF-8 keys do, not as UTF-16 units', async (t) => {
  const r = rng(20261124);
  const units = [
    'a',
    'z',
    '\u00e9',
    '\u07ff',
    '\u0800',
    '\ud7ff',
    '\ue000',
    '\uff21',
    '\ufffd',
    '\uffff',
    '\u{10000}',
    '\u{1f600}',
    '\u{10ffff}',
  ];
  const ids = Array.from(
    { length: 400 },
    () => 'urn:x:' + Array.from({ length: 1 + Math.floor(r() * 4) }, () => units[Math.floor(r() * units.length)]).join(''),
  );
  const byBytes = [...ids].sort((a, b) => Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8')));
  t.same([...ids].sort(compareIds), byBytes);
  t.equal(compareIds('urn:x:a', 'urn:x:a'), 0);
  t.ok(compareIds('urn:x:\u{1f600}', 'urn:x:\ue000') > 0, 'U+1F600 after U+E000, as in UTF-8 (UTF-16 puts its surrogate D83D first)');
  t.ok(compareIds('urn:x:', 'urn:x:a') < 0, 'a prefix first');
});

t.test('the spatial index answers in the order of the scan and the type index: ids above U+FFFF and in U+E000-U+FFFF', async (t) => {
  const store = await openStore(t);
  const ids = [
    'urn:x:a',
    'urn:x:\ue000',
    'urn:x:\u{1f600}',
    'urn:x:\uff21',
    'urn:x:\u{10000}',
    'urn:x:\ufffd',
    'urn:x:\uffffz',
    'urn:x:\u{10ffff}',
  ];
  const here = { type: 'Point', coordinates: [2.35, 48.85] };
  await store.mutateEntities(
    '',
    ids.map((id) => ({
      id,
      mutation: () => ({
        next: { id, type: [NS + 'A'], createdAt: T0, modifiedAt: T0, [LOC]: [{ type: 'GeoProperty', value: here }] },
        result: undefined,
      }),
    })),
  );
  const q = parseGeoQueryObject({ georel: 'near;maxDistance==1000', geometry: 'Point', coordinates: [2.35, 48.85] }, expand);
  const box = geoQuerySearchBox(q)!;
  const filter = compileGeoQuery(q);
  const order = (p: { entities: StoredEntity[] }): string[] => p.entities.map((e) => e.id);
  const base = { limit: 100, offset: 0, count: false };
  // The scan: every entity of the tenant read, the geo-query's predicate applied here.
  const scan = (await store.queryEntities('', base)).entities.filter(filter).map((e) => e.id);
  const byType = order(await store.queryEntities('', { ...base, type: ofTypes(NS + 'A') }));
  const indexed = order(await store.queryEntities('', { ...base, geo: q }));
  t.ok(geoCandidates(store.indexedDbs().geoCells, '', LOC, box) !== undefined, 'the spatial index answers this query');
  t.same(
    scan,
    [...ids].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b))),
    'the scan is in UTF-8 byte order',
  );
  t.same(byType, scan, 'the type index too');
  t.same(indexed, scan, 'and the spatial index (before: UTF-16 order, U+10000 before U+E000)');
  // A page is the same slice whichever way the query is answered, so paging never skips or repeats an entity.
  for (let offset = 0; offset < ids.length; offset += 3) {
    const page = order(await store.queryEntities('', { ...base, geo: q, offset, limit: 3 }));
    t.same(page, scan.slice(offset, offset + 3), `page at ${offset}`);
  }
  await store.close();
});

t.test('a near query that stops at its page, then writes and the same query: each sees the store as it is', async (t) => {
  const store = await openStore(t);
  const at = (k: number, lon: number): StoredEntity => ({
    id: `urn:ngsi-ld:Thing:p${k}`,
    type: [NS + 'A'],
    createdAt: T0,
    modifiedAt: T0,
    [LOC]: [{ type: 'GeoProperty', value: { type: 'Point', coordinates: [lon, 48.005] } }],
  });
  // Ten points in each of two cells of a small box, read as merged cells (geo-index.ts mergedIds).
  for (let k = 0; k < 20; k++) await put(store, at(k, k < 10 ? 2.045 + k * 0.0001 : 2.051 + k * 0.0001), `urn:ngsi-ld:Thing:p${k}`);
  const q = parseGeoQueryObject({ georel: 'near;maxDistance==2000', geometry: 'Point', coordinates: [2.05, 48.005] }, expand);
  const page = async (): Promise<string[]> => {
    store.freshen();
    return (await store.queryEntities('', { type: ofTypes(NS + 'A'), geo: q, limit: 3, offset: 0, count: false })).entities.map(
      (e) => e.id,
    );
  };
  for (let round = 0; round < 50; round++) {
    const ids = await page();
    t.equal(ids.length, 3);
    // The first of the page moves far away, and comes back under a new id: the next page follows at once.
    await put(store, null, ids[0]!);
    const next = await page();
    t.notOk(next.includes(ids[0]!), `round ${round}: ${ids[0]} deleted`);
    await put(store, at(100 + round, 2.046), `urn:ngsi-ld:Thing:p${100 + round}`);
  }
  const all = (await store.queryEntities('', { type: ofTypes(NS + 'A'), geo: q, limit: 1000, offset: 0, count: true })).entities;
  t.equal(all.length, 20, 'twenty points in the box, each once');
  t.same(
    all.map((e) => e.id),
    all.map((e) => e.id).sort(compareIds),
  );
  await store.close();
});

t.test('a near query reads only the entities its index entries leave possible (the query-near row)', async (t) => {
  const store = await openStore(t);
  // The bench's grid (bench/scenarios/query.ts): 10 rows of 1000 points 0.001° apart; its query's box covers two cells
  // holding 200 points, of which about 100 lie within 500 m.
  const grid = Array.from({ length: 10_000 }, (_, k) =>
    pointEntity(`urn:ngsi-ld:QGeo:${k}`, [2 + (k % 1000) * 0.001, 48 + Math.floor(k / 1000) * 0.001]),
  );
  await store.mutateEntities(
    '',
    grid.map((e) => ({ id: e.id, mutation: () => ({ next: e, result: undefined }) })),
  );
  const q = parseGeoQueryObject({ georel: 'near;maxDistance==500', geometry: 'Point', coordinates: [2.05, 48.005] }, expand);
  const filter = compileGeoQuery(q);
  const within = grid.filter(filter).map((e) => e.id);
  const base = { type: ofTypes(NS + 'A'), geo: q, offset: 0, readOnly: true } as const;
  const page = await store.queryEntities('', { ...base, limit: 20, count: false });
  t.same(
    page.entities.map((e) => e.id),
    [...within].sort(compareIds).slice(0, 20),
  );
  t.equal(page.examined, 20, 'a page of 20: 20 entities read (before: every candidate of the cells up to the 20th match, 46)');
  const all = await store.queryEntities('', { ...base, limit: 1000, count: true });
  t.equal(all.count, within.length);
  t.equal(all.examined, within.length, `every match read, nothing else: ${within.length} of the cells' 200`);
  // The rest of the query still holds for the entities whose entry showed them near (their geometry not tested again).
  const some = await store.queryEntities('', { ...base, idPattern: '.*5$', limit: 1000, count: true });
  t.same(
    some.entities.map((e) => e.id),
    within.filter((id) => id.endsWith('5')).sort(compareIds),
  );
  t.ok(some.entities.length > 5);
  await store.close();
});

t.test('an entry follows its geometry: moved within its cell, from one point to several, -0 to 0', async (t) => {
  const store = await openStore(t);
  const id = 'urn:ngsi-ld:Thing:mover';
  const entries = (): unknown[] => [...store.indexedDbs().geoCells.getRange()].map((e) => e.value);
  const near = async (at: number[]): Promise<string[]> =>
    (
      await store.queryEntities('', {
        geo: parseGeoQueryObject({ georel: 'near;maxDistance==20', geometry: 'Point', coordinates: at }, expand),
        limit: 10,
        offset: 0,
        count: false,
      })
    ).entities.map((e) => e.id);
  await put(store, pointEntity(id, [2.3512, 48.8512]), id);
  t.same(entries(), [[id, 2.3512, 48.8512]]);
  // 0.0005° east, the same 0.01° cell: the entry's point moves with it.
  await put(store, pointEntity(id, [2.3517, 48.8512]), id);
  t.same(entries(), [[id, 2.3517, 48.8512]], 'one entry, at the new point');
  t.same(await near([2.3517, 48.8512]), [id], 'found where it is');
  t.same(await near([2.3512, 48.8512]), [], 'not where it was');
  const two = { ...pointEntity(id, [2.3517, 48.8512]) };
  two[LOC] = [...two[LOC]!, { type: 'GeoProperty', datasetId: 'urn:ds:2', value: { type: 'Point', coordinates: [2.3515, 48.8514] } }];
  await put(store, two, id);
  t.same(entries(), [[id, 2.3515, 48.8512, 2.3517, 48.8514]], 'two points: their box');
  t.same(await near([2.3515, 48.8514]), [id], 'found by its second instance');
  await put(store, pointEntity(id, [-0, 0]), id);
  await put(store, pointEntity(id, [0, 0]), id);
  t.equal(entries().length, 1, 'a point at -0 moved to 0: one entry');
  t.same(await near([0, 0]), [id]);
  await put(store, null, id);
  t.same(entries(), [], 'deleted: no entry');
  await store.close();
});

t.test('a store of the format before the boxes (ids as entries) gets its spatial index rebuilt at open', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'embdb-geo-format5-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const log = { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} };
  const open = async (): Promise<EmbdbStore> =>
    (await storeOpen({ options: { dbPath: join(dir, 'embdb'), ram: false }, primary: true, log })) as EmbdbStore;
  let store = await open();
  const ids = ['urn:ngsi-ld:Thing:a', 'urn:ngsi-ld:Thing:b', 'urn:ngsi-ld:Thing:c'];
  for (const [k, id] of ids.entries()) await put(store, pointEntity(id, [2.35 + k * 0.001, 48.85]), id);
  // As format 5 wrote it: the ids alone under each cell.
  const dbs = store.indexedDbs();
  const keys = [...dbs.geoCells.getRange()].map((e) => e.key);
  dbs.env.transactionSync(() => {
    dbs.geoCells.clearSync();
    const old = dbs.geoCells as unknown as { putSync(key: unknown, value: string): void };
    for (const [k, id] of ids.entries()) old.putSync(keys[k], id);
    dbs.meta.putSync('indexFormat', 5);
  });
  await store.close();
  store = await open();
  t.same(
    [...store.indexedDbs().geoCells.getRange()].map((e) => e.value),
    ids.map((id, k) => [id, 2.35 + k * 0.001, 48.85]),
    'the entries carry their points',
  );
  const q = parseGeoQueryObject({ georel: 'near;maxDistance==30', geometry: 'Point', coordinates: [2.351, 48.85] }, expand);
  t.same(
    (await store.queryEntities('', { geo: q, limit: 10, offset: 0, count: false })).entities.map((e) => e.id),
    [ids[1]],
  );
  t.equal(store.indexedDbs().meta.get('indexFormat'), INDEX_FORMAT_VERSION);
  await store.close();
});

function pointEntity(id: string, coordinates: number[]): StoredEntity {
  return {
    id,
    type: [NS + 'A'],
    createdAt: T0,
    modifiedAt: T0,
    [LOC]: [{ type: 'GeoProperty', value: { type: 'Point', coordinates } }],
  };
}
