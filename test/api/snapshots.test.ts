// Snapshots (CIM 009 v1.9.1 §5.16; README "Snapshots"): a Snapshot copies what its queries select, is served by the
// entity, query and temporal routes to a request naming it in NGSILD-Snapshot (§6.3.22), stays as it was when the
// tenant changes, takes provision operations of its own, and is retrieved, updated, cloned, deleted and purged; every
// bad input is a ProblemDetails and leaves nothing behind.
import t from 'tap';
import { startBroker, call, NGSI, type Broker, type Reply } from './helpers/broker.js';

let broker: Broker;
const ERR = 'https://uri.etsi.org/ngsi-ld/errors/';
const prop = (value: unknown) => ({ type: 'Property', value });

t.before(async () => {
  broker = await startBroker(['--troe', 'embdb']);
});
t.teardown(() => broker.stop());

const req = (tenant: string, method: string, path: string, body?: unknown, snapshot?: string): Promise<Reply> =>
  call(broker, method, NGSI + path, {
    headers: snapshot === undefined ? { 'NGSILD-Tenant': tenant } : { 'NGSILD-Tenant': tenant, 'NGSILD-Snapshot': snapshot },
    body,
  });
/** A request on the Snapshot `snapshot`'s entities. */
const on = (snapshot: string, tenant: string, method: string, path: string, body?: unknown): Promise<Reply> =>
  req(tenant, method, path, body, snapshot);
const snap = (id: string) => `/snapshots/${encodeURIComponent(id)}`;
const ids = (r: Reply): string[] => (Array.isArray(r.json) ? (r.json as Array<{ id: string }>).map((e) => e.id).sort() : []);
const query = (...entities: Array<Record<string, unknown>>) => ({ type: 'Query', entities });

async function seed(tenant: string): Promise<void> {
  const r = await req(tenant, 'POST', '/entityOperations/create', [
    { id: 'urn:ngsi-ld:Building:1', type: 'Building', name: prop('Eiffel Tower'), height: prop(330) },
    { id: 'urn:ngsi-ld:Building:2', type: 'Building', name: prop('Louvre'), height: prop(21) },
    { id: 'urn:ngsi-ld:Car:1', type: 'Car', speed: prop(50) },
  ]);
  if (r.status !== 201) throw new Error(r.text);
}

const snapshotBody = (id: string, queries: unknown[], extra: Record<string, unknown> = {}) => ({
  id,
  type: 'Snapshot',
  snapshotQueries: queries,
  ...extra,
});

