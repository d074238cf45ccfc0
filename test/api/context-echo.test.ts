// The @context of an answer is the request's own (CIM 009 v1.8 §5.5.7, §6.3.6, §6.3.15): application/ld+json and
// application/geo+json bodies echo the @context as the request gave it (the core alone when it gave none), since
// the core applies anyway; application/json answers name it in a Link header.
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
const SUITE =
  'https://forge.etsi.org/rep/cim/ngsi-ld-test-suite/-/raw/develop/resources/jsonld-contexts/ngsi-ld-test-suite-compound.jsonld';
const link = (url: string): string => `<${url}>; rel="http://www.w3.org/ns/json-ld#context"; type="application/ld+json"`;
const LD = 'application/ld+json';

const place = (id: string): Record<string, unknown> => ({
  id,
  type: 'Building',
  name: { type: 'Property', value: 'Tower' },
  location: { type: 'GeoProperty', value: { type: 'Point', coordinates: [2.35, 48.85] } },
});

t.before(async () => {
  const r = await call(broker, 'POST', `${NGSI}/entities`, { body: place('urn:ngsi-ld:Building:echo1'), headers: { link: link(SUITE) } });
  if (r.status !== 201) throw new Error(r.text);
});

t.test('a Link header @context comes back as that URL alone, not with the core appended', async (t) => {
  const one = await call(broker, 'GET', `${NGSI}/entities/urn:ngsi-ld:Building:echo1`, { headers: { accept: LD, link: link(SUITE) } });
  t.equal(one.status, 200, one.text);
  t.equal(one.json['@context'], SUITE);
  t.equal(one.json.name.value, 'Tower', 'compacted with that context');
  const many = await call(broker, 'GET', `${NGSI}/entities?type=Building`, { headers: { accept: LD, link: link(SUITE) } });
  t.equal(many.status, 200, many.text);
  t.ok(many.json.length >= 1);
  for (const e of many.json) t.equal(e['@context'], SUITE, 'every entity of a query');
});

t.test('without a @context the answer names the core alone', async (t) => {
  const r = await call(broker, 'GET', `${NGSI}/entities/urn:ngsi-ld:Building:echo1`, { headers: { accept: LD } });
  t.equal(r.status, 200);
  t.equal(r.json['@context'], CORE);
});

t.test('a body @context is echoed in its own spelling: a one-element list stays a list, [url, core] keeps the core', async (t) => {
  for (const [id, given] of [
    ['urn:ngsi-ld:Building:echo2', [SUITE]],
    ['urn:ngsi-ld:Building:echo3', [SUITE, CORE]],
    ['urn:ngsi-ld:Building:echo4', { Building: 'https://example.org/Building', name: 'https://example.org/name' }],
  ] as const) {
    const c = await call(broker, 'POST', `${NGSI}/entities`, {
      body: { ...place(id), '@context': given },
      headers: { 'content-type': LD },
    });
    t.equal(c.status, 201, c.text);
    const q = await call(broker, 'POST', `${NGSI}/entityOperations/query`, {
      body: { type: 'Query', entities: [{ id, type: 'Building' }], '@context': given },
      headers: { 'content-type': LD, accept: LD },
    });
    t.equal(q.status, 200, q.text);
    t.equal(q.json.length, 1, JSON.stringify(given));
    t.same(q.json[0]['@context'], given, JSON.stringify(given));
    t.equal(q.json[0].name.value, 'Tower');
  }
});

t.test('two spellings of one context expand alike and each answer echoes its own', async (t) => {
  const a = await call(broker, 'GET', `${NGSI}/entities/urn:ngsi-ld:Building:echo2`, { headers: { accept: LD, link: link(SUITE) } });
  const b = await call(broker, 'POST', `${NGSI}/entityOperations/query`, {
    body: { type: 'Query', entities: [{ id: 'urn:ngsi-ld:Building:echo2', type: 'Building' }], '@context': [SUITE, CORE] },
    headers: { 'content-type': LD, accept: LD },
  });
  t.equal(a.json['@context'], SUITE);
  t.same(b.json[0]['@context'], [SUITE, CORE]);
  const { ['@context']: _a, ...restA } = a.json;
  const { ['@context']: _b, ...restB } = b.json[0];
  t.same(restA, restB, 'the same entity, the same names');
});

t.test('GeoJSON answers carry @context as a member of the Feature or FeatureCollection, and no Link header', async (t) => {
  const geo = 'application/geo+json';
  const f = await call(broker, 'GET', `${NGSI}/entities/urn:ngsi-ld:Building:echo1?options=keyValues`, {
    headers: { accept: geo, link: link(SUITE) },
  });
  t.equal(f.status, 200, f.text);
  t.match(f.headers.get('content-type'), geo);
  t.equal(f.json.type, 'Feature');
  t.equal(f.json['@context'], SUITE);
  t.equal(f.headers.get('link'), null);
  const fc = await call(broker, 'GET', `${NGSI}/entities?type=Building`, { headers: { accept: geo } });
  t.equal(fc.status, 200, fc.text);
  t.equal(fc.json.type, 'FeatureCollection');
  t.equal(fc.json['@context'], CORE);
  t.notOk(
    fc.json.features.some((x: Record<string, unknown>) => '@context' in x),
    'once, at the top',
  );
});

t.test('application/json answers still name the request context in a Link header', async (t) => {
  const r = await call(broker, 'GET', `${NGSI}/entities/urn:ngsi-ld:Building:echo1`, { headers: { link: link(SUITE) } });
  t.equal(r.status, 200);
  t.match(r.headers.get('link') ?? '', SUITE);
  t.notOk('@context' in r.json);
});
