// Which entities a temporal query answers (CIM 009 v1.8 §5.7.4, §6.18.3.2, §6.24.3.1): with a time window or
// datasetId, only those with an instance there, before paging and counting; with local=true and no other filter,
// every local temporal entity; ids or idPattern alone are a query too, as on the current state.
import t from 'tap';
import { startBroker, call, NGSI, type Broker } from './helpers/broker.js';
import { troeArgs } from './helpers/troe.js';

let broker: Broker;
const early = 'urn:ngsi-ld:Bike:early';
const late = 'urn:ngsi-ld:Bike:late';
const obs = (value: number, at: string, extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  type: 'Property',
  value,
  observedAt: at,
  ...extra,
});

t.before(async () => {
  broker = await startBroker(troeArgs());
  for (const body of [
    { id: early, type: 'Bike', speed: [obs(1, '2020-08-01T12:00:00Z'), obs(2, '2020-08-01T12:10:00Z')] },
    {
      id: late,
      type: 'Bike',
      speed: [obs(3, '2020-09-01T12:00:00Z')],
      fuel: [obs(9, '2020-09-01T12:00:00Z', { datasetId: 'urn:ngsi-ld:Dataset:fuel' })],
    },
  ]) {
    const r = await call(broker, 'POST', `${NGSI}/temporal/entities`, { body });
    if (r.status !== 201) throw new Error(`seed: ${r.status} ${r.text}`);
  }
});
t.teardown(async () => {
  await broker.stop();
});
const get = (q: string) => call(broker, 'GET', `${NGSI}/temporal/entities?${q}`);
const ids = (body: Array<{ id: string }>): string[] => body.map((e) => e.id).sort();

t.test('timerel leaves out the entities with no instance inside the window', async (t) => {
  const after = await get('type=Bike&timerel=after&timeAt=2020-08-15T00:00:00Z');
  t.equal(after.status, 200, after.text);
  t.same(ids(after.json), [late]);
  const before = await get('type=Bike&timerel=before&timeAt=2020-08-15T00:00:00Z');
  t.same(ids(before.json), [early]);
  const between = await get('type=Bike&timerel=between&timeAt=2020-08-01T12:05:00Z&endTimeAt=2020-08-02T00:00:00Z');
  t.same(ids(between.json), [early]);
  t.same(
    between.json[0].speed.map((i: any) => i.value),
    [2],
  );
  const none = await get('type=Bike&timerel=after&timeAt=2021-01-01T00:00:00Z');
  t.same(none.json, []);
});

t.test('the same through POST /temporal/entityOperations/query', async (t) => {
  const r = await call(broker, 'POST', `${NGSI}/temporal/entityOperations/query`, {
    body: {
      type: 'Query',
      entities: [{ type: 'Bike' }],
      temporalQ: { timerel: 'before', timeAt: '2020-08-02T12:05:00Z' },
    },
  });
  t.equal(r.status, 200, r.text);
  t.same(ids(r.json), [early]);
});

t.test('counts and pages hold only the entities answered', async (t) => {
  const r = await get('type=Bike&timerel=after&timeAt=2020-08-15T00:00:00Z&count=true&limit=1');
  t.equal(r.headers.get('ngsild-results-count'), '1');
  t.same(ids(r.json), [late]);
  t.notMatch(r.headers.get('link') ?? '', /rel="next"/, 'no next page: the early entity is not a match');
});

t.test('attrs with a datasetId none of their instances has answers no entity', async (t) => {
  const none = await get('type=Bike&attrs=speed&datasetId=urn:ngsi-ld:Dataset:fuel&timerel=after&timeAt=2020-01-01T00:00:00Z');
  t.equal(none.status, 200, none.text);
  t.same(none.json, []);
  const some = await get('type=Bike&attrs=fuel&datasetId=urn:ngsi-ld:Dataset:fuel');
  t.same(ids(some.json), [late]);
});

t.test('without a window or datasetId, every selected entity is answered as before', async (t) => {
  t.same(ids((await get('type=Bike')).json), [early, late]);
  t.same(ids((await get('type=Bike&lastN=1')).json), [early, late]);
});

t.test('ids and idPattern alone are a query, as on the current state (a tolerance); with a type or attrs they narrow it', async (t) => {
  t.same(ids((await get(`id=${early},${late}`)).json), [early, late]);
  t.same(ids((await get('idPattern=early$')).json), [early]);
  t.same(ids((await get(`id=${early},${late}&timerel=after&timeAt=2020-08-15T00:00:00Z`)).json), [late], 'the window still applies');
  const post = await call(broker, 'POST', `${NGSI}/temporal/entityOperations/query`, {
    body: { type: 'Query', entities: [{ id: early }] },
  });
  t.equal(post.status, 200, post.text);
  t.same(ids(post.json), [early], 'a POST query whose selectors name ids only');
  t.same(ids((await get(`id=${early}&type=Bike`)).json), [early], 'with a type, ids narrow it');
  t.same(ids((await get(`idPattern=early$&attrs=speed`)).json), [early], 'with attrs, idPattern narrows it');
  t.same(ids((await get(`id=${late}&local=true`)).json), [late], 'with local=true, ids narrow every local entity');
});

t.test('local=true alone asks for every local temporal entity; without it, a query still needs a filter', async (t) => {
  const local = await get('timerel=after&timeAt=2020-08-15T00:00:00Z&local=true');
  t.equal(local.status, 200, local.text);
  t.same(ids(local.json), [late]);
  const bare = await get('timerel=after&timeAt=2020-08-15T00:00:00Z');
  t.equal(bare.status, 400);
  t.match(bare.json?.detail, /local=true/);
  const notLocal = await get('timerel=after&timeAt=2020-08-15T00:00:00Z&local=false');
  t.equal(notLocal.status, 400);
  const bad = await get('timerel=after&timeAt=2020-08-15T00:00:00Z&local=yes');
  t.equal(bad.status, 400, 'local is true or false');
});
