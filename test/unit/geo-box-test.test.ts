// The box test of a geo-query (ngsild/query/geo-box-test.ts) only rules out what the query's predicate would refuse:
// on the Paris fixture (points, polygons, lines, multi-geometries) and random points, every entity the predicate
// matches passes the test on the box the spatial index keeps of it (geo-index.ts geoIndexOf), and points beyond a
// near query's distance are ruled out on their entry alone.
import t from 'tap';
import { readFileSync } from 'node:fs';
import { distance } from '@turf/distance';
import { compileGeoQuery, geoQuerySearchBox, parseGeoQueryObject, type GeoQuery } from '../../src/ngsild/query/geoq.js';
import { GEO_MAYBE, GEO_NO, GEO_YES, geoBoxTest } from '../../src/ngsild/query/geo-box-test.js';
import { geoIndexOf } from '../../src/plugins/store/embdb/geo-index.js';
import type { StoredEntity } from '../../src/ngsild/entity/model.js';
import { repoPath } from '../helpers/repo.js';
import { rng } from './helpers/rng.js';

const LOC = 'https://uri.etsi.org/ngsi-ld/location';
const T0 = '2026-01-01T00:00:00Z';
const expand = (term: string): string => (term === 'location' ? LOC : `https://example.org/ns/${term}`);
const fixture = JSON.parse(readFileSync(repoPath('test/fixtures/query/geo-entities.json'), 'utf8')) as StoredEntity[];

/** The box test's verdict on the entity (an entity without an indexed geometry: not asked, the index has no entry). */
function verdict(q: GeoQuery, e: StoredEntity): number | undefined {
  const g = geoIndexOf(e).get(q.geopropertyIri);
  if (g === undefined) return undefined;
  return geoBoxTest(q, geoQuerySearchBox(q)!)(...g.box, g.onePoint);
}

/** Whether the box test keeps the entity. */
function kept(q: GeoQuery, e: StoredEntity): boolean | undefined {
  const v = verdict(q, e);
  return v === undefined ? undefined : v !== GEO_NO;
}

const pointAt = (id: string, coordinates: number[]): StoredEntity => ({
  id,
  type: ['https://example.org/ns/A'],
  createdAt: T0,
  modifiedAt: T0,
  [LOC]: [{ type: 'GeoProperty', value: { type: 'Point', coordinates } }],
});

t.test('every match of the predicate passes the box test: the Paris fixture, each georel with a search box', async (t) => {
  const queries = [
    { georel: 'near;maxDistance==500', geometry: 'Point', coordinates: [2.3499, 48.853] },
    { georel: 'near;maxDistance==3000', geometry: 'Point', coordinates: [2.2945, 48.8584] },
    {
      georel: 'near;maxDistance==200',
      geometry: 'LineString',
      coordinates: [
        [2.33, 48.85],
        [2.36, 48.86],
      ],
    },
    {
      georel: 'within',
      geometry: 'Polygon',
      coordinates: [
        [
          [2.25, 48.81],
          [2.42, 48.81],
          [2.42, 48.9],
          [2.25, 48.9],
          [2.25, 48.81],
        ],
      ],
    },
    {
      georel: 'intersects',
      geometry: 'Polygon',
      coordinates: [
        [
          [2.34, 48.85],
          [2.36, 48.85],
          [2.36, 48.86],
          [2.34, 48.86],
          [2.34, 48.85],
        ],
      ],
    },
    { georel: 'contains', geometry: 'Point', coordinates: [2.3499, 48.853] },
    {
      georel: 'overlaps',
      geometry: 'Polygon',
      coordinates: [
        [
          [2.3, 48.84],
          [2.37, 48.84],
          [2.37, 48.87],
          [2.3, 48.87],
          [2.3, 48.84],
        ],
      ],
    },
    { georel: 'equals', geometry: 'Point', coordinates: [2.2945, 48.8584] },
  ];
  let matches = 0;
  for (const query of queries) {
    const q = parseGeoQueryObject(query, expand);
    const match = compileGeoQuery(q);
    for (const e of fixture) {
      if (!match(e)) continue;
      matches++;
      t.equal(kept(q, e), true, `${q.georel} ${JSON.stringify(query.coordinates).slice(0, 40)}: ${e.id}`);
    }
  }
  t.ok(matches > 10, `the queries match entities: ${matches}`);
});

