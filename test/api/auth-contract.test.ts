// The broker's side of the auth plugin contract (seed 000 §1, §2, §5.1, §5.2, §9), with a test plugin whose
// decisions follow request headers (test/fixtures/auth/contract-plugin.js).
import t from 'tap';
import { createServer, type Server } from 'node:http';
import { mkdtempSync, readFileSync, rmSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startBroker, runBroker, runBrokerHere, call, NGSI, type Broker } from './helpers/broker.js';
import { repoPath } from '../helpers/repo.js';

const PLUGIN = repoPath('test/fixtures/auth/contract-plugin.js');
const dir = mkdtempSync(join(tmpdir(), 'ldbroker-auth-'));
const TRACE = join(dir, 'trace.txt');
t.teardown(() => rmSync(dir, { recursive: true, force: true }));

let contextHits = 0;
let contextServer: Server;
let contextUrl: string;
let broker: Broker;
const U = { 'x-user': 'alice' };

t.before(async () => {
  contextServer = createServer((_req, res) => {
    contextHits++;
    res.writeHead(200, { 'content-type': 'application/ld+json' });
    res.end(JSON.stringify({ '@context': { name: 'https://example.org/name' } }));
  });
  await new Promise<void>((r) => contextServer.listen(0, '127.0.0.1', () => r()));
  const addr = contextServer.address() as { port: number };
  contextUrl = `http://127.0.0.1:${addr.port}/ctx.jsonld`;
  broker = await startBroker(['--auth', PLUGIN, '--testTrace', TRACE], {}, { pool: true });
});
t.teardown(async () => {
  await broker.stop();
  contextServer.close();
});

const link = (): string => `<${contextUrl}>; rel="http://www.w3.org/ns/json-ld#context"; type="application/ld+json"`;
const trace = (): string[] => (existsSync(TRACE) ? readFileSync(TRACE, 'utf8').trim().split('\n') : []);

t.test('authenticate runs before 404 and 405: no credentials is 401 with WWW-Authenticate everywhere', async (t) => {
  for (const [method, path] of [
    ['GET', '/nothing'],
    ['PUT', `${NGSI}/entities`],
    ['GET', `${NGSI}/entities/urn:x:1`],
  ]) {
    const r = await call(broker, method!, path!);
    t.equal(r.status, 401, `${method} ${path}`);
    t.equal(r.headers.get('www-authenticate'), 'Bearer realm="test"');
    t.equal(r.json.type, 'about:blank');
    t.equal(r.json.detail, 'no x-user');
  }
  const unavailable = await call(broker, 'GET', `${NGSI}/entities/urn:x:1`, { headers: { 'x-user': 'down' } });
  t.equal(unavailable.status, 503);
  t.equal(unavailable.json.type, 'about:blank');
});

t.test('authenticated requests go on to 404/405 as usual', async (t) => {
  t.equal((await call(broker, 'GET', '/nothing', { headers: U })).status, 404);
  t.equal((await call(broker, 'PUT', `${NGSI}/entities`, { headers: U })).status, 405);
});

t.test('a request refused by authorize (before the @context) fetches no @context and creates no tenant', async (t) => {
  const before = contextHits;
  const r = await call(broker, 'POST', `${NGSI}/entities`, {
    body: { id: 'urn:ngsi-ld:T:refused', type: 'T' },
    headers: { ...U, 'x-deny-authorize': '1', link: link(), 'NGSILD-Tenant': 'refusedtenant' },
  });
  t.equal(r.status, 403);
  t.equal(r.json.type, 'about:blank');
  t.equal(r.json.title, 'Forbidden');
  t.equal(r.json.detail, 'authorize said no');
  t.equal(contextHits, before, 'the context server was not asked');
  const probe = await call(broker, 'GET', `${NGSI}/entities/urn:ngsi-ld:T:refused`, {
    headers: { ...U, 'NGSILD-Tenant': 'refusedtenant' },
  });
  t.equal(probe.json.type, 'https://uri.etsi.org/ngsi-ld/errors/NonexistentTenant', 'no tenant was created');
  const auth = trace().filter((l) => l.startsWith('authorize CreateEntity'));
  t.match(auth.at(-1), /tenant=refusedtenant expand=null entities=true/, 'authorize sees the tenant name and no @context');
});

t.test('an allowed request resolves its @context after authorize', async (t) => {
  const before = contextHits;
  const r = await call(broker, 'POST', `${NGSI}/entities`, {
    body: { id: 'urn:ngsi-ld:T:ok1', type: 'T', name: { type: 'Property', value: 'n' } },
    headers: { ...U, link: link() },
  });
  t.equal(r.status, 201, r.text);
  t.equal(contextHits, before + 1, 'the context was fetched once');
});

