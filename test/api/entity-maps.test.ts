// EntityMaps (CIM 009 v1.9.1 §5.14.1 to §5.14.3, §5.5.14, §5.5.9.3, §6.4.3.2): three brokers of this project, the
// first with the other two as context sources. A query with entityMap=true fixes the entities and their order at the
// first page; later pages named by NGSILD-EntityMap come from the map whatever the sources do meanwhile.
import t from 'tap';
import { startBroker, call, NGSI, type Broker } from './helpers/broker.js';
import { startMockSource, type MockSource } from './helpers/mock-source.js';

let a: Broker;
let b: Broker;
let c: Broker;
t.before(async () => {
  [a, b, c] = await Promise.all([
    startBroker(['--contextSourceAlias', 'broker-a', '--forwardTimeout', '2000']),
    startBroker(['--contextSourceAlias', 'broker-b']),
    startBroker(['--contextSourceAlias', 'broker-c']),
  ]);
});
t.teardown(async () => {
  await Promise.all([a.stop(), b.stop(), c.stop()]);
});

const E = `${NGSI}/entities`;
const R = `${NGSI}/csourceRegistrations`;
const M = `${NGSI}/entityMaps`;
let n = 0;
const uid = (kind: string): string => `urn:ngsi-ld:${kind}:${process.pid}-${++n}`;

async function register(on: Broker, endpoint: string, type: string): Promise<string> {
  const id = uid('ContextSourceRegistration');
  const r = await call(on, 'POST', R, {
    body: { id, type: 'ContextSourceRegistration', endpoint, information: [{ entities: [{ type }] }] },
  });
  if (r.status !== 201) throw new Error(`registration: ${r.status} ${r.text}`);
  return id;
}
async function create(on: Broker, id: string, type: string): Promise<void> {
  const r = await call(on, 'POST', `${E}?local=true`, { body: { id, type, n: { type: 'Property', value: 1 } } });
  if (r.status !== 201) throw new Error(`create: ${r.status} ${r.text}`);
}
const ids = (json: unknown): string[] => (json as Array<{ id: string }>).map((e) => e.id);
const mapPath = (location: string | null): string => {
  if (location === null) throw new Error('no NGSILD-EntityMap header');
  return location;
};

/** Type T: two entities on a, two on b, one on c; a registers b and c. */
async function federation(type: string): Promise<{ regB: string; regC: string; onA: string[]; onB: string[]; onC: string[] }> {
  const onA = [uid(`${type}-a`), uid(`${type}-a`)];
  const onB = [uid(`${type}-b`), uid(`${type}-b`)];
  const onC = [uid(`${type}-c`)];
  for (const id of onA) await create(a, id, type);
  for (const id of onB) await create(b, id, type);
  for (const id of onC) await create(c, id, type);
  const regB = await register(a, b.url, type);
  const regC = await register(a, c.url, type);
  return { regB, regC, onA, onB, onC };
}

t.test('entityMap=true: 201, NGSILD-EntityMap, and a map of every match with its origins', async (t) => {
  const type = `Fleet${n}`;
  const f = await federation(type);
  const first = await call(a, 'GET', `${E}?type=${type}&limit=2&entityMap=true`);
  t.equal(first.status, 201, first.text);
  t.equal(first.json.length, 2);
  const location = mapPath(first.headers.get('ngsild-entitymap'));
  t.match(location, /^\/ngsi-ld\/v1\/entityMaps\/urn/);
  const map = await call(a, 'GET', location);
  t.equal(map.status, 200, map.text);
  t.equal(map.json.type, 'EntityMap');
  t.ok(Date.parse(map.json.expiresAt) > Date.now());
  const entries = map.json.entityMap as Record<string, string[]>;
  t.same(Object.keys(entries).sort(), [...f.onA, ...f.onB, ...f.onC].sort(), 'every match, on every source');
  for (const id of f.onA) t.same(entries[id], ['@none']);
  for (const id of f.onB) t.same(entries[id], [f.regB]);
  for (const id of f.onC) t.same(entries[id], [f.regC]);
  t.same(ids(first.json), Object.keys(entries).slice(0, 2), 'the first page is the head of the map');
});