t.test('create captures what the queries select; the routes serve it to a request naming it', async (t) => {
  await seed('s1');
  const id = 'urn:ngsi-ld:Snapshot:a';
  const created = await req('s1', 'POST', '/snapshots', snapshotBody(id, [query({ type: 'Building' })]));
  t.equal(created.status, 201, created.text);
  t.equal(created.headers.get('location'), `${NGSI}/snapshots/${id}`);

  const got = await req('s1', 'GET', snap(id));
  t.equal(got.status, 200);
  t.match(got.json, {
    id,
    type: 'Snapshot',
    snapshotStatus: 'success',
    snapshotQueries: [{ type: 'Query', entities: [{ type: 'Building' }] }],
    snapshotQueriesDetails: [{ resultStatus: 'success' }],
    snapshotPriority: 5,
  });
  t.match(got.json.createdAt, /^\d{4}-/);
  t.notOk('storageKey' in got.json, 'where its entities are kept is not shown');
  t.notOk('expiresAt' in got.json, 'no lifetime, no expiry');

  const page = await on(id, 's1', 'GET', '/entities?type=Building');
  t.same(ids(page), ['urn:ngsi-ld:Building:1', 'urn:ngsi-ld:Building:2']);
  t.equal(page.headers.get('ngsild-snapshot'), id, '§6.3.22: the answer names the Snapshot too');
  t.same(ids(await on(id, 's1', 'GET', '/entities?type=Car')), [], 'the Car was not selected');
  const one = await on(id, 's1', 'GET', '/entities/urn:ngsi-ld:Building:1');
  t.equal(one.status, 200);
  t.same(one.json.height, prop(330));
  t.same(ids(await on(id, 's1', 'POST', '/entityOperations/query', { type: 'Query', q: 'height>100' })), ['urn:ngsi-ld:Building:1']);
  t.same((await on(id, 's1', 'GET', '/types')).json.typeList, ['Building'], "discovery sees the Snapshot's entities only");

  // The tenant changes; the Snapshot does not.
  t.equal((await req('s1', 'PATCH', '/entities/urn:ngsi-ld:Building:1/attrs', { height: prop(1) })).status, 204);
  t.equal((await req('s1', 'DELETE', '/entities/urn:ngsi-ld:Building:2')).status, 204);
  t.same((await on(id, 's1', 'GET', '/entities/urn:ngsi-ld:Building:1')).json.height, prop(330), 'as captured');
  t.equal((await on(id, 's1', 'GET', '/entities/urn:ngsi-ld:Building:2')).status, 200, 'deleted in the tenant, kept here');

  // Provision operations on the Snapshot change it alone.
  t.equal((await on(id, 's1', 'PATCH', '/entities/urn:ngsi-ld:Building:1/attrs', { height: prop(400) })).status, 204);
  t.same((await req('s1', 'GET', '/entities/urn:ngsi-ld:Building:1')).json.height, prop(1), 'the tenant keeps its own value');
  t.same((await on(id, 's1', 'GET', '/entities/urn:ngsi-ld:Building:1')).json.height, prop(400));
  const predicted = { id: 'urn:ngsi-ld:Building:9', type: 'Building', name: prop('predicted') };
  t.equal((await on(id, 's1', 'POST', '/entities', predicted)).status, 201);
  t.equal((await req('s1', 'GET', '/entities/urn:ngsi-ld:Building:9')).status, 404, 'not in the tenant');
  t.equal((await on(id, 's1', 'DELETE', '/entities?type=Building&local=true')).status, 204, 'a purge of the Snapshot’s entities');
  t.same(ids(await on(id, 's1', 'GET', '/entities?type=Building')), []);
  t.equal((await req('s1', 'GET', '/entities/urn:ngsi-ld:Building:1')).status, 200, 'the tenant keeps its own');
});

t.test('attrs keeps only the attributes named; two queries give one entity with both; statuses sum up', async (t) => {
  await seed('s2');
  const id = 'urn:ngsi-ld:Snapshot:attrs';
  const r = await req(
    's2',
    'POST',
    '/snapshots',
    snapshotBody(id, [
      { ...query({ id: 'urn:ngsi-ld:Building:1' }), attrs: ['name'] },
      { ...query({ id: 'urn:ngsi-ld:Building:1' }), attrs: ['height'] },
      query({ type: 'Nothing' }),
    ]),
  );
  t.equal(r.status, 201, r.text);
  const e = (await on(id, 's2', 'GET', '/entities/urn:ngsi-ld:Building:1')).json;
  t.same(e.name, prop('Eiffel Tower'));
  t.same(e.height, prop(330));
  const doc = (await req('s2', 'GET', snap(id))).json;
  t.same(
    doc.snapshotQueriesDetails.map((d: { resultStatus: string }) => d.resultStatus),
    ['success', 'success', 'empty'],
  );
  t.equal(doc.snapshotStatus, 'partial', 'some queries found something');
  const empty = await req('s2', 'POST', '/snapshots', snapshotBody('urn:x:empty', [query({ type: 'Nothing' })]));
  t.equal(empty.status, 201);
  t.equal((await req('s2', 'GET', snap('urn:x:empty'))).json.snapshotStatus, 'empty');
});

