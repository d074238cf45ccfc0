// Attribute operations, replace, merge-patch and delete (CIM 009 v1.8 §5.6.2 to §5.6.6, §5.6.17, §5.6.18).
import t from 'tap';
import { startBroker, call, NGSI, type Broker } from './helpers/broker.js';

let broker: Broker;
t.before(async () => {
  broker = await startBroker();
});
t.teardown(async () => {
  await broker.stop();
});

let n = 0;
async function fresh(extra: Record<string, unknown> = {}): Promise<string> {
  const id = `urn:ngsi-ld:Room:${++n}`;
  const r = await call(broker, 'POST', `${NGSI}/entities`, {
    body: {
      id,
      type: 'Room',
      temperature: { type: 'Property', value: 20, unitCode: 'CEL' },
      name: { type: 'Property', value: 'r' },
      ...extra,
    },
  });
  if (r.status !== 201) throw new Error(`create failed: ${r.status} ${r.text}`);
  return id;
}
const get = async (id: string, q = ''): Promise<any> => (await call(broker, 'GET', `${NGSI}/entities/${id}${q}`)).json;

t.test('append adds attributes and overwrites existing ones (204)', async (t) => {
  const id = await fresh();
  const r = await call(broker, 'POST', `${NGSI}/entities/${id}/attrs`, {
    body: { humidity: { type: 'Property', value: 40 }, temperature: { type: 'Property', value: 25 } },
  });
  t.equal(r.status, 204, r.text);
  const e = await get(id);
  t.equal(e.humidity.value, 40);
  t.equal(e.temperature.value, 25);
});

t.test('append with noOverwrite keeps existing attributes and answers 207 naming them', async (t) => {
  const id = await fresh();
  const r = await call(broker, 'POST', `${NGSI}/entities/${id}/attrs?options=noOverwrite`, {
    body: { humidity: { type: 'Property', value: 40 }, temperature: { type: 'Property', value: 25 } },
  });
  t.equal(r.status, 207, r.text);
  t.same(r.json.updated, ['humidity']);
  t.equal(r.json.notUpdated[0].attributeName, 'temperature');
  t.equal((await get(id)).temperature.value, 20);
});

t.test('update changes existing attributes only; unknown ones are reported in a 207', async (t) => {
  const id = await fresh();
  const ok = await call(broker, 'PATCH', `${NGSI}/entities/${id}/attrs`, { body: { temperature: { type: 'Property', value: 30 } } });
  t.equal(ok.status, 204, ok.text);
  t.equal((await get(id)).temperature.value, 30);
  const partial = await call(broker, 'PATCH', `${NGSI}/entities/${id}/attrs`, {
    body: { temperature: { type: 'Property', value: 31 }, nothere: { type: 'Property', value: 1 } },
  });
  t.equal(partial.status, 207, partial.text);
  t.equal(partial.json.notUpdated[0].attributeName, 'nothere');
  t.notOk('nothere' in (await get(id)));
});

t.test('partial attribute update changes the value and keeps other members', async (t) => {
  const id = await fresh();
  const r = await call(broker, 'PATCH', `${NGSI}/entities/${id}/attrs/temperature`, { body: { type: 'Property', value: 22.5 } });
  t.equal(r.status, 204, r.text);
  const e = await get(id);
  t.equal(e.temperature.value, 22.5);
  const missing = await call(broker, 'PATCH', `${NGSI}/entities/${id}/attrs/pressure`, { body: { type: 'Property', value: 1 } });
  t.equal(missing.status, 404);
  const noEntity = await call(broker, 'PATCH', `${NGSI}/entities/urn:ngsi-ld:Room:none/attrs/temperature`, {
    body: { type: 'Property', value: 1 },
  });
  t.equal(noEntity.status, 404);
});

