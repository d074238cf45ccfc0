// Snapshots (CIM 009 v1.9.1 §4.3.7; README "Snapshots"): a Snapshot copies what its queries select, is served by the
// entity and query routes below /snapshots/{snapshotId}, stays as it was when the tenant changes, takes provision
// operations of its own, and is updated (captured again), cloned, purged and deleted; every bad input is a
// ProblemDetails and leaves nothing behind.
import t from 'tap';
import { startBroker, call, NGSI, type Broker, type Reply } from './helpers/broker.js';

let broker: Broker;
const ERR = 'https://uri.etsi.org/ngsi-ld/errors/';
const prop = (value: unknown) => ({ type: 'Property', value });

t.before(async () => {
  broker = await startBroker(['--troe', 'embdb']);
});
t.teardown(() => broker.stop());

const H = (tenant: string) => ({ 'NGSILD-Tenant': tenant });
const req = (tenant: string, method: string, path: string, body?: unknown): Promise<Reply> =>
  call(broker, method, NGSI + path, { headers: H(tenant), body });
const snap = (id: string) => `/snapshots/${encodeURIComponent(id)}`;
const ids = (r: Reply): string[] => (r.json as Array<{ id: string }>).map((e) => e.id).sort();

async function seed(tenant: string): Promise<void> {
  const r = await req(tenant, 'POST', '/entityOperations/create', [
    { id: 'urn:ngsi-ld:Building:1', type: 'Building', name: prop('Eiffel Tower'), height: prop(330) },
    { id: 'urn:ngsi-ld:Building:2', type: 'Building', name: prop('Louvre'), height: prop(21) },
    { id: 'urn:ngsi-ld:Car:1', type: 'Car', speed: prop(50) },
  ]);
  if (r.status !== 201) throw new Error(r.text);
}

const snapshotBody = (id: string, queries: unknown[]) => ({ id, type: 'Snapshot', snapshotQueries: queries });

t.test('create captures what the queries select; the entity and query routes serve it', async (t) => {
  await seed('s1');
  const id = 'urn:ngsi-ld:Snapshot:a';
  const created = await req('s1', 'POST', '/snapshots', snapshotBody(id, [{ type: 'Query', entities: [{ type: 'Building' }] }]));
  t.equal(created.status, 201, created.text);
  t.equal(created.headers.get('location'), `${NGSI}/snapshots/${id}`);

  const got = await req('s1', 'GET', snap(id));
  t.equal(got.status, 200);
  t.match(got.json, {
    id,
    type: 'Snapshot',
    snapshotStatus: 'ready',
    snapshotQueries: [{ entities: [{ type: 'Building' }] }],
    snapshotQueriesDetails: [{ resultStatus: 'success' }],
  });
  t.notOk('storageKey' in got.json, 'where its entities are kept is not shown');

  t.same(ids(await req('s1', 'GET', `${snap(id)}/entities?type=Building`)), ['urn:ngsi-ld:Building:1', 'urn:ngsi-ld:Building:2']);
  t.same(ids(await req('s1', 'GET', `${snap(id)}/entities?type=Car`)), [], 'the Car was not selected');
  const one = await req('s1', 'GET', `${snap(id)}/entities/urn:ngsi-ld:Building:1`);
  t.equal(one.status, 200);
  t.same(one.json.height, prop(330));
  const posted = await req('s1', 'POST', `${snap(id)}/entityOperations/query`, { type: 'Query', q: 'height>100' });
  t.same(ids(posted), ['urn:ngsi-ld:Building:1']);
  const types = await req('s1', 'GET', `${snap(id)}/types`);
  t.same(types.json.typeList, ['Building'], "discovery sees the Snapshot's entities only");

  // The tenant changes; the Snapshot does not.
  t.equal((await req('s1', 'PATCH', '/entities/urn:ngsi-ld:Building:1/attrs', { height: prop(1) })).status, 204);
  t.equal((await req('s1', 'DELETE', '/entities/urn:ngsi-ld:Building:2')).status, 204);
  t.same((await req('s1', 'GET', `${snap(id)}/entities/urn:ngsi-ld:Building:1`)).json.height, prop(330), 'as captured');
  t.equal((await req('s1', 'GET', `${snap(id)}/entities/urn:ngsi-ld:Building:2`)).status, 200, 'deleted in the tenant, kept here');

  // Provision operations on the Snapshot change it alone.
  t.equal((await req('s1', 'PATCH', `${snap(id)}/entities/urn:ngsi-ld:Building:1/attrs`, { height: prop(400) })).status, 204);
  t.same((await req('s1', 'GET', '/entities/urn:ngsi-ld:Building:1')).json.height, prop(1), 'the tenant keeps its own value');
  t.same((await req('s1', 'GET', `${snap(id)}/entities/urn:ngsi-ld:Building:1`)).json.height, prop(400));
  const predicted = { id: 'urn:ngsi-ld:Building:9', type: 'Building', name: prop('predicted') };
  t.equal((await req('s1', 'POST', `${snap(id)}/entities`, predicted)).status, 201);
  t.equal((await req('s1', 'GET', '/entities/urn:ngsi-ld:Building:9')).status, 404, 'not in the tenant');
});

