// seed 000 §5.1, §5.5 rule 1, §5.6 (issue 16 A): with a plugin that authorizes before the @context, every request
// is decided as the reference chain's gateway decides it, before the broker answers one it does not serve: an
// unknown path, a method the path does not take, OPTIONS, HEAD, a 400 of an empty segment, 406 and 415 are 401
// without a token, 403 when no policy allows them, 503 without policies, and the broker's own answer only when a
// policy allows. HEAD and OPTIONS are no read (odrl:read is GET; odrl:use GET POST PUT PATCH DELETE).
import t from 'tap';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startBroker, call, NGSI, type Broker } from './helpers/broker.js';
import { rawExchange, header } from './helpers/raw-http.js';
import { ISSUER, bearer, credential, makeSigner, typePolicy } from './helpers/dsec.js';

const dir = mkdtempSync(join(tmpdir(), 'ldbroker-dsec-every-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));

let token: string;
const brokers: Broker[] = [];
let uws: Broker;
let node: Broker;
t.teardown(async () => {
  for (const b of brokers) await b.stop();
});

/** Waits until the plugin decides a token (its refresher reads the files in the background). */
async function ready(b: Broker): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    const r = await call(b, 'GET', `${NGSI}/entities/urn:ngsi-ld:Building:1`, { headers: bearer(token) });
    if (r.status !== 503) return;
    await new Promise((res) => setTimeout(res, 100));
  }
}

t.before(async () => {
  const signer = await makeSigner(dir);
  token = await signer.token(credential('did:web:issuer.example'));
  writeFileSync(
    join(dir, 'policies.json'),
    JSON.stringify([
      typePolicy('urn:p:read-building', 'odrl:read', 'Building'),
      typePolicy('urn:p:create-building', 'ngsild:create', 'Building'),
      typePolicy('urn:p:use-park', 'odrl:use', 'Park'),
    ]),
  );
  const args = ['--auth', 'dsec', '--dsecJwks', signer.jwksFile, '--dsecIssuer', ISSUER, '--dsecPolicies', join(dir, 'policies.json')];
  uws = await startBroker([...args, '--corsOrigin', '*'], {}, { http: true });
  brokers.push(uws);
  node = await startBroker([...args, '--httpServer', 'node'], {});
  brokers.push(node);
  await ready(uws);
  await ready(node);
});

t.test('an unknown path is 401 without a token, 403 where no policy allows it, 404 only where one does', async (t) => {
  const none = await call(uws, 'GET', `${NGSI}/nothing`);
  t.equal(none.status, 401);
  t.equal(none.headers.get('www-authenticate'), 'Bearer');
  const denied = await call(uws, 'GET', `${NGSI}/nothing`, { headers: bearer(token) });
  t.equal(denied.status, 403, 'no type in the path: no policy allows it');
  t.equal(denied.json.type, 'about:blank');
  const allowed = await call(uws, 'GET', `${NGSI}/nothing?type=Building`, { headers: bearer(token) });
  t.equal(allowed.status, 404, 'odrl:read of Building allows it: the broker answers its own 404');
  t.equal(allowed.json.type, 'https://uri.etsi.org/ngsi-ld/errors/ResourceNotFound');
  const root = await call(uws, 'POST', '/favicon.ico', { headers: bearer(token), raw: 'x' });
  t.equal(root.status, 403, 'a path outside the API prefix too');
});

t.test('a method the path does not take is 403 unless a policy allows that method, then 405 with Allow', async (t) => {
  const denied = await call(uws, 'PUT', `${NGSI}/entities`, { headers: bearer(token), body: {} });
  t.equal(denied.status, 403);
  t.equal(denied.headers.get('allow'), null, 'a refusal says nothing of the route');
  const allowed = await call(uws, 'POST', `${NGSI}/entities/urn:ngsi-ld:Building:1`, { headers: bearer(token), body: {} });
  t.equal(allowed.status, 405, 'ngsild:create of Building (the id names it) allows the POST: 405');
  t.match(allowed.headers.get('allow'), /GET/);
});

t.test('an empty path segment is 403 before its 400', async (t) => {
  const denied = await call(uws, 'PATCH', `${NGSI}/entities//attrs`, { headers: bearer(token), body: {} });
  t.equal(denied.status, 403);
  const allowed = await call(uws, 'PATCH', `${NGSI}/entities//attrs?type=Park`, { headers: bearer(token), body: {} });
  t.equal(allowed.status, 400, 'odrl:use of Park allows the PATCH: its 400');
});

t.test('OPTIONS is no read and no use: 403 even where every method is allowed, a CORS preflight included', async (t) => {
  for (const path of [`${NGSI}/entities/urn:ngsi-ld:Building:1`, `${NGSI}/entities/urn:ngsi-ld:Park:1`]) {
    const plain = await call(uws, 'OPTIONS', path, { headers: bearer(token) });
    t.equal(plain.status, 403, path);
    const preflight = await call(uws, 'OPTIONS', path, {
      headers: { ...bearer(token), origin: 'https://dash.example.org', 'access-control-request-method': 'GET' },
    });
    t.equal(preflight.status, 403, `preflight of ${path}`);
    t.equal(preflight.headers.get('access-control-allow-methods'), null);
  }
  const anonymous = await call(uws, 'OPTIONS', `${NGSI}/entities`, { headers: { origin: 'https://dash.example.org' } });
  t.equal(anonymous.status, 401, 'a preflight without a token is 401 (seed 000 §5.5 rule 1)');
});