t.test('later pages come from the map: stable order while the sources change, gone entities dropped', async (t) => {
  const type = `Stable${n}`;
  const f = await federation(type);
  const first = await call(a, 'GET', `${E}?type=${type}&limit=2&entityMap=true`);
  t.equal(first.status, 201, first.text);
  const location = mapPath(first.headers.get('ngsild-entitymap'));
  const order = Object.keys((await call(a, 'GET', location)).json.entityMap);
  // Meanwhile: a new match on b (sorting first) and one entity of the third page deleted where it lives.
  await create(b, `urn:ngsi-ld:${type}-0:first`, type);
  const gone = order[4]!;
  const home = f.onA.includes(gone) ? a : f.onB.includes(gone) ? b : c;
  t.equal((await call(home, 'DELETE', `${E}/${gone}?local=true`)).status, 204);
  const headers = { 'ngsild-entitymap': location };
  const second = await call(a, 'GET', `${E}?type=${type}&limit=2&offset=2`, { headers });
  t.equal(second.status, 200, second.text);
  t.equal(second.headers.get('ngsild-entitymap'), location, 'the map in use is named in the answer');
  t.same(ids(second.json), order.slice(2, 4), 'the second page is the map’s, not the new query’s');
  const third = await call(a, 'GET', `${E}?type=${type}&limit=2&offset=4`, { headers });
  t.same(third.json, [], 'the deleted entity is not served and the new one never is');
  const after = await call(a, 'GET', location);
  t.notOk(gone in after.json.entityMap, 'an entity that no longer matches leaves the map');
  t.equal(Object.keys(after.json.entityMap).length, 4);
  const count = await call(a, 'GET', `${E}?type=${type}&limit=0&count=true`, { headers });
  t.equal(count.headers.get('ngsild-results-count'), '4', 'count is the map’s');
});

t.test('a page is filled from the next entries when some no longer match', async (t) => {
  const type = `Fill${n}`;
  const f = await federation(type);
  const first = await call(a, 'GET', `${E}?type=${type}&limit=1&entityMap=true`);
  const location = mapPath(first.headers.get('ngsild-entitymap'));
  const order = Object.keys((await call(a, 'GET', location)).json.entityMap);
  const gone = order[1]!;
  const home = f.onA.includes(gone) ? a : f.onB.includes(gone) ? b : c;
  await call(home, 'DELETE', `${E}/${gone}?local=true`);
  const r = await call(a, 'GET', `${E}?type=${type}&limit=2&offset=1`, { headers: { 'ngsild-entitymap': location } });
  t.same(ids(r.json), order.slice(2, 4), 'two entities, the one gone skipped');
});

t.test('a source that stopped answering: its entities stay in the map, the page warns', async (t) => {
  const type = `Dead${n}`;
  const d = await startBroker(['--contextSourceAlias', 'broker-d']);
  const local = uid(`${type}-a`);
  const remote = uid(`${type}-d`);
  await create(a, local, type);
  await create(d, remote, type);
  const reg = await register(a, d.url, type);
  const first = await call(a, 'GET', `${E}?type=${type}&entityMap=true`);
  t.equal(first.status, 201, first.text);
  t.same(ids(first.json).sort(), [local, remote].sort());
  const location = mapPath(first.headers.get('ngsild-entitymap'));
  await d.stop();
  const again = await call(a, 'GET', `${E}?type=${type}`, { headers: { 'ngsild-entitymap': location } });
  t.equal(again.status, 200, again.text);
  t.same(ids(again.json), [local]);
  t.match(again.headers.get('ngsild-warning') ?? '', reg, 'the warning names the registration');
  const map = await call(a, 'GET', location);
  t.same(Object.keys(map.json.entityMap).sort(), [local, remote].sort(), 'nothing is inferred from a source without answer');
});

t.test('an unknown or expired map named in NGSILD-EntityMap is made anew', async (t) => {
  const type = `Anew${n}`;
  await federation(type);
  const unknown = await call(a, 'GET', `${E}?type=${type}`, { headers: { 'ngsild-entitymap': 'urn:ngsi-ld:EntityMap:none' } });
  t.equal(unknown.status, 201, unknown.text);
  t.not(unknown.headers.get('ngsild-entitymap'), null);
  const short = await call(a, 'GET', `${E}?type=${type}&entityMap=true&entityMapLifetime=PT1S`);
  const location = mapPath(short.headers.get('ngsild-entitymap'));
  await new Promise((resolve) => setTimeout(resolve, 1100));
  t.equal((await call(a, 'GET', location)).status, 404, 'an expired map is gone');
  const r = await call(a, 'GET', `${E}?type=${type}`, { headers: { 'ngsild-entitymap': location } });
  t.equal(r.status, 201);
  t.not(r.headers.get('ngsild-entitymap'), location);
});

