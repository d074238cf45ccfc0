// The error type of a body that is not what an operation takes (CIM 009 v1.8 table 5.5.2-1): no JSON, or JSON of
// another structure (an array for an object, an object for an array, no @context member where one is the point) is
// 400 InvalidRequest; a body of the right structure with content the operation refuses is 400 BadRequestData.
import t from 'tap';
import { startBroker, call, NGSI, type Broker } from './helpers/broker.js';

let broker: Broker;
const ERR = 'https://uri.etsi.org/ngsi-ld/errors/';
const ID = 'urn:ngsi-ld:Building:body-shape';

t.before(async () => {
  broker = await startBroker();
  const r = await call(broker, 'POST', `${NGSI}/entities`, { body: { id: ID, type: 'Building', name: { type: 'Property', value: 'b' } } });
  if (r.status !== 201) throw new Error(r.text);
});
t.teardown(async () => {
  await broker.stop();
});

const LD = { 'content-type': 'application/ld+json' };
const JSON_CT = { 'content-type': 'application/json' };

t.test('a JSON body of another structure than the operation takes is 400 InvalidRequest', async (t) => {
  const cases: Array<[string, string, string, Record<string, string>]> = [
    ['POST', `${NGSI}/entities`, '[]', LD],
    ['POST', `${NGSI}/entities`, '"urn:ngsi-ld:Building:x"', JSON_CT],
    ['POST', `${NGSI}/entities`, 'null', JSON_CT],
    ['PATCH', `${NGSI}/entities/${ID}/attrs`, '[{"name":{"type":"Property","value":"c"}}]', JSON_CT],
    ['PATCH', `${NGSI}/entities/${ID}`, '5', JSON_CT],
    ['POST', `${NGSI}/entityOperations/create`, JSON.stringify({ id: 'urn:ngsi-ld:Building:y', type: 'Building' }), JSON_CT],
    ['POST', `${NGSI}/entityOperations/query`, '[]', JSON_CT],
    ['POST', `${NGSI}/jsonldContexts`, JSON.stringify({ A1: 'urn:ngsi-ld:attr:A1', A2: 'urn:ngsi-ld:attr:A2' }), JSON_CT],
    ['POST', `${NGSI}/jsonldContexts`, '[{"@context":{}}]', JSON_CT],
  ];
  for (const [method, path, raw, headers] of cases) {
    const r = await call(broker, method, path, { raw, headers });
    t.equal(r.status, 400, `${method} ${path} ${raw}: ${r.text}`);
    t.equal(r.json?.type, `${ERR}InvalidRequest`, `${method} ${path} ${raw}`);
  }
  t.equal((await call(broker, 'GET', `${NGSI}/entities/${ID}`)).json?.name?.value, 'b', 'nothing was written');
});

t.test('a body of the right structure with content the operation refuses stays 400 BadRequestData', async (t) => {
  const cases: Array<[string, string, unknown]> = [
    ['POST', `${NGSI}/entities`, { id: 'not a uri', type: 'Building' }],
    ['POST', `${NGSI}/entities`, { type: 'Building' }],
    ['POST', `${NGSI}/jsonldContexts`, { '@context': 42 }],
    ['POST', `${NGSI}/jsonldContexts`, { '@context': 'not a url' }],
  ];
  for (const [method, path, body] of cases) {
    const r = await call(broker, method, path, { body });
    t.equal(r.status, 400, `${method} ${path} ${JSON.stringify(body)}: ${r.text}`);
    t.equal(r.json?.type, `${ERR}BadRequestData`, `${method} ${path} ${JSON.stringify(body)}`);
  }
});
