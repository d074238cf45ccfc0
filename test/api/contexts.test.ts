// @context management (CIM 009 v1.8 §5.13, §6.30, §6.31): Hosted @contexts added, listed, served, used in Link
// headers (from the store, by every thread, never over HTTP), deleted; Cached ones listed and reloaded; inline
// request contexts kept as ImplicitlyCreated; Hosted ones survive a restart of the disk store.
import t from 'tap';
import { createServer, request as httpRequest, type Server } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startBroker, call, NGSI, type Broker } from './helpers/broker.js';

const ERR = 'https://uri.etsi.org/ngsi-ld/errors/';
let broker: Broker;
let origin: Server;
let originUrl = '';
let originUp = true;
const REMOTE = { '@context': { remoteTerm: 'https://example.org/remote#term' } };

t.before(async () => {
  origin = createServer((req, res) => {
    if (!originUp) {
      res.writeHead(500).end();
      return;
    }
    res.writeHead(200, { 'content-type': 'application/ld+json' }).end(JSON.stringify(REMOTE));
  });
  await new Promise<void>((r) => origin.listen(0, '127.0.0.1', r));
  originUrl = `http://127.0.0.1:${(origin.address() as { port: number }).port}/remote.jsonld`;
  // Two pipeline threads: a context kept by one is served by the other from the store.
  broker = await startBroker(['--connectionPoolSize', '2'], {}, { pool: true });
});
t.teardown(async () => {
  await broker.stop();
  origin.close();
});

const linkTo = (url: string): string => `<${url}>; rel="http://www.w3.org/ns/json-ld#context"; type="application/ld+json"`;
const addHosted = async (context: unknown, extra: Record<string, unknown> = {}): Promise<string> => {
  const r = await call(broker, 'POST', `${NGSI}/jsonldContexts`, { body: { '@context': context, ...extra } });
  if (r.status !== 201) throw new Error(r.text);
  return r.headers.get('location')!;
};

t.test('POST /jsonldContexts keeps a Hosted @context (201, Location) and GET serves it without the extra members', async (t) => {
  const r = await call(broker, 'POST', `${NGSI}/jsonldContexts`, {
    body: { '@context': { Car: 'https://example.org/Car', speed: 'https://example.org/speed' }, junk: 1 },
  });
  t.equal(r.status, 201, r.text);
  const loc = r.headers.get('location')!;
  t.match(loc, /^\/ngsi-ld\/v1\/jsonldContexts\/[0-9a-f-]{36}$/);
  const got = await call(broker, 'GET', loc);
  t.equal(got.status, 200, got.text);
  t.same(got.json, { '@context': { Car: 'https://example.org/Car', speed: 'https://example.org/speed' } });
  const d = await call(broker, 'GET', `${loc}?details=true`);
  t.equal(d.json.kind, 'Hosted');
  t.equal(d.json.localId, loc.split('/').pop());
  t.match(d.json.URL, new RegExp(`${loc}$`));
  // CIM 009 v1.8.1 §5.13.3 names the time it was added createdAt (v1.7 said timestamp).
  t.ok(!Number.isNaN(Date.parse(d.json.createdAt)), `createdAt is a date-time: ${d.text}`);
  t.notOk('timestamp' in d.json, 'the older member name is not given besides it');
});

t.test('a Hosted @context works in Link headers, served from the store whatever host the URL names', async (t) => {
  const loc = await addHosted({ Car: 'https://example.org/Car', speed: 'https://example.org/speed' });
  const viaBroker = linkTo(broker.url + loc);
  const c = await call(broker, 'POST', `${NGSI}/entities`, {
    body: { id: 'urn:ngsi-ld:Car:h1', type: 'Car', speed: { type: 'Property', value: 3 } },
    headers: { Link: viaBroker },
  });
  t.equal(c.status, 201, c.text);
  const plain = await call(broker, 'GET', `${NGSI}/entities/urn:ngsi-ld:Car:h1`);
  t.equal(plain.json.type, 'https://example.org/Car', 'the term was expanded with the hosted context');
  // An unreachable host: the broker never fetches its own contexts over HTTP.
  const elsewhere = linkTo(`http://unreachable.invalid:1${loc}`);
  for (let i = 0; i < 4; i++) {
    const r = await call(broker, 'GET', `${NGSI}/entities?type=Car`, { headers: { Link: elsewhere } });
    t.equal(r.status, 200, r.text);
    t.equal(r.json[0]?.type, 'Car', `request ${i} (any worker) compacts with the hosted context`);
    t.equal(r.json[0]?.speed.value, 3);
  }
});