t.test('local entities only: a map is made and served too', async (t) => {
  const type = `Local${n}`;
  const local = [uid(type), uid(type), uid(type)];
  for (const id of local) await create(a, id, type);
  const first = await call(a, 'GET', `${E}?type=${type}&limit=2&entityMap=true`);
  t.equal(first.status, 201);
  const location = mapPath(first.headers.get('ngsild-entitymap'));
  const second = await call(a, 'GET', `${E}?type=${type}&limit=2&offset=2`, { headers: { 'ngsild-entitymap': location } });
  t.equal(second.json.length, 1);
  t.same([...ids(first.json), ...ids(second.json)].sort(), [...local].sort(), 'no entity twice, none missing');
});

t.test('Update EntityMap: expiresAt changes, output-only members are ignored, bad fragments are 400', async (t) => {
  const type = `Upd${n}`;
  await federation(type);
  const location = mapPath((await call(a, 'GET', `${E}?type=${type}&entityMap=true`)).headers.get('ngsild-entitymap'));
  const before = (await call(a, 'GET', location)).json;
  const at = new Date(Date.now() + 7_200_000).toISOString();
  const ok = await call(a, 'PATCH', location, { body: { expiresAt: at, entityMap: { 'urn:x:y': ['@none'] }, linkedMaps: {} } });
  t.equal(ok.status, 204, ok.text);
  const after = (await call(a, 'GET', location)).json;
  t.equal(after.expiresAt, at);
  t.same(after.entityMap, before.entityMap, 'entityMap is output-only: ignored');
  const bad: Array<[unknown, string]> = [
    [{ expiresAt: 'tomorrow' }, 'not a DateTime'],
    [{ expiresAt: '2000-01-01T00:00:00Z' }, 'in the past'],
    [{ expiresAt: 5 }, 'not a string'],
    [{ colour: 'red' }, 'unknown member'],
    [{ id: 'urn:ngsi-ld:EntityMap:other' }, 'another id'],
    [{ type: 'Entity' }, 'another type'],
  ];
  for (const [body, why] of bad) {
    const r = await call(a, 'PATCH', location, { body });
    t.equal(r.status, 400, why);
    t.equal(r.json.type, 'https://uri.etsi.org/ngsi-ld/errors/BadRequestData', why);
  }
  const arr = await call(a, 'PATCH', location, { raw: '[1]', headers: { 'content-type': 'application/json' } });
  t.equal(arr.status, 400, 'an array is no fragment');
  t.equal((await call(a, 'GET', location)).json.expiresAt, at, 'no bad fragment changed anything');
});

t.test('Retrieve and Delete EntityMap: 404 for unknown ids, 400 for ids that are no URI', async (t) => {
  const type = `Del${n}`;
  await federation(type);
  const location = mapPath((await call(a, 'GET', `${E}?type=${type}&entityMap=true`)).headers.get('ngsild-entitymap'));
  t.equal((await call(a, 'DELETE', location)).status, 204);
  const gone = await call(a, 'GET', location);
  t.equal(gone.status, 404);
  t.equal(gone.json.type, 'https://uri.etsi.org/ngsi-ld/errors/ResourceNotFound');
  t.equal((await call(a, 'DELETE', location)).status, 404);
  t.equal((await call(a, 'PATCH', location, { body: { expiresAt: new Date(Date.now() + 60_000).toISOString() } })).status, 404);
  for (const method of ['GET', 'DELETE']) {
    const r = await call(a, method, `${M}/not-a-uri`);
    t.equal(r.status, 400, `${method} not-a-uri`);
    t.equal(r.json.type, 'https://uri.etsi.org/ngsi-ld/errors/BadRequestData');
  }
  const other = await call(a, 'GET', location.replace(/[^/]+$/, 'urn:ngsi-ld:EntityMap:none'));
  t.equal(other.status, 404);
});

