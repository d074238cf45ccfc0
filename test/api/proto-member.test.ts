// A member named `__proto__` (README "Limits"): the store's MessagePack reader renames it `__proto_` and jsonld
// drops such a term, so inside anything the broker keeps as given (attribute values, @contexts, registration
// properties, subscription members) it is a 400 BadRequestData naming where, and nothing is written; as an attribute
// name (expanded to an IRI) it is kept like any other. The bodies are raw JSON: an object literal's `__proto__` is
// its prototype, not a member.
import t, { type Test } from 'tap';
import { startBroker, call, NGSI, type Broker, type Reply } from './helpers/broker.js';

let broker: Broker;
t.before(async () => {
  broker = await startBroker(['--troe', 'embdb']);
});
t.teardown(async () => {
  await broker.stop();
});

const BAD = 'https://uri.etsi.org/ngsi-ld/errors/BadRequestData';
const CORE = 'https://uri.etsi.org/ngsi-ld/v1/ngsi-ld-core-context-v1.8.jsonld';
const JSON_CT = { 'content-type': 'application/json' };
const LD_CT = { 'content-type': 'application/ld+json' };

const send = (method: string, path: string, raw: string, headers: Record<string, string> = JSON_CT): Promise<Reply> =>
  call(broker, method, NGSI + path, { raw, headers });
const get = (path: string): Promise<Reply> => call(broker, 'GET', NGSI + path);

function refused(t: Test, r: Reply, where: string, what: string): void {
  t.equal(r.status, 400, `${what}: ${r.text.slice(0, 300)}`);
  t.equal(r.json?.type, BAD, what);
  t.equal(
    r.json?.detail?.startsWith(`${where}: a member named "__proto__" cannot be stored`),
    true,
    `${what}: names ${where} (${r.json?.detail})`,
  );
}

t.test('a Property whose value holds __proto__ is refused at create, and no entity is left', async (t) => {
  refused(
    t,
    await send('POST', '/entities', '{"id":"urn:ngsi-ld:P:1","type":"P","p":{"type":"Property","value":{"__proto__":3}}}'),
    'p.value.__proto__',
    'Property value',
  );
  t.equal((await get('/entities/urn:ngsi-ld:P:1')).status, 404, 'nothing was created (before: created, and read back as {"__proto_":3})');
});

t.test('every value member and form that keeps a JSON value as given refuses __proto__ at any depth', async (t) => {
  const cases: Array<[string, string, string]> = [
    ['{"type":"Property","value":{"a":[1,{"b":{"__proto__":null}}]}}', 'x.value.a[1].b.__proto__', 'nested in a Property value'],
    ['{"type":"JsonProperty","json":{"__proto__":{"k":1}}}', 'x.json.__proto__', 'JsonProperty json'],
    ['{"type":"ListProperty","valueList":[1,{"__proto__":2}]}', 'x.valueList[1].__proto__', 'ListProperty valueList'],
    ['{"type":"GeoProperty","value":{"type":"Point","coordinates":[1,2],"__proto__":1}}', 'x.value.__proto__', 'GeoProperty value'],
    ['{"__proto__":1,"k":2}', 'x.__proto__', 'concise compound value'],
    ['{"value":{"__proto__":1}}', 'x.value.__proto__', 'concise with value'],
    ['{"type":"Property","value":1,"sub":{"type":"Property","value":{"__proto__":1}}}', 'x.sub.value.__proto__', 'sub-attribute value'],
  ];
  for (const [attr, where, what] of cases) {
    refused(t, await send('POST', '/entities', `{"id":"urn:ngsi-ld:P:2","type":"P","x":${attr}}`), where, what);
  }
  t.equal((await get('/entities/urn:ngsi-ld:P:2')).status, 404, 'none of them created the entity');
});

t.test('updates, batches and the temporal API refuse it too; the other entries of a batch are written', async (t) => {
  const created = await send('POST', '/entities', '{"id":"urn:ngsi-ld:P:3","type":"P","a":{"type":"Property","value":{"k":1}}}');
  t.equal(created.status, 201, created.text);
  refused(
    t,
    await send('PATCH', '/entities/urn:ngsi-ld:P:3/attrs', '{"a":{"type":"Property","value":{"__proto__":1}}}'),
    'a.value.__proto__',
    'PATCH attrs',
  );
  refused(
    t,
    await send('PATCH', '/entities/urn:ngsi-ld:P:3/attrs/a', '{"type":"Property","value":{"__proto__":1}}'),
    'a.value.__proto__',
    'PATCH attr',
  );
  refused(
    t,
    await send('POST', '/entities/urn:ngsi-ld:P:3/attrs', '{"b":{"type":"JsonProperty","json":{"__proto__":1}}}'),
    'b.json.__proto__',
    'append',
  );
  refused(t, await send('PATCH', '/entities/urn:ngsi-ld:P:3', '{"a":{"value":{"__proto__":1}}}'), 'a.value.__proto__', 'merge');
  t.same(
    (await get('/entities/urn:ngsi-ld:P:3?options=keyValues')).json,
    { id: 'urn:ngsi-ld:P:3', type: 'P', a: { k: 1 } },
    'the entity is unchanged',
  );

  const batch = await send(
    'POST',
    '/entityOperations/upsert',
    '[{"id":"urn:ngsi-ld:P:4","type":"P","a":{"value":{"__proto__":1}}},{"id":"urn:ngsi-ld:P:5","type":"P","a":{"value":1}}]',
  );
  t.equal(batch.status, 207, batch.text);
  t.same(batch.json.success, ['urn:ngsi-ld:P:5']);
  t.equal(batch.json.errors[0].entityId, 'urn:ngsi-ld:P:4');
  t.equal(batch.json.errors[0].error.type, BAD);
  t.match(batch.json.errors[0].error.detail, /^a\.value\.__proto__: a member named "__proto__"/);
  t.equal((await get('/entities/urn:ngsi-ld:P:4')).status, 404);

  refused(
    t,
    await send(
      'POST',
      '/temporal/entities',
      '{"id":"urn:ngsi-ld:P:6","type":"P","a":[{"type":"Property","value":{"__proto__":1},"observedAt":"2020-01-01T00:00:00Z"}]}',
    ),
    'a.value.__proto__',
    'temporal create',
  );
  t.equal((await get('/temporal/entities/urn:ngsi-ld:P:6')).status, 404, 'no history');
});