t.test('the entity hook: the body types for a create, stored types for a retrieve; a denial is 403', async (t) => {
  await call(broker, 'POST', `${NGSI}/entities`, { body: { id: 'urn:ngsi-ld:T:e1', type: 'T' }, headers: U });
  const lines = trace();
  t.ok(
    lines.some((l) => l.startsWith('entity urn:ngsi-ld:T:e1 types=https://uri.etsi.org/ngsi-ld/default-context/T stored=false read=false')),
    'create asks with the body types',
  );
  const denied = await call(broker, 'GET', `${NGSI}/entities/urn:ngsi-ld:T:e1`, { headers: { ...U, 'x-deny-entity': 'urn:ngsi-ld:T:e1' } });
  t.equal(denied.status, 403);
  t.equal(denied.json.detail, 'entity urn:ngsi-ld:T:e1 denied');
  t.ok(
    trace().some((l) => l.startsWith('entity urn:ngsi-ld:T:e1 types=https://uri.etsi.org/ngsi-ld/default-context/T stored=true read=true')),
    'retrieve asks with the stored types',
  );
  const writeDenied = await call(broker, 'PATCH', `${NGSI}/entities/urn:ngsi-ld:T:e1/attrs`, {
    body: { a: { type: 'Property', value: 1 } },
    headers: { ...U, 'x-deny-entity': 'urn:ngsi-ld:T:e1' },
  });
  t.equal(writeDenied.status, 403, 'a write on a denied entity');
  const deleteDenied = await call(broker, 'DELETE', `${NGSI}/entities/urn:ngsi-ld:T:e1`, {
    headers: { ...U, 'x-deny-entity': 'urn:ngsi-ld:T:e1' },
  });
  t.equal(deleteDenied.status, 403);
  t.equal((await call(broker, 'GET', `${NGSI}/entities/urn:ngsi-ld:T:e1`, { headers: U })).status, 200, 'nothing was deleted');
});

t.test('a denied entity of a batch is its 403 entry in the 207; the others are written', async (t) => {
  const r = await call(broker, 'POST', `${NGSI}/entityOperations/create`, {
    body: [
      { id: 'urn:ngsi-ld:T:b1', type: 'T' },
      { id: 'urn:ngsi-ld:T:b2', type: 'T' },
    ],
    headers: { ...U, 'x-deny-entity': 'urn:ngsi-ld:T:b2' },
  });
  t.equal(r.status, 207, r.text);
  t.same(r.json.success, ['urn:ngsi-ld:T:b1']);
  t.equal(r.json.errors[0].entityId, 'urn:ngsi-ld:T:b2');
  t.equal(r.json.errors[0].error.status, 403);
  t.equal((await call(broker, 'GET', `${NGSI}/entities/urn:ngsi-ld:T:b2`, { headers: U })).status, 404);
});

t.test('a partial answer leaves out the attributes refused one by one', async (t) => {
  await call(broker, 'POST', `${NGSI}/entities`, {
    body: { id: 'urn:ngsi-ld:T:p1', type: 'T', secret: { type: 'Property', value: 1 }, open: { type: 'Property', value: 2 } },
    headers: U,
  });
  const r = await call(broker, 'GET', `${NGSI}/entities/urn:ngsi-ld:T:p1`, {
    headers: { ...U, 'x-partial': 'https://uri.etsi.org/ngsi-ld/default-context/secret' },
  });
  t.equal(r.status, 200, r.text);
  t.notOk('secret' in r.json, 'the refused attribute is left out');
  t.equal(r.json.open.value, 2);
});

t.test('release is called once the request is over', async (t) => {
  await call(broker, 'GET', `${NGSI}/entities/urn:ngsi-ld:T:ok1`, { headers: U });
  t.ok(trace().some((l) => l === `release GET ${NGSI}/entities/urn:ngsi-ld:T:ok1`));
});

t.test('a query page the entity hook shortened still links to the next page (seed 000 §5.2)', async (t) => {
  const first = await call(broker, 'GET', `${NGSI}/entities?type=T&limit=1`, { headers: U });
  t.equal(first.json.length, 1);
  t.match(first.headers.get('link'), /rel="next"/);
  const denied = await call(broker, 'GET', `${NGSI}/entities?type=T&limit=1`, { headers: { ...U, 'x-deny-entity': first.json[0].id } });
  t.equal(denied.status, 200);
  t.same(denied.json, [], 'the denied entity is left out');
  t.match(
    denied.headers.get('link'),
    `<${NGSI}/entities?type=T&limit=1&offset=1>; rel="next"`,
    'more entities follow the page all the same',
  );
});

t.test('/version, no NGSI-LD operation, is authenticated and authorized like any request, as LdOp 0 (seed 000 §2.4)', async (t) => {
  t.equal((await call(broker, 'GET', '/version')).status, 401, 'authenticate refuses it without credentials');
  const r = await call(broker, 'GET', '/version', { headers: U });
  t.equal(r.status, 200, r.text);
  t.equal(r.json.name, 'ldbroker');
  t.ok(trace().includes('authenticate GET /version expand=null ldOp=0/'), 'authenticate sees LdOp 0 and no name');
  t.ok(trace().includes('authorize  tenant= expand=null entities=false ldOp=0 path=/version'), 'authorize sees LdOp 0 and no name');
  const denied = await call(broker, 'GET', `${NGSI}/version`, { headers: { ...U, 'x-deny-authorize': '1' } });
  t.equal(denied.status, 403, 'authorize can refuse it');
  t.ok(
    trace().some((l) => l.startsWith('authorize CreateEntity') && l.endsWith(`ldOp=1 path=${NGSI}/entities`)),
    'an NGSI-LD operation keeps its ordinal',
  );
});