t.test('attrs keeps only the attributes named; two queries give one entity with both', async (t) => {
  await seed('s2');
  const id = 'urn:ngsi-ld:Snapshot:attrs';
  const r = await req(
    's2',
    'POST',
    '/snapshots',
    snapshotBody(id, [
      { type: 'Query', entities: [{ id: 'urn:ngsi-ld:Building:1' }], attrs: ['name'] },
      { type: 'Query', entities: [{ id: 'urn:ngsi-ld:Building:1' }], attrs: ['height'] },
      { type: 'Query', entities: [{ type: 'Nothing' }] },
    ]),
  );
  t.equal(r.status, 201, r.text);
  const e = (await req('s2', 'GET', `${snap(id)}/entities/urn:ngsi-ld:Building:1`)).json;
  t.same(e.name, prop('Eiffel Tower'));
  t.same(e.height, prop(330));
  t.same(
    (await req('s2', 'GET', snap(id))).json.snapshotQueriesDetails.map((d: { resultStatus: string }) => d.resultStatus),
    ['success', 'success', 'empty'],
  );
  const car = await req(
    's2',
    'POST',
    '/snapshots',
    snapshotBody('urn:ngsi-ld:Snapshot:car', [{ entities: [{ type: 'Car' }], attrs: ['name'] }]),
  );
  t.equal(car.status, 201);
  t.same(ids(await req('s2', 'GET', `${snap('urn:ngsi-ld:Snapshot:car')}/entities?type=Car`)), [], 'a Car without name: not selected');
});

