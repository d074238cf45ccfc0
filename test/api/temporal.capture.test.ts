// History capture with --troe embdb (issue 5): every entity write records instances and tombstones that the
// temporal API (CIM 009 v1.8 §6.18, §6.19) serves; --troe none keeps no history and the temporal API is 501.
import t from 'tap';
import { startBroker, runBroker, runBrokerHere, call, NGSI, type Broker } from './helpers/broker.js';

let broker: Broker;
t.before(async () => {
  broker = await startBroker(['--troe', 'embdb']);
});
t.teardown(async () => {
  await broker.stop();
});

let n = 0;
const newId = (): string => `urn:ngsi-ld:Sensor:cap${++n}`;
async function ok(method: string, path: string, body?: unknown): Promise<void> {
  const r = await call(broker, method, `${NGSI}${path}`, body === undefined ? {} : { body });
  if (r.status >= 300) throw new Error(`${method} ${path}: ${r.status} ${r.text}`);
}
const temporal = async (id: string, q = ''): Promise<any> => {
  const r = await call(broker, 'GET', `${NGSI}/temporal/entities/${id}${q}`);
  if (r.status !== 200) throw new Error(`temporal retrieve: ${r.status} ${r.text}`);
  return r.json;
};

t.test('create and three updates give four instances in time order, each with a URN instanceId', async (t) => {
  const id = newId();
  await ok('POST', '/entities', { id, type: 'Sensor', temperature: { type: 'Property', value: 20, unitCode: 'CEL' } });
  for (const v of [21, 22, 23]) await ok('PATCH', `/entities/${id}/attrs/temperature`, { value: v });
  const e = await temporal(id);
  t.equal(e.id, id);
  t.equal(e.type, 'Sensor');
  t.same(
    e.temperature.map((i: any) => i.value),
    [20, 21, 22, 23],
  );
  for (const i of e.temperature) t.match(i.instanceId, /^urn:ngsi-ld:attribute:instance:/);
  t.equal(new Set(e.temperature.map((i: any) => i.instanceId)).size, 4, 'instanceIds are distinct');
  t.equal(e.temperature[0].unitCode, 'CEL', 'value members other than value are kept');
});

t.test('an update leaves untouched attributes out of the history; sysAttrs shows createdAt and modifiedAt', async (t) => {
  const id = newId();
  await ok('POST', '/entities', {
    id,
    type: 'Sensor',
    temperature: { type: 'Property', value: 1 },
    name: { type: 'Property', value: 'a' },
  });
  await ok('PATCH', `/entities/${id}/attrs/temperature`, { value: 2 });
  const e = await temporal(id, '?options=sysAttrs');
  t.equal(e.temperature.length, 2);
  t.equal(e.name.length, 1);
  t.ok(e.temperature[1].createdAt >= e.temperature[0].createdAt);
  t.equal(e.temperature[1].modifiedAt, e.temperature[1].createdAt);
  t.ok(e.createdAt, 'the entity carries createdAt with sysAttrs');
});

t.test('observedAt, datasetId and sub-attributes are kept in every instance', async (t) => {
  const id = newId();
  await ok('POST', '/entities', {
    id,
    type: 'Sensor',
    speed: [
      { type: 'Property', value: 5, observedAt: '2024-01-01T00:00:00Z', accuracy: { type: 'Property', value: 0.5 } },
      { type: 'Property', value: 7, datasetId: 'urn:ngsi-ld:Dataset:gps', observedAt: '2024-01-01T00:00:01Z' },
    ],
  });
  const e = await temporal(id);
  t.equal(e.speed.length, 2);
  const def = e.speed.find((i: any) => i.datasetId === undefined);
  const gps = e.speed.find((i: any) => i.datasetId === 'urn:ngsi-ld:Dataset:gps');
  t.equal(def.observedAt, '2024-01-01T00:00:00Z');
  t.equal(def.accuracy.value, 0.5);
  t.equal(gps.value, 7);
});

t.test('deleting an attribute records a tombstone with its type, urn:ngsi-ld:null and deletedAt', async (t) => {
  const id = newId();
  await ok('POST', '/entities', {
    id,
    type: 'Sensor',
    temperature: { type: 'Property', value: 3 },
    owner: { type: 'Relationship', object: 'urn:ngsi-ld:Person:1' },
  });
  await ok('DELETE', `/entities/${id}/attrs/owner`);
  const e = await temporal(id);
  t.equal(e.owner.length, 2);
  t.same({ type: e.owner[1].type, object: e.owner[1].object }, { type: 'Relationship', object: 'urn:ngsi-ld:null' });
  t.ok(e.owner[1].deletedAt, 'the tombstone carries deletedAt');
  t.equal(e.temperature.length, 1);
});