t.test('POST /jsonldContexts refuses what is no valid @context with 400 BadRequestData and keeps nothing', async (t) => {
  const before = (await call(broker, 'GET', `${NGSI}/jsonldContexts?kind=Hosted`)).json.length;
  for (const body of [
    { '@context': 42 },
    { '@context': true },
    { '@context': ['https://example.org/x.jsonld', 7] },
    { '@context': { id: 'https://example.org/id' } },
    { '@context': 'not a url' },
  ]) {
    const r = await call(broker, 'POST', `${NGSI}/jsonldContexts`, { body });
    t.equal(r.status, 400, `${JSON.stringify(body)}: ${r.text}`);
    t.equal(r.json.type, `${ERR}BadRequestData`, JSON.stringify(body));
  }
  // No @context member at all: not the structure the operation takes (CIM 009 §5.13.2), InvalidRequest.
  const noContext = await call(broker, 'POST', `${NGSI}/jsonldContexts`, { body: { notContext: {} } });
  t.equal(noContext.status, 400, noContext.text);
  t.equal(noContext.json.type, `${ERR}InvalidRequest`);
  const notJson = await call(broker, 'POST', `${NGSI}/jsonldContexts`, {
    raw: '{"@context": ',
    headers: { 'content-type': 'application/json' },
  });
  t.equal(notJson.status, 400);
  const arr = await call(broker, 'POST', `${NGSI}/jsonldContexts`, { body: [{ '@context': {} }] });
  t.equal(arr.status, 400);
  t.equal((await call(broker, 'GET', `${NGSI}/jsonldContexts?kind=Hosted`)).json.length, before, 'nothing was kept');
});

t.test('GET /jsonldContexts lists URLs; details and kind filter; bad kind or details is 400', async (t) => {
  const loc = await addHosted({ Z: 'https://example.org/Z' });
  const id = loc.split('/').pop()!;
  const all = await call(broker, 'GET', `${NGSI}/jsonldContexts`);
  t.equal(all.status, 200, all.text);
  t.ok(
    all.json.some((u: string) => u.endsWith(id)),
    'the hosted URL is listed',
  );
  t.ok(all.json.includes('https://uri.etsi.org/ngsi-ld/v1/ngsi-ld-core-context-v1.8.jsonld'), 'the core context is listed');
  const hosted = await call(broker, 'GET', `${NGSI}/jsonldContexts?kind=Hosted&details=true`);
  t.ok(hosted.json.every((e: any) => e.kind === 'Hosted'));
  t.ok(hosted.json.some((e: any) => e.localId === id));
  const cached = await call(broker, 'GET', `${NGSI}/jsonldContexts?kind=Cached`);
  t.notOk(
    cached.json.some((u: string) => u.endsWith(id)),
    'a Hosted context is not Cached',
  );
  for (const q of ['kind=Bogus', 'details=banana', 'limit=3']) {
    const r = await call(broker, 'GET', `${NGSI}/jsonldContexts?${q}`);
    t.equal(r.status, 400, q);
    // CIM 009 v1.8.1 §6.3.20: a parameter the operation does not take is InvalidRequest.
    t.equal(r.json.type, `${ERR}${q === 'limit=3' ? 'InvalidRequest' : 'BadRequestData'}`, q);
  }
});

t.test('the core @context is listed as Cached: details are served, the content is 422, it cannot be deleted but reloads', async (t) => {
  const core = encodeURIComponent('https://uri.etsi.org/ngsi-ld/v1/ngsi-ld-core-context-v1.8.jsonld');
  const r = await call(broker, 'GET', `${NGSI}/jsonldContexts/${core}`);
  t.equal(r.status, 422, r.text);
  t.equal(r.json.type, `${ERR}OperationNotSupported`);
  const d = await call(broker, 'GET', `${NGSI}/jsonldContexts/${core}?details=true`);
  t.equal(d.status, 200);
  t.equal(d.json.kind, 'Cached');
  t.equal((await call(broker, 'DELETE', `${NGSI}/jsonldContexts/${core}`)).status, 400);
  t.equal((await call(broker, 'DELETE', `${NGSI}/jsonldContexts/${core}?reload=false`)).status, 400);
  // §5.13.5: reload=true reloads the core; the broker embeds it, so that is a no-op (no network), 204.
  const reload = await call(broker, 'DELETE', `${NGSI}/jsonldContexts/${core}?reload=true`);
  t.equal(reload.status, 204, reload.text);
  t.equal((await call(broker, 'GET', `${NGSI}/jsonldContexts/${core}?details=true`)).json?.kind, 'Cached', 'still there');
});