t.test('query, update (capture again), clone, purge and delete', async (t) => {
  await seed('s3');
  const a = 'urn:ngsi-ld:Snapshot:one';
  t.equal((await req('s3', 'POST', '/snapshots', snapshotBody(a, [{ entities: [{ type: 'Car' }] }]))).status, 201);
  const noId = await req('s3', 'POST', '/snapshots', { type: 'Snapshot', snapshotQueries: [{ entities: [{ type: 'Building' }] }] });
  t.equal(noId.status, 201);
  t.match(noId.headers.get('location'), /^\/ngsi-ld\/v1\/snapshots\/urn:ngsi-ld:Snapshot:[0-9a-f-]{36}$/);

  const list = await req('s3', 'GET', '/snapshots?count=true');
  t.equal(list.status, 200);
  t.equal(list.json.length, 2);
  t.equal(list.headers.get('ngsild-results-count'), '2');
  t.equal((await req('', 'GET', '/snapshots')).json.length, 0, "another tenant's Snapshots are not listed");

  // Update: captured again with the new queries.
  t.equal((await req('s3', 'PATCH', snap(a), { snapshotQueries: [{ entities: [{ type: 'Building' }] }] })).status, 204);
  t.same(ids(await req('s3', 'GET', `${snap(a)}/entities?type=Building,Car`)), ['urn:ngsi-ld:Building:1', 'urn:ngsi-ld:Building:2']);
  t.match((await req('s3', 'GET', snap(a))).json, { snapshotQueries: [{ entities: [{ type: 'Building' }] }] });

  // Clone: the entities the source holds now, its own from then on.
  t.equal((await req('s3', 'PATCH', `${snap(a)}/entities/urn:ngsi-ld:Building:2/attrs`, { height: prop(99) })).status, 204);
  const b = 'urn:ngsi-ld:Snapshot:two';
  const cloned = await req('s3', 'POST', `${snap(a)}/clone`, { id: b, type: 'Snapshot' });
  t.equal(cloned.status, 201, cloned.text);
  t.same((await req('s3', 'GET', `${snap(b)}/entities/urn:ngsi-ld:Building:2`)).json.height, prop(99));
  t.equal((await req('s3', 'POST', `${snap(a)}/clone`, { id: b })).status, 409, 'a clone id that exists');
  const anonymous = await call(broker, 'POST', `${NGSI}${snap(a)}/clone`, { headers: H('s3') });
  t.equal(anonymous.status, 201, 'a clone without a body gets an id of its own');

  // Purge: the entities go, the Snapshot stays.
  t.equal((await req('s3', 'POST', `${snap(a)}/purge`)).status, 204);
  t.same(ids(await req('s3', 'GET', `${snap(a)}/entities?type=Building`)), []);
  t.equal((await req('s3', 'GET', snap(a))).status, 200);
  t.equal((await req('s3', 'GET', `${snap(b)}/entities?type=Building`)).json.length, 2, 'the clone keeps its own');

  // Delete: the Snapshot and its entities go; its routes answer 404.
  t.equal((await req('s3', 'DELETE', snap(b))).status, 204);
  const gone = await req('s3', 'GET', snap(b));
  t.equal(gone.status, 404);
  t.equal(gone.json.type, `${ERR}ResourceNotFound`);
  const entitiesGone = await req('s3', 'GET', `${snap(b)}/entities?type=Building`);
  t.equal(entitiesGone.status, 404);
  t.equal(entitiesGone.json.type, `${ERR}ResourceNotFound`);
  // Made again under the same id: empty of what the deleted one held until it captures.
  t.equal((await req('s3', 'POST', '/snapshots', snapshotBody(b, [{ entities: [{ type: 'Car' }] }]))).status, 201);
  t.same(ids(await req('s3', 'GET', `${snap(b)}/entities?type=Building,Car`)), ['urn:ngsi-ld:Car:1']);
});

t.test('temporal capture: with --troe the history of a Snapshot is its own', async (t) => {
  await seed('s4');
  const id = 'urn:ngsi-ld:Snapshot:t';
  t.equal((await req('s4', 'POST', '/snapshots', snapshotBody(id, [{ entities: [{ type: 'Car' }] }]))).status, 201);
  t.equal((await req('s4', 'PATCH', `${snap(id)}/entities/urn:ngsi-ld:Car:1/attrs`, { speed: prop(70) })).status, 204);
  const history = await req('s4', 'GET', `${snap(id)}/temporal/entities/urn:ngsi-ld:Car:1?options=temporalValues`);
  t.equal(history.status, 200, history.text);
  const values = (history.json.speed.values as Array<[number, string]>).map((v) => v[0]).sort();
  t.same(values, [50, 70], 'the captured value and the one provisioned since');
  const tenantHistory = await req('s4', 'GET', '/temporal/entities/urn:ngsi-ld:Car:1?options=temporalValues');
  t.same(
    (tenantHistory.json.speed.values as Array<[number, string]>).map((v) => v[0]),
    [50],
    "the tenant's history has none of the Snapshot's",
  );
});

