// Entity content the operations refuse with 400 BadRequestData and write nothing of: an entity type that names no
// IRI (CIM 009 §5.2.4: the type is a Name the @context expands to an IRI), and a partial attribute update that would
// change what the attribute is (§5.6.4: it changes the attribute's members; replacing it is §5.6.2's or §5.6.19's).
import t from 'tap';
import { startBroker, call, NGSI, type Broker } from './helpers/broker.js';

let broker: Broker;
const ERR = 'https://uri.etsi.org/ngsi-ld/errors/';
const CORE16 = 'https://uri.etsi.org/ngsi-ld/v1/ngsi-ld-core-context-v1.6.jsonld';

t.before(async () => {
  broker = await startBroker();
});
t.teardown(async () => {
  await broker.stop();
});

let n = 0;
async function vehicle(): Promise<string> {
  const id = `urn:ngsi-ld:Vehicle:validation${++n}`;
  const r = await call(broker, 'POST', `${NGSI}/entities`, {
    body: {
      id,
      type: 'Vehicle',
      speed: { type: 'Property', value: 55 },
      owner: { type: 'Relationship', object: 'urn:ngsi-ld:Person:Bob' },
      location: { type: 'GeoProperty', value: { type: 'Point', coordinates: [2, 48] } },
    },
  });
  if (r.status !== 201) throw new Error(r.text);
  return id;
}

t.test('an entity type the @context maps to a keyword is 400 BadRequestData and creates nothing', async (t) => {
  const cases: Array<[string, Record<string, unknown>, Record<string, string>]> = [
    [
      '`type` with the core v1.6 in the body',
      { id: 'urn:ngsi-ld:Building:t1', type: 'type', '@context': [CORE16] },
      { 'content-type': 'application/ld+json' },
    ],
    ['`type` under the implicit core', { id: 'urn:ngsi-ld:Building:t2', type: 'type' }, {}],
    ['`id` among other types', { id: 'urn:ngsi-ld:Building:t3', type: ['Building', 'id'] }, {}],
  ];
  for (const [what, body, headers] of cases) {
    const r = await call(broker, 'POST', `${NGSI}/entities`, { body, headers });
    t.equal(r.status, 400, `${what}: ${r.text}`);
    t.equal(r.json?.type, `${ERR}BadRequestData`, what);
    t.match(r.json?.detail, 'does not expand to an IRI', what);
    t.equal((await call(broker, 'GET', `${NGSI}/entities/${body.id as string}`)).status, 404, `${what}: nothing created`);
  }
  const id = await vehicle();
  const append = await call(broker, 'POST', `${NGSI}/entities/${id}/attrs`, { body: { type: 'type' } });
  t.equal(append.status, 400, `an appended type too: ${append.text}`);
  t.same((await call(broker, 'GET', `${NGSI}/entities/${id}`)).json?.type, 'Vehicle');
  const fine = await call(broker, 'POST', `${NGSI}/entities`, {
    body: { id: 'urn:ngsi-ld:Building:t4', type: 'https://example.org/Building' },
  });
  t.equal(fine.status, 201, `an IRI is a type: ${fine.text}`);
});

t.test('a partial attribute update cannot change the kind of the attribute (400, nothing written)', async (t) => {
  const id = await vehicle();
  const cases: Array<[string, unknown]> = [
    ['speed', { type: 'Relationship', object: 'urn:ngsi-ld:Entity:01' }],
    ['owner', { type: 'Property', value: 'Bob' }],
    ['speed', { type: 'LanguageProperty', languageMap: { en: 'fast' } }],
    ['location', { type: 'Property', value: 'Paris' }],
  ];
  for (const [attr, body] of cases) {
    const r = await call(broker, 'PATCH', `${NGSI}/entities/${id}/attrs/${attr}`, { body });
    t.equal(r.status, 400, `${attr} ${JSON.stringify(body)}: ${r.text}`);
    t.equal(r.json?.type, `${ERR}BadRequestData`, attr);
  }
  const e = (await call(broker, 'GET', `${NGSI}/entities/${id}`)).json;
  t.same(
    [e.speed, e.owner, e.location.type],
    [{ type: 'Property', value: 55 }, { type: 'Relationship', object: 'urn:ngsi-ld:Person:Bob' }, 'GeoProperty'],
    'nothing changed',
  );
  const same = await call(broker, 'PATCH', `${NGSI}/entities/${id}/attrs/speed`, { body: { type: 'Property', value: 60 } });
  t.equal(same.status, 204, `the same kind: ${same.text}`);
  const untyped = await call(broker, 'PATCH', `${NGSI}/entities/${id}/attrs/owner`, { body: { object: 'urn:ngsi-ld:Person:Alice' } });
  t.equal(untyped.status, 204, `the kind its value member implies: ${untyped.text}`);
  const e2 = (await call(broker, 'GET', `${NGSI}/entities/${id}`)).json;
  t.same([e2.speed.value, e2.owner.object], [60, 'urn:ngsi-ld:Person:Alice']);
  // Update Entity Attributes replaces the attribute whole, so there the kind may change (§5.6.2).
  const replace = await call(broker, 'PATCH', `${NGSI}/entities/${id}/attrs`, {
    body: { speed: { type: 'Relationship', object: 'urn:ngsi-ld:Entity:01' } },
  });
  t.equal(replace.status, 204, replace.text);
  t.equal((await call(broker, 'GET', `${NGSI}/entities/${id}`)).json?.speed?.type, 'Relationship');
});