t.test('delete attribute: 204, then 404; datasetId and deleteAll', async (t) => {
  const id = await fresh({
    speed: [
      { type: 'Property', value: 1 },
      { type: 'Property', value: 2, datasetId: 'urn:ngsi-ld:Dataset:gps' },
      { type: 'Property', value: 3, datasetId: 'urn:ngsi-ld:Dataset:radar' },
    ],
  });
  t.equal((await call(broker, 'DELETE', `${NGSI}/entities/${id}/attrs/name`)).status, 204);
  t.equal((await call(broker, 'DELETE', `${NGSI}/entities/${id}/attrs/name`)).status, 404);
  t.equal((await call(broker, 'DELETE', `${NGSI}/entities/${id}/attrs/speed?datasetId=urn:ngsi-ld:Dataset:gps`)).status, 204);
  let e = await get(id);
  t.equal(e.speed.length, 2, 'one instance gone');
  t.equal((await call(broker, 'DELETE', `${NGSI}/entities/${id}/attrs/speed?datasetId=urn:ngsi-ld:Dataset:nope`)).status, 404);
  t.equal((await call(broker, 'DELETE', `${NGSI}/entities/${id}/attrs/speed?deleteAll=true`)).status, 204);
  e = await get(id);
  t.notOk('speed' in e);
  t.equal((await call(broker, 'DELETE', `${NGSI}/entities/${id}/attrs/speed?deleteAll=maybe`)).status, 400);
});

t.test('replace entity (PUT) swaps the attributes and keeps createdAt', async (t) => {
  const id = await fresh();
  const before = await get(id, '?options=sysAttrs');
  const r = await call(broker, 'PUT', `${NGSI}/entities/${id}`, { body: { type: 'Room', pressure: { type: 'Property', value: 1013 } } });
  t.equal(r.status, 204, r.text);
  const after = await get(id, '?options=sysAttrs');
  t.notOk('temperature' in after);
  t.equal(after.pressure.value, 1013);
  t.equal(after.createdAt, before.createdAt);
  const other = await call(broker, 'PUT', `${NGSI}/entities/${id}`, { body: { id: 'urn:ngsi-ld:Room:other', type: 'Room' } });
  t.equal(other.status, 400, 'a body id that differs from the path');
});

t.test('replace attribute (PUT .../attrs/{attr})', async (t) => {
  const id = await fresh();
  const r = await call(broker, 'PUT', `${NGSI}/entities/${id}/attrs/temperature`, { body: { type: 'Property', value: 5 } });
  t.equal(r.status, 204, r.text);
  const e = await get(id);
  t.equal(e.temperature.value, 5);
  t.notOk('unitCode' in e.temperature, 'the whole attribute is replaced');
  t.equal((await call(broker, 'PUT', `${NGSI}/entities/${id}/attrs/nothere`, { body: { type: 'Property', value: 5 } })).status, 404);
});

t.test('merge-patch updates, adds and deletes with urn:ngsi-ld:null', async (t) => {
  const id = await fresh();
  const r = await call(broker, 'PATCH', `${NGSI}/entities/${id}`, {
    body: { temperature: { type: 'Property', value: 19 }, humidity: { type: 'Property', value: 50 }, name: 'urn:ngsi-ld:null' },
    headers: { 'content-type': 'application/merge-patch+json' },
  });
  t.equal(r.status, 204, r.text);
  const e = await get(id);
  t.equal(e.temperature.value, 19);
  t.equal(e.temperature.unitCode, 'CEL', 'merge keeps members it was not given');
  t.equal(e.humidity.value, 50);
  t.notOk('name' in e);
  t.equal((await call(broker, 'PATCH', `${NGSI}/entities/urn:ngsi-ld:Room:none`, { body: { a: 1 } })).status, 404);
});

