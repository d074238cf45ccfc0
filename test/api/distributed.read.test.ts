// Distributed retrieve and query (CIM 009 v1.8.1 §4.3.6, §5.7.1.4, §5.7.2.4, §6.3.18): brokers of this project as
// each other's context sources, every registration mode, local=true, Via and loops, and a plain HTTP source for
// the shapes of failure (unreachable, slow, wrong answers) and for what a forwarded request carries.
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
let n = 0;
const uid = (kind: string): string => `urn:ngsi-ld:${kind}:${process.pid}-${++n}`;

async function register(on: Broker, endpoint: string, extra: Record<string, unknown>): Promise<string> {
  const id = uid('ContextSourceRegistration');
  const r = await call(on, 'POST', R, { body: { id, type: 'ContextSourceRegistration', endpoint, ...extra } });
  if (r.status !== 201) throw new Error(`registration: ${r.status} ${r.text}`);
  return id;
}
const unregister = async (on: Broker, id: string): Promise<void> => {
  await call(on, 'DELETE', `${R}/${id}`);
};
async function create(on: Broker, entity: Record<string, unknown>): Promise<void> {
  const r = await call(on, 'POST', `${E}?local=true`, { body: entity });
  if (r.status !== 201) throw new Error(`create: ${r.status} ${r.text}`);
}
const prop = (value: unknown, observedAt?: string): Record<string, unknown> =>
  observedAt === undefined ? { type: 'Property', value } : { type: 'Property', value, observedAt };

t.test('inclusive: an entity only a source holds is retrieved and queried through the broker; local=true does not forward', async (t) => {
  const type = `Car${n}`;
  const reg = await register(a, b.url, { information: [{ entities: [{ type }] }] });
  const id = uid('Car');
  await create(b, { id, type, speed: prop(50) });
  const r = await call(a, 'GET', `${E}/${id}`);
  t.equal(r.status, 200, r.text);
  t.same(r.json.speed, { type: 'Property', value: 50 });
  t.equal(r.headers.get('ngsild-warning'), null);
  const q = await call(a, 'GET', `${E}?type=${type}`);
  t.equal(q.status, 200, q.text);
  t.same(
    q.json.map((e: { id: string }) => e.id),
    [id],
  );
  t.equal((await call(a, 'GET', `${E}/${id}?local=true`)).status, 404, 'local=true: the local copy only, and there is none');
  const ql = await call(a, 'GET', `${E}?type=${type}&local=true`);
  t.same(ql.json, [], 'local=true query: nothing local');
  await unregister(a, reg);
  t.equal((await call(a, 'GET', `${E}/${id}`)).status, 404, 'without the registration the broker knows nothing of it');
});

t.test('an entity split across the broker and two sources is merged: attributes, datasetIds, the later observedAt', async (t) => {
  const type = `Split${n}`;
  const id = uid('Split');
  await create(a, { id, type, local: prop('a'), shared: prop('old', '2024-01-01T00:00:00Z') });
  await create(b, { id, type, fromB: prop('b'), shared: prop('new', '2024-06-01T00:00:00Z') });
  await create(c, { id, type, fromC: prop('c'), shared: { type: 'Property', value: 'c-instance', datasetId: 'urn:ds:c' } });
  const r1 = await register(a, b.url, { information: [{ entities: [{ type }] }] });
  const r2 = await register(a, c.url, { information: [{ entities: [{ type }] }] });
  const r = await call(a, 'GET', `${E}/${id}`);
  t.equal(r.status, 200, r.text);
  t.equal(r.json.local.value, 'a');
  t.equal(r.json.fromB.value, 'b');
  t.equal(r.json.fromC.value, 'c');
  t.same(
    r.json.shared.map((i: { value: string }) => i.value).sort(),
    ['c-instance', 'new'],
    'the default instance observed later wins; another datasetId is added',
  );
  const kv = await call(a, 'GET', `${E}/${id}?options=keyValues&attrs=fromB,local`);
  t.same(kv.json, { id, type, fromB: 'b', local: 'a' }, 'rendered with the request options after merging');
  const q = await call(a, 'GET', `${E}?type=${type}`);
  t.equal(q.json.length, 1, 'one entity in the query, not one per source');
  t.equal(q.json[0].fromC.value, 'c');
  await unregister(a, r1);
  await unregister(a, r2);
});

