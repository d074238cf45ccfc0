// Discovery (CIM 009 v1.8 §5.7.5 to §5.7.8): /types and /attributes per tenant, compacted with the request's @context,
// kept in step with creates, updates and deletes.
import t from 'tap';
import { startBroker, call, NGSI, type Broker } from './helpers/broker.js';

let broker: Broker;
t.before(async () => {
  broker = await startBroker();
});
t.teardown(async () => {
  await broker.stop();
});

const CTX = 'https://fiware.github.io/NGSI-LD_TestSuite/ldContext/testContext.jsonld';
const post = (body: unknown, headers: Record<string, string> = {}) => call(broker, 'POST', `${NGSI}/entities`, { body, headers });
const get = (path: string, headers: Record<string, string> = {}) => call(broker, 'GET', `${NGSI}${path}`, { headers });

t.before(async () => {
  for (const [i, speed] of [
    [1, 10],
    [2, 20],
  ] as const)
    await post({
      id: `urn:ngsi-ld:Vehicle:d${i}`,
      type: 'Vehicle',
      speed: { type: 'Property', value: speed },
      owner: { type: 'Relationship', object: 'urn:ngsi-ld:Person:1' },
    });
  await post({
    id: 'urn:ngsi-ld:Building:d1',
    type: 'Building',
    name: { type: 'Property', value: 'Tower' },
    location: { type: 'GeoProperty', value: { type: 'Point', coordinates: [2, 48] } },
  });
  await post({
    id: 'urn:ngsi-ld:Thing:d1',
    type: ['Vehicle', 'Thing'],
    speed: [
      { type: 'Property', value: 1 },
      { type: 'Property', value: 2, datasetId: 'urn:ds:2' },
    ],
  });
  await post({ id: 'urn:ngsi-ld:Room:t1', type: 'Room', temperature: { type: 'Property', value: 21 } }, { 'NGSILD-Tenant': 'disco' });
});

t.test('GET /types lists the type names of the tenant as an EntityTypeList', async (t) => {
  const r = await get('/types');
  t.equal(r.status, 200, r.text);
  t.equal(r.json.type, 'EntityTypeList');
  t.match(r.json.id, /^urn:ngsi-ld:EntityTypeList:/);
  t.same(r.json.typeList, ['Building', 'Thing', 'Vehicle']);
  t.match(r.headers.get('link') ?? '', /ngsi-ld-core-context/);
});

t.test('GET /types?details=true gives each type with its IRI and attribute names', async (t) => {
  const r = await get('/types?details=true');
  t.equal(r.status, 200, r.text);
  const vehicle = r.json.find((x: any) => x.typeName === 'Vehicle');
  t.same(vehicle, {
    id: 'https://uri.etsi.org/ngsi-ld/default-context/Vehicle',
    type: 'EntityType',
    typeName: 'Vehicle',
    attributeNames: ['owner', 'speed'],
  });
  t.same(r.json.find((x: any) => x.typeName === 'Building').attributeNames, ['location', 'name']);
});

t.test('GET /types/{type} gives the entity count and the attribute details', async (t) => {
  const r = await get('/types/Vehicle');
  t.equal(r.status, 200, r.text);
  t.equal(r.json.type, 'EntityTypeInfo');
  t.equal(r.json.typeName, 'Vehicle');
  t.equal(r.json.entityCount, 3);
  t.same(r.json.attributeDetails, [
    {
      id: 'https://uri.etsi.org/ngsi-ld/default-context/owner',
      type: 'Attribute',
      attributeName: 'owner',
      attributeTypes: ['Relationship'],
    },
    { id: 'https://uri.etsi.org/ngsi-ld/default-context/speed', type: 'Attribute', attributeName: 'speed', attributeTypes: ['Property'] },
  ]);
  const byIri = await get(`/types/${encodeURIComponent('https://uri.etsi.org/ngsi-ld/default-context/Vehicle')}`);
  t.equal(byIri.json.entityCount, 3, 'the expanded IRI names the same type');
});

t.test('GET /attributes lists attribute names; details=true gives counts, attribute types and type names', async (t) => {
  const r = await get('/attributes');
  t.equal(r.status, 200, r.text);
  t.equal(r.json.type, 'AttributeList');
  t.same(r.json.attributeList, ['location', 'name', 'owner', 'speed']);
  const d = await get('/attributes?details=true');
  const speed = d.json.find((x: any) => x.attributeName === 'speed');
  t.same(speed, {
    id: 'https://uri.etsi.org/ngsi-ld/default-context/speed',
    type: 'Attribute',
    attributeName: 'speed',
    attributeCount: 3,
    attributeTypes: ['Property'],
    typeNames: ['Thing', 'Vehicle'],
  });
  const loc = d.json.find((x: any) => x.attributeName === 'location');
  t.same(loc.attributeTypes, ['GeoProperty']);
});