t.test("a @context the broker ships (the ETSI suite's) is Cached once used: listed, reloaded without the network, deleted", async (t) => {
  const suiteUrl = 'https://forge.etsi.org/rep/cim/ngsi-ld-test-suite/-/raw/develop/resources/jsonld-contexts/ngsi-ld-test-suite.jsonld';
  const h = { 'NGSILD-Tenant': 'shipped' };
  const listed = async (): Promise<Array<Record<string, string>>> =>
    ((await call(broker, 'GET', `${NGSI}/jsonldContexts?details=true&kind=Cached`, { headers: h })).json ?? []).filter(
      (e: Record<string, string>) => e.URL === suiteUrl,
    );
  const c = await call(broker, 'POST', `${NGSI}/entities`, {
    body: { id: 'urn:ngsi-ld:Building:shipped', type: 'Building' },
    headers: { ...h, Link: linkTo(suiteUrl) },
  });
  t.equal(c.status, 201, c.text);
  let found: Array<Record<string, string>> = [];
  for (let i = 0; i < 50 && found.length === 0; i++) {
    found = await listed();
    if (found.length === 0) await new Promise((r) => setTimeout(r, 20));
  }
  t.equal(found.length, 1, 'listed as Cached in the tenant that used it');
  t.ok(!Number.isNaN(Date.parse(found[0]?.createdAt ?? '')), 'with its createdAt');
  t.same(
    (await call(broker, 'GET', `${NGSI}/jsonldContexts?kind=Cached`)).json.filter((u: string) => u === suiteUrl),
    [],
    'not in another tenant',
  );
  const byUrl = `${NGSI}/jsonldContexts/${encodeURIComponent(suiteUrl)}`;
  const reload = await call(broker, 'DELETE', `${byUrl}?reload=true`, { headers: h });
  t.equal(reload.status, 204, `reloaded from the copy the broker ships: ${reload.text}`);
  const del = await call(broker, 'DELETE', byUrl, { headers: h });
  t.equal(del.status, 204, del.text);
  t.same(await listed(), [], 'deleted');
  t.equal((await call(broker, 'DELETE', byUrl, { headers: h })).status, 404, 'then it is not kept');
  const again = await call(broker, 'GET', `${NGSI}/entities/urn:ngsi-ld:Building:shipped`, { headers: { ...h, Link: linkTo(suiteUrl) } });
  t.equal(again.status, 200, 'and it still serves requests');
  t.equal(again.json?.type, 'Building');
});

t.test('DELETE: reload of a Hosted one is 400 and keeps it; delete is 204, then 404; a Link to it is 503', async (t) => {
  const loc = await addHosted({ Gone: 'https://example.org/Gone' });
  const bad = await call(broker, 'DELETE', `${loc}?reload=true`);
  t.equal(bad.status, 400, bad.text);
  t.equal(bad.json.type, `${ERR}BadRequestData`);
  t.equal((await call(broker, 'GET', loc)).status, 200, 'a refused reload deletes nothing');
  t.equal((await call(broker, 'DELETE', `${loc}?reload=maybe`)).status, 400);
  t.equal((await call(broker, 'GET', `${NGSI}/entities?type=Gone`, { headers: { Link: linkTo(broker.url + loc) } })).status, 200);
  const del = await call(broker, 'DELETE', loc);
  t.equal(del.status, 204);
  t.equal(del.text, '');
  const gone = await call(broker, 'GET', loc);
  t.equal(gone.status, 404);
  t.equal(gone.json.type, `${ERR}ResourceNotFound`);
  for (let i = 0; i < 4; i++) {
    const r = await call(broker, 'GET', `${NGSI}/entities?type=Gone`, { headers: { Link: linkTo(broker.url + loc) } });
    t.equal(r.status, 503, `request ${i} (any worker) no longer resolves it: ${r.text}`);
    t.equal(r.json.type, `${ERR}LdContextNotAvailable`);
  }
  t.equal((await call(broker, 'DELETE', loc)).status, 404, 'a second delete is 404');
  t.equal((await call(broker, 'DELETE', `${NGSI}/jsonldContexts/urn:ngsi-ld:none`)).status, 404);
  t.equal((await call(broker, 'DELETE', `${NGSI}/jsonldContexts/urn:ngsi-ld:none?reload=true`)).status, 400);
});

