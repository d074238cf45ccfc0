// Sizes of ids and names (issue 13, items 3 and 4; README "Limits"): an id over 1024 bytes or a type or attribute
// name over 512 bytes (expanded) is a 400 BadRequestData naming the limit, before anything is written or looked up,
// in a body, a path or a query; a batch entry over them is that entry's 400 and leaves nothing, the others are
// written; ids up to the limit are stored and found by every query, in the default tenant and in a named one.
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
const enc = encodeURIComponent;
const LONG_TYPE = 'T'.repeat(2000);
const idOfBytes = (bytes: number, tag: string): string => `urn:ngsi-ld:${tag}:`.padEnd(bytes, 'x');
const get = (path: string, tenant?: string): Promise<Reply> =>
  call(broker, 'GET', `${NGSI}${path}`, { headers: tenant === undefined ? {} : { 'NGSILD-Tenant': tenant } });

function badRequest(t: Test, r: Reply, detail: RegExp, what: string): void {
  t.equal(r.status, 400, `${what}: ${r.text.slice(0, 300)}`);
  t.equal(r.json?.type, BAD, what);
  t.match(r.json?.detail, detail, what);
}

t.test(
  'a batch create with a valid entry and one whose type is 2,000 characters: that entry is a 400, nothing of it is written',
  async (t) => {
    const good = { id: 'urn:ngsi-ld:Vehicle:good', type: 'Vehicle', speed: { type: 'Property', value: 50 } };
    const bad = { id: 'urn:ngsi-ld:Vehicle:bad', type: LONG_TYPE, speed: { type: 'Property', value: 60 } };
    const r = await call(broker, 'POST', `${NGSI}/entityOperations/create`, { body: [good, bad] });
    t.equal(r.status, 207, r.text.slice(0, 300));
    t.same(r.json.success, [good.id], 'the valid entry is created, as with any other bad entry of a batch (CIM 009 §5.6.7)');
    t.equal(r.json.errors.length, 1);
    t.equal(r.json.errors[0].entityId, bad.id);
    t.equal(r.json.errors[0].error.status, 400);
    t.equal(r.json.errors[0].error.type, BAD);
    t.match(r.json.errors[0].error.detail, /at most 512 bytes/, 'the limit is named');
    t.equal((await get(`/entities/${bad.id}`)).status, 404, 'the refused entity does not exist');
    const types = await get('/types');
    t.notOk(JSON.stringify(types.json).includes('TTTT'), 'no count of the refused type');
    const all = await get('/entities?local=true&count=true');
    t.same(
      all.json.map((e: { id: string }) => e.id),
      [good.id],
    );
    t.equal((await get(`/temporal/entities/${bad.id}`)).status, 404, 'no history of it');
  },
);

t.test('a single create over a limit is a 400 and writes nothing', async (t) => {
  badRequest(
    t,
    await call(broker, 'POST', `${NGSI}/entities`, { body: { id: 'urn:ngsi-ld:X:1', type: LONG_TYPE } }),
    /^type: .* at most 512 bytes/,
    'type',
  );
  badRequest(
    t,
    await call(broker, 'POST', `${NGSI}/entities`, {
      body: { id: 'urn:ngsi-ld:X:2', type: 'X', ['a'.repeat(600)]: { type: 'Property', value: 1 } },
    }),
    /at most 512 bytes/,
    'attribute name',
  );
  badRequest(
    t,
    await call(broker, 'POST', `${NGSI}/entities`, { body: { id: idOfBytes(1025, 'X'), type: 'X' } }),
    /^id: .* 1025 bytes long; an id may be at most 1024 bytes/,
    'id',
  );
  badRequest(
    t,
    await call(broker, 'POST', `${NGSI}/entities`, {
      body: { id: 'urn:ngsi-ld:X:3', type: 'X', p: { type: 'Property', value: 1, datasetId: idOfBytes(1025, 'ds') } },
    }),
    /datasetId: .* at most 1024 bytes/,
    'datasetId',
  );
  badRequest(
    t,
    await call(broker, 'POST', `${NGSI}/temporal/entities`, {
      body: { id: 'urn:ngsi-ld:X:4', type: LONG_TYPE, p: [{ type: 'Property', value: 1 }] },
    }),
    /at most 512 bytes/,
    'temporal create',
  );
  t.equal((await get('/entities?type=X&count=true')).headers.get('ngsild-results-count'), '0');
});

