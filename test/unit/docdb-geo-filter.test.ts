// docdb geo-queries on MongoDB (issue 17): the filter each georel and geometry becomes, the shapes a document gives
// the 2dsphere index, and that what the server is asked is never narrower than what the worker matches (turf, on
// the plane of longitude and latitude) though MongoDB draws edges as great circles. No MongoDB runs here: the
// server's side is checked as geometry (every region holds the planar box it stands for, arcs included).
import t, { type Test } from 'tap';
import type { Polygon, Position } from 'geojson';
import { compileGeoQuery, parseGeoQueryObject, type GeoQuery } from '../../src/ngsild/query/geoq.js';
import { translateQuery } from '../../src/plugins/store/docdb/query-filter.js';
import { entityDoc, fieldKey } from '../../src/plugins/store/docdb/entity-doc.js';
import { boxPolygons, indexedShapes, PAD, QUERY_PAD } from '../../src/plugins/store/docdb/geo-index.js';
import type { EntityQuery, StoredEntity } from '../../src/store/contract.js';
import { rng } from './helpers/rng.js';

const LOC = 'https://uri.etsi.org/ngsi-ld/location';
const expand = (term: string): string => (term === 'location' ? LOC : 'https://example.org/' + term);
const geo = (geoQ: Record<string, unknown>): GeoQuery => parseGeoQueryObject(geoQ, expand);
const query = (g: GeoQuery): EntityQuery => ({ geo: g, limit: 20, offset: 0, count: false });

const GEOMETRIES: Record<string, unknown> = {
  Point: [10, 50],
  MultiPoint: [
    [10, 50],
    [11, 51],
  ],
  LineString: [
    [10, 50],
    [11, 51],
  ],
  MultiLineString: [
    [
      [10, 50],
      [11, 51],
    ],
  ],
  Polygon: [
    [
      [10, 50],
      [11, 50],
      [11, 51],
      [10, 50],
    ],
  ],
  MultiPolygon: [
    [
      [
        [10, 50],
        [11, 50],
        [11, 51],
        [10, 50],
      ],
    ],
  ],
};

t.test('each georel and geometry becomes its operator on gi.g, with the geoproperty key beside it', async (t) => {
  const key = fieldKey(LOC);
  for (const [geometry, coordinates] of Object.entries(GEOMETRIES)) {
    for (const georel of ['within', 'equals', 'intersects', 'overlaps', 'contains', 'near;maxDistance==1000']) {
      const g = geo({ georel, geometry, coordinates });
      const { filter, exact } = translateQuery(query(g), true);
      t.equal(exact, false, `${georel} ${geometry}: the worker decides`);
      const f = filter as Record<string, Record<string, { $geometry: Polygon }>>;
      t.equal(f['gi.k'] as unknown, key, `${georel} ${geometry}: on the geoproperty`);
      const operator = georel === 'within' || georel === 'equals' ? '$geoWithin' : '$geoIntersects';
      t.same(Object.keys(f['gi.g']!), [operator], `${georel} ${geometry}: ${operator}`);
      const region = f['gi.g']![operator]!.$geometry;
      t.equal(region.type, 'Polygon', `${georel} ${geometry}: one polygon`);
      t.ok(holdsBox(region.coordinates[0]!, g.bbox), `${georel} ${geometry}: the region holds the query's box`);
    }
  }
});

t.test('near;maxDistance asks the box grown by the distance', async (t) => {
  const g = geo({ georel: 'near;maxDistance==20000', geometry: 'Point', coordinates: [10, 50] });
  const f = translateQuery(query(g), true).filter as Record<string, Record<string, { $geometry: Polygon }>>;
  const ring = f['gi.g']!['$geoIntersects']!.$geometry.coordinates[0]!;
  // 20 km is about 0.18° of latitude and 0.28° of longitude at 50°N
  t.ok(holdsBox(ring, [9.72, 49.82, 10.28, 50.18]), 'the grown box');
});