t.test('a query across sources is paged and counted after merging', async (t) => {
  const type = `Paged${n}`;
  const ids: string[] = [];
  for (const [i, broker] of [a, a, b, b, c].entries()) {
    const id = `urn:ngsi-ld:Paged:${n}-${i}`;
    ids.push(id);
    await create(broker, { id, type, rank: prop(i) });
  }
  const r1 = await register(a, b.url, { information: [{ entities: [{ type }] }] });
  const r2 = await register(a, c.url, { information: [{ entities: [{ type }] }] });
  const all = await call(a, 'GET', `${E}?type=${type}&orderBy=rank;desc&count=true`);
  t.equal(all.headers.get('ngsild-results-count'), '5');
  t.same(
    all.json.map((e: { id: string }) => e.id),
    [...ids].reverse(),
  );
  const p2 = await call(a, 'GET', `${E}?type=${type}&orderBy=rank&limit=2&offset=2`);
  t.same(
    p2.json.map((e: { id: string }) => e.id),
    ids.slice(2, 4),
    'the second page of the merged order',
  );
  t.match(p2.headers.get('link') ?? '', /rel="next"/, 'another page follows');
  await unregister(a, r1);
  await unregister(a, r2);
});

t.test('exclusive: the registered attributes of an entity come from the source; auxiliary: the local value wins', async (t) => {
  const type = `Excl${n}`;
  const id = uid('Excl');
  await create(a, { id, type, brand: prop('local') });
  await create(b, { id, type, speed: prop(88), brand: prop('from-b') });
  const reg = await register(a, b.url, { mode: 'exclusive', information: [{ entities: [{ type, id }], propertyNames: ['speed'] }] });
  const r = await call(a, 'GET', `${E}/${id}`);
  t.equal(r.json.speed.value, 88);
  t.equal(r.json.brand.value, 'local', 'what the exclusive registration does not name is not taken from it');
  const q = await call(a, 'GET', `${E}?type=${type}`);
  t.equal(q.json[0].speed.value, 88);
  await unregister(a, reg);

  const aux = await register(a, b.url, { mode: 'auxiliary', information: [{ entities: [{ type }] }] });
  const r2 = await call(a, 'GET', `${E}/${id}`);
  t.equal(r2.json.brand.value, 'local', 'auxiliary: the local attribute stays');
  t.equal(r2.json.speed.value, 88, 'auxiliary: what the broker lacks is filled in');
  await unregister(a, aux);
});

t.test('redirect: two sources answer for an entity the broker does not hold; each part merged', async (t) => {
  const type = `Red${n}`;
  const id = uid('Red');
  await create(b, { id, type, p1: prop(1) });
  await create(c, { id, type, p2: prop(2) });
  const r1 = await register(a, b.url, { mode: 'redirect', operations: ['redirectionOps'], information: [{ entities: [{ type }] }] });
  const r2 = await register(a, c.url, { mode: 'redirect', operations: ['redirectionOps'], information: [{ entities: [{ type }] }] });
  const r = await call(a, 'GET', `${E}/${id}`);
  t.equal(r.status, 200, r.text);
  t.equal(r.json.p1.value, 1);
  t.equal(r.json.p2.value, 2);
  await unregister(a, r1);
  await unregister(a, r2);
});

t.test('operations: a registration offering no retrieve is not asked for one', async (t) => {
  const type = `Ops${n}`;
  const id = uid('Ops');
  await create(b, { id, type, p: prop(1) });
  const none = await register(a, b.url, { operations: ['createEntity'], information: [{ entities: [{ type }] }] });
  t.equal((await call(a, 'GET', `${E}/${id}`)).status, 404, 'no read offered');
  await unregister(a, none);
  const reg = await register(a, b.url, { operations: ['queryBatch'], information: [{ entities: [{ type }] }] });
  t.equal((await call(a, 'GET', `${E}?type=${type}`)).json.length, 0, 'queryEntity not offered');
  const post = await call(a, 'POST', `${NGSI}/entityOperations/query`, { body: { type: 'Query', entities: [{ type }] } });
  t.equal(post.json.length, 1, 'queryBatch is: POST /entityOperations/query is forwarded as such');
  const r = await call(a, 'GET', `${E}/${id}`);
  t.equal(r.status, 200, 'a retrieve asks a source offering queryBatch only with a Query by id');
  t.equal(r.json.p.value, 1);
  await unregister(a, reg);
  const viaGet = await register(a, b.url, { operations: ['queryEntity'], information: [{ entities: [{ type }] }] });
  t.equal((await call(a, 'GET', `${E}/${id}?attrs=p`)).json.p.value, 1, 'and one offering queryEntity only with GET /entities?id=');
  t.equal((await call(a, 'GET', `${E}/urn:ngsi-ld:Ops:none`)).status, 404, 'an empty list is no entity');
  await unregister(a, viaGet);
});

