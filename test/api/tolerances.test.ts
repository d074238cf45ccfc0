// What real clients send (issue 15 item 2, README "Tolerances for real clients"): form-encoded URLs (`+` a space),
// Orion-LD's `options=count`, `type` on the single-entity routes, blanks in q, `simplified` for keyValues; and what
// stays refused: unknown parameters and options words are 400 InvalidRequest (CIM 009 v1.8.1 §6.3.20).
import t from 'tap';
import { startBroker, call, NGSI, type Broker } from './helpers/broker.js';

const ERR = 'https://uri.etsi.org/ngsi-ld/errors/';
let broker: Broker;

const TOWER = 'urn:ngsi-ld:Building:tower';
const ANNEX = 'urn:ngsi-ld:Building:annex';
const ROOM = 'urn:ngsi-ld:Room:r1';

t.before(async () => {
  broker = await startBroker(['--troe', 'embdb']);
  const prop = (value: unknown): Record<string, unknown> => ({ type: 'Property', value });
  const r = await call(broker, 'POST', `${NGSI}/entityOperations/create`, {
    body: [
      {
        id: TOWER,
        type: 'Building',
        name: prop('Eiffel Tower'),
        scope: '/Paris/Champ',
        location: { type: 'GeoProperty', value: { type: 'Point', coordinates: [2.2945, 48.8584] } },
      },
      {
        id: ANNEX,
        type: 'Building',
        name: prop('Annex'),
        scope: '/Paris/Louvre/Wing',
        location: { type: 'GeoProperty', value: { type: 'Point', coordinates: [2.3376, 48.8606] } },
      },
      { id: ROOM, type: 'Room', temperature: prop(25) },
    ],
  });
  if (r.status !== 201) throw new Error(r.text);
});
t.teardown(async () => {
  await broker.stop();
});

const get = (path: string) => call(broker, 'GET', `${NGSI}${path}`);
const ids = (r: { json: any }): string[] => (r.json as Array<{ id: string }>).map((e) => e.id).sort();

t.test("a '+' in the query string is a space (form encoding), except in scopeQ where it is the wildcard", async (t) => {
  const q = await get('/entities?type=Building&q=name%3D%3D%22Eiffel+Tower%22');
  t.equal(q.status, 200, q.text);
  t.same(ids(q), [TOWER], "q's string compared with a blank");
  const geo = await get('/entities?type=Building&georel=near%3BmaxDistance%3D%3D1000&geometry=Point&coordinates=%5B2.2945%2C+48.8584%5D');
  t.equal(geo.status, 200, geo.text);
  t.same(ids(geo), [TOWER], 'coordinates with a blank after the comma');
  const scope = await get('/entities?type=Building&scopeQ=/Paris/+');
  t.same(ids(scope), [TOWER], 'scopeQ /Paris/+ is one level below /Paris');
  const encoded = await get('/entities?type=Building&scopeQ=/Paris/%2B/Wing');
  t.same(ids(encoded), [ANNEX], 'an encoded + in scopeQ is the wildcard too');
  const plus = await get(`/entities?type=Room&q=${encodeURIComponent('temperature==25')}%2B0`);
  t.equal(plus.status, 400, 'a literal + (%2B) is not a blank: 25+0 is no number');
});

t.test('blanks around q operators are skipped, as Orion-LD does', async (t) => {
  for (const q of ['temperature+>+20', 'temperature%20%3E%2020', 'temperature+>=+25+;+temperature+<+30', '(+temperature==25+)']) {
    const r = await get(`/entities?type=Room&q=${q}`);
    t.equal(r.status, 200, `${q}: ${r.text}`);
    t.same(ids(r), [ROOM], q);
  }
  t.same((await get('/entities?type=Room&q=temperature+>+30')).json, [], 'still a filter');
  const bad = await get('/entities?type=Room&q=temperature+>+20+30');
  t.equal(bad.status, 400, 'a blank between two values is no operator');
  t.equal(bad.json?.type, `${ERR}InvalidRequest`);
});