t.test('clone, update (lifetime and priority), delete and purge', async (t) => {
  await seed('s3');
  const a = 'urn:ngsi-ld:Snapshot:one';
  t.equal((await req('s3', 'POST', '/snapshots', snapshotBody(a, [query({ type: 'Building' })]))).status, 201);
  const noId = await req('s3', 'POST', '/snapshots', { type: 'Snapshot', snapshotQueries: [query({ type: 'Car' })] });
  t.equal(noId.status, 201);
  t.match(noId.headers.get('location'), /^\/ngsi-ld\/v1\/snapshots\/urn:ngsi-ld:Snapshot:[0-9a-f-]{36}$/);

  // Clone: the entities the source holds now, its own from then on.
  t.equal((await on(a, 's3', 'PATCH', '/entities/urn:ngsi-ld:Building:2/attrs', { height: prop(99) })).status, 204);
  const b = 'urn:ngsi-ld:Snapshot:two';
  const cloned = await req('s3', 'POST', `${snap(a)}/clone`, { id: b, type: 'Snapshot', snapshotPriority: 9 });
  t.equal(cloned.status, 201, cloned.text);
  t.same((await on(b, 's3', 'GET', '/entities/urn:ngsi-ld:Building:2')).json.height, prop(99));
  t.match((await req('s3', 'GET', snap(b))).json, {
    snapshotPriority: 9,
    snapshotStatus: 'success',
    snapshotQueries: [query({ type: 'Building' })],
  });
  t.equal((await on(b, 's3', 'PATCH', '/entities/urn:ngsi-ld:Building:2/attrs', { height: prop(7) })).status, 204);
  t.same((await on(a, 's3', 'GET', '/entities/urn:ngsi-ld:Building:2')).json.height, prop(99), 'the source keeps its own');
  t.equal((await req('s3', 'POST', `${snap(a)}/clone`, { id: b })).status, 409, 'a clone id that exists');
  const anonymous = await call(broker, 'POST', `${NGSI}${snap(a)}/clone`, { headers: { 'NGSILD-Tenant': 's3' } });
  t.equal(anonymous.status, 201, 'a clone without a body gets an id of its own');

  // Update: lifetime (expiresAt counted from now) and priority; null removes.
  t.equal((await req('s3', 'PATCH', snap(a), { snapshotLifetime: 'P1D', snapshotPriority: 2 })).status, 204);
  const updated = (await req('s3', 'GET', snap(a))).json;
  t.equal(updated.snapshotLifetime, 'P1D');
  t.equal(updated.snapshotPriority, 2);
  const inADay = Date.parse(updated.expiresAt) - Date.now();
  t.ok(inADay > 86_000_000 && inADay <= 86_400_000, `expires in a day (${inADay} ms)`);
  t.equal((await req('s3', 'PATCH', snap(a), { snapshotLifetime: null, snapshotPriority: null })).status, 204);
  const cleared = (await req('s3', 'GET', snap(a))).json;
  t.notOk('expiresAt' in cleared);
  t.equal(cleared.snapshotPriority, 5);
  t.equal((await req('s3', 'PATCH', snap(a), { snapshotStatus: 'failure' })).status, 204, 'an output-only member is ignored');
  t.equal((await req('s3', 'GET', snap(a))).json.snapshotStatus, 'success');

  // Delete: the Snapshot and its entities go; a request naming it is 404.
  t.equal((await req('s3', 'DELETE', snap(b))).status, 204);
  const gone = await req('s3', 'GET', snap(b));
  t.equal(gone.status, 404);
  t.equal(gone.json.type, `${ERR}ResourceNotFound`);
  const onGone = await on(b, 's3', 'GET', '/entities?type=Building');
  t.equal(onGone.status, 404);
  t.equal(onGone.json.type, `${ERR}ResourceNotFound`);
  t.equal(onGone.headers.get('ngsild-snapshot'), b, 'named in the error answer too');
  // Made again under the same id: none of what the deleted one held.
  t.equal((await req('s3', 'POST', '/snapshots', snapshotBody(b, [query({ type: 'Car' })]))).status, 201);
  t.same(ids(await on(b, 's3', 'GET', '/entities?type=Building,Car')), ['urn:ngsi-ld:Car:1']);

  // Purge: the Snapshots a q on their members matches.
  t.equal((await req('s3', 'PATCH', snap(b), { snapshotPriority: 1 })).status, 204);
  t.equal((await req('s3', 'DELETE', '/snapshots?q=snapshotPriority<3')).status, 204);
  t.equal((await req('s3', 'GET', snap(b))).status, 404, 'priority 1: purged');
  t.equal((await on(b, 's3', 'GET', '/entities?type=Car')).status, 404);
  t.equal((await req('s3', 'GET', snap(a))).status, 200, 'priority 5: kept');
  t.equal((await req('s3', 'DELETE', '/snapshots?q=snapshotStatus=="success"')).status, 204);
  t.equal((await req('s3', 'GET', snap(a))).status, 404, 'every successful one purged');
});