t.test('a fetched @context is listed as Cached; reload fetches it again (503 when it cannot); delete drops it', async (t) => {
  const q = await call(broker, 'GET', `${NGSI}/entities?type=remoteTerm`, { headers: { Link: linkTo(originUrl) } });
  t.equal(q.status, 200, q.text);
  let listed: string[] = [];
  for (let i = 0; i < 50 && !listed.includes(originUrl); i++) {
    listed = (await call(broker, 'GET', `${NGSI}/jsonldContexts?kind=Cached`)).json;
    if (!listed.includes(originUrl)) await new Promise((r) => setTimeout(r, 20));
  }
  t.ok(listed.includes(originUrl), 'the fetched URL is listed as Cached');
  const id = encodeURIComponent(originUrl);
  t.equal((await call(broker, 'GET', `${NGSI}/jsonldContexts/${id}`)).status, 422, 'a Cached context is not served');
  t.equal((await call(broker, 'GET', `${NGSI}/jsonldContexts/${id}?details=true`)).json.kind, 'Cached');
  t.equal((await call(broker, 'DELETE', `${NGSI}/jsonldContexts/${id}?reload=true`)).status, 204);
  originUp = false;
  const failed = await call(broker, 'DELETE', `${NGSI}/jsonldContexts/${id}?reload=true`);
  t.equal(failed.status, 503, failed.text);
  t.equal(failed.json.type, `${ERR}LdContextNotAvailable`);
  originUp = true;
  t.equal((await call(broker, 'DELETE', `${NGSI}/jsonldContexts/${id}`)).status, 204);
  t.notOk((await call(broker, 'GET', `${NGSI}/jsonldContexts?kind=Cached`)).json.includes(originUrl));
});

t.test('an inline request @context is kept as ImplicitlyCreated and linked from application/json answers', async (t) => {
  const ctx = { Boat: 'https://example.org/Boat', hull: 'https://example.org/hull' };
  const c = await call(broker, 'POST', `${NGSI}/entities`, {
    raw: JSON.stringify({ id: 'urn:ngsi-ld:Boat:i1', type: 'Boat', hull: { type: 'Property', value: 'steel' }, '@context': ctx }),
    headers: { 'content-type': 'application/ld+json' },
  });
  t.equal(c.status, 201, c.text);
  const q = await call(broker, 'POST', `${NGSI}/entityOperations/query`, {
    raw: JSON.stringify({ type: 'Query', entities: [{ type: 'Boat' }], '@context': ctx }),
    headers: { 'content-type': 'application/ld+json', accept: 'application/json' },
  });
  t.equal(q.status, 200, q.text);
  t.equal(q.json[0].type, 'Boat');
  const link = /<([^>]+)>/.exec(q.headers.get('link') ?? '')?.[1] ?? '';
  t.match(link, /\/ngsi-ld\/v1\/jsonldContexts\/implicit-/, 'the Link names a context the broker keeps');
  t.ok(link.startsWith(`${broker.url}/ngsi-ld/v1/jsonldContexts/`), `the Link names the address the client used (${link})`);
  const path = new URL(link).pathname;
  let served: any;
  for (let i = 0; i < 50; i++) {
    served = await call(broker, 'GET', path);
    if (served.status === 200) break;
    await new Promise((r) => setTimeout(r, 20));
  }
  t.equal(served.status, 200, served.text);
  t.same(served.json, { '@context': ctx });
  t.equal((await call(broker, 'GET', `${path}?details=true`)).json.kind, 'ImplicitlyCreated');
  const r = await call(broker, 'GET', `${NGSI}/entities/urn:ngsi-ld:Boat:i1`, { headers: { Link: linkTo(broker.url + path) } });
  t.equal(r.json.type, 'Boat', 'the linked context compacts the answer');
});