t.test('GET /attributes/{attrId} gives one Attribute; location compacts as the core term', async (t) => {
  const r = await get('/attributes/owner');
  t.equal(r.status, 200, r.text);
  t.same(r.json, {
    id: 'https://uri.etsi.org/ngsi-ld/default-context/owner',
    type: 'Attribute',
    attributeName: 'owner',
    attributeCount: 2,
    attributeTypes: ['Relationship'],
    typeNames: ['Vehicle'],
  });
  const loc = await get('/attributes/location');
  t.equal(loc.json.id, 'https://uri.etsi.org/ngsi-ld/location', 'location is the core term');
  t.equal(loc.json.attributeName, 'location');
});

t.test('discovery follows updates and deletes: counts drop and vanished names leave the lists', async (t) => {
  await post({ id: 'urn:ngsi-ld:Boat:z', type: 'Boat', hull: { type: 'Property', value: 'steel' } });
  t.equal((await get('/types/Boat')).json.entityCount, 1);
  const patch = await call(broker, 'PATCH', `${NGSI}/entities/urn:ngsi-ld:Boat:z`, {
    body: { hull: { type: 'Relationship', object: 'urn:ngsi-ld:Hull:1' } },
  });
  t.equal(patch.status, 204, patch.text);
  t.same((await get('/attributes/hull')).json.attributeTypes, ['Relationship'], 'the attribute type follows a merge');
  const del = await call(broker, 'DELETE', `${NGSI}/entities/urn:ngsi-ld:Boat:z`);
  t.equal(del.status, 204);
  t.equal((await get('/types/Boat')).status, 404);
  t.equal((await get('/attributes/hull')).status, 404);
  t.notOk((await get('/types')).json.typeList.includes('Boat'));
});

t.test('discovery is per tenant', async (t) => {
  const r = await get('/types', { 'NGSILD-Tenant': 'disco' });
  t.same(r.json.typeList, ['Room']);
  t.same((await get('/attributes', { 'NGSILD-Tenant': 'disco' })).json.attributeList, ['temperature']);
  t.equal((await get('/types/Room')).status, 404, 'the default tenant has no Room');
  t.equal((await get('/types', { 'NGSILD-Tenant': 'nosuchtenant' })).status, 404, 'an unknown tenant is 404');
});

t.test('names are compacted with the request @context (Link header)', async (t) => {
  const link = `<${CTX}>; rel="http://www.w3.org/ns/json-ld#context"; type="application/ld+json"`;
  await post({ id: 'urn:ngsi-ld:T:ctx', type: 'http://example.org/T', 'http://example.org/P1': { type: 'Property', value: 3 } });
  const plain = await get('/types');
  t.ok(plain.json.typeList.includes('http://example.org/T'), 'without the context the IRI stays whole');
  const withCtx = await get('/types', { Link: link });
  t.equal(withCtx.status, 200, withCtx.text);
  t.ok(withCtx.json.typeList.includes('T'), 'with the context it is compacted');
  t.match(withCtx.headers.get('link') ?? '', CTX, 'the Link header names the request context');
  const one = await get('/types/T', { Link: link });
  t.equal(one.status, 200, one.text);
  t.equal(one.json.id, 'http://example.org/T');
  t.equal(one.json.typeName, 'T');
  t.equal(one.json.entityCount, 1);
  t.same(
    one.json.attributeDetails.map((a: any) => a.attributeName),
    ['P1'],
  );
});

t.test('bad discovery requests answer 400 and 404 ProblemDetails', async (t) => {
  for (const path of ['/types?details=yes', '/attributes?details=1']) {
    const r = await get(path);
    t.equal(r.status, 400, `${path}: ${r.text}`);
    t.equal(r.json.type, 'https://uri.etsi.org/ngsi-ld/errors/BadRequestData', path);
  }
  // CIM 009 v1.8.1 §6.3.20: a parameter the operation does not take.
  for (const path of ['/types?foo=1', '/attributes/speed?details=true', '/types/Vehicle?limit=1']) {
    const r = await get(path);
    t.equal(r.status, 400, `${path}: ${r.text}`);
    t.equal(r.json.type, 'https://uri.etsi.org/ngsi-ld/errors/InvalidRequest', path);
  }
  const missing = await get('/types/NoSuchType');
  t.equal(missing.status, 404);
  t.equal(missing.json.type, 'https://uri.etsi.org/ngsi-ld/errors/ResourceNotFound');
  t.equal((await get('/attributes/noSuchAttr')).status, 404);
  t.equal((await get('/types')).status, 200, 'the broker keeps serving');
});

