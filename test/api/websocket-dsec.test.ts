// The WebSocket transport under `--auth dsec` (seed 000 §5.1 rule 2): the upgrade carries no credentials and is not
// asked; each message is authenticated and authorized with the Authorization of its own metadata, real JWTs signed
// here (as test/api/auth-dsec.test.ts makes them), so two messages on one connection may be two different clients.
import t from 'tap';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SignJWT, exportJWK, generateKeyPair } from 'jose';
import { startBroker, call, NGSI, type Broker } from './helpers/broker.js';
import { WsClient } from './helpers/ws-client.js';
import { pathPolicy, typePolicy as policy } from '../../bench/odrl-policy.js';

const ISSUER = 'did:web:verifier.example';
const dir = mkdtempSync(join(tmpdir(), 'ldbroker-wsdsec-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));

let broker: Broker;
let token: string;
let expired: string;
let foreign: string;

t.before(async () => {
  const { publicKey, privateKey } = await generateKeyPair('RS256');
  const other = await generateKeyPair('RS256');
  const jwk = { ...(await exportJWK(publicKey)), kid: 'k1', alg: 'RS256', use: 'sig' };
  writeFileSync(join(dir, 'jwks.json'), JSON.stringify({ keys: [jwk] }));
  writeFileSync(
    join(dir, 'policies.json'),
    JSON.stringify([
      policy('urn:p:read-building', 'odrl:read', 'Building'),
      policy('urn:p:create-building', 'ngsild:create', 'Building'),
      pathPolicy('urn:p:create-subscription', 'ngsild:create', `${NGSI}/subscriptions`),
      pathPolicy('urn:p:read-subscription', 'odrl:read', `${NGSI}/subscriptions`),
    ]),
  );
  const vc = { type: ['VerifiableCredential'], issuer: 'did:web:issuer.example', credentialSubject: { type: 'gx:LegalParticipant' } };
  const sign = (key: CryptoKey, iat: number, exp: number): Promise<string> =>
    new SignJWT({ verifiableCredential: vc })
      .setProtectedHeader({ alg: 'RS256', kid: 'k1' })
      .setIssuer(ISSUER)
      .setIssuedAt(iat)
      .setExpirationTime(exp)
      .sign(key);
  const now = Math.floor(Date.now() / 1000);
  token = await sign(privateKey, now, now + 600);
  expired = await sign(privateKey, now - 7200, now - 3600);
  foreign = await sign(other.privateKey, now, now + 600);
  broker = await startBroker(
    ['--auth', 'dsec', '--dsecJwks', join(dir, 'jwks.json'), '--dsecIssuer', ISSUER, '--dsecPolicies', join(dir, 'policies.json')],
    {},
    { pool: true, http: true },
  );
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    const r = await call(broker, 'GET', '/nothing', { headers: { authorization: `Bearer ${token}` } });
    if (r.status !== 503) break;
    await new Promise((res) => setTimeout(res, 100));
  }
});
t.teardown(() => broker.stop());

const bearer = (tk: string): Record<string, string> => ({ Authorization: `Bearer ${tk}` });
const building = { id: 'urn:ngsi-ld:Building:ws', type: 'Building', name: { type: 'Property', value: 'b' } };

t.test('the upgrade carries no credentials and is let in; a message without a token is 401 with its correlation id', async (t) => {
  const c = await WsClient.open(broker.port);
  const a = await c.request({ method: 'GET', path: `${NGSI}/entities/urn:ngsi-ld:Building:ws` });
  t.equal(a.metadata.status, 401);
  t.equal(a.metadata.headers['WWW-Authenticate'], 'Bearer');
  t.equal(a.body.type, 'about:blank');
  await c.close();
});

t.test('each message is decided on its own Authorization, whatever came before on the connection', async (t) => {
  const c = await WsClient.open(broker.port);
  const created = await c.request({ method: 'POST', path: `${NGSI}/entities`, body: building, headers: bearer(token) });
  t.equal(created.metadata.status, 201, JSON.stringify(created.body));
  // In flight together on one connection: allowed, expired, signed by an unknown key, none, another type.
  const [ok, old, bad, none, car, del] = await Promise.all([
    c.request({ method: 'GET', path: `${NGSI}/entities/${building.id}`, headers: bearer(token) }),
    c.request({ method: 'GET', path: `${NGSI}/entities/${building.id}`, headers: bearer(expired) }),
    c.request({ method: 'GET', path: `${NGSI}/entities/${building.id}`, headers: bearer(foreign) }),
    c.request({ method: 'GET', path: `${NGSI}/entities/${building.id}` }),
    c.request({ method: 'POST', path: `${NGSI}/entities`, body: { id: 'urn:ngsi-ld:Car:ws', type: 'Car' }, headers: bearer(token) }),
    c.request({ method: 'DELETE', path: `${NGSI}/entities/${building.id}`, headers: bearer(token) }),
  ]);
  t.equal(ok!.metadata.status, 200);
  t.equal(ok!.body.name.value, 'b');
  t.equal(old!.metadata.status, 401, 'an expired token');
  t.match(old!.metadata.headers['WWW-Authenticate'], /invalid_token/);
  t.equal(bad!.metadata.status, 401, 'a token the key set does not verify');
  t.equal(none!.metadata.status, 401, 'no token');
  t.equal(car!.metadata.status, 403, 'a type no policy allows');
  t.equal(del!.metadata.status, 403, 'an action no policy allows');
  const still = await c.request({ method: 'GET', path: `${NGSI}/entities/${building.id}`, headers: bearer(token) });
  t.equal(still.metadata.status, 200, 'the refused delete deleted nothing');
  // A token in the upgrade's own headers would be no credential of the messages: the connection has none.
  t.equal((await c.request({ method: 'GET', path: `${NGSI}/entities/${building.id}` })).metadata.status, 401);
  await c.close();
});

t.test('an Authorization value the servers refuse is refused in a message too, before the plugin reads it', async (t) => {
  const c = await WsClient.open(broker.port);
  const a = await c.request({ method: 'GET', path: `${NGSI}/entities/${building.id}`, headers: { Authorization: 'Bearer \u00e9' } });
  t.equal(a.metadata.status, 400);
  t.equal(a.body.type, 'https://uri.etsi.org/ngsi-ld/errors/BadRequestData');
  await c.close();
});

t.test(
  "a closed connection's subscriptions are deleted by the broker, which no policy needs to allow (seed 000 §5.1 rule 3)",
  async (t) => {
    const c = await WsClient.open(broker.port);
    const sub = {
      id: 'urn:ngsi-ld:Subscription:wsd',
      type: 'Subscription',
      entities: [{ type: 'Building' }],
      notification: { endpoint: { uri: c.connection } },
    };
    const made = await c.request({ method: 'POST', path: `${NGSI}/subscriptions`, body: sub, headers: bearer(token) });
    t.equal(made.metadata.status, 201, JSON.stringify(made.body));
    const del = await c.request({ method: 'DELETE', path: `${NGSI}/subscriptions/${sub.id}`, headers: bearer(token) });
    t.equal(del.metadata.status, 403, 'no policy lets a client delete it');
    await c.close();
    const deadline = Date.now() + 5000;
    let status = 0;
    while (Date.now() < deadline) {
      status = (await call(broker, 'GET', `${NGSI}/subscriptions/${sub.id}`, { headers: { authorization: `Bearer ${token}` } })).status;
      if (status === 404) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    t.equal(status, 404, 'deleted once the connection closed');
  },
);