t.test('HEAD is no read: 403 where GET is allowed (odrl:read) and where every method of odrl:use is', async (t) => {
  await call(uws, 'POST', `${NGSI}/entities`, { headers: bearer(token), body: { id: 'urn:ngsi-ld:Building:1', type: 'Building' } });
  const get = await call(uws, 'GET', `${NGSI}/entities/urn:ngsi-ld:Building:1`, { headers: bearer(token) });
  t.equal(get.status, 200, get.text);
  for (const id of ['urn:ngsi-ld:Building:1', 'urn:ngsi-ld:Park:1']) {
    const head = await call(uws, 'HEAD', `${NGSI}/entities/${id}`, { headers: bearer(token) });
    t.equal(head.status, 403, id);
    t.equal(head.text, '', 'no body');
  }
  const none = await call(uws, 'HEAD', `${NGSI}/entities/urn:ngsi-ld:Building:1`);
  t.equal(none.status, 401);
});

t.test('406 and 415 are the broker answers given only once a policy allows the request', async (t) => {
  const notAcceptableDenied = await call(uws, 'GET', `${NGSI}/entities/urn:ngsi-ld:Car:1`, {
    headers: { ...bearer(token), accept: 'text/html' },
  });
  t.equal(notAcceptableDenied.status, 403, 'no policy reads Car: 403 before the Accept is judged');
  const notAcceptable = await call(uws, 'GET', `${NGSI}/entities/urn:ngsi-ld:Building:1`, {
    headers: { ...bearer(token), accept: 'text/html' },
  });
  t.equal(notAcceptable.status, 406);
  const unsupportedDenied = await call(uws, 'POST', `${NGSI}/entities`, {
    headers: { ...bearer(token), 'content-type': 'text/plain' },
    raw: JSON.stringify({ id: 'urn:ngsi-ld:Car:2', type: 'Car' }),
  });
  t.equal(unsupportedDenied.status, 403, 'http:bodyValue and the type are read from the body as sent: a Car is refused first');
  const unsupported = await call(uws, 'POST', `${NGSI}/entities`, {
    headers: { ...bearer(token), 'content-type': 'text/plain' },
    raw: JSON.stringify({ id: 'urn:ngsi-ld:Building:2', type: 'Building' }),
  });
  t.equal(unsupported.status, 415);
});

t.test('the same on node:http and through inject', async (t) => {
  const unknown = await call(node, 'GET', `${NGSI}/nothing`, { headers: bearer(token) });
  t.equal(unknown.status, 403);
  const found = await call(node, 'GET', `${NGSI}/nothing?type=Building`, { headers: bearer(token) });
  t.equal(found.status, 404);
  const options = await call(node, 'OPTIONS', `${NGSI}/entities`, { headers: bearer(token) });
  t.equal(options.status, 403);
  const injected = await uws.inject!({ method: 'GET', url: `${NGSI}/nothing`, headers: { host: 'x', ...bearer(token) }, body: null });
  t.equal(injected.status, 403);
});

t.test('no HEAD answer carries a body: the next answer on the connection is read whole (uWS and node:http)', async (t) => {
  for (const b of [uws, node]) {
    await call(b, 'POST', `${NGSI}/entities`, { headers: bearer(token), body: { id: 'urn:ngsi-ld:Building:1', type: 'Building' } });
    const head = (path: string, auth: boolean): string =>
      `HEAD ${path} HTTP/1.1\r\nHost: x\r\n${auth ? `Authorization: Bearer ${token}\r\n` : ''}\r\n`;
    const get = `GET ${NGSI}/entities/urn:ngsi-ld:Building:1 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\n\r\n`;
    const { replies, rest } = await rawExchange(
      b.port,
      [
        head(`${NGSI}/entities/urn:ngsi-ld:Building:1`, false),
        head(`${NGSI}/entities/urn:ngsi-ld:Building:1`, true),
        head(`${NGSI}/nothing`, true),
        get,
      ],
      [true, true, true, false],
    );
    t.same(
      replies.map((r) => r.status),
      [401, 403, 403, 200],
      `answers in order on ${b === uws ? 'uWS' : 'node:http'}`,
    );
    for (const r of replies.slice(0, 3)) {
      t.equal(r.body.length, 0);
      t.ok(Number(header(r, 'content-length')) > 0, 'the length of the body a GET would get');
    }
    t.equal(JSON.parse(replies[3]!.body.toString()).id, 'urn:ngsi-ld:Building:1', 'the GET after the HEADs is whole');
    t.equal(rest.length, 0, 'nothing after the last answer');
  }
  const injected = await uws.inject!({
    method: 'HEAD',
    url: `${NGSI}/entities/urn:ngsi-ld:Building:1`,
    headers: { host: 'x', ...bearer(token) },
    body: null,
  });
  t.equal(injected.status, 403);
  t.equal(injected.body.length, 0, 'inject answers a HEAD without a body');
});

t.test('without policies every request is 503, an unknown path too', async (t) => {
  const signer = await makeSigner(mkdtempSync(join(dir, 'none-')));
  const b = await startBroker([
    '--auth',
    'dsec',
    '--dsecJwks',
    signer.jwksFile,
    '--dsecIssuer',
    ISSUER,
    '--dsecPolicies',
    join(dir, 'absent-policies.json'),
  ]);
  brokers.push(b);
  for (const [method, path] of [
    ['GET', `${NGSI}/nothing`],
    ['OPTIONS', `${NGSI}/entities`],
    ['HEAD', `${NGSI}/entities`],
    ['PUT', `${NGSI}/entities`],
  ] as const) {
    const r = await call(b, method, path, { headers: bearer(await signer.token(credential('did:web:issuer.example'))) });
    t.equal(r.status, 503, `${method} ${path}`);
  }
});