t.test('a lifetime ends a Snapshot', async (t) => {
  await seed('s8');
  const id = 'urn:x:short';
  t.equal((await req('s8', 'POST', '/snapshots', snapshotBody(id, [query({ type: 'Car' })], { snapshotLifetime: 'PT1S' }))).status, 201);
  t.equal((await on(id, 's8', 'GET', '/entities?type=Car')).json.length, 1);
  await new Promise((r) => setTimeout(r, 1100));
  t.equal((await on(id, 's8', 'GET', '/entities?type=Car')).status, 404, 'expired: gone');
  t.equal((await req('s8', 'GET', snap(id))).status, 404);
});

t.test('temporal capture: evolutions of the past copied, and a history of its own from then on', async (t) => {
  const created = await req('s4', 'POST', '/temporal/entities', {
    id: 'urn:ngsi-ld:Car:t',
    type: 'Car',
    speed: [
      { type: 'Property', value: 10, observedAt: '2026-01-01T00:00:00Z' },
      { type: 'Property', value: 20, observedAt: '2026-01-02T00:00:00Z' },
      { type: 'Property', value: 30, observedAt: '2026-01-03T00:00:00Z' },
    ],
  });
  t.equal(created.status, 201, created.text);
  const id = 'urn:ngsi-ld:Snapshot:t';
  const r = await req('s4', 'POST', '/snapshots', {
    id,
    type: 'Snapshot',
    snapshotTemporalQueries: [
      {
        ...query({ type: 'Car' }),
        temporalQ: { timerel: 'before', timeAt: '2026-01-02T12:00:00Z' },
      },
    ],
  });
  t.equal(r.status, 201, r.text);
  t.match((await req('s4', 'GET', snap(id))).json, {
    snapshotStatus: 'success',
    snapshotTemporalQueriesDetails: [{ resultStatus: 'success' }],
  });
  const history = await on(id, 's4', 'GET', '/temporal/entities/urn:ngsi-ld:Car:t?options=temporalValues');
  t.equal(history.status, 200, history.text);
  t.same(
    (history.json.speed.values as Array<[number, string]>).map((v) => v[0]),
    [10, 20],
    'the instances of the window, observedAt kept',
  );
  t.equal(
    (
      await on(id, 's4', 'POST', '/temporal/entities/urn:ngsi-ld:Car:t/attrs', {
        speed: { type: 'Property', value: 99, observedAt: '2026-02-01T00:00:00Z' },
      })
    ).status,
    204,
  );
  t.same(
    ((await on(id, 's4', 'GET', '/temporal/entities/urn:ngsi-ld:Car:t?options=temporalValues')).json.speed.values as Array<[number]>).map(
      (v) => v[0],
    ),
    [10, 20, 99],
    'provisioned into the Snapshot',
  );
  t.same(
    ((await req('s4', 'GET', '/temporal/entities/urn:ngsi-ld:Car:t?options=temporalValues')).json.speed.values as Array<[number]>).map(
      (v) => v[0],
    ),
    [10, 20, 30],
    "the tenant's history has none of the Snapshot's",
  );
  // A clone holds the evolutions too.
  t.equal((await req('s4', 'POST', `${snap(id)}/clone`, { id: 'urn:x:tclone' })).status, 201);
  t.same(
    (
      (await on('urn:x:tclone', 's4', 'GET', '/temporal/entities/urn:ngsi-ld:Car:t?options=temporalValues')).json.speed.values as Array<
        [number]
      >
    ).map((v) => v[0]),
    [10, 20, 99],
  );
  // Deleted: its history goes with it.
  t.equal((await req('s4', 'DELETE', snap('urn:x:tclone'))).status, 204);
  t.equal(
    (await req('s4', 'POST', '/snapshots', { id: 'urn:x:tclone', type: 'Snapshot', snapshotQueries: [query({ type: 'Nothing' })] })).status,
    201,
  );
  t.equal((await on('urn:x:tclone', 's4', 'GET', '/temporal/entities/urn:ngsi-ld:Car:t')).status, 404, 'nothing of the deleted one');
});

