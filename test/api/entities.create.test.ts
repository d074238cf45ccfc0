// Create and retrieve (CIM 009 v1.8 §5.6.1, §5.7.1, §6.4, §6.5), every bad input a clear 4xx with nothing written.
import t from 'tap';
import { startBroker, call, NGSI, type Broker } from './helpers/broker.js';

let broker: Broker;
t.before(async () => {
  broker = await startBroker();
});
t.teardown(async () => {
  await broker.stop();
});

const CORE = 'https://uri.etsi.org/ngsi-ld/v1/ngsi-ld-core-context-v1.8.jsonld';

const building = (id: string): Record<string, unknown> => ({
  id,
  type: 'Building',
  name: { type: 'Property', value: 'Tower', observedAt: '2024-01-01T00:00:00.000Z' },
  height: { type: 'Property', value: 120, unitCode: 'MTR', accuracy: { type: 'Property', value: 0.5 } },
  owner: { type: 'Relationship', object: 'urn:ngsi-ld:Person:1' },
  location: { type: 'GeoProperty', value: { type: 'Point', coordinates: [2.35, 48.85] } },
  label: { type: 'LanguageProperty', languageMap: { en: 'Tower', fr: 'Tour' } },
  category: { type: 'VocabProperty', vocab: 'Office' },
  config: { type: 'JsonProperty', json: { a: [1, 2], b: { c: null } } },
  readings: { type: 'ListProperty', valueList: [1, 2, 3] },
  neighbours: { type: 'ListRelationship', objectList: [{ object: 'urn:ngsi-ld:Building:2' }] },
});

t.test('create answers 201 with Location, and retrieve gives the entity back in normalized form', async (t) => {
  const c = await call(broker, 'POST', `${NGSI}/entities`, { body: building('urn:ngsi-ld:Building:c1') });
  t.equal(c.status, 201, c.text);
  t.equal(c.headers.get('location'), `${NGSI}/entities/urn:ngsi-ld:Building:c1`);
  const r = await call(broker, 'GET', `${NGSI}/entities/urn:ngsi-ld:Building:c1`);
  t.equal(r.status, 200);
  t.match(r.headers.get('content-type'), 'application/json');
  t.match(r.headers.get('link'), CORE);
  t.same(r.json, building('urn:ngsi-ld:Building:c1'));
});

t.test('a second create of the same id is 409 AlreadyExists', async (t) => {
  await call(broker, 'POST', `${NGSI}/entities`, { body: building('urn:ngsi-ld:Building:dup') });
  const r = await call(broker, 'POST', `${NGSI}/entities`, { body: building('urn:ngsi-ld:Building:dup') });
  t.equal(r.status, 409);
  t.equal(r.json.type, 'https://uri.etsi.org/ngsi-ld/errors/AlreadyExists');
});

t.test('options keyValues, concise and sysAttrs', async (t) => {
  const id = 'urn:ngsi-ld:Building:c2';
  await call(broker, 'POST', `${NGSI}/entities`, { body: building(id) });
  const kv = await call(broker, 'GET', `${NGSI}/entities/${id}?options=keyValues`);
  t.equal(kv.json.name, 'Tower');
  t.equal(kv.json.height, 120);
  t.equal(kv.json.owner, 'urn:ngsi-ld:Person:1');
  const fmt = await call(broker, 'GET', `${NGSI}/entities/${id}?format=keyValues`);
  t.same(fmt.json, kv.json, 'format=keyValues is the same as options=keyValues');
  const concise = await call(broker, 'GET', `${NGSI}/entities/${id}?options=concise`);
  t.equal(concise.json.height.value, 120);
  t.notOk('type' in concise.json.height, 'concise drops the Property type');
  const sys = await call(broker, 'GET', `${NGSI}/entities/${id}?options=sysAttrs`);
  t.match(sys.json.createdAt, /^\d{4}-\d{2}-\d{2}T/);
  t.match(sys.json.modifiedAt, /^\d{4}-\d{2}-\d{2}T/);
  t.match(sys.json.height.createdAt, /^\d{4}-/);
  t.match(sys.json.height.accuracy.createdAt, /^\d{4}-/, 'sub-attributes carry sysAttrs');
  const plain = await call(broker, 'GET', `${NGSI}/entities/${id}`);
  t.notOk('createdAt' in plain.json, 'no sysAttrs unless asked');
});