t.test('bad entityMap inputs of a query are 400 ProblemDetails', async (t) => {
  const cases: Array<[string, Record<string, string>, string]> = [
    [`${E}?type=T&entityMap=yes`, {}, 'entityMap not a boolean'],
    [`${E}?type=T&entityMap=true&entityMapLifetime=1hour`, {}, 'lifetime not a duration'],
    [`${E}?type=T&entityMap=true&entityMapLifetime=PT0S`, {}, 'lifetime zero'],
    [`${E}?type=T`, { 'ngsild-entitymap': 'no uri here' }, 'header naming no map'],
    [`${E}?type=T`, { 'ngsild-entitymap': '/ngsi-ld/v1/entityMaps/%E0%A4%A' }, 'header that does not decode'],
    [`${E}?type=T&entityMap=`, {}, 'entityMap empty'],
    [`${E}?type=T&entityMap=TRUE`, {}, 'entityMap not lower case'],
    [`${E}?type=T&entityMap=true&entityMap=false`, {}, 'entityMap twice'],
    [`${E}?type=T&entityMap=true&entityMapLifetime=-PT1H`, {}, 'lifetime negative'],
    [`${E}/urn:ngsi-ld:T:1?entityMap=yes`, {}, 'entityMap on a retrieve not a boolean'],
    [`${M}?type=T&entityMap=yes`, {}, 'entityMap of Create EntityMap not a boolean'],
    [`${M}?type=T`, { 'ngsild-entitymap': 'no uri here' }, 'Create EntityMap with a header naming no map'],
  ];
  for (const [path, headers, why] of cases) {
    const r = await call(a, 'GET', path, { headers });
    t.equal(r.status, 400, `${why}: ${r.text}`);
    t.equal(r.json.type, 'https://uri.etsi.org/ngsi-ld/errors/BadRequestData', why);
  }
});

t.test('a map is made per tenant: another tenant does not see it', async (t) => {
  const type = `Tenant${n}`;
  await create(a, uid(type), type);
  const location = mapPath((await call(a, 'GET', `${E}?type=${type}&entityMap=true`)).headers.get('ngsild-entitymap'));
  t.equal((await call(a, 'GET', location, { headers: { 'ngsild-tenant': 'other' } })).status, 404);
});

t.test('Create EntityMap (v1.9.1 §5.14.4): GET and POST /entityMaps answer the map, 201 and NGSILD-EntityMap', async (t) => {
  const type = `Create${n}`;
  const f = await federation(type);
  const all = [...f.onA, ...f.onB, ...f.onC].sort();
  const viaGet = await call(a, 'GET', `${M}?type=${type}&entityMapLifetime=PT10M`);
  t.equal(viaGet.status, 201, viaGet.text);
  t.equal(viaGet.json.type, 'EntityMap');
  t.same(Object.keys(viaGet.json.entityMap).sort(), all);
  t.ok(Date.parse(viaGet.json.expiresAt) <= Date.now() + 600_000, 'the lifetime asked');
  const location = mapPath(viaGet.headers.get('ngsild-entitymap'));
  t.same((await call(a, 'GET', location)).json.entityMap, viaGet.json.entityMap, 'the map is stored');
  const viaPost = await call(a, 'POST', M, { body: { type: 'Query', entities: [{ type }] } });
  t.equal(viaPost.status, 201, viaPost.text);
  t.same(Object.keys(viaPost.json.entityMap).sort(), all, 'a Query body is forwarded as a POST query');
  t.not(viaPost.headers.get('ngsild-entitymap'), location, 'a new map each time');
  const page = await call(a, 'GET', `${E}?type=${type}&limit=10`, { headers: { 'ngsild-entitymap': location } });
  t.same(ids(page.json), Object.keys(viaGet.json.entityMap), 'a query pages through a map made this way');
  const bad: Array<[string, string, unknown, string]> = [
    ['GET', M, undefined, 'no selection'],
    ['GET', `${M}?type=${type}&entityMapLifetime=soon`, undefined, 'bad lifetime'],
    ['GET', `${M}?type=${type}&colour=red`, undefined, 'unknown parameter'],
    ['POST', M, { type: 'Query', colour: 'red' }, 'unknown Query member'],
    ['POST', M, { type: 'Subscription', entities: [{ type }] }, 'not a Query'],
  ];
  for (const [method, path, body, why] of bad) {
    const r = await call(a, method, path, body === undefined ? {} : { body });
    t.equal(r.status, 400, `${why}: ${r.text}`);
    t.match(r.json.type, /BadRequestData|InvalidRequest/, why);
  }
});

t.test('a tenant keeps at most 1000 live maps: making one more removes the one expiring first', async (t) => {
  const tenant = { 'ngsild-tenant': `maps${process.pid}` };
  const type = `Bound${n}`;
  const made = await call(a, 'POST', `${E}?local=true`, { body: { id: uid(type), type }, headers: tenant });
  t.equal(made.status, 201, made.text);
  const locations: string[] = [];
  for (let i = 0; i < 1001; i++) {
    const r = await call(a, 'GET', `${M}?type=${type}`, { headers: tenant });
    if (r.status !== 201) throw new Error(`map ${i}: ${r.status} ${r.text}`);
    locations.push(mapPath(r.headers.get('ngsild-entitymap')));
  }
  t.equal((await call(a, 'GET', locations[0]!, { headers: tenant })).status, 404, 'the oldest map made room');
  t.equal((await call(a, 'GET', locations[1]!, { headers: tenant })).status, 200);
  t.equal((await call(a, 'GET', locations[1000]!, { headers: tenant })).status, 200);
});

