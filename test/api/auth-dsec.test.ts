// `--auth dsec` end to end through the broker (seed 000 §5.4 to §5.7, §7): real JWTs signed with keys made here,
// the key set and the policies read from files, decisions on real NGSI-LD requests.
import t from 'tap';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SignJWT, exportJWK, generateKeyPair } from 'jose';
import { startBroker, call, NGSI, type Broker } from './helpers/broker.js';
import { rawExchange, header } from './helpers/raw-http.js';
import { typePolicy as policy } from '../../bench/odrl-policy.js';

const ISSUER = 'did:web:verifier.example';
const dir = mkdtempSync(join(tmpdir(), 'ldbroker-dsec-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));

let broker: Broker;
let token: string;
let expired: string;

t.before(async () => {
  const { publicKey, privateKey } = await generateKeyPair('RS256');
  const jwk = { ...(await exportJWK(publicKey)), kid: 'k1', alg: 'RS256', use: 'sig' };
  writeFileSync(join(dir, 'jwks.json'), JSON.stringify({ keys: [jwk] }));
  writeFileSync(
    join(dir, 'policies.json'),
    JSON.stringify([policy('urn:p:read-building', 'odrl:read', 'Building'), policy('urn:p:create-building', 'ngsild:create', 'Building')]),
  );
  const vc = { type: ['VerifiableCredential'], issuer: 'did:web:issuer.example', credentialSubject: { type: 'gx:LegalParticipant' } };
  token = await new SignJWT({ verifiableCredential: vc })
    .setProtectedHeader({ alg: 'RS256', kid: 'k1' })
    .setIssuer(ISSUER)
    .setIssuedAt()
    .setExpirationTime('10m')
    .sign(privateKey);
  expired = await new SignJWT({ verifiableCredential: vc })
    .setProtectedHeader({ alg: 'RS256', kid: 'k1' })
    .setIssuer(ISSUER)
    .setIssuedAt(Math.floor(Date.now() / 1000) - 7200)
    .setExpirationTime(Math.floor(Date.now() / 1000) - 3600)
    .sign(privateKey);
  // Two pipeline threads: every one must have the policies (the test of concurrent reads below).
  const files = ['--dsecJwks', join(dir, 'jwks.json'), '--dsecPolicies', join(dir, 'policies.json')];
  broker = await startBroker(['--auth', 'dsec', '--dsecIssuer', ISSUER, ...files, '--connectionPoolSize', '2'], {}, { pool: true });
  // The plugin's refreshers read the files in the background: wait until the front decides a token.
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    const r = await call(broker, 'GET', '/nothing', { headers: { authorization: `Bearer ${token}` } });
    if (r.status !== 503) break;
    await new Promise((res) => setTimeout(res, 100));
  }
});
t.teardown(async () => {
  await broker.stop();
});

const bearer = (tk: string): Record<string, string> => ({ authorization: `Bearer ${tk}` });

t.test('no token is 401 with WWW-Authenticate: Bearer and an about:blank ProblemDetails', async (t) => {
  const r = await call(broker, 'GET', `${NGSI}/entities/urn:ngsi-ld:Building:1`);
  t.equal(r.status, 401);
  t.equal(r.headers.get('www-authenticate'), 'Bearer');
  t.equal(r.json.type, 'about:blank');
});

t.test('an expired token is 401 invalid_token', async (t) => {
  const r = await call(broker, 'GET', `${NGSI}/entities/urn:ngsi-ld:Building:1`, { headers: bearer(expired) });
  t.equal(r.status, 401);
  t.match(r.headers.get('www-authenticate'), /error="invalid_token"/);
});

t.test('a policy allowing create and read of Building lets those through', async (t) => {
  const c = await call(broker, 'POST', `${NGSI}/entities`, {
    body: { id: 'urn:ngsi-ld:Building:1', type: 'Building', name: { type: 'Property', value: 'b' } },
    headers: bearer(token),
  });
  t.equal(c.status, 201, c.text);
  const r = await call(broker, 'GET', `${NGSI}/entities/urn:ngsi-ld:Building:1`, { headers: bearer(token) });
  t.equal(r.status, 200, r.text);
  t.equal(r.json.name.value, 'b');
});

t.test('what no policy allows is 403: another type, another action', async (t) => {
  const c = await call(broker, 'POST', `${NGSI}/entities`, { body: { id: 'urn:ngsi-ld:Car:1', type: 'Car' }, headers: bearer(token) });
  t.equal(c.status, 403, c.text);
  t.equal(c.json.type, 'about:blank');
  const d = await call(broker, 'DELETE', `${NGSI}/entities/urn:ngsi-ld:Building:1`, { headers: bearer(token) });
  t.equal(d.status, 403, 'no policy allows DELETE');
  const still = await call(broker, 'GET', `${NGSI}/entities/urn:ngsi-ld:Building:1`, { headers: bearer(token) });
  t.equal(still.status, 200, 'the entity is still there');
});

t.test('every pipeline thread has the policies: concurrent reads are all decided, none 503', async (t) => {
  // Regression: idle Piscina workers blocked in Atomics.wait never received the plugin's broadcast state.
  const replies = await Promise.all(
    Array.from({ length: 40 }, () => call(broker, 'GET', `${NGSI}/entities/urn:ngsi-ld:Building:1`, { headers: bearer(token) })),
  );
  t.same([...new Set(replies.map((r) => r.status))], [200]);
});

/** A compact JWS with this protected header and a signature that is not one: no key is needed to send it. */
const forged = (protectedHeader: Record<string, unknown>): string =>
  [Buffer.from(JSON.stringify(protectedHeader)).toString('base64url'), Buffer.from('{}').toString('base64url'), 'AAAA'].join('.');

/** RFC 6750 §3: error_description is a quoted-string of %x20-21 / %x23-5B / %x5D-7E only. */
const CHALLENGE = /^Bearer error="invalid_token", error_description="[\x20\x21\x23-\x5b\x5d-\x7e]{1,300}"$/;

t.test('a token whose kid or alg carries CR LF cannot add a header or a body to the 401 (issue 13 item 1)', async (t) => {
  const headers = [
    { alg: 'RS256', kid: 'x\r\nSet-Cookie: session=attacker' },
    { alg: 'RS256', kid: 'x\r\n\r\n<html>injected</html>' },
    { alg: 'x\r\nSet-Cookie: session=attacker', kid: 'k1' },
    { alg: 'RS256', kid: 'x\u0000\u0085\u2028"\\é' + 'k'.repeat(2000) },
    { alg: ['RS256\r\nSet-Cookie: a=b'], kid: 'k1' },
  ];
  for (const h of headers) {
    const { replies, rest } = await rawExchange(
      broker.port,
      `GET ${NGSI}/entities/urn:ngsi-ld:Building:1 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${forged(h)}\r\n\r\n`,
    );
    // named by position: a message holding U+2028 would break the TAP stream itself
    t.equal(replies.length, 1, `token header ${headers.indexOf(h)}`);
    const r = replies[0]!;
    t.equal(r.status, 401);
    t.notOk(
      r.headers.some(([n]) => n === 'set-cookie'),
      'no Set-Cookie',
    );
    t.ok(
      r.headers.every(([n]) => /^[a-z0-9-]+$/.test(n)),
      'every header line is a header',
    );
    t.match(header(r, 'www-authenticate'), CHALLENGE);
    t.equal(JSON.parse(r.body.toString()).status, 401, 'the body is the ProblemDetails');
    t.equal(rest.length, 0, 'nothing after the body');
  }
});

t.test('HEAD is no read (seed 000 §5.6: odrl:read is GET): 403 where GET is allowed, 401 without a token', async (t) => {
  const get = await call(broker, 'GET', `${NGSI}/entities/urn:ngsi-ld:Building:1`, { headers: bearer(token) });
  t.equal(get.status, 200, 'a policy allowing odrl:read of Building lets GET through');
  const head = await call(broker, 'HEAD', `${NGSI}/entities/urn:ngsi-ld:Building:1`, { headers: bearer(token) });
  t.equal(head.status, 403, 'and not HEAD');
  t.equal(head.text, '');
  const none = await call(broker, 'HEAD', `${NGSI}/entities/urn:ngsi-ld:Building:1`);
  t.equal(none.status, 401);
  t.equal(none.headers.get('www-authenticate'), 'Bearer');
});