t.test('attributeTypes name every NGSI-LD attribute type in use (§5.2.27)', async (t) => {
  const body = {
    id: 'urn:ngsi-ld:Kinds:1',
    type: 'Kinds',
    label: { type: 'LanguageProperty', languageMap: { en: 'x' } },
    category: { type: 'VocabProperty', vocab: 'Big' },
    readings: { type: 'ListProperty', valueList: [1, 2] },
    blob: { type: 'JsonProperty', json: { any: 'thing' } },
    path: { type: 'ListRelationship', objectList: [{ object: 'urn:ngsi-ld:Stop:1' }] },
    spot: { type: 'GeoProperty', value: { type: 'Point', coordinates: [1, 2] } },
  };
  t.equal((await post(body)).status, 201);
  const info = await get('/types/Kinds');
  t.same(Object.fromEntries(info.json.attributeDetails.map((a: any) => [a.attributeName, a.attributeTypes])), {
    blob: ['JsonProperty'],
    category: ['VocabProperty'],
    label: ['LanguageProperty'],
    path: ['ListRelationship'],
    readings: ['ListProperty'],
    spot: ['GeoProperty'],
  });
  for (const a of info.json.attributeDetails) t.equal(a.type, 'Attribute', `${a.attributeName} is an Attribute`);
  const one = await get('/attributes/label');
  t.same(one.json.attributeTypes, ['LanguageProperty']);
  t.same(one.json.typeNames, ['Kinds']);
  t.equal(one.json.attributeCount, 1);
  t.notOk((await get('/attributes')).json.attributeList.includes('scope'), 'scope is no attribute');
});

t.test('an attribute of two types in two entities lists both attributeTypes', async (t) => {
  await post({ id: 'urn:ngsi-ld:Mixed:1', type: 'Mixed', link: { type: 'Property', value: 'text' } });
  await post({ id: 'urn:ngsi-ld:Mixed:2', type: 'Mixed', link: { type: 'Relationship', object: 'urn:ngsi-ld:X:1' } });
  t.same((await get('/attributes/link')).json.attributeTypes, ['Property', 'Relationship']);
  const info = await get('/types/Mixed');
  t.same(info.json.attributeDetails[0].attributeTypes, ['Property', 'Relationship']);
  t.equal(info.json.entityCount, 2);
});

t.test('discovery answers application/ld+json with @context in each object', async (t) => {
  const ld = { accept: 'application/ld+json' };
  const list = await get('/types', ld);
  t.match(list.headers.get('content-type'), /application\/ld\+json/);
  t.ok(list.json['@context'], 'EntityTypeList carries @context');
  t.notOk(list.headers.get('link'), 'no Link header with ld+json');
  const details = await get('/types?details=true', ld);
  t.ok(
    details.json.every((x: any) => x['@context'] !== undefined && x.type === 'EntityType'),
    'each EntityType carries @context',
  );
  const attrs = await get('/attributes?details=true', ld);
  t.ok(attrs.json.every((x: any) => x['@context'] !== undefined && x.type === 'Attribute'));
  const one = await get('/attributes/speed', ld);
  t.equal(one.json.type, 'Attribute');
  t.ok(one.json['@context']);
});

t.test('an attribute and a type named by their IRI in the path', async (t) => {
  const r = await get(`/attributes/${encodeURIComponent('https://uri.etsi.org/ngsi-ld/default-context/speed')}`);
  t.equal(r.status, 200, r.text);
  t.equal(r.json.attributeName, 'speed');
  t.equal(r.json.attributeCount, 3);
});

t.test('the request @context compacts attribute names and type names in every discovery answer', async (t) => {
  const link = `<${CTX}>; rel="http://www.w3.org/ns/json-ld#context"; type="application/ld+json"`;
  const attrs = await get('/attributes?details=true', { Link: link });
  t.equal(attrs.status, 200, attrs.text);
  const p1 = attrs.json.find((a: any) => a.id === 'http://example.org/P1');
  t.same({ name: p1.attributeName, types: p1.typeNames }, { name: 'P1', types: ['T'] });
  const one = await get('/attributes/P1', { Link: link });
  t.equal(one.json.id, 'http://example.org/P1', 'the term is expanded with the Link context to find it');
  t.same(one.json.typeNames, ['T']);
  const types = await get('/types?details=true', { Link: link });
  t.same(types.json.find((x: any) => x.typeName === 'T').attributeNames, ['P1']);
});

t.test('removing an attribute and every entity of a tenant empties its discovery lists', async (t) => {
  const tenant = { 'NGSILD-Tenant': 'gone' };
  t.equal(
    (await post({ id: 'urn:ngsi-ld:Tmp:1', type: 'Tmp', a: { type: 'Property', value: 1 }, b: { type: 'Property', value: 2 } }, tenant))
      .status,
    201,
  );
  t.equal((await call(broker, 'DELETE', `${NGSI}/entities/urn:ngsi-ld:Tmp:1/attrs/a`, { headers: tenant })).status, 204);
  t.same((await get('/attributes', tenant)).json.attributeList, ['b'], 'a deleted attribute leaves the list');
  t.same(
    (await get('/types/Tmp', tenant)).json.attributeDetails.map((a: any) => a.attributeName),
    ['b'],
  );
  t.equal((await call(broker, 'DELETE', `${NGSI}/entities/urn:ngsi-ld:Tmp:1`, { headers: tenant })).status, 204);
  const types = await get('/types', tenant);
  t.equal(types.status, 200);
  t.same(types.json.typeList, [], 'an EntityTypeList with no types');
  t.same((await get('/types?details=true', tenant)).json, []);
  t.same((await get('/attributes', tenant)).json.attributeList, []);
});
