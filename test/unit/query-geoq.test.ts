import t from 'tap';
import { readFileSync } from 'node:fs';
import { compileGeoQuery, geoQuerySearchBox, parseGeoQuery, parseGeoQueryObject, type GeoQuery } from '../../src/ngsild/query/geoq.js';
import type { StoredEntity } from '../../src/ngsild/entity/model.js';
import { LdError } from '../../src/ngsild/problem.js';
import { repoPath } from '../helpers/repo.js';

// Places in Paris (fixture): points, a park polygon, the islands as a multipolygon, bridges as a multipoint,
// the Seine as a line, metro lines as a multilinestring, an entity without location, one with an observationSpace.
const entities = JSON.parse(readFileSync(repoPath('test/fixtures/query/geo-entities.json'), 'utf8')) as StoredEntity[];

const CORE = new Set(['location', 'observationSpace', 'operationSpace']);
const expand = (term: string): string => (CORE.has(term) ? `https://uri.etsi.org/ngsi-ld/${term}` : `https://example.org/ns/${term}`);

const NOTRE_DAME = '[2.3499,48.8530]';
const EIFFEL = '[2.2945,48.8584]';
const CENTRAL_PARIS = '[[[2.25,48.81],[2.42,48.81],[2.42,48.90],[2.25,48.90],[2.25,48.81]]]';

function names(params: Record<string, string | undefined>): string[] {
  const q = parseGeoQuery(params, expand)!;
  const match = compileGeoQuery(q);
  return entities.filter(match).map((e) => e.id.slice('urn:ngsi-ld:Place:'.length));
}

function refusal(f: () => unknown): LdError {
  try {
    f();
  } catch (err) {
    if (err instanceof LdError) return err;
    throw err;
  }
  throw new Error('no error');
}

t.test('near;maxDistance keeps geometries within the distance (metres) of a point', async (t) => {
  t.same(names({ georel: 'near;maxDistance==500', geometry: 'Point', coordinates: NOTRE_DAME }), ['NotreDame', 'Cite', 'Seine']);
  t.same(names({ georel: 'near;maxDistance==1000', geometry: 'Point', coordinates: NOTRE_DAME }), [
    'NotreDame',
    'Luxembourg',
    'Cite',
    'Bridges',
    'Seine',
  ]);
  t.same(names({ georel: 'near;maxDistance==1', geometry: 'Point', coordinates: EIFFEL }), ['Eiffel', 'Sensor']);
  t.same(names({ georel: 'near;maxDistance==0.5e4', geometry: 'Point', coordinates: EIFFEL }), [
    'NotreDame',
    'Eiffel',
    'Luxembourg',
    'Cite',
    'Bridges',
    'Seine',
    'Metro',
    'Sensor',
  ]);
});

t.test('near;minDistance keeps geometries farther than the distance', async (t) => {
  t.same(names({ georel: 'near;minDistance==5000', geometry: 'Point', coordinates: NOTRE_DAME }), ['Defense']);
  t.same(names({ georel: 'near;minDistance==600', geometry: 'Point', coordinates: NOTRE_DAME }), [
    'Eiffel',
    'Defense',
    'Luxembourg',
    'Bridges',
    'Metro',
    'Sensor',
  ]);
});

t.test('near from a polygon measures from its area (0 inside)', async (t) => {
  t.same(names({ georel: 'near;maxDistance==100', geometry: 'Polygon', coordinates: CENTRAL_PARIS }), [
    'NotreDame',
    'Eiffel',
    'Luxembourg',
    'Cite',
    'Bridges',
    'Seine',
    'Metro',
    'Sensor',
  ]);
  t.same(names({ georel: 'near;maxDistance==1000', geometry: 'Polygon', coordinates: CENTRAL_PARIS }), [
    'NotreDame',
    'Eiffel',
    'Defense',
    'Luxembourg',
    'Cite',
    'Bridges',
    'Seine',
    'Metro',
    'Sensor',
  ]);
});