t.test('a deleted entity keeps its history: deletedAt on the entity and a tombstone per attribute', async (t) => {
  const id = newId();
  await ok('POST', '/entities', { id, type: 'Sensor', temperature: { type: 'Property', value: 3 } });
  await ok('DELETE', `/entities/${id}`);
  const e = await temporal(id);
  t.ok(e.deletedAt);
  t.equal(e.temperature.length, 2);
  t.equal(e.temperature[1].value, 'urn:ngsi-ld:null');
});

t.test('replace (PUT), merge, append and batch writes are all recorded', async (t) => {
  const id = newId();
  await ok('POST', '/entities', { id, type: 'Sensor', a: { type: 'Property', value: 1 } });
  await ok('POST', `/entities/${id}/attrs`, { b: { type: 'Property', value: 'x' } });
  await ok('PATCH', `/entities/${id}`, { a: { type: 'Property', value: 2 } });
  await ok('PUT', `/entities/${id}`, { type: 'Sensor', c: { type: 'Property', value: true } });
  await ok('POST', '/entityOperations/upsert', [{ id, type: 'Sensor', c: { type: 'Property', value: false } }]);
  const e = await temporal(id);
  t.same(
    e.a.map((i: any) => i.value),
    [1, 2, 'urn:ngsi-ld:null'],
  );
  t.same(
    e.b.map((i: any) => i.value),
    ['x', 'urn:ngsi-ld:null'],
  );
  t.same(
    e.c.map((i: any) => i.value),
    [true, false],
  );
});

t.test('a refused write records nothing', async (t) => {
  const id = newId();
  await ok('POST', '/entities', { id, type: 'Sensor', a: { type: 'Property', value: 1 } });
  const r = await call(broker, 'POST', `${NGSI}/entities`, { body: { id, type: 'Sensor', a: { type: 'Property', value: 99 } } });
  t.equal(r.status, 409);
  t.same(
    (await temporal(id)).a.map((i: any) => i.value),
    [1],
  );
});

t.test('an entity with no history answers 404 ResourceNotFound', async (t) => {
  const r = await call(broker, 'GET', `${NGSI}/temporal/entities/urn:ngsi-ld:Sensor:never`);
  t.equal(r.status, 404);
  t.equal(r.json.type, 'https://uri.etsi.org/ngsi-ld/errors/ResourceNotFound');
});

t.test('with --troe none the temporal API answers 501 OperationNotSupported and writes still work', async (t) => {
  const plain = await startBroker();
  t.teardown(async () => {
    await plain.stop();
  });
  const c = await call(plain, 'POST', `${NGSI}/entities`, {
    body: { id: 'urn:ngsi-ld:Sensor:plain', type: 'Sensor', a: { type: 'Property', value: 1 } },
  });
  t.equal(c.status, 201);
  const r = await call(plain, 'GET', `${NGSI}/temporal/entities/urn:ngsi-ld:Sensor:plain`);
  t.equal(r.status, 501);
  t.equal(r.json.type, 'https://uri.etsi.org/ngsi-ld/errors/OperationNotSupported');
});

t.test('--troe takes none, embdb or tsdb: -u lists it, another value is one line and exit 1, BROKER_TROE sets it', async (t) => {
  const u = await runBrokerHere(['-u']); // as main.ts prints it; the refusal below is the spawned command
  t.match(u.stdout, /--troe\s+none\|embdb\|tsdb.*\(default: none\)/);
  const bad = await runBroker(['--troe', 'nosuch']);
  t.equal(bad.code, 1);
  t.equal(bad.stderr.trim().split('\n').length, 1);
  t.match(bad.stderr, /history plugin 'nosuch' cannot be loaded/);
  const fromEnv = await startBroker([], { BROKER_TROE: 'embdb' });
  t.teardown(async () => {
    await fromEnv.stop();
  });
  const id = 'urn:ngsi-ld:Sensor:env';
  await call(fromEnv, 'POST', `${NGSI}/entities`, { body: { id, type: 'Sensor', a: { type: 'Property', value: 1 } } });
  const r = await call(fromEnv, 'GET', `${NGSI}/temporal/entities/${id}`);
  t.equal(r.status, 200, r.text);
  t.equal(r.json.a.length, 1);
});
