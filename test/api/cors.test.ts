// CORS for browser dashboards (issue 15 item 3; --corsOrigin, --corsMaxAge as Orion and Orion-LD name them): off by
// default; `__ALL` or `*` answers `*`, one origin answers only that origin; a preflight is answered 204 with the path's
// methods, the request headers of the API and Max-Age; a script may read Location, Link, NGSILD-Results-Count...; with
// --auth dsec a preflight is authenticated like any request (seed 000 §5.5 rule 1).
import t, { type Test } from 'tap';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startBroker, runBroker, runBrokerHere, call, NGSI, type Broker, type Reply } from './helpers/broker.js';
import { ISSUER, makeKey, signToken } from '../fixtures/dsec/harness.js';

const DASHBOARD = 'https://dash.example.org';
const OTHER = 'https://evil.example.com';
const EXPOSED = [
  'Location',
  'Link',
  'NGSILD-Results-Count',
  'NGSILD-Tenant',
  'NGSILD-Snapshot',
  'NGSILD-EntityMap',
  'Content-Range',
  'Allow',
  'Retry-After',
  'WWW-Authenticate',
];
const ALLOWED_HEADERS = [
  'Content-Type',
  'Accept',
  'Link',
  'NGSILD-Tenant',
  'NGSILD-Snapshot',
  'NGSILD-EntityMap',
  'NGSILD-Path',
  'Authorization',
];