t.test('a POST query naming an EntityMap is 501, not a silent answer without one', async (t) => {
  const body = { type: 'Query', entities: [{ type: 'T' }] };
  const flag = await call(a, 'POST', `${NGSI}/entityOperations/query?entityMap=true`, { body });
  t.equal(flag.status, 501, flag.text);
  t.equal(flag.json.type, 'https://uri.etsi.org/ngsi-ld/errors/OperationNotSupported');
  const header = await call(a, 'POST', `${NGSI}/entityOperations/query`, { body, headers: { 'ngsild-entitymap': 'urn:x:y' } });
  t.equal(header.status, 501);
  t.equal((await call(a, 'POST', `${NGSI}/entityOperations/query?entityMap=false`, { body })).status, 200);
  t.equal((await call(a, 'POST', `${NGSI}/entityOperations/query?entityMap=maybe`, { body })).status, 400);
});

t.test('a map holds every match of a source that answers page by page; no linkedMaps', async (t) => {
  // A plain source of 1,500 entities that pages at 1,000 and gives no count: asked again from offset 1000.
  const type = `Many${++n}`;
  const entity = (i: number): Record<string, unknown> => ({ id: `urn:ngsi-ld:${type}:${i}`, type, n: { type: 'Property', value: i } });
  const source: MockSource = await startMockSource((r) => {
    const offset = Number(new URL(r.url, 'http://x').searchParams.get('offset') ?? '0');
    const limit = Math.min(Number(new URL(r.url, 'http://x').searchParams.get('limit') ?? '20'), 1000);
    const all = Array.from({ length: 1500 }, (_, i) => entity(i));
    return { status: 200, body: all.slice(offset, offset + limit) };
  });
  t.teardown(() => source.stop());
  const reg = await register(a, source.url, type);
  const made = await call(a, 'GET', `${M}?type=${type}`);
  t.equal(made.status, 201, made.text.slice(0, 300));
  t.equal(Object.keys(made.json.entityMap).length, 1500, 'every entity, not the first 1,000');
  t.equal(made.json.linkedMaps, undefined, 'no linkedMaps: the broker made no map on its sources');
  t.equal((await call(a, 'GET', mapPath(made.headers.get('ngsild-entitymap')))).json.linkedMaps, undefined);
  const asked = source.received.map((r) => new URL(r.url, 'http://x').searchParams.get('offset'));
  t.same(asked, [null, '1000'], 'the second page asked from 1000');
  await call(a, 'DELETE', `${R}/${reg}`);
});

t.test('a source failing on a later page: the map says so in NGSILD-Warning, it is never cut silently', async (t) => {
  const type = `Half${++n}`;
  const source: MockSource = await startMockSource((r) => {
    if (new URL(r.url, 'http://x').searchParams.get('offset') !== null) return { status: 500, body: {} };
    return { status: 200, body: Array.from({ length: 1000 }, (_, i) => ({ id: `urn:ngsi-ld:${type}:${i}`, type })) };
  });
  t.teardown(() => source.stop());
  const reg = await register(a, source.url, type);
  const made = await call(a, 'GET', `${E}?type=${type}&entityMap=true&limit=5`);
  t.equal(made.status, 201, made.text.slice(0, 300));
  t.match(made.headers.get('ngsild-warning') ?? '', /answered 500 for its entities from 1000 on/);
  await call(a, 'DELETE', `${R}/${reg}`);
});

t.test('POST /entityMaps asks each source for all its matches, not its default page', async (t) => {
  const type = `Posted${++n}`;
  const onB: string[] = [];
  for (let i = 0; i < 25; i++) onB.push(uid(type));
  const r = await call(b, 'POST', `${NGSI}/entityOperations/create?local=true`, {
    body: onB.map((id) => ({ id, type, n: { type: 'Property', value: 1 } })),
  });
  t.equal(r.status, 201, r.text.slice(0, 200));
  const reg = await register(a, b.url, type);
  const made = await call(a, 'POST', M, { body: { type: 'Query', entities: [{ type }] } });
  t.equal(made.status, 201, made.text.slice(0, 300));
  t.same(Object.keys(made.json.entityMap).sort(), onB.sort(), 'all 25, not the 20 of a page');
  await call(a, 'DELETE', `${R}/${reg}`);
});