t.test('a plugin built for an older ABI still loads; a newer one is refused', async (t) => {
  for (const abi of ['2', '3']) {
    const b = await startBroker(['--auth', PLUGIN, '--testAbi', abi]);
    t.equal((await call(b, 'GET', `${NGSI}/entities/urn:x:none`, { headers: U })).status, 404, `ABI ${abi} serves`);
    t.equal(await b.stop(), 0);
  }
  // As main.ts runs the command, in this process (no process start each); 'nosuchplugin' below is the spawned command.
  const newer = await runBrokerHere(['--auth', PLUGIN, '--testAbi', '5', '--port', '0']);
  t.equal(newer.code, 1);
  t.match(newer.stderr, /ABI 5/);
});

t.test('a plugin that cannot be loaded, or refuses its options, stops the broker with status 1', async (t) => {
  const missing = await runBroker(['--auth', 'nosuchplugin', '--port', '0']);
  t.equal(missing.code, 1);
  t.match(missing.stderr, /nosuchplugin/);
  const refused = await runBrokerHere(['--auth', PLUGIN, '--testRefuse', '--port', '0']);
  t.equal(refused.code, 1);
  t.match(refused.stderr, /options refused/);
});

t.test('plugin options exist only when it is loaded; --auth <plugin> -u lists them', async (t) => {
  const without = await runBrokerHere(['--testTrace', '/tmp/x', '--port', '0']);
  t.equal(without.code, 1);
  const u = await runBrokerHere(['--auth', PLUGIN, '-u']);
  t.equal(u.code, 0);
  t.match(u.stdout, '--testAbi');
  t.match(u.stdout, '--testTrace');
});

t.test('a query leaves out the entities the entity hook denies', async (t) => {
  await call(broker, 'POST', `${NGSI}/entityOperations/upsert`, {
    body: [
      { id: 'urn:ngsi-ld:Q:1', type: 'Q' },
      { id: 'urn:ngsi-ld:Q:2', type: 'Q' },
    ],
    headers: U,
  });
  const all = await call(broker, 'GET', `${NGSI}/entities?type=Q`, { headers: U });
  t.same(all.json.map((e: { id: string }) => e.id).sort(), ['urn:ngsi-ld:Q:1', 'urn:ngsi-ld:Q:2']);
  const some = await call(broker, 'GET', `${NGSI}/entities?type=Q`, { headers: { ...U, 'x-deny-entity': 'urn:ngsi-ld:Q:2' } });
  t.equal(some.status, 200);
  t.same(
    some.json.map((e: { id: string }) => e.id),
    ['urn:ngsi-ld:Q:1'],
  );
  const post = await call(broker, 'POST', `${NGSI}/entityOperations/query`, {
    body: { type: 'Query', entities: [{ type: 'Q' }] },
    headers: { ...U, 'x-deny-entity': 'urn:ngsi-ld:Q:1' },
  });
  t.same(
    post.json.map((e: { id: string }) => e.id),
    ['urn:ngsi-ld:Q:2'],
  );
});

t.test('a purge asks the entity hook for each entity and leaves the denied ones; a drop passes over them', async (t) => {
  const ids = ['urn:ngsi-ld:P:1', 'urn:ngsi-ld:P:2', 'urn:ngsi-ld:P:3'];
  const body = ids.map((id) => ({ id, type: 'P', a: { type: 'Property', value: 1 }, b: { type: 'Property', value: 2 } }));
  t.equal((await call(broker, 'POST', `${NGSI}/entityOperations/upsert`, { body, headers: U })).status, 201);
  const deny = { ...U, 'x-deny-entity': 'urn:ngsi-ld:P:1' };
  t.equal((await call(broker, 'DELETE', `${NGSI}/entities?type=P&drop=a`, { headers: deny })).status, 204);
  const left = await call(broker, 'GET', `${NGSI}/entities?type=P`, { headers: U });
  t.same(
    left.json.map((e: { id: string; a?: unknown }) => [e.id, e.a !== undefined]),
    [
      [ids[0], true],
      [ids[1], false],
      [ids[2], false],
    ],
    'the denied entity keeps its attribute',
  );
  const before = trace().length;
  t.equal((await call(broker, 'DELETE', `${NGSI}/entities?type=P`, { headers: deny })).status, 204);
  t.same(
    trace()
      .slice(before)
      .filter((l) => l.startsWith('entity urn:ngsi-ld:P:'))
      .map((l) => l.split(' ').slice(0, 2).join(' '))
      .sort(),
    ids.map((id) => `entity ${id}`),
    'the hook was asked once per entity',
  );
  t.same(
    (await call(broker, 'GET', `${NGSI}/entities?type=P`, { headers: U })).json.map((e: { id: string }) => e.id),
    [ids[0]],
    'only the denied entity is left',
  );
});