t.test('bad inputs are ProblemDetails and leave nothing behind', async (t) => {
  await seed('s5');
  const bad = async (method: string, path: string, body: unknown, status: number, type: string, what: string): Promise<void> => {
    const r = await req('s5', method, path, body);
    t.equal(r.status, status, `${what}: ${r.text}`);
    t.equal(r.json?.type, ERR + type, what);
  };
  const Q = [query({ type: 'Car' })];
  await bad('POST', '/snapshots', { type: 'Snapshot' }, 400, 'BadRequestData', 'no queries');
  await bad('POST', '/snapshots', { type: 'Other', snapshotQueries: Q }, 400, 'BadRequestData', 'wrong type');
  await bad('POST', '/snapshots', { snapshotQueries: Q }, 400, 'BadRequestData', 'no type');
  await bad('POST', '/snapshots', snapshotBody('not a uri', Q), 400, 'BadRequestData', 'id no URI');
  await bad('POST', '/snapshots', snapshotBody('urn:x:s', []), 400, 'BadRequestData', 'empty queries');
  await bad(
    'POST',
    '/snapshots',
    snapshotBody('urn:x:s', [{ type: 'Query' }]),
    400,
    'BadRequestData',
    'a query selecting nothing in particular',
  );
  await bad(
    'POST',
    '/snapshots',
    snapshotBody('urn:x:s', [{ entities: [{ type: 'Car' }] }]),
    400,
    'BadRequestData',
    'a query without type Query',
  );
  await bad('POST', '/snapshots', snapshotBody('urn:x:s', ['x']), 400, 'BadRequestData', 'a query that is no object');
  await bad(
    'POST',
    '/snapshots',
    snapshotBody('urn:x:s', [{ type: 'Query', q: '((' }]),
    400,
    'InvalidRequest',
    'a malformed q (as in a query)',
  );
  await bad('POST', '/snapshots', snapshotBody('urn:x:s', [{ ...Q[0], limit: 3 }]), 400, 'BadRequestData', 'an unknown Query member');
  await bad(
    'POST',
    '/snapshots',
    snapshotBody('urn:x:s', [{ ...Q[0], temporalQ: {} }]),
    400,
    'BadRequestData',
    'temporalQ in snapshotQueries',
  );
  await bad(
    'POST',
    '/snapshots',
    { id: 'urn:x:s', type: 'Snapshot', snapshotTemporalQueries: Q },
    400,
    'BadRequestData',
    'no temporalQ in snapshotTemporalQueries',
  );
  await bad(
    'POST',
    '/snapshots',
    { id: 'urn:x:s', type: 'Snapshot', snapshotTemporalQueries: [{ ...Q[0], temporalQ: { timerel: 'soon' } }] },
    400,
    'BadRequestData',
    'a bad temporalQ',
  );
  await bad('POST', '/snapshots', snapshotBody('urn:x:s', Q, { foo: 1 }), 400, 'BadRequestData', 'an unknown member');
  await bad(
    'POST',
    '/snapshots',
    snapshotBody('urn:x:s', Q, { snapshotLifetime: '1 day' }),
    400,
    'BadRequestData',
    'a lifetime no duration',
  );
  await bad('POST', '/snapshots', snapshotBody('urn:x:s', Q, { snapshotPriority: 11 }), 400, 'BadRequestData', 'a priority past 10');
  await bad(
    'POST',
    '/snapshots',
    snapshotBody('urn:x:s', Q, { endpoint: 'http://127.0.0.1:1/n' }),
    501,
    'OperationNotSupported',
    'an endpoint',
  );
  const many = Array.from({ length: 17 }, () => Q[0]);
  await bad('POST', '/snapshots', snapshotBody('urn:x:s', many), 403, 'TooManyResults', 'over the query limit');
  await bad('POST', '/snapshots', [], 400, 'InvalidRequest', 'an array body');
  const invalid = await call(broker, 'POST', `${NGSI}/snapshots`, {
    headers: { 'NGSILD-Tenant': 's5', 'content-type': 'application/json' },
    raw: '{',
  });
  t.equal(invalid.status, 400, 'no JSON');
  t.equal((await req('s5', 'GET', snap('urn:x:s'))).status, 404, 'none of them made a Snapshot');

  const id = 'urn:ngsi-ld:Snapshot:ok';
  t.equal((await req('s5', 'POST', '/snapshots', snapshotBody(id, Q))).status, 201);
  await bad('POST', '/snapshots', snapshotBody(id, Q), 409, 'AlreadyExists', 'an id that exists');
  await bad('PATCH', snap(id), { id: 'urn:x:other' }, 400, 'BadRequestData', 'an update changing the id');
  await bad('PATCH', snap(id), { snapshotQueries: Q }, 400, 'BadRequestData', 'an update changing the queries');
  await bad('POST', `${snap(id)}/clone`, { snapshotQueries: Q }, 400, 'BadRequestData', 'a clone with queries');
  await bad('POST', `${snap(id)}/clone`, { id: 'x y' }, 400, 'BadRequestData', 'a clone id that is no URI');
  await bad('DELETE', '/snapshots', undefined, 400, 'BadRequestData', 'a purge without q');
  await bad('DELETE', '/snapshots?q=speed>1', undefined, 400, 'BadRequestData', 'a purge q naming no Snapshot member');
  await bad('DELETE', '/snapshots?q=((', undefined, 400, 'InvalidRequest', 'a malformed purge q');
  t.equal((await req('s5', 'GET', snap(id))).status, 200, 'the failed requests left it');

  for (const [method, path] of [
    ['GET', snap('urn:x:none')],
    ['PATCH', snap('urn:x:none')],
    ['DELETE', snap('urn:x:none')],
    ['POST', `${snap('urn:x:none')}/clone`],
  ] as const) {
    const r = await req('s5', method, path, method === 'PATCH' ? { snapshotPriority: 3 } : undefined);
    t.equal(r.status, 404, `${method} ${path}`);
    t.equal(r.json?.type, `${ERR}ResourceNotFound`);
  }
  for (const [method, path] of [
    ['GET', '/entities?type=Car'],
    ['GET', '/entities/urn:ngsi-ld:Car:1'],
    ['GET', '/temporal/entities?type=Car'],
  ] as const) {
    const r = await on('urn:x:none', 's5', method, path);
    t.equal(r.status, 404, `an unknown Snapshot: ${method} ${path}`);
  }
  const badHeader = await on('not a uri', 's5', 'GET', '/entities?type=Car');
  t.equal(badHeader.status, 400, 'an NGSILD-Snapshot that is no URI');
  t.equal(badHeader.json.type, `${ERR}BadRequestData`);
  t.equal(badHeader.headers.get('ngsild-snapshot'), null, 'and it is not echoed');
  const longHeader = await on('urn:x:' + 'a'.repeat(2000), 's5', 'GET', '/entities?type=Car');
  t.equal(longHeader.status, 400, 'an NGSILD-Snapshot past the id limit');
  const longId = await req('s5', 'GET', snap('urn:x:' + 'a'.repeat(2000)));
  t.equal(longId.status, 400, 'a snapshot id past the size limit');
  const noTenant = await req('nosuch', 'POST', '/snapshots', snapshotBody('urn:x:t', Q));
  t.equal(noTenant.status, 404);
  t.equal(noTenant.json.type, `${ERR}NonexistentTenant`);
  const subs = await on(id, 's5', 'POST', '/subscriptions', {
    type: 'Subscription',
    entities: [{ type: 'Car' }],
    notification: { endpoint: { uri: 'http://127.0.0.1:1/n' } },
  });
  t.equal(subs.status, 400, 'a Snapshot serves no subscriptions');
  t.equal((await req('s5', 'GET', '/subscriptions')).json.length, 0, 'none made');
  const own = await on(id, 's5', 'GET', snap(id));
  t.equal(own.status, 200, 'the Snapshot routes themselves take the header and ignore it (§6.3.22)');
  t.equal(own.headers.get('ngsild-snapshot'), id);
  const badParam = await req('s5', 'GET', `${snap(id)}?foo=1`);
  t.equal(badParam.status, 400);
});