t.test('disjoint and near;minDistance push down only that the geoproperty exists', async (t) => {
  for (const georel of ['disjoint', 'near;minDistance==1000']) {
    const g = geo({ georel, geometry: 'Point', coordinates: [10, 50] });
    for (const geoIndex of [true, false]) {
      const { filter, exact } = translateQuery(query(g), geoIndex);
      t.same(filter, { a: LOC }, `${georel}, geo index ${geoIndex}`);
      t.equal(exact, false);
    }
  }
});

t.test('without the geo index (FerretDB) the box prefilter on gb is used', async (t) => {
  const g = geo({ georel: 'within', geometry: 'Polygon', coordinates: GEOMETRIES['Polygon'] });
  const gb = 'gb.' + fieldKey(LOC);
  t.same(translateQuery(query(g), false).filter, {
    [gb + '.w']: { $lte: 11 },
    [gb + '.e']: { $gte: 10 },
    [gb + '.s']: { $lte: 51 },
    [gb + '.n']: { $gte: 50 },
  });
});

t.test('a region crossing the globe is cut in pieces, asked with $geoIntersects even for within', async (t) => {
  const g = geo({
    georel: 'within',
    geometry: 'LineString',
    coordinates: [
      [-170, 0],
      [170, 10],
    ],
  });
  const f = translateQuery(query(g), true).filter as { 'gi.k': string; $or: Array<{ 'gi.g': Record<string, { $geometry: Polygon }> }> };
  t.equal(f['gi.k'], fieldKey(LOC));
  t.equal(f.$or.length, 4, '340° wide: four pieces of at most 90°, asked as an $or');
  const region = f.$or.map((p) => {
    t.same(Object.keys(p['gi.g']), ['$geoIntersects']);
    return p['gi.g']['$geoIntersects']!.$geometry;
  });
  t.ok(
    region.some((p) => holdsBox(p.coordinates[0]!, [-170, 0, -169, 10])) &&
      region.some((p) => holdsBox(p.coordinates[0]!, [169, 0, 170, 10])),
    'from one end to the other',
  );
  for (const p of region) checkRing(t, p.coordinates[0]!);
});

t.test('documents hold gi only for MongoDB, and without nested arrays otherwise', async (t) => {
  const e: StoredEntity = {
    id: 'urn:e',
    type: ['https://example.org/T'],
    createdAt: '2026-01-01T00:00:00Z',
    modifiedAt: '2026-01-01T00:00:00Z',
    [LOC]: [{ type: 'GeoProperty', value: { type: 'Polygon', coordinates: GEOMETRIES['Polygon'] } }],
    ['https://example.org/p']: [{ type: 'GeoProperty', value: { type: 'Point', coordinates: [1, 2] } }],
  } as StoredEntity;
  const plain = entityDoc(e, 1);
  t.equal(plain.gi, undefined, 'FerretDB: no gi');
  t.notOk(hasNestedArray(plain), 'FerretDB: no nested array anywhere');
  const mongo = entityDoc(e, 1, true);
  t.same(
    mongo.gi!.map((s) => [s.k, s.g.type]),
    [
      [fieldKey(LOC), 'Polygon'],
      [fieldKey('https://example.org/p'), 'Point'],
    ],
  );
  t.same(mongo.gi![1]!.g, { type: 'Point', coordinates: [1, 2] }, 'a point is itself');
  t.ok(holdsBox((mongo.gi![0]!.g as Polygon).coordinates[0]!, [10, 50, 11, 51]), 'a polygon is its box, grown');
});