const list = (value: string | null): string[] =>
  (value ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');

/** A browser's preflight for `method` on `path` from `origin`. */
const preflight = (broker: Broker, path: string, origin: string, method = 'POST', headers: Record<string, string> = {}): Promise<Reply> =>
  call(broker, 'OPTIONS', path, {
    headers: { origin, 'access-control-request-method': method, 'access-control-request-headers': 'content-type, link', ...headers },
  });

function noCors(t: Test, r: Reply, what: string): void {
  for (const name of [
    'access-control-allow-origin',
    'access-control-expose-headers',
    'access-control-allow-methods',
    'access-control-allow-headers',
    'access-control-max-age',
  ]) {
    t.equal(r.headers.get(name), null, `${what}: no ${name}`);
  }
}

t.test('off by default: no CORS header on an answer or a preflight, whatever the Origin', async (t) => {
  const broker = await startBroker();
  t.teardown(() => broker.stop());
  const r = await call(broker, 'GET', `${NGSI}/types`, { headers: { origin: DASHBOARD } });
  t.equal(r.status, 200);
  noCors(t, r, 'GET');
  t.equal(r.headers.get('vary'), null);
  const p = await preflight(broker, `${NGSI}/entities`, DASHBOARD);
  t.equal(p.status, 204, 'a preflight is an OPTIONS like any other');
  t.equal(p.headers.get('allow'), 'POST, GET, HEAD, DELETE, OPTIONS');
  noCors(t, p, 'preflight');
});

for (const spelling of ['__ALL', '*']) {
  t.test(`--corsOrigin ${spelling}: every origin is answered '*'`, async (t) => {
    const broker = await startBroker(['--corsOrigin', spelling]);
    t.teardown(() => broker.stop());
    for (const origin of [DASHBOARD, OTHER, 'null']) {
      const r = await call(broker, 'GET', `${NGSI}/types`, { headers: { origin } });
      t.equal(r.status, 200);
      t.equal(r.headers.get('access-control-allow-origin'), '*', `Origin ${origin}`);
      t.same(list(r.headers.get('access-control-expose-headers')), EXPOSED);
      t.equal(r.headers.get('vary'), null, 'the answer does not depend on Origin');
    }
    noCors(t, await call(broker, 'GET', `${NGSI}/types`), 'no Origin, no CORS request');
    const p = await preflight(broker, `${NGSI}/entities`, OTHER, 'DELETE');
    t.equal(p.status, 204);
    t.equal(p.text, '');
    t.equal(p.headers.get('access-control-allow-origin'), '*');
    t.equal(p.headers.get('access-control-allow-methods'), 'POST, GET, HEAD, DELETE, OPTIONS', "the path's methods");
    t.same(list(p.headers.get('access-control-allow-headers')), ALLOWED_HEADERS);
    t.equal(p.headers.get('access-control-max-age'), '86400', "Orion's default");
    const created = await call(broker, 'POST', `${NGSI}/entities`, {
      body: { id: 'urn:ngsi-ld:Dash:1', type: 'Dash' },
      headers: { origin: DASHBOARD },
    });
    t.equal(created.status, 201);
    t.equal(created.headers.get('access-control-allow-origin'), '*');
    t.ok(list(created.headers.get('access-control-expose-headers')).includes('Location'), 'a script may read the Location');
    const missing = await call(broker, 'GET', `${NGSI}/entities/urn:ngsi-ld:Dash:none`, { headers: { origin: DASHBOARD } });
    t.equal(missing.status, 404);
    t.equal(missing.headers.get('access-control-allow-origin'), '*', 'an error is readable too');
  });
}

t.test("--corsOrigin <origin>: that origin only, the configured value written (never the request's), Vary: Origin", async (t) => {
  const broker = await startBroker(['--corsOrigin', 'HTTPS://Dash.Example.org:443/', '--corsMaxAge', '600']);
  t.teardown(() => broker.stop());
  const r = await call(broker, 'GET', `${NGSI}/types`, { headers: { origin: DASHBOARD } });
  t.equal(r.headers.get('access-control-allow-origin'), DASHBOARD, 'the origin as a browser sends it: lower case, no default port');
  t.same(list(r.headers.get('access-control-expose-headers')), EXPOSED);
  t.equal(r.headers.get('vary'), 'Origin');
  for (const origin of [OTHER, `${DASHBOARD}.evil.com`, `${DASHBOARD}:8443`, 'http://dash.example.org', 'null', `${DASHBOARD}/`, '*']) {
    const other = await call(broker, 'GET', `${NGSI}/types`, { headers: { origin } });
    t.equal(other.status, 200);
    noCors(t, other, `Origin ${origin}`);
    t.equal(other.headers.get('vary'), 'Origin', 'a cache keeps answers apart by Origin');
  }
  t.equal((await call(broker, 'GET', `${NGSI}/types`)).headers.get('vary'), 'Origin');
  const p = await preflight(broker, `${NGSI}/entities/urn:ngsi-ld:X:1`, DASHBOARD, 'PATCH');
  t.equal(p.status, 204);
  t.equal(p.headers.get('access-control-allow-origin'), DASHBOARD);
  t.equal(p.headers.get('access-control-allow-methods'), 'GET, HEAD, DELETE, PATCH, PUT, OPTIONS');
  t.equal(p.headers.get('access-control-max-age'), '600');
  const refused = await preflight(broker, `${NGSI}/entities/urn:ngsi-ld:X:1`, OTHER, 'PATCH');
  t.equal(refused.status, 204, 'answered as an OPTIONS');
  t.equal(refused.headers.get('allow'), 'GET, HEAD, DELETE, PATCH, PUT, OPTIONS');
  noCors(t, refused, 'preflight from another origin');
});

t.test('on node:http the same headers', async (t) => {
  const broker = await startBroker(['--httpServer', 'node', '--corsOrigin', DASHBOARD]);
  t.teardown(() => broker.stop());
  const r = await call(broker, 'GET', `${NGSI}/types`, { headers: { origin: DASHBOARD } });
  t.equal(r.headers.get('access-control-allow-origin'), DASHBOARD);
  t.equal(r.headers.get('vary'), 'Origin');
  const p = await preflight(broker, '/version', DASHBOARD, 'GET');
  t.equal(p.status, 204);
  t.equal(p.headers.get('access-control-allow-methods'), 'GET, HEAD, OPTIONS');
  t.equal(p.headers.get('access-control-max-age'), '86400');
  t.equal(p.headers.get('content-length'), null, 'a 204 has no Content-Length');
});

t.test('a --corsOrigin that is no origin, or a negative --corsMaxAge, stops the broker with one line', async (t) => {
  for (const [i, [args, message]] of (
    [
      [['--corsOrigin', 'dash.example.org'], /--corsOrigin: 'dash.example.org' is not an origin/],
      [['--corsOrigin', 'https://dash.example.org/app'], /is not an origin/],
      [['--corsOrigin', 'ftp://dash.example.org'], /is not an origin/],
      [['--corsOrigin', 'https://dash.example.org:99999'], /is not an origin/],
      [['--corsOrigin', 'https://a.org, https://b.org'], /is not an origin/],
      [['--corsMaxAge', '-1'], /--corsMaxAge: -1 is below 0/],
    ] as Array<[string[], RegExp]>
  ).entries()) {
    // The first from the spawned command, the others as main.ts runs them, in this process (no process start each).
    const r = await (i === 0 ? runBroker : runBrokerHere)(['--port', '0', ...args]);
    t.equal(r.code, 1, args.join(' '));
    t.match(r.stderr, message);
  }
});

t.test('with --auth dsec a preflight is authenticated and authorized like any request: 401 without a token, 403 with one', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'ldbroker-cors-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const key = await makeKey('k1', 'ES256');
  writeFileSync(join(dir, 'jwks.json'), JSON.stringify({ keys: [key.publicJwk] }));
  writeFileSync(
    join(dir, 'policies.json'),
    JSON.stringify([
      {
        '@context': { odrl: 'http://www.w3.org/ns/odrl/2/' },
        '@type': 'odrl:Policy',
        'odrl:uid': 'urn:p:read',
        'odrl:permission': {
          '@type': 'odrl:Permission',
          'odrl:action': { '@id': 'odrl:read' },
          'odrl:assignee': { '@id': 'vc:any' },
          'odrl:target': 'urn:asset',
        },
      },
    ]),
  );
  const broker = await startBroker([
    '--corsOrigin',
    DASHBOARD,
    '--auth',
    'dsec',
    '--dsecJwks',
    join(dir, 'jwks.json'),
    '--dsecIssuer',
    ISSUER,
    '--dsecPolicies',
    join(dir, 'policies.json'),
  ]);
  t.teardown(() => broker.stop());
  const token = await signToken(key);
  const deadline = Date.now() + 10_000;
  let p = await preflight(broker, `${NGSI}/entities`, DASHBOARD, 'GET', { authorization: `Bearer ${token}` });
  while (p.status === 503 && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 100));
    p = await preflight(broker, `${NGSI}/entities`, DASHBOARD, 'GET', { authorization: `Bearer ${token}` });
  }
  // seed 000 §5.6: no action word covers OPTIONS (odrl:use is GET POST PUT PATCH DELETE), as in the reference chain
  t.equal(p.status, 403, 'with a token the preflight is authorized like any request: no policy allows OPTIONS');
  t.equal(p.headers.get('access-control-allow-origin'), DASHBOARD, 'the refusal is readable by the dashboard');
  t.equal(p.headers.get('access-control-allow-methods'), null, 'nothing of a preflight answer');
  const anonymous = await preflight(broker, `${NGSI}/entities`, DASHBOARD, 'GET');
  t.equal(anonymous.status, 401, 'no CORS preflight exception');
  t.match(anonymous.headers.get('www-authenticate'), /^Bearer/);
  t.equal(anonymous.headers.get('access-control-allow-methods'), null, 'nothing of a preflight answer');
  t.equal(anonymous.headers.get('access-control-allow-origin'), DASHBOARD, 'the refusal itself is readable by the dashboard');

  const open = await startBroker([
    '--corsOrigin',
    DASHBOARD,
    '--auth',
    'dsec',
    '--dsecAnonymous',
    '--dsecJwks',
    join(dir, 'jwks.json'),
    '--dsecIssuer',
    ISSUER,
    '--dsecPolicies',
    join(dir, 'policies.json'),
  ]);
  t.teardown(() => open.stop());
  let q = await preflight(open, `${NGSI}/entities`, DASHBOARD, 'GET');
  while (q.status === 503 && Date.now() < deadline + 10_000) {
    await new Promise((r) => setTimeout(r, 100));
    q = await preflight(open, `${NGSI}/entities`, DASHBOARD, 'GET');
  }
  t.equal(q.status, 403, 'with --dsecAnonymous a preflight without a token is let in as no one, then authorized: 403');
  t.equal(q.headers.get('access-control-allow-methods'), null);
});
