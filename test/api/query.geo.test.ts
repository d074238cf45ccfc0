// Geo-queries against a real broker (CIM 009 v1.8 §4.10): every georel, every query geometry type, geoproperty,
// near with maxDistance and minDistance, in GET /entities and in the geoQ of POST /entityOperations/query.
import t from 'tap';
import { startBroker, call, NGSI, type Broker } from './helpers/broker.js';

let broker: Broker;
const enc = encodeURIComponent;
// A 1°×1° square park, a point inside it, one outside, a road crossing the park, and a lake equal to the park.
const PARK = [
  [
    [2, 48],
    [3, 48],
    [3, 49],
    [2, 49],
    [2, 48],
  ],
];
const entities = [
  { id: 'urn:ngsi-ld:Place:park', type: 'Place', location: { type: 'GeoProperty', value: { type: 'Polygon', coordinates: PARK } } },
  { id: 'urn:ngsi-ld:Place:inside', type: 'Place', location: { type: 'GeoProperty', value: { type: 'Point', coordinates: [2.5, 48.5] } } },
  { id: 'urn:ngsi-ld:Place:outside', type: 'Place', location: { type: 'GeoProperty', value: { type: 'Point', coordinates: [10, 40] } } },
  {
    id: 'urn:ngsi-ld:Place:road',
    type: 'Place',
    location: {
      type: 'GeoProperty',
      value: {
        type: 'LineString',
        coordinates: [
          [1.5, 48.5],
          [3.5, 48.5],
        ],
      },
    },
  },
  {
    id: 'urn:ngsi-ld:Place:kiosk',
    type: 'Place',
    location: { type: 'GeoProperty', value: { type: 'Point', coordinates: [20, 20] } },
    entrance: { type: 'GeoProperty', value: { type: 'Point', coordinates: [2.5, 48.5] } },
  },
];

t.before(async () => {
  broker = await startBroker();
  const r = await call(broker, 'POST', `${NGSI}/entityOperations/create`, { body: entities });
  if (r.status !== 201) throw new Error(r.text);
});
t.teardown(async () => {
  await broker.stop();
});

const geo = async (georel: string, geometry: string, coordinates: unknown, extra = ''): Promise<string[]> => {
  const r = await call(
    broker,
    'GET',
    `${NGSI}/entities?type=Place&georel=${enc(georel)}&geometry=${geometry}&coordinates=${enc(JSON.stringify(coordinates))}${extra}`,
  );
  if (r.status !== 200) throw new Error(`${georel} ${geometry}: ${r.status} ${r.text}`);
  return r.json.map((e: any) => e.id.split(':').pop()).sort();
};

t.test('near with maxDistance and minDistance (metres)', async (t) => {
  t.same(
    await geo('near;maxDistance==1000', 'Point', [2.5, 48.5]),
    ['inside', 'park', 'road'],
    'the park contains the point, the road passes through it',
  );
  t.same(await geo('near;maxDistance==10', 'Point', [10, 40.00001]), ['outside']);
  const far = await geo('near;minDistance==1000000', 'Point', [2.5, 48.5]);
  t.same(far, ['kiosk', 'outside'], 'minDistance keeps what is at least that far');
});

t.test('within, contains, intersects, disjoint, equals, overlaps', async (t) => {
  t.same(
    await geo('within', 'Polygon', PARK),
    ['inside', 'park'],
    'within the park: the inner point, and the park itself (DE-9IM); not the road, which leaves it',
  );
  const within = await geo('within', 'Polygon', [
    [
      [1, 47],
      [4, 47],
      [4, 50],
      [1, 50],
      [1, 47],
    ],
  ]);
  t.same(within, ['inside', 'park', 'road'], 'a bigger square holds the park, the point and the road');
  t.same(
    await geo('contains', 'Point', [2.5, 48.5]),
    ['inside', 'park', 'road'],
    'the park, the road through the point and the equal point contain it (DE-9IM)',
  );
  t.same(
    await geo('intersects', 'LineString', [
      [2.5, 47.5],
      [2.5, 49.5],
    ]),
    ['inside', 'park', 'road'],
    'a north-south line crosses the park, the road, and the point where they meet',
  );
  t.same(
    await geo('intersects', 'LineString', [
      [2.2, 47.5],
      [2.2, 49.5],
    ]),
    ['park', 'road'],
    'a line west of the point',
  );
  t.same(await geo('disjoint', 'Polygon', PARK), ['kiosk', 'outside']);
  t.same(await geo('equals', 'Polygon', PARK), ['park']);
  t.same(
    await geo('overlaps', 'Polygon', [
      [
        [2.5, 48.5],
        [3.5, 48.5],
        [3.5, 49.5],
        [2.5, 49.5],
        [2.5, 48.5],
      ],
    ]),
    ['park'],
    'a square half over the park',
  );
});

t.test('Multi* query geometries', async (t) => {
  t.same(
    await geo('intersects', 'MultiPoint', [
      [2.5, 48.5],
      [10, 40],
    ]),
    ['inside', 'outside', 'park', 'road'],
  );
  t.same(
    await geo('intersects', 'MultiLineString', [
      [
        [9, 40],
        [11, 40],
      ],
      [
        [19, 19],
        [21, 21],
      ],
    ]),
    ['kiosk', 'outside'],
  );
  t.same(
    await geo('within', 'MultiPolygon', [
      PARK,
      [
        [
          [9, 39],
          [11, 39],
          [11, 41],
          [9, 41],
          [9, 39],
        ],
      ],
    ]),
    ['inside', 'outside', 'park'],
  );
});

t.test('geoproperty picks another GeoProperty than location', async (t) => {
  t.same(await geo('near;maxDistance==10', 'Point', [2.5, 48.5], '&geoproperty=entrance'), ['kiosk']);
  t.same(await geo('near;maxDistance==10', 'Point', [2.5, 48.5], '&geoproperty=nothing'), [], 'no entity has it');
});

t.test('POST /entityOperations/query takes the same geo-query as geoQ', async (t) => {
  const r = await call(broker, 'POST', `${NGSI}/entityOperations/query`, {
    body: {
      type: 'Query',
      entities: [{ type: 'Place' }],
      geoQ: { georel: 'near;maxDistance==10', geometry: 'Point', coordinates: [2.5, 48.5], geoproperty: 'entrance' },
    },
  });
  t.equal(r.status, 200, r.text);
  t.same(
    r.json.map((e: any) => e.id),
    ['urn:ngsi-ld:Place:kiosk'],
  );
  const text = await call(broker, 'POST', `${NGSI}/entityOperations/query`, {
    body: { type: 'Query', geoQ: { georel: 'equals', geometry: 'Polygon', coordinates: JSON.stringify(PARK) } },
  });
  t.equal(text.status, 200, text.text);
  t.same(
    text.json.map((e: any) => e.id),
    ['urn:ngsi-ld:Place:park'],
    'coordinates as JSON text, and a geo-query as the only selector',
  );
});

t.test('a geo-query alone is a selector; a GeoJSON answer carries the same entities', async (t) => {
  const r = await call(broker, 'GET', `${NGSI}/entities?georel=equals&geometry=Polygon&coordinates=${enc(JSON.stringify(PARK))}`, {
    headers: { accept: 'application/geo+json' },
  });
  t.equal(r.status, 200, r.text);
  t.same(
    r.json.features.map((f: any) => f.id),
    ['urn:ngsi-ld:Place:park'],
  );
  t.same(r.json.features[0].geometry, { type: 'Polygon', coordinates: PARK });
});