t.test('Via: a request naming this broker is a loop (508); brokers registered on each other still answer', async (t) => {
  const loop = await call(a, 'GET', `${E}/urn:ngsi-ld:X:1`, { headers: { via: '1.1 someone, 1.1 broker-a' } });
  t.equal(loop.status, 404, 'nothing to forward: the loop does not matter');
  const type = `Loop${n}`;
  const id = uid('Loop');
  await create(b, { id, type, p: prop('b') });
  const ab = await register(a, b.url, { information: [{ entities: [{ type }] }] });
  const ba = await register(b, a.url, { information: [{ entities: [{ type }] }] });
  const r508 = await call(a, 'GET', `${E}/${id}`, { headers: { via: '1.1 broker-a' } });
  t.equal(r508.status, 508, r508.text);
  t.equal(r508.json.type, 'https://uri.etsi.org/ngsi-ld/errors/LoopDetected');
  const r = await call(a, 'GET', `${E}/${id}`);
  t.equal(r.status, 200, 'a → b → a stops at a: b answers what it holds');
  t.equal(r.json.p.value, 'b');
  const q = await call(a, 'GET', `${E}?type=${type}`);
  t.equal(q.json.length, 1);
  await unregister(a, ab);
  await unregister(b, ba);
});

t.test('a plain source: what a forwarded request carries, and every way a source can fail', async (t) => {
  const type = `Mock${n}`;
  const id = uid('Mock');
  let mode = 'ok';
  const mock: MockSource = await startMockSource((r) => {
    if (mode === 'hang') return { status: 200, hang: true };
    if (mode === '500') return { status: 500, body: { type: 'x' } };
    if (mode === 'garbage') return { status: 200, raw: '{not json' };
    if (mode === 'invalid')
      return { status: 200, body: r.url.includes('?') || r.url.endsWith('/entities') ? [{ id: 'no uri' }] : { id, type: 5 } };
    return { status: 200, body: r.url.includes('/entities/') ? { id, type, s: prop(1) } : [{ id, type, s: prop(1) }] };
  });
  t.teardown(() => mock.stop());
  await create(a, { id, type, l: prop('local') });
  const reg = await register(a, mock.url + '/base/', {
    tenant: 'remote',
    contextSourceInfo: [
      { key: 'X-Token', value: 'abc' },
      { key: 'Via', value: 'forged' },
      { key: 'bad header', value: 'x' },
    ],
    management: { timeout: 300 },
    information: [{ entities: [{ type }] }],
  });
  const r = await call(a, 'GET', `${E}/${id}?options=keyValues&local=false`, {
    headers: { link: '<http://127.0.0.1:1/ctx.jsonld>; rel="http://www.w3.org/ns/json-ld#context"; type="application/ld+json"' },
  });
  // The Link names a context nobody serves: the broker answers 503 before anything is forwarded.
  t.equal(r.status, 503);
  t.equal(mock.received.length, 0, 'nothing was forwarded for a request the broker refused');
  const ok = await call(a, 'GET', `${E}/${id}?options=keyValues&local=false`, { headers: { via: '1.1 upstream' } });
  t.same(ok.json, { id, type, l: 'local', s: 1 }, ok.text);
  const sent = mock.received.at(-1)!;
  t.equal(
    sent.url,
    `/base/ngsi-ld/v1/entities/${encodeURIComponent(id).replace(/%3A/g, ':')}`,
    'below the endpoint; options and local stay here',
  );
  t.equal(sent.headers.via, '1.1 upstream, 1.1 broker-a');
  t.equal(sent.headers['ngsild-tenant'], 'remote');
  t.equal(sent.headers['x-token'], 'abc');
  t.equal(sent.headers.accept, 'application/json');

  for (const [m, why] of [
    ['hang', 'timeout'],
    ['500', 'answered 500'],
    ['garbage', 'answered no entity'],
    ['invalid', 'answered no entity'],
  ] as const) {
    mode = m;
    const got = await call(a, 'GET', `${E}/${id}`);
    t.equal(got.status, 200, `${m}: the local part answers`);
    t.equal(got.json.l.value, 'local');
    t.equal(got.json.s, undefined);
    t.match(got.headers.get('ngsild-warning') ?? '', why, `${m}: NGSILD-Warning says why`);
    const q = await call(a, 'GET', `${E}?type=${type}`);
    t.equal(q.status, 200, `${m}: query answers`);
    t.equal(q.json.length, 1);
    t.match(q.headers.get('ngsild-warning') ?? '', m === 'invalid' ? 'not valid' : why);
  }
  await unregister(a, reg);
});