t.test('Hosted @contexts survive a restart of the disk store', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'ldb-ctx-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  // The store's restart: two brokers in this process, one after the other, on the same files.
  let b = await startBroker(['--dbDir', dir]);
  const r = await call(b, 'POST', `${NGSI}/jsonldContexts`, { body: { '@context': { Kept: 'https://example.org/Kept' } } });
  t.equal(r.status, 201, r.text);
  const loc = r.headers.get('location')!;
  const tenant = { 'NGSILD-Tenant': 'keeper' };
  t.equal((await call(b, 'POST', `${NGSI}/entities`, { body: { id: 'urn:ngsi-ld:Seed:k', type: 'Seed' }, headers: tenant })).status, 201);
  const inTenant = await call(b, 'POST', `${NGSI}/jsonldContexts`, {
    body: { '@context': { Kept: 'https://example.org/tenant/Kept' } },
    headers: tenant,
  });
  t.equal(inTenant.status, 201, inTenant.text);
  const tenantLoc = inTenant.headers.get('location')!;
  await b.stop();
  b = await startBroker(['--dbDir', dir]);
  t.teardown(() => b.stop());
  const listed = await call(b, 'GET', `${NGSI}/jsonldContexts?kind=Hosted`, { headers: tenant });
  t.same(
    listed.json.map((u: string) => new URL(u).pathname),
    [tenantLoc],
    "a tenant's Hosted @context survives in its tenant",
  );
  t.same((await call(b, 'GET', tenantLoc)).json, { '@context': { Kept: 'https://example.org/tenant/Kept' } });
  const got = await call(b, 'GET', loc);
  t.equal(got.status, 200, got.text);
  t.same(got.json, { '@context': { Kept: 'https://example.org/Kept' } });
  const c = await call(b, 'POST', `${NGSI}/entities`, {
    body: { id: 'urn:ngsi-ld:Kept:1', type: 'Kept' },
    headers: { Link: linkTo(b.url + loc) },
  });
  t.equal(c.status, 201, c.text);
  t.equal((await call(b, 'GET', `${NGSI}/entities/urn:ngsi-ld:Kept:1`)).json.type, 'https://example.org/Kept');
});

/** A request with a chosen Host header (fetch may not set Host). */
function withHost(
  method: string,
  path: string,
  host: string,
  headers: Record<string, string> = {},
  body?: string,
): Promise<{ status: number; json: any; headers: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const r = httpRequest({ host: '127.0.0.1', port: broker.port, path, method, headers: { ...headers, host } }, (res) => {
      let text = '';
      res.on('data', (d) => {
        text += String(d);
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, json: text === '' ? undefined : JSON.parse(text), headers: res.headers }));
    });
    r.on('error', reject);
    r.end(body);
  });
}
const getWithHost = (path: string, host: string, headers: Record<string, string> = {}) => withHost('GET', path, host, headers);

t.test('the Link to an ImplicitlyCreated @context names the host the client used (proxy, port mapping, --host 0.0.0.0)', async (t) => {
  const body = JSON.stringify({ type: 'Query', entities: [{ type: 'Skiff' }], '@context': { Skiff: 'https://example.org/Skiff' } });
  const r = await withHost(
    'POST',
    `${NGSI}/entityOperations/query`,
    'gateway.example.org:8080',
    { 'content-type': 'application/ld+json', accept: 'application/json' },
    body,
  );
  t.equal(r.status, 200, JSON.stringify(r.json));
  t.match(String(r.headers.link), /^<http:\/\/gateway\.example\.org:8080\/ngsi-ld\/v1\/jsonldContexts\/implicit-[^>]+>/);
  const core = await withHost('GET', `${NGSI}/entities?type=Skiff`, 'gateway.example.org:8080');
  t.match(String(core.headers.link), /^<https:\/\/uri\.etsi\.org\/ngsi-ld\/v1\/ngsi-ld-core-context/, 'the core context keeps its own URL');
});

t.test("the URLs listed are built from the request's Host (behind a proxy or a port mapping), else the configured address", async (t) => {
  const loc = await addHosted({ Proxied: 'https://example.org/Proxied' });
  const viaProxy = await getWithHost(`${NGSI}/jsonldContexts?kind=Hosted`, 'broker.example.org:8443');
  t.equal(viaProxy.status, 200);
  t.ok(viaProxy.json.includes(`http://broker.example.org:8443${loc}`), 'the list names the host the client used');
  const details = await getWithHost(`${loc}?details=true`, 'ctx.example.org');
  t.equal(details.json.URL, `http://ctx.example.org${loc}`, 'details too');
  const direct = await call(broker, 'GET', `${NGSI}/jsonldContexts?kind=Hosted`);
  t.ok(direct.json.includes(`${broker.url}${loc}`), 'a direct client sees the address it used');
  const junk = await getWithHost(`${NGSI}/jsonldContexts?kind=Hosted`, 'bad host/<script>');
  t.equal(junk.status, 200);
  const junkUrl: string = junk.json.find((u: string) => u.endsWith(loc));
  t.ok(
    junkUrl.startsWith('http://127.0.0.1:'),
    `a Host that is no host name is not copied into URLs: the configured address instead (${junkUrl})`,
  );
  const listed = await call(broker, 'GET', `${NGSI}/jsonldContexts?kind=Hosted`);
  const url = listed.json.find((u: string) => u.endsWith(loc));
  t.equal((await call(broker, 'GET', new URL(url).pathname)).status, 200, 'a listed URL serves the context');
});