t.test('within keeps entities whose geometry lies inside the query geometry', async (t) => {
  t.same(names({ georel: 'within', geometry: 'Polygon', coordinates: CENTRAL_PARIS }), [
    'NotreDame',
    'Eiffel',
    'Luxembourg',
    'Cite',
    'Bridges',
    'Seine',
    'Sensor',
  ]);
  const twoBoxes =
    '[[[[2.33,48.84],[2.345,48.84],[2.345,48.85],[2.33,48.85],[2.33,48.84]]],[[[2.345,48.85],[2.36,48.85],[2.36,48.856],[2.345,48.856],[2.345,48.85]]]]';
  t.same(names({ georel: 'within', geometry: 'MultiPolygon', coordinates: twoBoxes }), ['NotreDame', 'Luxembourg']);
});

t.test('contains keeps entities whose geometry contains the query geometry', async (t) => {
  t.same(names({ georel: 'contains', geometry: 'Point', coordinates: NOTRE_DAME }), ['NotreDame', 'Cite']);
  t.same(names({ georel: 'contains', geometry: 'Point', coordinates: NOTRE_DAME, geoproperty: 'observationSpace' }), ['Sensor']);
  t.same(names({ georel: 'contains', geometry: 'LineString', coordinates: '[[2.334,48.845],[2.340,48.847]]' }), ['Luxembourg']);
});

t.test('intersects and disjoint split the located entities between them', async (t) => {
  const line = '[[2.30,48.846],[2.40,48.846]]';
  t.same(names({ georel: 'intersects', geometry: 'LineString', coordinates: line }), ['Luxembourg', 'Seine']);
  t.same(names({ georel: 'disjoint', geometry: 'LineString', coordinates: line }), [
    'NotreDame',
    'Eiffel',
    'Defense',
    'Cite',
    'Bridges',
    'Metro',
    'Sensor',
  ]);
  t.same(names({ georel: 'intersects', geometry: 'MultiPoint', coordinates: `[${NOTRE_DAME},${EIFFEL}]` }), [
    'NotreDame',
    'Eiffel',
    'Cite',
    'Sensor',
  ]);
  t.same(names({ georel: 'intersects', geometry: 'MultiLineString', coordinates: '[[[2.33,48.84],[2.33,48.87]]]' }), ['Seine', 'Metro']);
});

t.test('equals keeps entities whose geometry is the query geometry', async (t) => {
  t.same(names({ georel: 'equals', geometry: 'Point', coordinates: EIFFEL }), ['Eiffel', 'Sensor']);
  t.same(
    names({
      georel: 'equals',
      geometry: 'Polygon',
      coordinates: '[[[2.332,48.843],[2.342,48.843],[2.342,48.849],[2.332,48.849],[2.332,48.843]]]',
    }),
    ['Luxembourg'],
  );
});

t.test('overlaps keeps geometries of the same dimension sharing part of their area', async (t) => {
  t.same(
    names({
      georel: 'overlaps',
      geometry: 'Polygon',
      coordinates: '[[[2.337,48.840],[2.350,48.840],[2.350,48.846],[2.337,48.846],[2.337,48.840]]]',
    }),
    ['Luxembourg'],
  );
});

t.test('the geoproperty parameter selects which GeoProperty is tested (default location)', async (t) => {
  t.same(names({ georel: 'within', geometry: 'Polygon', coordinates: CENTRAL_PARIS, geoproperty: 'observationSpace' }), ['Sensor']);
  const q = parseGeoQuery({ georel: 'within', geometry: 'Polygon', coordinates: CENTRAL_PARIS }, expand)!;
  t.equal(q.geopropertyTerm, 'location');
  t.equal(q.geopropertyIri, 'https://uri.etsi.org/ngsi-ld/location');
});

t.test('entities without the geoproperty, or whose value is not a geometry, never match (not even disjoint)', async (t) => {
  for (const georel of [
    'near;maxDistance==100000000',
    'near;minDistance==0.001',
    'within',
    'contains',
    'intersects',
    'disjoint',
    'equals',
    'overlaps',
  ]) {
    const got = names({ georel, geometry: 'Polygon', coordinates: CENTRAL_PARIS });
    t.notOk(got.includes('NoLocation') || got.includes('NotGeo') || got.includes('Broken'), georel);
  }
});

t.test('no georel, geometry nor coordinates means no geo-query', async (t) => {
  t.equal(parseGeoQuery({}, expand), undefined);
  t.equal(parseGeoQuery({ geoproperty: 'location' }, expand), undefined);
  t.equal(parseGeoQuery({ georel: null, geometry: null, coordinates: null, geoproperty: null }, expand), undefined);
  t.equal(refusal(() => parseGeoQuery({ georel: 'within', geometry: null, coordinates: NOTRE_DAME }, expand)).kind, 'BadRequestData');
});