t.test('bad inputs are ProblemDetails and leave nothing behind', async (t) => {
  await seed('s5');
  const bad = async (method: string, path: string, body: unknown, status: number, type: string, what: string): Promise<void> => {
    const r = await req('s5', method, path, body);
    t.equal(r.status, status, `${what}: ${r.text}`);
    t.equal(r.json?.type, ERR + type, what);
  };
  await bad('POST', '/snapshots', { type: 'Snapshot' }, 400, 'BadRequestData', 'no snapshotQueries');
  await bad('POST', '/snapshots', { type: 'Other', snapshotQueries: [{ q: 'a==1' }] }, 400, 'BadRequestData', 'wrong type');
  await bad('POST', '/snapshots', { snapshotQueries: [{ q: 'a==1' }] }, 400, 'BadRequestData', 'no type');
  await bad('POST', '/snapshots', snapshotBody('not a uri', [{ q: 'a==1' }]), 400, 'BadRequestData', 'id no URI');
  await bad('POST', '/snapshots', snapshotBody('urn:x:s', []), 400, 'BadRequestData', 'empty queries');
  await bad('POST', '/snapshots', snapshotBody('urn:x:s', [{}]), 400, 'BadRequestData', 'a query selecting nothing in particular');
  await bad('POST', '/snapshots', snapshotBody('urn:x:s', ['x']), 400, 'BadRequestData', 'a query that is no object');
  await bad('POST', '/snapshots', snapshotBody('urn:x:s', [{ q: '((' }]), 400, 'InvalidRequest', 'a malformed q (as in a query)');
  await bad('POST', '/snapshots', snapshotBody('urn:x:s', [{ q: 'a==1', limit: 3 }]), 400, 'BadRequestData', 'an unknown Query member');
  await bad('POST', '/snapshots', { ...snapshotBody('urn:x:s', [{ q: 'a==1' }]), foo: 1 }, 400, 'BadRequestData', 'an unknown member');
  await bad(
    'POST',
    '/snapshots',
    { ...snapshotBody('urn:x:s', [{ q: 'a==1' }]), snapshotStatus: 'ready' },
    400,
    'BadRequestData',
    'read-only',
  );
  await bad(
    'POST',
    '/snapshots',
    { ...snapshotBody('urn:x:s', [{ q: 'a==1' }]), snapshotTemporalQueries: [] },
    501,
    'OperationNotSupported',
    'temporal queries of the past',
  );
  const many = Array.from({ length: 17 }, () => ({ q: 'a==1' }));
  await bad('POST', '/snapshots', snapshotBody('urn:x:s', many), 403, 'TooManyResults', 'over the query limit');
  await bad('POST', '/snapshots', [], 400, 'InvalidRequest', 'an array body');
  const invalid = await call(broker, 'POST', `${NGSI}/snapshots`, {
    headers: { ...H('s5'), 'content-type': 'application/json' },
    raw: '{',
  });
  t.equal(invalid.status, 400, 'no JSON');
  t.equal((await req('s5', 'GET', '/snapshots')).json.length, 0, 'none of them made a Snapshot');

  const id = 'urn:ngsi-ld:Snapshot:ok';
  t.equal((await req('s5', 'POST', '/snapshots', snapshotBody(id, [{ entities: [{ type: 'Car' }] }]))).status, 201);
  await bad('POST', '/snapshots', snapshotBody(id, [{ entities: [{ type: 'Car' }] }]), 409, 'AlreadyExists', 'an id that exists');
  await bad('PATCH', snap(id), { id: 'urn:x:other' }, 400, 'BadRequestData', 'an update changing the id');
  await bad('PATCH', snap(id), { snapshotQueries: [{ q: '((' }] }, 400, 'InvalidRequest', 'an update with a malformed query');
  t.same(ids(await req('s5', 'GET', `${snap(id)}/entities?type=Car`)), ['urn:ngsi-ld:Car:1'], 'a failed update leaves it as it was');
  await bad('POST', `${snap(id)}/clone`, { foo: 1 }, 400, 'BadRequestData', 'a clone body naming more than the id');
  await bad('POST', `${snap(id)}/clone`, { id: 'x y' }, 400, 'BadRequestData', 'a clone id that is no URI');

  for (const [method, path] of [
    ['GET', snap('urn:x:none')],
    ['PATCH', snap('urn:x:none')],
    ['DELETE', snap('urn:x:none')],
    ['POST', `${snap('urn:x:none')}/clone`],
    ['POST', `${snap('urn:x:none')}/purge`],
    ['GET', `${snap('urn:x:none')}/entities?type=Car`],
    ['GET', `${snap('urn:x:none')}/entities/urn:ngsi-ld:Car:1`],
  ] as const) {
    const r = await req('s5', method, path, method === 'PATCH' ? { snapshotQueries: [{ q: 'a==1' }] } : undefined);
    t.equal(r.status, 404, `${method} ${path}`);
    t.equal(r.json?.type, `${ERR}ResourceNotFound`);
  }
  const badId = await req('s5', 'GET', '/snapshots/not%20a%20uri/entities?type=Car');
  t.equal(badId.status, 400, 'a snapshot id that is no URI');
  t.equal(badId.json.type, `${ERR}BadRequestData`);
  const longId = await req('s5', 'GET', snap('urn:x:' + 'a'.repeat(5000)));
  t.equal(longId.status, 400, 'a snapshot id past the size limit');
  const noTenant = await req('nosuch', 'POST', '/snapshots', snapshotBody('urn:x:t', [{ q: 'a==1' }]));
  t.equal(noTenant.status, 404);
  t.equal(noTenant.json.type, `${ERR}NonexistentTenant`);
  const subs = await req('s5', 'POST', `${snap(id)}/subscriptions`, { type: 'Subscription' });
  t.equal(subs.status, 404, 'a Snapshot serves no subscriptions');
  const badLimit = await req('s5', 'GET', '/snapshots?limit=5000');
  t.equal(badLimit.status, 403);
  const badParam = await req('s5', 'GET', '/snapshots?foo=1');
  t.equal(badParam.status, 400);
});