t.test('past --snapshotMaxEntities a query fails, and a clone is 403 TooManyResults with nothing left', async (t) => {
  const small = await startBroker(['--snapshotMaxEntities', '2']);
  t.teardown(() => small.stop());
  const at = (method: string, path: string, body?: unknown, snapshot?: string) =>
    call(small, method, NGSI + path, { body, headers: snapshot === undefined ? {} : { 'NGSILD-Snapshot': snapshot } });
  const cars = Array.from({ length: 3 }, (_, i) => ({ id: `urn:ngsi-ld:Car:${i}`, type: 'Car' }));
  t.equal((await at('POST', '/entityOperations/create', cars)).status, 201);
  const over = await at('POST', '/snapshots', snapshotBody('urn:x:over', [query({ type: 'Car' }), query({ id: 'urn:ngsi-ld:Car:0' })]));
  t.equal(over.status, 201, over.text);
  const doc = (await at('GET', snap('urn:x:over'))).json;
  t.equal(doc.snapshotStatus, 'partial');
  t.equal(doc.snapshotQueriesDetails[0].resultStatus, 'failure', 'the query past the bound failed');
  t.equal(doc.snapshotQueriesDetails[0].problemDetails.type, `${ERR}TooManyResults`);
  t.equal(doc.snapshotQueriesDetails[1].resultStatus, 'success', 'the other one did not');
  t.same(ids(await at('GET', '/entities?type=Car', undefined, 'urn:x:over')), ['urn:ngsi-ld:Car:0'], 'nothing of the failed query copied');

  const two = 'urn:x:two';
  t.equal((await at('POST', '/snapshots', snapshotBody(two, [query({ id: 'urn:ngsi-ld:Car:0,urn:ngsi-ld:Car:1' })]))).status, 201);
  // Provisioned past the bound, then cloned: the clone cannot hold them all.
  t.equal((await at('POST', '/entities', { id: 'urn:ngsi-ld:Car:9', type: 'Car' }, two)).status, 201);
  const clone = await at('POST', `${snap(two)}/clone`, { id: 'urn:x:clone' });
  t.equal(clone.status, 403);
  t.equal(clone.json.type, `${ERR}TooManyResults`);
  t.equal((await at('GET', snap('urn:x:clone'))).status, 404, 'no clone left');

  // This broker keeps no history (no --troe): a temporal capture cannot be made.
  const temporal = await at('POST', '/snapshots', {
    id: 'urn:x:temporal',
    type: 'Snapshot',
    snapshotTemporalQueries: [{ ...query({ type: 'Car' }), temporalQ: { timerel: 'after', timeAt: '2026-01-01T00:00:00Z' } }],
  });
  t.equal(temporal.status, 501, temporal.text);
  t.equal(temporal.json.type, `${ERR}OperationNotSupported`);
  t.equal((await at('GET', snap('urn:x:temporal'))).status, 404, 'and none is made');
});