t.test('Hosted @contexts belong to the tenant they were added in; the core is shared', async (t) => {
  const tenantHeaders = (tenant: string) => ({ 'NGSILD-Tenant': tenant });
  for (const tenant of ['alpha', 'beta']) {
    const c = await call(broker, 'POST', `${NGSI}/entities`, {
      body: { id: `urn:ngsi-ld:Seed:${tenant}`, type: 'Seed' },
      headers: tenantHeaders(tenant),
    });
    t.equal(c.status, 201, c.text);
  }
  const add = await call(broker, 'POST', `${NGSI}/jsonldContexts`, {
    body: { '@context': { Plant: 'https://example.org/alpha/Plant' } },
    headers: tenantHeaders('alpha'),
  });
  t.equal(add.status, 201, add.text);
  const loc = add.headers.get('location')!;
  const defaultLoc = await addHosted({ Plant: 'https://example.org/default/Plant' });
  const list = async (tenant?: string) =>
    (await call(broker, 'GET', `${NGSI}/jsonldContexts?details=true`, { headers: tenant === undefined ? {} : tenantHeaders(tenant) }))
      .json as any[];
  const alpha = await list('alpha');
  const beta = await list('beta');
  const dflt = await list();
  const hostedIds = (l: any[]) => l.filter((e) => e.kind === 'Hosted').map((e) => e.localId);
  t.same(hostedIds(alpha), [loc.split('/').pop()], 'alpha lists its own Hosted @context only');
  t.same(hostedIds(beta), [], 'beta lists none');
  t.notOk(hostedIds(dflt).includes(loc.split('/').pop()), "the default tenant does not list alpha's");
  t.ok(hostedIds(dflt).includes(defaultLoc.split('/').pop()), 'the default tenant lists its own');
  for (const l of [alpha, beta, dflt])
    t.ok(
      l.some((e) => e.URL === 'https://uri.etsi.org/ngsi-ld/v1/ngsi-ld-core-context-v1.8.jsonld'),
      'the core is listed in every tenant',
    );

  // Creating and reading entities in alpha with its Hosted @context in the Link header.
  const link = linkTo(broker.url + loc);
  const c = await call(broker, 'POST', `${NGSI}/entities`, {
    body: { id: 'urn:ngsi-ld:Plant:a1', type: 'Plant' },
    headers: { ...tenantHeaders('alpha'), Link: link },
  });
  t.equal(c.status, 201, c.text);
  const read = await call(broker, 'GET', `${NGSI}/entities/urn:ngsi-ld:Plant:a1`, { headers: tenantHeaders('alpha') });
  t.equal(read.json.type, 'https://example.org/alpha/Plant', "alpha's context expanded the type");
  const served = await call(broker, 'GET', loc);
  t.equal(served.status, 200, 'the URL serves the context to a JSON-LD processor, which sends no tenant');
  t.same(served.json, { '@context': { Plant: 'https://example.org/alpha/Plant' } });

  // Managed from its own tenant only.
  const fromBeta = await call(broker, 'DELETE', loc, { headers: tenantHeaders('beta') });
  t.equal(fromBeta.status, 404, "beta cannot delete alpha's @context");
  t.equal((await call(broker, 'DELETE', loc)).status, 404, 'nor can the default tenant');
  t.equal((await call(broker, 'GET', loc)).status, 200, 'it is still there');
  t.equal((await call(broker, 'DELETE', loc, { headers: tenantHeaders('alpha') })).status, 204, 'alpha deletes it');
  t.equal((await call(broker, 'GET', loc)).status, 404);
  const gone = await call(broker, 'GET', `${NGSI}/entities?type=Plant`, { headers: { ...tenantHeaders('alpha'), Link: link } });
  t.equal(gone.status, 503, 'a Link to it no longer resolves');

  for (const id of ['..%2Fx~1', 'ALPHA~1', '~1', `${'a'.repeat(60)}~1`, `alpha~${loc.split('~').pop()}`]) {
    const r = await call(broker, 'GET', `${NGSI}/jsonldContexts/${id}`);
    t.equal(r.status, 404, `${id}: a made-up or deleted id is 404 (${r.text})`);
  }

  const nowhere = await call(broker, 'POST', `${NGSI}/jsonldContexts`, {
    body: { '@context': { X: 'https://example.org/X' } },
    headers: tenantHeaders('nosuchtenant'),
  });
  t.equal(nowhere.status, 404, 'a tenant that does not exist keeps no @context');
  t.equal(nowhere.json.type, `${ERR}NonexistentTenant`);
});