t.test('past --snapshotMaxEntities a capture or clone is 403 TooManyResults and leaves no Snapshot', async (t) => {
  const small = await startBroker(['--snapshotMaxEntities', '2']);
  t.teardown(() => small.stop());
  const at = (method: string, path: string, body?: unknown) => call(small, method, NGSI + path, { body });
  const cars = Array.from({ length: 3 }, (_, i) => ({ id: `urn:ngsi-ld:Car:${i}`, type: 'Car' }));
  t.equal((await at('POST', '/entityOperations/create', cars)).status, 201);
  const over = await at('POST', '/snapshots', snapshotBody('urn:x:over', [{ entities: [{ type: 'Car' }] }]));
  t.equal(over.status, 403, over.text);
  t.equal(over.json.type, `${ERR}TooManyResults`);
  t.equal((await at('GET', snap('urn:x:over'))).status, 404, 'no Snapshot left');
  t.equal((await at('GET', '/snapshots')).json.length, 0);

  const two = 'urn:x:two';
  t.equal((await at('POST', '/snapshots', snapshotBody(two, [{ entities: [{ id: 'urn:ngsi-ld:Car:0,urn:ngsi-ld:Car:1' }] }]))).status, 201);
  // Provisioned past the limit, then cloned: the clone cannot hold them all.
  t.equal((await at('POST', `${snap(two)}/entities`, { id: 'urn:ngsi-ld:Car:9', type: 'Car' })).status, 201);
  const clone = await at('POST', `${snap(two)}/clone`, { id: 'urn:x:clone' });
  t.equal(clone.status, 403);
  t.equal((await at('GET', snap('urn:x:clone'))).status, 404, 'no clone left');
  // An update past it keeps the Snapshot as it was.
  const update = await at('PATCH', snap(two), { snapshotQueries: [{ entities: [{ type: 'Car' }] }] });
  t.equal(update.status, 403);
  t.equal((await at('GET', `${snap(two)}/entities?type=Car`)).json.length, 3, 'its entities as they were');
});