t.test('a self-intersecting polygon (valid to the broker, not to MongoDB) is indexed as its box', async (t) => {
  const bowtie = {
    type: 'Polygon' as const,
    coordinates: [
      [
        [0, 0],
        [2, 2],
        [2, 0],
        [0, 2],
        [0, 0],
      ],
    ],
  };
  const shapes = indexedShapes('k', bowtie);
  t.equal(shapes.length, 1);
  checkRing(t, (shapes[0]!.g as Polygon).coordinates[0]!);
  t.ok(holdsBox((shapes[0]!.g as Polygon).coordinates[0]!, [0, 0, 2, 2]));
});

t.test('boxes on a pole, across the antimeridian and of no width are valid rings', async (t) => {
  for (const box of [
    [-180, 80, 180, 90],
    [-180, -90, 180, 90],
    [-10, -90, 10, -85],
    [179.995, 10, 180, 10],
    [5, 5, 5, 5],
  ] as const) {
    const pieces = boxPolygons([...box], PAD);
    for (const p of pieces) checkRing(t, p.coordinates[0]!);
    t.ok(
      pieces.some((p) => holdsBox(p.coordinates[0]!, [box[0], box[1], Math.min(box[2], box[0] + 1), box[3]])),
      `${box}: held`,
    );
  }
});

t.test('great-circle arcs between vertices stray less than PAD from the parallel (any latitude)', async (t) => {
  let worst = 0;
  for (let lat = -89; lat <= 89; lat += 1) {
    const ring = boxPolygons([0, lat, 30, Math.min(90, lat + 1)], 0)[0]!.coordinates[0]!;
    for (let i = 0; i + 1 < ring.length; i++) {
      const [a, b] = [ring[i]!, ring[i + 1]!];
      if (a[1] !== b[1]) continue;
      worst = Math.max(worst, Math.abs(arcMidLatitude(a, b) - a[1]!));
    }
  }
  t.ok(worst < PAD / 5, `worst ${worst.toFixed(5)}° < ${PAD / 5}°`);
});

t.test('random geometries the worker matches always meet the region the server is asked', async (t) => {
  const r = rng(1717);
  const rand = (lo: number, hi: number): number => lo + r() * (hi - lo);
  const geometry = (): { type: string; coordinates: unknown } => {
    const x = rand(-179, 175);
    const y = rand(-89, 85);
    const d = rand(0.001, 4);
    switch (Math.floor(r() * 4)) {
      case 0:
        return { type: 'Point', coordinates: [x, y] };
      case 1:
        return {
          type: 'LineString',
          coordinates: [
            [x, y],
            [x + d, y + d / 2],
          ],
        };
      case 2:
        return {
          type: 'MultiPoint',
          coordinates: [
            [x, y],
            [x + d, y],
          ],
        };
      default:
        return {
          type: 'Polygon',
          coordinates: [
            [
              [x, y],
              [x + d, y],
              [x + d, y + d],
              [x, y + d],
              [x, y],
            ],
          ],
        };
    }
  };
  let matches = 0;
  for (let i = 0; i < 3000; i++) {
    const qg = geometry();
    const georel = ['within', 'intersects', 'contains', 'overlaps', 'equals', 'near;maxDistance==50000'][i % 6]!;
    const g = geo({ georel, geometry: qg.type, coordinates: qg.coordinates });
    const eg = r() < 0.3 ? qg : geometry();
    // near the query's geometry half the time, so that some match
    const entity = { id: 'urn:e', type: [], createdAt: '', modifiedAt: '', [LOC]: [{ type: 'GeoProperty', value: eg }] };
    if (!compileGeoQuery(g)(entity as unknown as StoredEntity)) continue;
    matches++;
    const f = translateQuery(query(g), true).filter as {
      'gi.g'?: Record<string, { $geometry: Polygon }>;
      $or?: Array<{ 'gi.g': Record<string, { $geometry: Polygon }> }>;
    };
    const asked = f['gi.g'] !== undefined ? [f['gi.g']] : f.$or!.map((p) => p['gi.g']);
    const operator = Object.keys(asked[0]!)[0]!;
    const rings = asked.map((a) => a[operator]!.$geometry.coordinates[0]!);
    const shapes = entityDoc(entity as unknown as StoredEntity, 1, true).gi!;
    const ok = shapes.some((s) => {
      const box = s.g.type === 'Point' ? pointBox(s.g.coordinates as Position) : ringBox(s.g.coordinates[0]!);
      return operator === '$geoWithin' ? rings.some((ring) => holdsBox(ring, box, PAD)) : rings.some((ring) => meets(ringBox(ring), box));
    });
    if (!ok) t.fail(`${georel} ${JSON.stringify(qg)} / ${JSON.stringify(eg)}: not asked`);
  }
  t.ok(matches > 300, `${matches} matching pairs tried`);
});

