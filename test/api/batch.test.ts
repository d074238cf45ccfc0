// Batch operations (CIM 009 v1.8 §5.6.7 to §5.6.11, §6.14 to §6.17, §6.29): 201/204 when all succeed, 207 otherwise,
// a failing entry never changes another's outcome.
import t from 'tap';
import { startBroker, call, NGSI, type Broker } from './helpers/broker.js';

let broker: Broker;
t.before(async () => {
  broker = await startBroker();
});
t.teardown(async () => {
  await broker.stop();
});

const car = (i: number | string, speed = 10): Record<string, unknown> => ({
  id: `urn:ngsi-ld:Car:${i}`,
  type: 'Car',
  speed: { type: 'Property', value: speed },
});
const get = async (id: string): Promise<{ status: number; json: any }> => call(broker, 'GET', `${NGSI}/entities/${id}`);

t.test('batch create of valid entities answers 201 with their ids', async (t) => {
  const r = await call(broker, 'POST', `${NGSI}/entityOperations/create`, { body: [car('a1'), car('a2')] });
  t.equal(r.status, 201, r.text);
  t.same(r.json, ['urn:ngsi-ld:Car:a1', 'urn:ngsi-ld:Car:a2']);
});

t.test('batch create with an existing id, a duplicate and a bad entry answers 207; the good ones are written', async (t) => {
  const r = await call(broker, 'POST', `${NGSI}/entityOperations/create`, {
    body: [car('b1'), car('a1'), { id: 'not a uri', type: 'Car' }, car('b2'), car('b2')],
  });
  t.equal(r.status, 207, r.text);
  t.same(r.json.success, ['urn:ngsi-ld:Car:b1', 'urn:ngsi-ld:Car:b2']);
  t.equal(r.json.errors.length, 3);
  const byId = new Map(r.json.errors.map((e: any) => [e.entityId, e.error]));
  t.equal((byId.get('urn:ngsi-ld:Car:a1') as any).status, 409);
  t.equal((byId.get('not a uri') as any).status, 400);
  t.equal((await get('urn:ngsi-ld:Car:b1')).status, 200);
  t.equal((await get('urn:ngsi-ld:Car:b2')).status, 200);
});

t.test(
  'an application/json batch entry carrying @context is its own 400; the entries around it, and a non-object one, answer as they would',
  async (t) => {
    const r = await call(broker, 'POST', `${NGSI}/entityOperations/upsert`, {
      body: [car('j1'), { ...car('j2'), '@context': 'https://uri.etsi.org/ngsi-ld/v1/ngsi-ld-core-context.jsonld' }, 42, car('j3')],
    });
    t.equal(r.status, 207, r.text);
    t.same(r.json.success, ['urn:ngsi-ld:Car:j1', 'urn:ngsi-ld:Car:j3']);
    const byId = new Map(r.json.errors.map((e: any) => [e.entityId, e.error]));
    t.equal((byId.get('urn:ngsi-ld:Car:j2') as any).status, 400);
    t.match((byId.get('urn:ngsi-ld:Car:j2') as any).detail, /@context is not allowed in an application\/json body/);
    t.equal((byId.get('') as any).status, 400, 'the number is not a JSON object');
    t.equal((await get('urn:ngsi-ld:Car:j2')).status, 404, 'the entry with @context is not written');
  },
);

