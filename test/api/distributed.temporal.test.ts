// Temporal retrieve and query through inclusive registrations (CIM 009 v1.8.1 §5.7.3.4, §5.7.4.4): a temporal entity
// whose history is split between the broker and a source is one, its instances together; exclusive registrations
// are not asked about history; a source without an answer is left out with a warning.
import t from 'tap';
import { startBroker, call, NGSI, type Broker } from './helpers/broker.js';

let a: Broker;
let b: Broker;
t.before(async () => {
  [a, b] = await Promise.all([
    startBroker(['--troe', 'embdb', '--contextSourceAlias', 'ta']),
    startBroker(['--troe', 'embdb', '--contextSourceAlias', 'tb']),
  ]);
});
t.teardown(async () => {
  await Promise.all([a.stop(), b.stop()]);
});

const T = `${NGSI}/temporal/entities`;
const R = `${NGSI}/csourceRegistrations`;
const inst = (value: number, observedAt: string): Record<string, unknown> => ({ type: 'Property', value, observedAt });

t.test('a history split between the broker and an inclusive source is merged', async (t) => {
  const id = 'urn:ngsi-ld:Sensor:t1';
  t.equal((await call(a, 'POST', T, { body: { id, type: 'Sensor', temp: [inst(1, '2024-01-01T00:00:00Z')] } })).status, 201);
  t.equal(
    (
      await call(b, 'POST', T, {
        body: { id, type: 'Sensor', temp: [inst(2, '2024-01-02T00:00:00Z')], hum: [inst(50, '2024-01-02T00:00:00Z')] },
      })
    ).status,
    201,
  );
  const regId = 'urn:ngsi-ld:ContextSourceRegistration:t1';
  t.equal(
    (
      await call(a, 'POST', R, {
        body: { id: regId, type: 'ContextSourceRegistration', endpoint: b.url, information: [{ entities: [{ type: 'Sensor' }] }] },
      })
    ).status,
    201,
  );
  const r = await call(a, 'GET', `${T}/${id}`);
  t.equal(r.status, 200, r.text);
  t.same(r.json.temp.map((i: { value: number }) => i.value).sort(), [1, 2]);
  t.equal(r.json.hum.length, 1);
  const q = await call(a, 'GET', `${T}?type=Sensor`);
  t.equal(q.json.length, 1);
  t.equal(q.json[0].temp.length, 2);
  const onlyThere = 'urn:ngsi-ld:Sensor:t2';
  t.equal((await call(b, 'POST', T, { body: { id: onlyThere, type: 'Sensor', temp: [inst(3, '2024-01-03T00:00:00Z')] } })).status, 201);
  t.equal((await call(a, 'GET', `${T}/${onlyThere}`)).status, 200, 'a history only the source holds');
  t.equal((await call(a, 'GET', `${T}/${onlyThere}?local=true`)).status, 404);
  t.equal((await call(a, 'GET', `${T}?type=Sensor`)).json.length, 2);
  await call(a, 'DELETE', `${R}/${regId}`);
  const dead = 'urn:ngsi-ld:ContextSourceRegistration:t-dead';
  await call(a, 'POST', R, {
    body: {
      id: dead,
      type: 'ContextSourceRegistration',
      endpoint: 'http://127.0.0.1:9',
      information: [{ entities: [{ type: 'Sensor' }] }],
    },
  });
  const w = await call(a, 'GET', `${T}/${id}`);
  t.equal(w.status, 200);
  t.equal(w.json.temp.length, 1);
  t.match(w.headers.get('ngsild-warning') ?? '', /unreachable/);
  await call(a, 'DELETE', `${R}/${dead}`);
});