t.test("a request on a Snapshot keeps and links its inline @context in the client's tenant", async (t) => {
  await seed('s6');
  const id = 'urn:ngsi-ld:Snapshot:ctx';
  t.equal((await req('s6', 'POST', '/snapshots', snapshotBody(id, [query({ type: 'Car' })]))).status, 201);
  const ctx = { Boat: 'https://example.org/Boat', hull: 'https://example.org/hull' };
  const H = { 'NGSILD-Tenant': 's6', 'NGSILD-Snapshot': id, 'content-type': 'application/ld+json' };
  const made = await call(broker, 'POST', `${NGSI}/entities`, {
    raw: JSON.stringify({ id: 'urn:ngsi-ld:Boat:1', type: 'Boat', hull: prop('steel'), '@context': ctx }),
    headers: H,
  });
  t.equal(made.status, 201, made.text);
  const q = await call(broker, 'POST', `${NGSI}/entityOperations/query`, {
    raw: JSON.stringify({ type: 'Query', entities: [{ type: 'Boat' }], '@context': ctx }),
    headers: { ...H, accept: 'application/json' },
  });
  t.equal(q.status, 200, q.text);
  t.same(ids(q), ['urn:ngsi-ld:Boat:1']);
  const link = /<([^>]+)>/.exec(q.headers.get('link') ?? '')?.[1] ?? '';
  t.match(link, /\/ngsi-ld\/v1\/jsonldContexts\/s6/, `the Link names a context of tenant s6 (${link})`);
  const path = new URL(link).pathname;
  let served: Reply | undefined;
  for (let i = 0; i < 50; i++) {
    served = await call(broker, 'GET', path, { headers: { 'NGSILD-Tenant': 's6' } });
    if (served.status === 200) break;
    await new Promise((r) => setTimeout(r, 20));
  }
  t.equal(served?.status, 200, 'the broker serves the context it linked');
  t.same(served?.json, { '@context': ctx });
});