t.test('an unreachable source: its part is left out with a warning; an entity only it holds is 404', async (t) => {
  const type = `Dead${n}`;
  const id = uid('Dead');
  await create(a, { id, type, l: prop(1) });
  const reg = await register(a, 'http://127.0.0.1:9', { information: [{ entities: [{ type }] }] });
  const r = await call(a, 'GET', `${E}/${id}`);
  t.equal(r.status, 200);
  t.match(
    r.headers.get('ngsild-warning') ?? '',
    /^199 broker-a "context source of registration urn:ngsi-ld:ContextSourceRegistration:[^"]+: unreachable"$/,
  );
  const missing = await call(a, 'GET', `${E}/${uid('Dead')}`);
  t.equal(missing.status, 404);
  t.equal(missing.json.type, 'https://uri.etsi.org/ngsi-ld/errors/ResourceNotFound');
  t.match(missing.headers.get('ngsild-warning') ?? '', /unreachable/, 'the 404 says a source could not be asked');
  await unregister(a, reg);
});

t.test('/info/sourceIdentity names the broker by its --contextSourceAlias; a bad alias stops the start', async (t) => {
  const r = await call(a, 'GET', `${NGSI}/info/sourceIdentity`);
  t.equal(r.status, 200, r.text);
  t.equal(r.json.type, 'ContextSourceIdentity');
  t.equal(r.json.id, 'urn:ngsi-ld:ContextSource:broker-a');
  t.equal(r.json.contextSourceAlias, 'broker-a');
  t.match(r.json.contextSourceUptime, /^PT(\d+H)?(\d+M)?\d+S$/);
  t.ok(Date.parse(r.json.contextSourceTimeAt) > 0);
  for (const bad of ['', 'a b', 'a,b', 'x'.repeat(201), 'é'])
    await t.rejects(startBroker(['--contextSourceAlias', bad]), /contextSourceAlias/, JSON.stringify(bad.slice(0, 20)));
});

t.test('cooldown: a source that failed is not asked again until its cooldown has passed', async (t) => {
  const mock = await startMockSource(() => ({ status: 200, hang: true }));
  t.teardown(() => mock.stop());
  const type = `Cool${n}`;
  const id = uid('Cool');
  await create(a, { id, type, l: prop(1) });
  const reg = await register(a, mock.url, { management: { timeout: 200, cooldown: 600_000 }, information: [{ entities: [{ type }] }] });
  t.match((await call(a, 'GET', `${E}/${id}`)).headers.get('ngsild-warning') ?? '', /timeout/);
  const second = await call(a, 'GET', `${E}/${id}`);
  t.equal(second.status, 200);
  t.match(second.headers.get('ngsild-warning') ?? '', /cooling down/);
  t.equal(mock.received.length, 1, 'the second request was not sent');
  await unregister(a, reg);
});

t.test('csf: the sources asked are those whose registration properties meet it; a bad csf is 400', async (t) => {
  const type = `Csf${n}`;
  const [inB, inC] = [uid('Csf'), uid('Csf')];
  await create(b, { id: inB, type });
  await create(c, { id: inC, type });
  const r1 = await register(a, b.url, { region: 'north', information: [{ entities: [{ type }] }] });
  const r2 = await register(a, c.url, { region: 'south', information: [{ entities: [{ type }] }] });
  const ids = async (query: string): Promise<string[]> =>
    (await call(a, 'GET', `${E}?type=${type}${query}`)).json.map((e: { id: string }) => e.id).sort();
  t.same(await ids(''), [inB, inC].sort());
  t.same(await ids('&csf=region==%22north%22'), [inB]);
  t.same(await ids('&csf=region==%22east%22'), []);
  const post = await call(a, 'POST', `${NGSI}/entityOperations/query`, {
    body: { type: 'Query', entities: [{ type }], csf: 'region=="south"' },
  });
  t.same(
    post.json.map((e: { id: string }) => e.id),
    [inC],
  );
  const bad = await call(a, 'GET', `${E}?type=${type}&csf=region==`);
  t.equal(bad.status, 400, bad.text);
  t.equal(bad.json.type, 'https://uri.etsi.org/ngsi-ld/errors/BadRequestData');
  await unregister(a, r1);
  await unregister(a, r2);
});