t.test('attrs, pick and omit select members', async (t) => {
  const id = 'urn:ngsi-ld:Building:c3';
  await call(broker, 'POST', `${NGSI}/entities`, { body: building(id) });
  const attrs = await call(broker, 'GET', `${NGSI}/entities/${id}?attrs=name,height`);
  t.same(Object.keys(attrs.json).sort(), ['height', 'id', 'name', 'type']);
  const pick = await call(broker, 'GET', `${NGSI}/entities/${id}?pick=id,name`);
  t.same(Object.keys(pick.json).sort(), ['id', 'name']);
  const omit = await call(broker, 'GET', `${NGSI}/entities/${id}?omit=config,readings`);
  t.notOk('config' in omit.json);
  t.ok('name' in omit.json);
});

t.test('application/ld+json answers carry @context and geo+json answers a Feature', async (t) => {
  const id = 'urn:ngsi-ld:Building:c4';
  await call(broker, 'POST', `${NGSI}/entities`, { body: building(id) });
  const ld = await call(broker, 'GET', `${NGSI}/entities/${id}`, { headers: { accept: 'application/ld+json' } });
  t.equal(ld.headers.get('content-type'), 'application/ld+json');
  t.ok(ld.json['@context'], 'body has @context');
  t.equal(ld.headers.get('link'), null, 'no Link header with ld+json');
  const geo = await call(broker, 'GET', `${NGSI}/entities/${id}`, { headers: { accept: 'application/geo+json' } });
  t.equal(geo.headers.get('content-type'), 'application/geo+json');
  t.equal(geo.json.type, 'Feature');
  t.same(geo.json.geometry, { type: 'Point', coordinates: [2.35, 48.85] });
});

t.test('create with application/ld+json takes the body @context', async (t) => {
  const body = { ...building('urn:ngsi-ld:Building:ld1'), '@context': [CORE] };
  const r = await call(broker, 'POST', `${NGSI}/entities`, { body, headers: { 'content-type': 'application/ld+json' } });
  t.equal(r.status, 201, r.text);
  const noCtx = await call(broker, 'POST', `${NGSI}/entities`, {
    body: building('urn:ngsi-ld:Building:ld2'),
    headers: { 'content-type': 'application/ld+json' },
  });
  t.equal(noCtx.status, 400, 'ld+json without @context');
  const jsonWithCtx = await call(broker, 'POST', `${NGSI}/entities`, {
    body: { ...building('urn:ngsi-ld:Building:ld3'), '@context': CORE },
  });
  t.equal(jsonWithCtx.status, 400, 'application/json with @context in the body');
});

t.test('retrieve of a missing entity is 404 ResourceNotFound', async (t) => {
  const r = await call(broker, 'GET', `${NGSI}/entities/urn:ngsi-ld:Building:none`);
  t.equal(r.status, 404);
  t.equal(r.json.type, 'https://uri.etsi.org/ngsi-ld/errors/ResourceNotFound');
});

const deep = (n: number): unknown => (n === 0 ? 1 : { a: deep(n - 1) });

