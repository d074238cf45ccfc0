// timeproperty=deletedAt (CIM 009 v1.8 §6.3.x, §4.5.7): the temporal evolution on the deletedAt time property holds
// the deletions only (the tombstones a delete records), with or without timerel, never the instances written.
import t from 'tap';
import { startBroker, call, NGSI, type Broker } from './helpers/broker.js';
import { troeArgs } from './helpers/troe.js';

let broker: Broker;
const id = 'urn:ngsi-ld:Vehicle:deleted-at';
const other = 'urn:ngsi-ld:Vehicle:never-deleted';

t.before(async () => {
  broker = await startBroker(troeArgs());
  for (const eid of [id, other]) {
    const r = await call(broker, 'POST', `${NGSI}/entities`, {
      body: {
        id: eid,
        type: 'Vehicle',
        fuel: { type: 'Property', value: 60, observedAt: '2020-08-01T12:03:00Z' },
        name: { type: 'LanguageProperty', languageMap: { en: 'car' } },
      },
    });
    if (r.status !== 201) throw new Error(`seed: ${r.status} ${r.text}`);
  }
  const u = await call(broker, 'PATCH', `${NGSI}/entities/${id}/attrs`, {
    body: { fuel: { type: 'Property', value: 50, observedAt: '2020-08-01T13:03:00Z' } },
  });
  if (u.status !== 204) throw new Error(`update: ${u.status} ${u.text}`);
  const d = await call(broker, 'DELETE', `${NGSI}/entities/${id}/attrs/fuel`);
  if (d.status !== 204) throw new Error(`delete: ${d.status} ${d.text}`);
});
t.teardown(async () => {
  await broker.stop();
});

t.test('without timerel, only the deleted attribute and its tombstone', async (t) => {
  const r = await call(broker, 'GET', `${NGSI}/temporal/entities/${id}?timeproperty=deletedAt`);
  t.equal(r.status, 200, r.text);
  t.equal(r.json.name, undefined, 'an attribute never deleted has no instance on deletedAt');
  t.equal(r.json.fuel.length, 1);
  t.ok(r.json.fuel[0].deletedAt, 'the tombstone has its deletedAt');
  t.equal(r.json.fuel[0].value, 'urn:ngsi-ld:null');
});

t.test('the simplified representation on deletedAt holds the tombstone only', async (t) => {
  const r = await call(broker, 'GET', `${NGSI}/temporal/entities/${id}?timeproperty=deletedAt&options=temporalValues`);
  t.equal(r.json.fuel.values.length, 1);
  t.equal(r.json.fuel.values[0][0], 'urn:ngsi-ld:null');
});

t.test('a query on deletedAt answers the entities with a deletion', async (t) => {
  const r = await call(broker, 'GET', `${NGSI}/temporal/entities?type=Vehicle&timeproperty=deletedAt`);
  t.equal(r.status, 200, r.text);
  t.same(
    r.json.map((e: any) => e.id),
    [id],
  );
  const all = await call(broker, 'GET', `${NGSI}/temporal/entities?type=Vehicle`);
  t.same(all.json.map((e: any) => e.id).sort(), [id, other].sort(), 'on observedAt both have instances');
});