t.test('options=count (Orion-LD, from NGSIv2) asks list operations for NGSILD-Results-Count and is a no-op elsewhere', async (t) => {
  const sub = await call(broker, 'POST', `${NGSI}/subscriptions`, {
    body: {
      id: 'urn:ngsi-ld:Subscription:count',
      type: 'Subscription',
      entities: [{ type: 'Room' }],
      notification: { endpoint: { uri: 'http://127.0.0.1:9/n' } },
    },
  });
  t.equal(sub.status, 201, sub.text);
  const subs = await get('/subscriptions?options=count');
  t.equal(subs.status, 200, subs.text);
  t.equal(subs.headers.get('ngsild-results-count'), '1', 'GET /subscriptions (what FiLiP sends to list subscriptions)');
  const regs = await get('/csourceRegistrations?type=Room&options=count');
  t.equal(regs.status, 200, regs.text);
  t.equal(regs.headers.get('ngsild-results-count'), '0');
  const ents = await get('/entities?type=Building&options=count,keyValues');
  t.equal(ents.status, 200, ents.text);
  t.equal(ents.headers.get('ngsild-results-count'), '2');
  t.equal(ents.json[0].name, 'Annex', 'the other words still apply');
  const temporal = await get('/temporal/entities?type=Building&options=count');
  t.equal(temporal.headers.get('ngsild-results-count'), '2');
  const one = await get(`/entities/${TOWER}?options=count`);
  t.equal(one.status, 200, one.text);
  t.notOk(one.headers.get('ngsild-results-count'), 'nothing to count on a retrieve');
  t.equal((await get('/subscriptions/urn:ngsi-ld:Subscription:count?options=count')).status, 200);
  t.notOk((await get('/subscriptions')).headers.get('ngsild-results-count'), 'no count unless asked');
});

t.test('type on GET and DELETE /entities/{id} checks the entity type: another type is 404, the entity stays', async (t) => {
  const ok = await get(`/entities/${TOWER}?type=Building`);
  t.equal(ok.status, 200, ok.text);
  t.equal(ok.json.id, TOWER);
  t.equal((await get(`/entities/${TOWER}?type=Room,Building`)).status, 200, 'one of a list');
  const other = await get(`/entities/${TOWER}?type=Room`);
  t.equal(other.status, 404);
  t.equal(other.json?.type, `${ERR}ResourceNotFound`);
  const del = await call(broker, 'DELETE', `${NGSI}/entities/${ROOM}?type=Building`);
  t.equal(del.status, 404, 'DELETE of another type');
  t.equal(del.json?.type, `${ERR}ResourceNotFound`);
  t.equal((await get(`/entities/${ROOM}`)).status, 200, 'and nothing was deleted');
  t.equal((await get(`/entities/${TOWER}?type=(Building`)).status, 400, 'a type that does not parse');
  const temp = await call(broker, 'POST', `${NGSI}/entities`, { body: { id: 'urn:ngsi-ld:Room:gone', type: 'Room' } });
  t.equal(temp.status, 201);
  t.equal((await call(broker, 'DELETE', `${NGSI}/entities/urn:ngsi-ld:Room:gone?type=Room`)).status, 204);
  t.equal((await get('/entities/urn:ngsi-ld:Room:gone')).status, 404);
});

t.test('simplified is keyValues: in options and format of entities and history, and in a subscription', async (t) => {
  t.same((await get(`/entities/${ROOM}?options=simplified`)).json, { id: ROOM, type: 'Room', temperature: 25 });
  t.same((await get('/entities?type=Room&options=simplified')).json, [{ id: ROOM, type: 'Room', temperature: 25 }]);
  t.same((await get(`/entities/${ROOM}?format=simplified`)).json, { id: ROOM, type: 'Room', temperature: 25 });
  const history = await get(`/temporal/entities/${ROOM}?options=simplified`);
  t.equal(history.status, 200, history.text);
  t.equal(history.json.temperature.values[0][0], 25, 'temporalValues pairs');
  const both = await get(`/entities/${ROOM}?options=simplified,concise`);
  t.equal(both.status, 400, 'still not together with concise');
  const sub = await call(broker, 'POST', `${NGSI}/subscriptions`, {
    body: {
      id: 'urn:ngsi-ld:Subscription:simplified',
      type: 'Subscription',
      entities: [{ type: 'Room' }],
      notification: { format: 'simplified', endpoint: { uri: 'http://127.0.0.1:9/n' } },
    },
  });
  t.equal(sub.status, 201, sub.text);
  t.equal((await get('/subscriptions/urn:ngsi-ld:Subscription:simplified')).json.notification.format, 'keyValues');
});

t.test('unknown parameters and unsupported options words are 400 InvalidRequest on every route', async (t) => {
  const cases: Array<[string, string]> = [
    ['POST', '/entities?invalidParams=invalidValue'],
    ['GET', `/entities/${TOWER}?options=invalidOptions`],
    ['GET', `/entities/${TOWER}?colour=red`],
    ['PATCH', `/entities/${TOWER}/attrs?type=Building`],
    ['GET', '/subscriptions?options=keyValues'],
    ['DELETE', `/entities/${TOWER}?options=keyValues`],
  ];
  for (const [method, path] of cases) {
    const r = await call(
      broker,
      method,
      `${NGSI}${path}`,
      method === 'GET' || method === 'DELETE' ? {} : { body: { name: { type: 'Property', value: 'x' } } },
    );
    t.equal(r.status, 400, `${method} ${path}: ${r.text}`);
    t.equal(r.json?.type, `${ERR}InvalidRequest`, `${method} ${path}`);
  }
  t.equal((await get(`/entities/${TOWER}`)).json.name.value, 'Eiffel Tower', 'nothing was written');
});