const BAD_BODIES: Array<[string, string | Uint8Array, number?]> = [
  ['invalid JSON', '{"id": "urn:x:1", '],
  ['a JSON array', '[{"id":"urn:ngsi-ld:T:1","type":"T"}]'],
  ['a JSON string', '"urn:ngsi-ld:T:1"'],
  ['an empty body', ''],
  ['an id that is not a URI', JSON.stringify({ id: 'not a uri', type: 'T' })],
  ['a numeric id', JSON.stringify({ id: 5, type: 'T' })],
  ['a missing id', JSON.stringify({ type: 'T' })],
  ['a missing type', JSON.stringify({ id: 'urn:ngsi-ld:T:bad1' })],
  ['an empty type list', JSON.stringify({ id: 'urn:ngsi-ld:T:bad2', type: [] })],
  ['an attribute whose type is not a string', JSON.stringify({ id: 'urn:ngsi-ld:T:bad3', type: 'T', a: { type: 5, value: 1 } })],
  ['an unknown attribute type', JSON.stringify({ id: 'urn:ngsi-ld:T:bad4', type: 'T', a: { type: 'Propertee', value: 1 } })],
  ['a Property without value', JSON.stringify({ id: 'urn:ngsi-ld:T:bad5', type: 'T', a: { type: 'Property' } })],
  [
    'a Relationship whose object is not a URI',
    JSON.stringify({ id: 'urn:ngsi-ld:T:bad6', type: 'T', r: { type: 'Relationship', object: 5 } }),
  ],
  [
    'a GeoProperty that is not GeoJSON',
    JSON.stringify({
      id: 'urn:ngsi-ld:T:bad7',
      type: 'T',
      location: { type: 'GeoProperty', value: { type: 'Point', coordinates: [500, 1] } },
    }),
  ],
  [
    'a polygon ring that is not closed',
    JSON.stringify({
      id: 'urn:ngsi-ld:T:bad8',
      type: 'T',
      location: {
        type: 'GeoProperty',
        value: {
          type: 'Polygon',
          coordinates: [
            [
              [0, 0],
              [1, 0],
              [1, 1],
              [0, 1],
            ],
          ],
        },
      },
    }),
  ],
  [
    'a datasetId that is not a URI',
    JSON.stringify({ id: 'urn:ngsi-ld:T:bad9', type: 'T', a: { type: 'Property', value: 1, datasetId: 'not a uri' } }),
  ],
  [
    'a LanguageProperty with a number in its map',
    JSON.stringify({ id: 'urn:ngsi-ld:T:bad10', type: 'T', l: { type: 'LanguageProperty', languageMap: { en: 5 } } }),
  ],
  [
    'a ListProperty whose valueList is not an array',
    JSON.stringify({ id: 'urn:ngsi-ld:T:bad11', type: 'T', l: { type: 'ListProperty', valueList: 5 } }),
  ],
  [
    'an attribute name with forbidden characters',
    JSON.stringify({ id: 'urn:ngsi-ld:T:bad12', type: 'T', 'a<b': { type: 'Property', value: 1 } }),
  ],
  [
    'observedAt that is not a date-time',
    JSON.stringify({ id: 'urn:ngsi-ld:T:bad13', type: 'T', a: { type: 'Property', value: 1, observedAt: 'yesterday' } }),
  ],
  [
    'two default instances of one attribute',
    JSON.stringify({
      id: 'urn:ngsi-ld:T:bad14',
      type: 'T',
      a: [
        { type: 'Property', value: 1 },
        { type: 'Property', value: 2 },
      ],
    }),
  ],
  ['nesting past 64 levels', JSON.stringify({ id: 'urn:ngsi-ld:T:bad15', type: 'T', a: { type: 'Property', value: deep(100) } })],
];

for (const [what, raw] of BAD_BODIES) {
  t.test(`create with ${what} is a 400 ProblemDetails and writes nothing`, async (t) => {
    const r = await call(broker, 'POST', `${NGSI}/entities`, { raw, headers: { 'content-type': 'application/json' } });
    t.equal(r.status, 400, r.text);
    t.match(r.json, { type: /^https:\/\/uri\.etsi\.org\/ngsi-ld\/errors\/(BadRequestData|InvalidRequest)$/, status: 400 });
    t.type(r.json.detail, 'string');
    const m = /"id":"([^"]+)"/.exec(typeof raw === 'string' ? raw : '');
    if (m !== null && m[1]!.startsWith('urn:')) {
      const g = await call(broker, 'GET', `${NGSI}/entities/${m[1]}`);
      t.equal(g.status, 404, 'nothing was written');
    }
  });
}

t.test('a Link header that is not a context link is a 400', async (t) => {
  const r = await call(broker, 'GET', `${NGSI}/entities/urn:ngsi-ld:Building:c1`, { headers: { link: 'this is not a link' } });
  t.equal(r.status, 400, r.text);
});

t.test('a context URL that cannot be fetched is 503 LdContextNotAvailable', async (t) => {
  const link = '<http://127.0.0.1:9/nothing.jsonld>; rel="http://www.w3.org/ns/json-ld#context"; type="application/ld+json"';
  const r = await call(broker, 'GET', `${NGSI}/entities/urn:ngsi-ld:Building:c1`, { headers: { link } });
  t.equal(r.status, 503, r.text);
  t.equal(r.json.type, 'https://uri.etsi.org/ngsi-ld/errors/LdContextNotAvailable');
});

t.test('the broker keeps serving after every bad input', async (t) => {
  const r = await call(broker, 'GET', `${NGSI}/entities/urn:ngsi-ld:Building:c1`);
  t.equal(r.status, 200);
});