// ---- geometry of the checks ----------------------------------------------------------------------------------

type Box = [number, number, number, number];
const pointBox = ([x, y]: Position): Box => [x!, y!, x!, y!];

function ringBox(ring: Position[]): Box {
  const b: Box = [Infinity, Infinity, -Infinity, -Infinity];
  for (const [x, y] of ring) {
    b[0] = Math.min(b[0], x!);
    b[1] = Math.min(b[1], y!);
    b[2] = Math.max(b[2], x!);
    b[3] = Math.max(b[3], y!);
  }
  return b;
}

const meets = (a: Box, b: Box): boolean => a[0] <= b[2] && b[0] <= a[2] && a[1] <= b[3] && b[1] <= a[3];

/**
 * The ring's region, its parallel edges drawn as great-circle arcs (as MongoDB does), holds the box grown by
 * `margin`: the ring's box less the arcs' bulge (below PAD / 5, tested above) holds it.
 */
function holdsBox(ring: Position[], [w, s, e, n]: readonly number[], margin = 0): boolean {
  const [rw, rs, re, rn] = ringBox(ring);
  const bulge = PAD / 5;
  const inLat = (rs <= -90 || rs + bulge <= s - margin) && (rn >= 90 || rn - bulge >= n + margin);
  const inLon = (rw <= -180 || rw <= w! - margin) && (re >= 180 || re >= e! + margin);
  return inLat && inLon && QUERY_PAD > margin;
}

function checkRing(t: Test, ring: Position[]): void {
  t.same(ring[0], ring[ring.length - 1], 'closed');
  t.ok(ring.length >= 4, 'at least a triangle');
  for (let i = 0; i + 1 < ring.length; i++) {
    const [a, b] = [ring[i]!, ring[i + 1]!];
    if (a[0] === b[0] && a[1] === b[1]) t.fail(`repeated vertex ${a}`);
    if (a[1] === b[1] && Math.abs(a[1]!) < 90 && Math.abs(a[0]! - b[0]!) > 1 + 1e-9) t.fail(`long parallel edge ${a} ${b}`);
    if (Math.abs(a[1]! - b[1]!) > 10 + 1e-9) t.fail(`long meridian edge ${a} ${b}`);
  }
  const [w, , e] = ringBox(ring);
  t.ok(e - w <= 90 + 1e-9, 'at most 90° wide');
}

/** Latitude of the midpoint of the great-circle arc from a to b. */
function arcMidLatitude(a: Position, b: Position): number {
  const rad = Math.PI / 180;
  const v = (p: Position): number[] => [
    Math.cos(p[1]! * rad) * Math.cos(p[0]! * rad),
    Math.cos(p[1]! * rad) * Math.sin(p[0]! * rad),
    Math.sin(p[1]! * rad),
  ];
  const [x, y, z] = v(a).map((c, i) => c + v(b)[i]!) as [number, number, number];
  return Math.atan2(z, Math.hypot(x, y)) / rad;
}

function hasNestedArray(x: unknown): boolean {
  if (Array.isArray(x)) return x.some((y) => Array.isArray(y) || hasNestedArray(y));
  if (typeof x === 'object' && x !== null) return Object.values(x).some(hasNestedArray);
  return false;
}