t.test('an attribute named __proto__ is an IRI like any other: kept, and a value member named __proto_ round-trips', async (t) => {
  const r = await send(
    'POST',
    '/entities',
    '{"id":"urn:ngsi-ld:P:7","type":"P","__proto__":{"type":"Property","value":{"__proto_":1,"constructor":2}}}',
  );
  t.equal(r.status, 201, r.text);
  const back = await get('/entities/urn:ngsi-ld:P:7');
  t.equal(back.text, '{"id":"urn:ngsi-ld:P:7","type":"P","__proto__":{"type":"Property","value":{"__proto_":1,"constructor":2}}}');
});

t.test('an @context defining __proto__ is refused: inline, Hosted, nested in a scoped context', async (t) => {
  refused(
    t,
    await send(
      'POST',
      '/entities',
      `{"id":"urn:ngsi-ld:P:8","type":"P","@context":[{"__proto__":"https://example.org/p"},"${CORE}"]}`,
      LD_CT,
    ),
    '@context[0].__proto__',
    'inline (before: jsonld dropped the term, so __proto__ expanded to the default vocabulary)',
  );
  refused(
    t,
    await send(
      'POST',
      '/entities',
      `{"id":"urn:ngsi-ld:P:8","type":"P","@context":{"a":{"@id":"https://example.org/a","@context":{"__proto__":"https://example.org/"}}}}`,
      LD_CT,
    ),
    '@context.a.@context.__proto__',
    'scoped context',
  );
  t.equal((await get('/entities/urn:ngsi-ld:P:8')).status, 404);
  const before = (await get('/jsonldContexts?kind=Hosted')).json;
  refused(
    t,
    await send('POST', '/jsonldContexts', '{"@context":{"__proto__":"https://example.org/q","a":"https://example.org/a"}}'),
    '@context.__proto__',
    'Hosted',
  );
  t.same(
    (await get('/jsonldContexts?kind=Hosted')).json,
    before,
    'no Hosted context was added (before: kept with the term renamed __proto_)',
  );
});

t.test('registration properties and subscription members kept as given refuse it, at create and PATCH', async (t) => {
  const reg = (extra: string): string =>
    `{"id":"urn:ngsi-ld:R:1","type":"ContextSourceRegistration","information":[{"entities":[{"type":"P"}]}],"endpoint":"http://127.0.0.1:1/x"${extra}}`;
  refused(
    t,
    await send('POST', '/csourceRegistrations', reg(',"__proto__":{"a":1}')),
    '__proto__',
    'registration property named __proto__',
  );
  refused(
    t,
    await send('POST', '/csourceRegistrations', reg(',"extra":{"a":{"__proto__":2}}')),
    'extra.a.__proto__',
    'inside a registration property',
  );
  t.equal((await send('POST', '/csourceRegistrations', reg(''))).status, 201);
  refused(
    t,
    await send('PATCH', '/csourceRegistrations/urn:ngsi-ld:R:1', '{"extra":{"__proto__":1}}'),
    'extra.__proto__',
    'registration PATCH',
  );
  t.equal((await get('/csourceRegistrations/urn:ngsi-ld:R:1')).json.extra, undefined, 'the registration is unchanged');

  const sub = (geoQ: string): string =>
    `{"id":"urn:ngsi-ld:S:1","type":"Subscription","entities":[{"type":"P"}],"geoQ":${geoQ},"notification":{"endpoint":{"uri":"http://127.0.0.1:1/x"}}}`;
  refused(
    t,
    await send('POST', '/subscriptions', sub('{"geometry":"Point","coordinates":[1,2],"georel":"near;maxDistance==1","__proto__":1}')),
    'geoQ.__proto__',
    'subscription geoQ (before: kept, and shown back as __proto_)',
  );
  t.equal(
    (await send('POST', '/subscriptions', sub('{"geometry":"Point","coordinates":[1,2],"georel":"near;maxDistance==1"}'))).status,
    201,
  );
  refused(
    t,
    await send(
      'PATCH',
      '/subscriptions/urn:ngsi-ld:S:1',
      '{"geoQ":{"geometry":"Point","coordinates":[1,2],"georel":"near;maxDistance==1","__proto__":1}}',
    ),
    'geoQ.__proto__',
    'subscription PATCH',
  );
  t.same(Object.keys((await get('/subscriptions/urn:ngsi-ld:S:1')).json.geoQ).sort(), ['coordinates', 'geometry', 'georel']);
});