t.test('a merge-patch cannot delete the entity type: "type": null is 400 and no placeholder type is stored or listed', async (t) => {
  const broker2 = await startBroker();
  t.teardown(() => broker2.stop());
  const id = 'urn:ngsi-ld:Room:typeless';
  t.equal((await call(broker2, 'POST', `${NGSI}/entities`, { body: { id, type: 'Room', a: { type: 'Property', value: 1 } } })).status, 201);
  for (const type of [null, 'urn:ngsi-ld:null']) {
    const r = await call(broker2, 'PATCH', `${NGSI}/entities/${id}`, { body: { type, a: { type: 'Property', value: 2 } } });
    t.equal(r.status, 400, `${String(type)}: ${r.text}`);
    t.equal(r.json.type, 'https://uri.etsi.org/ngsi-ld/errors/BadRequestData');
    t.equal(r.json.detail, 'type: the entity type cannot be deleted (null in a merge-patch)');
  }
  const batch = await call(broker2, 'POST', `${NGSI}/entityOperations/merge`, {
    body: [{ id, type: null, a: { type: 'Property', value: 3 } }],
  });
  t.equal(batch.status, 207, batch.text);
  t.match(batch.json.errors[0].error.detail, 'type: the entity type cannot be deleted');
  const e = (await call(broker2, 'GET', `${NGSI}/entities/${id}`)).json;
  t.equal(e.type, 'Room', 'the type is untouched');
  t.equal(e.a.value, 1, 'nothing of the refused merges was written');
  const untyped = await call(broker2, 'PATCH', `${NGSI}/entities/${id}`, { body: { a: { type: 'Property', value: 4 } } });
  t.equal(untyped.status, 204, 'a merge without type is still fine');
  const batchUntyped = await call(broker2, 'POST', `${NGSI}/entityOperations/merge`, { body: [{ id, a: { type: 'Property', value: 5 } }] });
  t.equal(batchUntyped.status, 204, batchUntyped.text);
  t.same((await call(broker2, 'GET', `${NGSI}/types`)).json.typeList, ['Room'], '/types lists the real type only');
  const placeholder = encodeURIComponent('urn:ngsi-ld:placeholder');
  t.equal((await call(broker2, 'GET', `${NGSI}/types/${placeholder}`)).status, 404, '/types/{type} knows no placeholder');
  t.same((await call(broker2, 'GET', `${NGSI}/entities?type=${placeholder}`)).json, [], 'a query by it finds nothing');
  const e2 = (await call(broker2, 'GET', `${NGSI}/entities/${id}`)).json;
  t.equal(e2.type, 'Room');
  t.equal(e2.a.value, 5);
});

t.test('delete entity: 204 then 404', async (t) => {
  const id = await fresh();
  t.equal((await call(broker, 'DELETE', `${NGSI}/entities/${id}`)).status, 204);
  t.equal((await call(broker, 'GET', `${NGSI}/entities/${id}`)).status, 404);
  t.equal((await call(broker, 'DELETE', `${NGSI}/entities/${id}`)).status, 404);
});

t.test('bad input on attribute routes is a 400 and changes nothing', async (t) => {
  const id = await fresh();
  const cases: Array<[string, string, unknown]> = [
    ['POST', `${NGSI}/entities/${id}/attrs`, [1, 2]],
    ['POST', `${NGSI}/entities/${id}/attrs`, { temperature: { type: 'Relationship', object: 'not a uri' } }],
    ['PATCH', `${NGSI}/entities/${id}/attrs`, { temperature: { type: 'Property' } }],
    ['PATCH', `${NGSI}/entities/${id}/attrs/temperature`, 'text'],
    ['POST', `${NGSI}/entities/${id}/attrs?options=sideways`, { a: 1 }],
    ['POST', `${NGSI}/entities/not-a-uri/attrs`, { a: 1 }],
  ];
  for (const [method, path, body] of cases) {
    const r = await call(broker, method, path, { body });
    t.equal(r.status, 400, `${method} ${path} ${JSON.stringify(body)}: ${r.text}`);
  }
  const e = await get(id);
  t.equal(e.temperature.value, 20, 'nothing changed');
});