t.test('with the pipeline threads, the Snapshot a request names crosses to the thread that serves it', async (t) => {
  const pooled = await startBroker(['--connectionPoolSize', '2'], {}, { pool: true });
  t.teardown(() => pooled.stop());
  const at = (method: string, path: string, body?: unknown, snapshot?: string) =>
    call(pooled, method, NGSI + path, { body, headers: snapshot === undefined ? {} : { 'NGSILD-Snapshot': snapshot } });
  t.equal((await at('POST', '/entities', { id: 'urn:ngsi-ld:Car:p', type: 'Car', speed: prop(1) })).status, 201);
  t.equal((await at('POST', '/snapshots', snapshotBody('urn:x:p', [query({ type: 'Car' })]))).status, 201);
  t.equal((await at('PATCH', '/entities/urn:ngsi-ld:Car:p/attrs', { speed: prop(2) })).status, 204);
  for (let i = 0; i < 4; i++) {
    const r = await at('GET', '/entities/urn:ngsi-ld:Car:p', undefined, 'urn:x:p');
    t.same(r.json?.speed, prop(1), `read ${i}: the captured value, whichever thread answers`);
  }
});

t.test('a Snapshot deleted while it is captured is not made again; one being captured is not cloned', async (t) => {
  const cars = Array.from({ length: 4000 }, (_, i) => ({ id: `urn:ngsi-ld:Car:r${i}`, type: 'Car', speed: prop(i) }));
  for (let i = 0; i < cars.length; i += 1000)
    t.equal((await req('s7', 'POST', '/entityOperations/create', cars.slice(i, i + 1000))).status, 201);
  const id = 'urn:ngsi-ld:Snapshot:race';
  const creating = req('s7', 'POST', '/snapshots', snapshotBody(id, [query({ type: 'Car' })]));
  let seen: Reply | undefined;
  for (let i = 0; i < 2000; i++) {
    seen = await req('s7', 'GET', snap(id));
    if (seen.status === 200) break;
    await new Promise((r) => setImmediate(r));
  }
  t.equal(seen?.json?.snapshotStatus, 'preparing', 'seen while its capture runs');
  const clone = await req('s7', 'POST', `${snap(id)}/clone`, { id: 'urn:x:racing-clone' });
  t.equal(clone.status, 409, 'not cloned half-way');
  t.equal(clone.json.type, `${ERR}Conflict`);
  t.equal((await req('s7', 'DELETE', snap(id))).status, 204);
  const created = await creating;
  t.equal(created.status, 404, `the create learns its Snapshot went: ${created.text}`);
  t.equal((await req('s7', 'GET', snap(id))).status, 404, 'not made again');
  t.equal((await req('s7', 'GET', `${snap('urn:x:racing-clone')}`)).status, 404);
});