t.test('POST /jsonldContexts of a context naming a URL the broker cannot obtain is 503 LdContextNotAvailable, nothing kept', async (t) => {
  const before = (await call(broker, 'GET', `${NGSI}/jsonldContexts?kind=Hosted`)).json.length;
  const r = await call(broker, 'POST', `${NGSI}/jsonldContexts`, {
    body: { '@context': ['http://127.0.0.1:1/unreachable.jsonld', { X: 'https://example.org/X' }] },
  });
  t.equal(r.status, 503, r.text);
  t.equal(r.json.type, `${ERR}LdContextNotAvailable`);
  t.equal((await call(broker, 'GET', `${NGSI}/jsonldContexts?kind=Hosted`)).json.length, before);
});

t.test('ImplicitlyCreated and Cached @contexts are kept per tenant: listed, read and deleted in their tenant only', async (t) => {
  const h = (tenant?: string): Record<string, string> => (tenant === undefined ? {} : { 'NGSILD-Tenant': tenant });
  for (const tenant of ['gamma', 'delta']) {
    const c = await call(broker, 'POST', `${NGSI}/entities`, {
      body: { id: `urn:ngsi-ld:Seed:${tenant}`, type: 'Seed' },
      headers: h(tenant),
    });
    t.equal(c.status, 201, c.text);
  }
  const list = async (tenant?: string): Promise<any[]> =>
    (await call(broker, 'GET', `${NGSI}/jsonldContexts?details=true`, { headers: h(tenant) })).json;
  const ids = (l: any[], kind: string): string[] => l.filter((e) => e.kind === kind).map((e) => e.localId);
  const inline = { Canoe: 'https://example.org/Canoe' };
  const query = async (tenant: string | undefined, context: unknown): Promise<string> => {
    const r = await call(broker, 'POST', `${NGSI}/entityOperations/query`, {
      raw: JSON.stringify({ type: 'Query', entities: [{ type: 'Canoe' }], '@context': context }),
      headers: { ...h(tenant), 'content-type': 'application/ld+json', accept: 'application/json' },
    });
    t.equal(r.status, 200, r.text);
    return new URL(/<([^>]+)>/.exec(r.headers.get('link') ?? '')![1]!).pathname;
  };
  const dfltBefore = await list();

  // An inline @context used in gamma is kept in gamma, under an id naming gamma.
  const gammaPath = await query('gamma', inline);
  const gammaId = decodeURIComponent(gammaPath.split('/').pop()!);
  t.match(gammaId, /^gamma~implicit-/, "the Link names gamma's own copy");
  t.same(ids(await list('gamma'), 'ImplicitlyCreated'), [gammaId], 'gamma lists it');
  t.same(ids(await list('delta'), 'ImplicitlyCreated'), [], 'delta does not');
  t.notOk(ids(await list(), 'ImplicitlyCreated').includes(gammaId), 'nor does the default tenant');
  const served = await call(broker, 'GET', gammaPath);
  t.equal(served.status, 200, 'its URL serves it to a JSON-LD processor, which sends no tenant (at once: kept before the answer)');
  t.same(served.json, { '@context': inline });

  // The same inline @context in delta: delta's own copy.
  const deltaPath = await query('delta', inline);
  const deltaId = decodeURIComponent(deltaPath.split('/').pop()!);
  t.match(deltaId, /^delta~implicit-/);
  t.same(ids(await list('delta'), 'ImplicitlyCreated'), [deltaId]);
  t.same(ids(await list('gamma'), 'ImplicitlyCreated'), [gammaId], 'gamma still lists its own only');

  t.equal((await call(broker, 'DELETE', gammaPath, { headers: h('delta') })).status, 404, "delta cannot delete gamma's");
  t.equal((await call(broker, 'DELETE', gammaPath)).status, 404, 'nor can the default tenant');
  t.equal((await call(broker, 'DELETE', gammaPath, { headers: h('gamma') })).status, 204, 'gamma deletes its own');
  t.same(ids(await list('gamma'), 'ImplicitlyCreated'), []);
  t.equal((await call(broker, 'GET', deltaPath)).status, 200, "delta's copy is untouched");
  t.same(ids(await list('delta'), 'ImplicitlyCreated'), [deltaId]);
  t.equal(await query('gamma', inline), gammaPath, 'using it again keeps it again');
  t.same(ids(await list('gamma'), 'ImplicitlyCreated'), [gammaId]);

  // A fetched @context is Cached in each tenant that used it; deleting it in one leaves the other's.
  for (const tenant of ['gamma', 'delta']) {
    const q = await call(broker, 'GET', `${NGSI}/entities?type=remoteTerm`, { headers: { ...h(tenant), Link: linkTo(originUrl) } });
    t.equal(q.status, 200, q.text);
  }
  const cachedIn = async (tenant?: string): Promise<string[]> =>
    (await list(tenant)).filter((e) => e.kind === 'Cached' && e.URL === originUrl).map((e) => e.localId);
  const gammaCached = await cachedIn('gamma');
  t.equal(gammaCached.length, 1, 'gamma lists the URL as Cached');
  t.match(gammaCached[0], /^gamma~cached-/);
  t.match((await cachedIn('delta'))[0], /^delta~cached-/, 'delta has its own record');
  const byUrl = `${NGSI}/jsonldContexts/${encodeURIComponent(originUrl)}`;
  t.equal(
    (await call(broker, 'GET', `${byUrl}?details=true`, { headers: h('gamma') })).json.localId,
    gammaCached[0],
    "the URL names the tenant's own record",
  );
  t.equal(
    (await call(broker, 'GET', `${NGSI}/jsonldContexts/${encodeURIComponent(gammaCached[0]!)}?details=true`, { headers: h('delta') }))
      .status,
    404,
    "another tenant cannot read gamma's Cached record",
  );
  t.equal(
    (await call(broker, 'DELETE', `${NGSI}/jsonldContexts/${encodeURIComponent(gammaCached[0]!)}`, { headers: h('delta') })).status,
    404,
    'nor delete it by its id',
  );
  t.equal((await call(broker, 'DELETE', byUrl, { headers: h('delta') })).status, 204, 'delta deletes its own use of the URL');
  t.same(await cachedIn('delta'), []);
  t.same(await cachedIn('gamma'), gammaCached, 'gamma does not lose it');
  t.equal((await call(broker, 'GET', `${byUrl}?details=true`, { headers: h('gamma') })).status, 200);
  t.equal((await call(broker, 'DELETE', `${byUrl}?reload=true`, { headers: h('gamma') })).status, 204, 'gamma can still reload it');
  t.notOk(
    (await cachedIn()).some((id) => id.includes('~')),
    "the default tenant lists no tenant's record",
  );

  // A refused request keeps nothing; nor does a request in a tenant that does not exist.
  const refused = await call(broker, 'POST', `${NGSI}/entities`, {
    raw: JSON.stringify({ type: 'Canoe', '@context': { Refused: 'https://example.org/Refused' } }),
    headers: { ...h('gamma'), 'content-type': 'application/ld+json' },
  });
  t.equal(refused.status, 400, refused.text);
  t.same(ids(await list('gamma'), 'ImplicitlyCreated'), [gammaId], 'the refused request kept nothing');
  const nowhere = await call(broker, 'POST', `${NGSI}/entityOperations/query`, {
    raw: JSON.stringify({ type: 'Query', entities: [{ type: 'Canoe' }], '@context': { Nowhere: 'https://example.org/Nowhere' } }),
    headers: { ...h('nosuchtenant'), 'content-type': 'application/ld+json' },
  });
  t.equal(nowhere.status, 404, nowhere.text);
  t.same(
    ids(await list(), 'ImplicitlyCreated').sort(),
    ids(dfltBefore, 'ImplicitlyCreated').sort(),
    'the default tenant gained nothing from the others',
  );

  // The @contexts of application/ld+json batch entries, in a tenant the batch creates.
  const batch = await call(broker, 'POST', `${NGSI}/entityOperations/create`, {
    raw: JSON.stringify([{ id: 'urn:ngsi-ld:Kayak:1', type: 'Kayak', '@context': { Kayak: 'https://example.org/Kayak' } }]),
    headers: { ...h('epsilon'), 'content-type': 'application/ld+json' },
  });
  t.equal(batch.status, 201, batch.text);
  const epsilon = ids(await list('epsilon'), 'ImplicitlyCreated');
  t.equal(epsilon.length, 1, "the entry's inline @context is kept in the new tenant");
  t.match(epsilon[0], /^epsilon~implicit-/);
});