t.test('queries, paths and batch deletes naming an id or a name over its limit are a 400', async (t) => {
  badRequest(t, await get(`/entities?type=${LONG_TYPE}`), /^type: .* at most 512 bytes/, 'type=');
  badRequest(t, await get(`/entities?id=${enc(idOfBytes(1025, 'Q'))}`), /^id: .* at most 1024 bytes/, 'id=');
  badRequest(t, await get(`/entities?attrs=${'a'.repeat(600)}`), /^attrs: .* at most 512 bytes/, 'attrs=');
  badRequest(
    t,
    await get(`/entities?georel=near;maxDistance==10&geometry=Point&coordinates=[1,2]&geoproperty=${'g'.repeat(600)}`),
    /^geoproperty: .* at most 512 bytes/,
    'geoproperty=',
  );
  badRequest(
    t,
    await call(broker, 'POST', `${NGSI}/entityOperations/query`, { body: { type: 'Query', entities: [{ type: LONG_TYPE }] } }),
    /at most 512 bytes/,
    'POST query',
  );
  badRequest(t, await get(`/entities/${enc(idOfBytes(1025, 'P'))}`), /^entity id: .* at most 1024 bytes/, 'GET /entities/{id}');
  badRequest(t, await get(`/types/${LONG_TYPE}`), /^entity type: .* at most 512 bytes/, 'GET /types/{type}');
  badRequest(t, await get(`/attributes/${'a'.repeat(600)}`), /^attribute: .* at most 512 bytes/, 'GET /attributes/{attr}');
  badRequest(t, await get(`/temporal/entities?type=${LONG_TYPE}`), /^type: .* at most 512 bytes/, 'temporal type=');
  badRequest(t, await get(`/temporal/entities?type=X&attrs=${'a'.repeat(600)}`), /^attrs: .* at most 512 bytes/, 'temporal attrs=');
  badRequest(
    t,
    await call(broker, 'DELETE', `${NGSI}/temporal/entities/urn:ngsi-ld:X:1/attrs/p/${enc(idOfBytes(257, 'i'))}`),
    /^instanceId: .* at most 256 bytes/,
    'instanceId',
  );
  badRequest(
    t,
    await call(broker, 'POST', `${NGSI}/subscriptions`, {
      body: {
        id: idOfBytes(1025, 'Subscription'),
        type: 'Subscription',
        entities: [{ type: 'X' }],
        notification: { endpoint: { uri: 'http://127.0.0.1:1/n' } },
      },
    }),
    /^id: .* at most 1024 bytes/,
    'subscription id',
  );
  const del = await call(broker, 'POST', `${NGSI}/entityOperations/delete`, { body: [idOfBytes(1025, 'D')] });
  t.equal(del.status, 207);
  t.equal(del.json.errors[0].error.status, 400);
  t.match(del.json.errors[0].error.detail, /at most 1024 bytes/);
});

t.test('ids up to the limit are stored and every query finds them, in the default tenant and in openiot', async (t) => {
  for (const tenant of [undefined, 'openiot']) {
    const headers = tenant === undefined ? {} : { 'NGSILD-Tenant': tenant };
    // The example: 56 characters, 64 with 'openiot' and the separator.
    const ids = [
      'urn:ngsi-ld:Vehicle:5f1c6a2e-2b7e-4d43-9a57-0d6b8d1f3c21',
      idOfBytes(63, 'Vehicle'),
      idOfBytes(200, 'Vehicle'),
      idOfBytes(1024, 'Vehicle'),
    ];
    const body = ids.map((id) => ({ id, type: 'Vehicle', speed: { type: 'Property', value: 50 } }));
    const r = await call(broker, 'POST', `${NGSI}/entityOperations/create`, { body, headers });
    t.equal(r.status, 201, r.text.slice(0, 300));
    for (const q of ['q=speed>10', 'local=true', `idPattern=${enc('^urn:ngsi-ld:Vehicle:')}`, 'attrs=speed', 'type=Vehicle&q=speed>10']) {
      const page = await get(`/entities?${q}&count=true&limit=100`, tenant);
      t.equal(page.status, 200);
      const found = page.json.map((e: { id: string }) => e.id).filter((id: string) => ids.includes(id));
      t.same(found.sort(), [...ids].sort(), `tenant ${tenant ?? 'default'}, ${q}: every id`);
    }
    t.equal((await get(`/entities/${enc(ids[3]!)}`, tenant)).status, 200, 'an id of 1024 bytes by its path');
  }
});