t.test('the POST form takes coordinates as an array (or JSON text)', async (t) => {
  const q = parseGeoQueryObject({ georel: 'near;maxDistance==500', geometry: 'Point', coordinates: [2.3499, 48.853] }, expand);
  t.same(q.geometry, { type: 'Point', coordinates: [2.3499, 48.853] });
  t.equal(q.maxDistance, 500);
  t.equal(q.minDistance, undefined);
  const q2 = parseGeoQueryObject(
    { georel: 'within', geometry: 'Polygon', coordinates: CENTRAL_PARIS, geoproperty: 'observationSpace' },
    expand,
  );
  t.equal(q2.geopropertyIri, 'https://uri.etsi.org/ngsi-ld/observationSpace');
  for (const bad of [
    null,
    'x',
    [],
    { georel: 1, geometry: 'Point', coordinates: [0, 0] },
    { georel: 'within', geometry: 'Point', coordinates: 5 },
    { georel: 'within', geometry: 'Point', coordinates: [0, 0], geoproperty: 3 },
  ]) {
    const err = refusal(() => parseGeoQueryObject(bad, expand));
    t.equal(err.kind, 'BadRequestData', JSON.stringify(bad));
  }
});

t.test('invalid geo-queries answer 400 BadRequestData naming the member at fault', async (t) => {
  const cases: [Record<string, string | undefined>, RegExp][] = [
    [{ geometry: 'Point', coordinates: NOTRE_DAME }, /^georel: missing/],
    [{ georel: 'within', coordinates: NOTRE_DAME }, /^geometry: missing/],
    [{ georel: 'within', geometry: 'Point' }, /^coordinates: missing/],
    [{ georel: 'nearby', geometry: 'Point', coordinates: NOTRE_DAME }, /^georel: 'nearby' is not one of/],
    [{ georel: 'near', geometry: 'Point', coordinates: NOTRE_DAME }, /^georel: near takes one modifier/],
    [{ georel: 'near;maxDistance==abc', geometry: 'Point', coordinates: NOTRE_DAME }, /^georel: 'maxDistance==abc'/],
    [{ georel: 'near;maxDistance==-5', geometry: 'Point', coordinates: NOTRE_DAME }, /^georel: 'maxDistance==-5'/],
    [{ georel: 'near;maxDistance=5', geometry: 'Point', coordinates: NOTRE_DAME }, /^georel: 'maxDistance=5'/],
    [{ georel: 'near;maxDistance==1e999', geometry: 'Point', coordinates: NOTRE_DAME }, /is not a positive number/],
    [{ georel: 'near;maxDistance==5;maxDistance==6', geometry: 'Point', coordinates: NOTRE_DAME }, /near takes one modifier/],
    [{ georel: 'near;maxDistance==1000;minDistance==600', geometry: 'Point', coordinates: NOTRE_DAME }, /near takes one modifier/],
    [{ georel: 'near;maxDistance==0', geometry: 'Point', coordinates: NOTRE_DAME }, /is not a positive number/],
    [{ georel: 'near;minDistance==0.0', geometry: 'Point', coordinates: NOTRE_DAME }, /is not a positive number/],
    [{ georel: 'near;maxDistance==05', geometry: 'Point', coordinates: NOTRE_DAME }, /^georel: 'maxDistance==05'/],
    [{ georel: 'near;maxDistance==5.', geometry: 'Point', coordinates: NOTRE_DAME }, /^georel: 'maxDistance==5.'/],
    [{ georel: 'near;', geometry: 'Point', coordinates: NOTRE_DAME }, /^georel: '' is not maxDistance/],
    [{ georel: 'within;maxDistance==5', geometry: 'Point', coordinates: NOTRE_DAME }, /^georel: within takes no modifier/],
    [{ georel: 'within', geometry: 'Circle', coordinates: NOTRE_DAME }, /^geometry: 'Circle' is not one of/],
    [{ georel: 'within', geometry: 'point', coordinates: NOTRE_DAME }, /^geometry: 'point'/],
    [{ georel: 'within', geometry: 'Point', coordinates: '2.35,48.85' }, /^coordinates: not a JSON array/],
    [{ georel: 'within', geometry: 'Point', coordinates: '[2.35]' }, /^coordinates: a position is/],
    [{ georel: 'within', geometry: 'Point', coordinates: '[2.35,"48"]' }, /^coordinates: a position holds numbers/],
    [{ georel: 'within', geometry: 'Point', coordinates: '[200,48]' }, /longitude 200 is outside/],
    [{ georel: 'within', geometry: 'Point', coordinates: '[2,-91]' }, /latitude -91 is outside/],
    [{ georel: 'within', geometry: 'Point', coordinates: '[[2,48]]' }, /^coordinates: a position is/],
    [{ georel: 'within', geometry: 'MultiPoint', coordinates: '[]' }, /^coordinates: expected at least 1 positions/],
    [{ georel: 'within', geometry: 'MultiPoint', coordinates: NOTRE_DAME }, /^coordinates\[0\]: a position is/],
    [{ georel: 'within', geometry: 'LineString', coordinates: `[${NOTRE_DAME}]` }, /^coordinates: expected at least 2 positions/],
    [{ georel: 'within', geometry: 'MultiLineString', coordinates: `[${NOTRE_DAME},${EIFFEL}]` }, /^coordinates\[0\]\[0\]: a position is/],
    [
      { georel: 'within', geometry: 'Polygon', coordinates: `[[${NOTRE_DAME},${EIFFEL},[2.3,48.9],[2.31,48.9]]]` },
      /^coordinates\[0\]: a linear ring ends where it starts/,
    ],
    [
      { georel: 'within', geometry: 'Polygon', coordinates: `[[${NOTRE_DAME},${EIFFEL},${NOTRE_DAME}]]` },
      /^coordinates\[0\]: expected at least 4 positions/,
    ],
    [{ georel: 'within', geometry: 'Polygon', coordinates: '[]' }, /^coordinates: expected at least 1 linear rings/],
    [{ georel: 'within', geometry: 'MultiPolygon', coordinates: CENTRAL_PARIS }, /^coordinates\[0\]\[0\]: expected at least 4 positions/],
    [{ georel: 'within', geometry: 'Polygon', coordinates: '['.repeat((1 << 20) + 1) }, /longer than/],
  ];
  for (const [params, detail] of cases) {
    const err = refusal(() => parseGeoQuery(params, expand));
    t.equal(err.kind, 'BadRequestData', JSON.stringify(params).slice(0, 120));
    t.equal(err.status, 400);
    t.match(err.detail, detail, JSON.stringify(params).slice(0, 120));
  }
});