t.test('near a Point: a point entry is measured as the predicate measures it, to the metre and at the boundary', async (t) => {
  const r = rng(20261125);
  let ruledOut = 0;
  for (let i = 0; i < 2000; i++) {
    const at = [2 + r() * 0.1, 48 + r() * 0.1];
    const q = parseGeoQueryObject(
      { georel: `near;maxDistance==${Math.round(50 + r() * 2000)}`, geometry: 'Point', coordinates: at },
      expand,
    );
    const e = pointAt(`urn:x:${i}`, [at[0]! + (r() - 0.5) * 0.06, at[1]! + (r() - 0.5) * 0.04]);
    const match = compileGeoQuery(q)(e);
    const keep = kept(q, e);
    if (match) t.equal(keep, true, `${i}: a match is kept`);
    if (verdict(q, e) === GEO_YES) t.equal(match, true, `${i}: what the box test finds met, the predicate matches`);
    else if (keep === false) ruledOut++;
    // Inside the search box, the box test decides a point as the predicate does.
    const box = geoQuerySearchBox(q)!;
    const [lon, lat] = (e[LOC] as Array<{ value: { coordinates: number[] } }>)[0]!.value.coordinates as [number, number];
    if (lon >= box[0] && lon <= box[2] && lat >= box[1] && lat <= box[3]) t.equal(keep, match, `${i}: the point decided exactly`);
  }
  t.ok(ruledOut > 500, `points beyond the distance are ruled out on their entry: ${ruledOut}`);
  // A point at exactly maxDistance (turf's measure) matches (<=) and is kept; a millionth closer it is ruled out.
  for (let i = 0; i < 300; i++) {
    const at = [(r() - 0.5) * 340, (r() - 0.5) * 160];
    const p = [at[0]! + (r() - 0.5) * 0.02, at[1]! + (r() - 0.5) * 0.02];
    const here = pointAt('urn:x:edge', p);
    const d = distance(p, at, { units: 'meters' });
    if (d === 0) continue;
    const q = parseGeoQueryObject({ georel: `near;maxDistance==${d}`, geometry: 'Point', coordinates: at }, expand);
    t.equal(compileGeoQuery(q)(here), true, `${i}: the predicate matches at the exact distance`);
    t.equal(verdict(q, here), GEO_MAYBE, `${i}: and the box test leaves it to the predicate`);
    const farther = parseGeoQueryObject({ georel: `near;maxDistance==${d * (1 + 1e-6)}`, geometry: 'Point', coordinates: at }, expand);
    t.equal(verdict(farther, here), GEO_YES, `${i}: a millionth farther, the box test decides`);
    const closer = parseGeoQueryObject({ georel: `near;maxDistance==${d * (1 - 1e-6)}`, geometry: 'Point', coordinates: at }, expand);
    t.equal(kept(closer, here), false, `${i}: a millionth closer, ruled out`);
  }
});

t.test('several instances, or a point among other geometries: the box only, never the point measure', async (t) => {
  const q = parseGeoQueryObject({ georel: 'near;maxDistance==500', geometry: 'Point', coordinates: [2.05, 48.005] }, expand);
  // Two instances: the first far (5 km), the second close; their box covers the query point.
  const two: StoredEntity = {
    ...pointAt('urn:x:two', [2.12, 48.005]),
    [LOC]: [
      { type: 'GeoProperty', value: { type: 'Point', coordinates: [2.12, 48.005] } },
      { type: 'GeoProperty', datasetId: 'urn:ds:1', value: { type: 'Point', coordinates: [2.0501, 48.005] } },
    ],
  };
  t.equal(geoIndexOf(two).get(LOC)!.onePoint, false);
  t.equal(compileGeoQuery(q)(two), true);
  t.equal(verdict(q, two), GEO_MAYBE, 'kept, the predicate to decide: one of its instances is near');
  // The same Point twice is still one point.
  const twice: StoredEntity = {
    ...two,
    [LOC]: [
      { type: 'GeoProperty', value: { type: 'Point', coordinates: [2.12, 48.005] } },
      { type: 'GeoProperty', datasetId: 'urn:ds:1', value: { type: 'Point', coordinates: [2.12, 48.005] } },
    ],
  };
  t.equal(geoIndexOf(twice).get(LOC)!.onePoint, true);
  t.equal(kept(q, twice), false, 'ruled out: both instances 5 km away');
  // A MultiPoint whose positions are one point is not a Point: its box is tested, the predicate decides.
  const multi: StoredEntity = { ...two, [LOC]: [{ type: 'GeoProperty', value: { type: 'MultiPoint', coordinates: [[2.0501, 48.005]] } }] };
  t.equal(geoIndexOf(multi).get(LOC)!.onePoint, false);
  t.equal(kept(q, multi), true);
  // A box outside the search box is ruled out whatever its kind.
  const far: StoredEntity = {
    ...two,
    [LOC]: [
      {
        type: 'GeoProperty',
        value: {
          type: 'LineString',
          coordinates: [
            [3, 49],
            [3.1, 49.1],
          ],
        },
      },
    ],
  };
  t.equal(kept(q, far), false);
  t.equal(compileGeoQuery(q)(far), false);
});