t.test("a request on a Snapshot keeps and links its inline @context in the client's tenant", async (t) => {
  await seed('s6');
  const id = 'urn:ngsi-ld:Snapshot:ctx';
  t.equal((await req('s6', 'POST', '/snapshots', snapshotBody(id, [{ entities: [{ type: 'Car' }] }]))).status, 201);
  const ctx = { Boat: 'https://example.org/Boat', hull: 'https://example.org/hull' };
  const made = await call(broker, 'POST', `${NGSI}${snap(id)}/entities`, {
    raw: JSON.stringify({ id: 'urn:ngsi-ld:Boat:1', type: 'Boat', hull: prop('steel'), '@context': ctx }),
    headers: { ...H('s6'), 'content-type': 'application/ld+json' },
  });
  t.equal(made.status, 201, made.text);
  const q = await call(broker, 'POST', `${NGSI}${snap(id)}/entityOperations/query`, {
    raw: JSON.stringify({ type: 'Query', entities: [{ type: 'Boat' }], '@context': ctx }),
    headers: { ...H('s6'), 'content-type': 'application/ld+json', accept: 'application/json' },
  });
  t.equal(q.status, 200, q.text);
  t.same(ids(q), ['urn:ngsi-ld:Boat:1']);
  const link = /<([^>]+)>/.exec(q.headers.get('link') ?? '')?.[1] ?? '';
  t.match(link, /\/ngsi-ld\/v1\/jsonldContexts\/s6/, `the Link names a context of tenant s6 (${link})`);
  const path = new URL(link).pathname;
  let served: Reply | undefined;
  for (let i = 0; i < 50; i++) {
    served = await call(broker, 'GET', path, { headers: H('s6') });
    if (served.status === 200) break;
    await new Promise((r) => setTimeout(r, 20));
  }
  t.equal(served?.status, 200, 'the broker serves the context it linked');
  t.same(served?.json, { '@context': ctx });
});

t.test('with the pipeline threads, the Snapshot a path selects crosses to the thread that serves it', async (t) => {
  const pooled = await startBroker(['--connectionPoolSize', '2'], {}, { pool: true });
  t.teardown(() => pooled.stop());
  const at = (method: string, path: string, body?: unknown) => call(pooled, method, NGSI + path, { body });
  t.equal((await at('POST', '/entities', { id: 'urn:ngsi-ld:Car:p', type: 'Car', speed: prop(1) })).status, 201);
  t.equal((await at('POST', '/snapshots', snapshotBody('urn:x:p', [{ entities: [{ type: 'Car' }] }]))).status, 201);
  t.equal((await at('PATCH', '/entities/urn:ngsi-ld:Car:p/attrs', { speed: prop(2) })).status, 204);
  for (let i = 0; i < 4; i++) {
    const r = await at('GET', `${snap('urn:x:p')}/entities/urn:ngsi-ld:Car:p`);
    t.same(r.json?.speed, prop(1), `read ${i}: the captured value, whichever thread answers`);
  }
});

t.test('a Snapshot deleted while it is captured is not made again; one being captured is not cloned', async (t) => {
  const cars = Array.from({ length: 4000 }, (_, i) => ({ id: `urn:ngsi-ld:Car:r${i}`, type: 'Car', speed: prop(i) }));
  for (let i = 0; i < cars.length; i += 1000)
    t.equal((await req('s7', 'POST', '/entityOperations/create', cars.slice(i, i + 1000))).status, 201);
  const id = 'urn:ngsi-ld:Snapshot:race';
  const creating = req('s7', 'POST', '/snapshots', snapshotBody(id, [{ entities: [{ type: 'Car' }] }]));
  let seen: Reply | undefined;
  for (let i = 0; i < 2000; i++) {
    seen = await req('s7', 'GET', snap(id));
    if (seen.status === 200) break;
    await new Promise((r) => setImmediate(r));
  }
  t.equal(seen?.json?.snapshotStatus, 'creating', 'seen while its capture runs');
  const clone = await req('s7', 'POST', `${snap(id)}/clone`, { id: 'urn:x:racing-clone' });
  t.equal(clone.status, 409, 'not cloned half-way');
  t.equal(clone.json.type, `${ERR}Conflict`);
  t.equal((await req('s7', 'DELETE', snap(id))).status, 204);
  const created = await creating;
  t.equal(created.status, 404, `the create learns its Snapshot went: ${created.text}`);
  t.equal((await req('s7', 'GET', snap(id))).status, 404, 'not made again');
  t.equal((await req('s7', 'GET', '/snapshots')).json.length, 0);
});