t.test('the query bounding box, and the search box grown by maxDistance', async (t) => {
  const q = parseGeoQuery({ georel: 'within', geometry: 'Polygon', coordinates: CENTRAL_PARIS }, expand)!;
  t.same(q.bbox, [2.25, 48.81, 2.42, 48.9]);
  t.same(geoQuerySearchBox(q), [2.25, 48.81, 2.42, 48.9]);
  const near = parseGeoQuery({ georel: 'near;maxDistance==1113.2', geometry: 'Point', coordinates: NOTRE_DAME }, expand)!;
  t.same(near.bbox, [2.3499, 48.853, 2.3499, 48.853]);
  const box = geoQuerySearchBox(near)!;
  t.ok(
    Math.abs(box[1] - (48.853 - 1113.2 / 110_000)) < 1e-9 && Math.abs(box[3] - (48.853 + 1113.2 / 110_000)) < 1e-9,
    'latitude grows by distance / 110 km (less than any degree of meridian: the box holds every position that near)',
  );
  t.ok(box[0] < 2.3499 - 0.01 && box[2] > 2.3499 + 0.01, 'longitude grows more than latitude away from the equator');
  const min = parseGeoQuery({ georel: 'near;minDistance==10', geometry: 'Point', coordinates: NOTRE_DAME }, expand)!;
  t.equal(geoQuerySearchBox(min), undefined);
  const disjoint = parseGeoQuery({ georel: 'disjoint', geometry: 'Point', coordinates: NOTRE_DAME }, expand)!;
  t.equal(geoQuerySearchBox(disjoint), undefined);
  const polar = parseGeoQuery({ georel: 'near;maxDistance==500000', geometry: 'Point', coordinates: '[0,88]' }, expand)!;
  t.same(geoQuerySearchBox(polar), [-180, 88 - 500000 / 110_000, 180, 90]);
  const q2: GeoQuery = near;
  t.equal(q2.georel, 'near');
});
