// The broker as its own PAP (seed 000 §4.1, §5.9): `--auth dsec --dsecPap http://127.0.0.1:<policyApiPort>` reads
// the policies written through the policy API; a POST allows within --dsecRefresh, a DELETE refuses again, and the
// policies survive a restart on the same --dbDir. The policy port itself asks for no token.
import t from 'tap';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SignJWT, exportJWK, generateKeyPair } from 'jose';
import { spawnBroker, startBroker, call, NGSI, type Broker, type Reply } from './helpers/broker.js';
import { typePolicy as policy } from '../../bench/odrl-policy.js';
import { freePort } from './helpers/ports.js';
import { repoPath } from '../helpers/repo.js';

const DSEC = repoPath('dist/src/plugins/auth/dsec/index.js');
const ISSUER = 'did:web:verifier.example';
const REFRESH = 1;

/** Polls until `done` holds for a reply, for at most `seconds`; answers the last reply. */
async function until(seconds: number, ask: () => Promise<Reply>, done: (r: Reply) => boolean): Promise<Reply> {
  const deadline = Date.now() + seconds * 1000;
  let r = await ask();
  while (!done(r) && Date.now() < deadline) {
    await new Promise((res) => setTimeout(res, 100));
    r = await ask();
  }
  return r;
}

t.test(
  "the dsec plugin reads its policies from the broker's own policy API",
  { skip: existsSync(DSEC) ? false : 'the dsec plugin is not built (dist/src/plugins/auth/dsec/index.js)' },
  async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'ldbroker-policyapi-'));
    t.teardown(() => rmSync(dir, { recursive: true, force: true }));
    const { publicKey, privateKey } = await generateKeyPair('RS256');
    writeFileSync(
      join(dir, 'jwks.json'),
      JSON.stringify({ keys: [{ ...(await exportJWK(publicKey)), kid: 'k1', alg: 'RS256', use: 'sig' }] }),
    );
    const vc = { type: ['VerifiableCredential'], issuer: 'did:web:issuer.example', credentialSubject: { type: 'gx:LegalParticipant' } };
    const token = await new SignJWT({ verifiableCredential: vc })
      .setProtectedHeader({ alg: 'RS256', kid: 'k1' })
      .setIssuer(ISSUER)
      .setIssuedAt()
      .setExpirationTime('10m')
      .sign(privateKey);
    const bearer = { authorization: `Bearer ${token}` };
    const papPort = await freePort();
    const pap = `http://127.0.0.1:${papPort}`;
    const args = [
      '--dbDir',
      join(dir, 'db'),
      '--policyApiPort',
      String(papPort),
      '--auth',
      'dsec',
      '--dsecJwks',
      join(dir, 'jwks.json'),
      '--dsecIssuer',
      ISSUER,
      '--dsecPap',
      pap,
      '--dsecRefresh',
      String(REFRESH),
    ];
    const entity = `${NGSI}/entities/urn:ngsi-ld:Building:1`;
    const readEntity =
      (b: Broker): (() => Promise<Reply>) =>
      () =>
        call(b, 'GET', entity, { headers: bearer });

    let broker = await spawnBroker(args);
    t.teardown(() => broker.stop());
    // An empty listing is a complete read: once read, requests are decided (403) instead of 503.
    const before = await until(10, readEntity(broker), (r) => r.status !== 503);
    t.equal(before.status, 403, 'no policy yet: refused');

    const create = await call(pap, 'POST', '/policy', { body: policy('urn:p:create-building', 'ngsild:create', 'Building') });
    t.equal(create.status, 200, 'the policy port takes no token even with --auth dsec');
    const read = await call(pap, 'POST', '/policy', { body: policy('urn:p:read-building', 'odrl:read', 'Building') });
    t.equal(read.status, 200);
    t.equal((await call(pap, 'GET', '/policy')).status, 200, 'the listing needs no token either');

    const created = await until(
      REFRESH + 5,
      () =>
        call(broker, 'POST', `${NGSI}/entities`, {
          body: { id: 'urn:ngsi-ld:Building:1', type: 'Building', name: { type: 'Property', value: 'b' } },
          headers: bearer,
        }),
      (r) => r.status !== 403,
    );
    t.equal(created.status, 201, `the create policy allows within --dsecRefresh: ${created.text}`);
    const allowed = await until(REFRESH + 5, readEntity(broker), (r) => r.status !== 403);
    t.equal(allowed.status, 200, 'the read policy allows within --dsecRefresh');
    t.equal(allowed.json?.name?.value, 'b');

    const del = await call(pap, 'DELETE', '/policy/odrl/urn%3Ap%3Aread-building');
    t.equal(del.status, 204);
    const refused = await until(REFRESH + 5, readEntity(broker), (r) => r.status === 403);
    t.equal(refused.status, 403, 'refused again within --dsecRefresh of the DELETE');

    t.equal(await broker.stop(), 0, 'a clean shutdown');
    // Restarted in this process on the files the stopped process left.
    broker = await startBroker(args);
    const kept = await call(pap, 'GET', '/policy');
    t.equal(kept.status, 200);
    t.same(
      kept.json.map((e: { 'odrl:uid': string }) => e['odrl:uid']),
      ['urn:p:create-building'],
      'the policy survived the restart, the deleted one did not',
    );
    t.equal(kept.json[0].id, create.headers.get('location'), 'under its id');
    t.same(JSON.parse(kept.json[0].odrl), policy('urn:p:create-building', 'ngsild:create', 'Building'));
    const again = await until(
      10,
      () =>
        call(broker, 'POST', `${NGSI}/entities`, {
          body: { id: 'urn:ngsi-ld:Building:1', type: 'Building' },
          headers: bearer,
        }),
      (r) => r.status !== 503,
    );
    t.equal(again.status, 409, 'after the restart the create policy still allows (the entity is there: 409)');
    t.equal((await call(broker, 'GET', entity, { headers: bearer })).status, 403, 'and the deleted read policy still does not');
    t.equal(
      (await call(pap, 'POST', '/policy', { body: policy('urn:p:create-building', 'odrl:use', 'Building') })).status,
      409,
      'the uid index is rebuilt from the store at start',
    );
  },
);