t.test('batch upsert creates (201 with created ids) and replaces or updates (204)', async (t) => {
  const r = await call(broker, 'POST', `${NGSI}/entityOperations/upsert`, { body: [car('u1', 1), car('a2', 99)] });
  t.equal(r.status, 201, r.text);
  t.same(r.json, ['urn:ngsi-ld:Car:u1']);
  t.equal((await get('urn:ngsi-ld:Car:a2')).json.speed.value, 99);
  const again = await call(broker, 'POST', `${NGSI}/entityOperations/upsert`, { body: [car('u1', 2)] });
  t.equal(again.status, 204, again.text);
  const upd = await call(broker, 'POST', `${NGSI}/entityOperations/upsert?options=update`, {
    body: [{ id: 'urn:ngsi-ld:Car:u1', type: 'Car', colour: { type: 'Property', value: 'red' } }],
  });
  t.equal(upd.status, 204, upd.text);
  const e = (await get('urn:ngsi-ld:Car:u1')).json;
  t.equal(e.speed.value, 2, 'update keeps other attributes');
  t.equal(e.colour.value, 'red');
  const repl = await call(broker, 'POST', `${NGSI}/entityOperations/upsert?options=replace`, {
    body: [{ id: 'urn:ngsi-ld:Car:u1', type: 'Car', colour: { type: 'Property', value: 'blue' } }],
  });
  t.equal(repl.status, 204);
  t.notOk('speed' in (await get('urn:ngsi-ld:Car:u1')).json, 'replace drops other attributes');
});

t.test('batch update: 204, 207 for a missing entity, noOverwrite', async (t) => {
  const r = await call(broker, 'POST', `${NGSI}/entityOperations/update`, { body: [car('a1', 50), car('missing', 1)] });
  t.equal(r.status, 207, r.text);
  t.same(r.json.success, ['urn:ngsi-ld:Car:a1']);
  t.equal(r.json.errors[0].error.status, 404);
  t.equal((await get('urn:ngsi-ld:Car:a1')).json.speed.value, 50);
  const no = await call(broker, 'POST', `${NGSI}/entityOperations/update?options=noOverwrite`, { body: [car('a1', 60)] });
  t.ok(no.status === 204 || no.status === 207, `${no.status}`);
  t.equal((await get('urn:ngsi-ld:Car:a1')).json.speed.value, 50, 'noOverwrite kept the value');
});

t.test('batch merge merges each entity', async (t) => {
  const r = await call(broker, 'POST', `${NGSI}/entityOperations/merge`, {
    body: [{ id: 'urn:ngsi-ld:Car:b1', type: 'Car', brand: { type: 'Property', value: 'x' } }],
  });
  t.equal(r.status, 204, r.text);
  const e = (await get('urn:ngsi-ld:Car:b1')).json;
  t.equal(e.brand.value, 'x');
  t.equal(e.speed.value, 10);
});

t.test('batch delete: 204, then 207 for ids that are gone or not URIs', async (t) => {
  const r = await call(broker, 'POST', `${NGSI}/entityOperations/delete`, { body: ['urn:ngsi-ld:Car:b1', 'urn:ngsi-ld:Car:b2'] });
  t.equal(r.status, 204, r.text);
  const again = await call(broker, 'POST', `${NGSI}/entityOperations/delete`, {
    body: ['urn:ngsi-ld:Car:b1', 'nope', 'urn:ngsi-ld:Car:a1'],
  });
  t.equal(again.status, 207);
  t.same(again.json.success, ['urn:ngsi-ld:Car:a1']);
  t.equal(again.json.errors.length, 2);
});

t.test('batch bodies that are not arrays, or are empty, are 400', async (t) => {
  for (const op of ['create', 'upsert', 'update', 'delete', 'merge']) {
    t.equal((await call(broker, 'POST', `${NGSI}/entityOperations/${op}`, { body: { id: 'urn:x:1' } })).status, 400, `${op} object`);
    t.equal((await call(broker, 'POST', `${NGSI}/entityOperations/${op}`, { body: [] })).status, 400, `${op} empty`);
    t.equal(
      (await call(broker, 'POST', `${NGSI}/entityOperations/${op}`, { raw: '[{', headers: { 'content-type': 'application/json' } })).status,
      400,
      `${op} invalid JSON`,
    );
  }
});

t.test('a batch of 100 entities is written in one request', async (t) => {
  const body = Array.from({ length: 100 }, (_, i) => car(`h${i}`, i));
  const r = await call(broker, 'POST', `${NGSI}/entityOperations/upsert`, { body });
  t.equal(r.status, 201);
  t.equal(r.json.length, 100);
  t.equal((await get('urn:ngsi-ld:Car:h99')).json.speed.value, 99);
});
