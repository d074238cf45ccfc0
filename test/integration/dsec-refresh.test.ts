// seed 000 §3 and §8 through the plugin's contract: the PAP read page by page, sets replaced only after a
// complete read, the four policy document shapes, file sources, the broadcast to non-primary instances, shutdown.

import t from 'tap';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AuthVerdict } from '../../src/auth/contract.js';
import { authShutdown, dsecInstances } from '../../src/plugins/auth/dsec/index.js';
import {
  CREDENTIAL,
  FakePap,
  FakeVerifier,
  ORG,
  anyonePolicy,
  authenticate,
  authorize,
  bearer,
  makeKey,
  register,
  request,
  rolePolicy,
  signToken,
  waitFor,
} from '../fixtures/dsec/harness.js';
import { repoPath } from '../helpers/repo.js';

const rsa = await makeKey('rsa-1', 'RS256');
const fixtures = repoPath('test/fixtures/dsec/policies/');
const read = request();
const del = request({ method: 'DELETE' });

async function servers(t: { teardown(fn: () => unknown): void }) {
  const verifier = await new FakeVerifier().start();
  verifier.keys = [rsa.publicJwk];
  const pap = await new FakePap().start();
  t.teardown(async () => {
    authShutdown();
    await verifier.served.close();
    await pap.served.close();
  });
  return { verifier, pap, options: { dsecDiscovery: verifier.discovery, dsecPap: pap.served.url, dsecOrganization: ORG } };
}

t.test('the PAP is read page by page (pageSize 25, from page 0) until an empty page, in its order', async (t) => {
  const { pap, options } = await servers(t);
  pap.policies = Array.from({ length: 29 }, (_, i) => anyonePolicy(`urn:p:${i}`, 'odrl:delete'));
  pap.policies.push(anyonePolicy('urn:p:last-reads', 'odrl:read'));
  const { driver } = await register(options);
  const instance = dsecInstances().at(-1)!;
  t.ok(await waitFor(() => instance.policies !== null));
  t.same(pap.served.requests.slice(0, 3), ['/policy?page=0&pageSize=25', '/policy?page=1&pageSize=25', '/policy?page=2&pageSize=25']);
  t.equal(instance.policies?.policies.length, 30);
  t.equal((await authorize(driver, read, CREDENTIAL)).verdict, AuthVerdict.Allow, 'the policy of the second page decides');
});

t.test('a PAP that fails mid-listing leaves the old set in place; a complete read replaces it whole', async (t) => {
  const { pap, options } = await servers(t);
  pap.policies = Array.from({ length: 30 }, (_, i) => anyonePolicy(`urn:p:${i}`, 'odrl:read'));
  const { driver, host } = await register({ ...options, dsecRefresh: 1 });
  const instance = dsecInstances().at(-1)!;
  t.ok(await waitFor(() => instance.policies !== null));
  const first = instance.policies;
  pap.policies = Array.from({ length: 30 }, (_, i) => anyonePolicy(`urn:p:${i}`, 'odrl:delete'));
  pap.failPage = 1;
  const reads = pap.served.requests.length;
  t.ok(await waitFor(() => pap.served.requests.filter((u) => u.includes('page=1')).length >= 3, 5000), 'the listing was tried again');
  t.ok(pap.served.requests.length > reads);
  t.equal(instance.policies, first, 'the old set is kept');
  t.equal((await authorize(driver, read, CREDENTIAL)).verdict, AuthVerdict.Allow);
  t.ok(
    host.lines.some((l) => /reading the policies failed; the current set is kept/.test(l.msg)),
    'the failure is logged',
  );
  pap.failPage = null;
  t.ok(await waitFor(() => instance.policies !== first, 3000), 'the next complete read is taken');
  t.equal((await authorize(driver, read, CREDENTIAL)).verdict, AuthVerdict.Deny);
  t.equal((await authorize(driver, del, CREDENTIAL)).verdict, AuthVerdict.Allow);
});

t.test('refusals carry title and detail: 403 for no allowing policy, 503 for two role lists', async (t) => {
  const { pap, options } = await servers(t);
  pap.policies = [rolePolicy('urn:p:role', 'OPERATOR'), anyonePolicy('urn:p:any', 'ngsild:create')];
  const { driver } = await register(options);
  const instance = dsecInstances().at(-1)!;
  t.ok(await waitFor(() => instance.policies !== null));
  const denied = await authorize(driver, del, CREDENTIAL);
  t.equal(denied.verdict, AuthVerdict.Deny);
  t.equal(denied.answer.title, 'Forbidden');
  t.match(denied.answer.detail, /no policy allows/);
  const conflict = {
    ...CREDENTIAL,
    credentialSubject: {
      roles: [
        { target: ORG, names: ['OPERATOR'] },
        { target: ORG, names: ['READER'] },
      ],
    },
  };
  const r = await authorize(driver, read, conflict);
  t.equal(r.verdict, AuthVerdict.Unavailable, 'the role policy comes first and its action holds');
  t.equal(r.answer.title, 'Service Unavailable');
  t.match(r.answer.detail, /two different role lists/);
  const create = await authorize(driver, request({ method: 'POST', path: '/ngsi-ld/v1/entities' }), conflict);
  t.equal(create.verdict, AuthVerdict.Allow, 'a role policy whose action fails never reads the roles');
});

t.test('skipped policies are logged with their reason, the others decide', async (t) => {
  const { options } = await servers(t);
  const { driver, host } = await register({ dsecDiscovery: options.dsecDiscovery, dsecPolicies: join(fixtures, 'with-skipped.json') });
  const instance = dsecInstances().at(-1)!;
  t.ok(await waitFor(() => instance.policies !== null));
  const skipped = host.lines.filter((l) => / skipped, /.test(l.msg)).map((l) => l.msg);
  t.same(skipped, [
    "dsec: policy 'urn:shape:body-without-path' skipped, the left operand 'http:bodyValue' requires a parameter",
    "dsec: policy '(no uid)' skipped, it has no odrl:uid",
  ]);
  t.equal((await authorize(driver, read, CREDENTIAL)).verdict, AuthVerdict.Allow);
});

for (const shape of ['listing', 'array', 'one', 'graph']) {
  t.test(`--dsecPolicies reads a file holding ${shape === 'one' ? 'one policy' : `the ${shape} shape`}`, async (t) => {
    const { options } = await servers(t);
    const { driver } = await register({ dsecDiscovery: options.dsecDiscovery, dsecPolicies: join(fixtures, `${shape}.json`) });
    const instance = dsecInstances().at(-1)!;
    t.ok(await waitFor(() => instance.policies !== null));
    t.equal((await authorize(driver, read, CREDENTIAL)).verdict, AuthVerdict.Allow, 'reading a Car');
    t.equal(
      (await authorize(driver, request({ path: '/ngsi-ld/v1/entities/urn:ngsi-ld:Bus:1' }), CREDENTIAL)).verdict,
      AuthVerdict.Deny,
      'not a Bus',
    );
    t.equal((await authorize(driver, del, CREDENTIAL)).verdict, shape === 'one' ? AuthVerdict.Deny : AuthVerdict.Allow, 'deleting a Car');
  });
}

t.test('--dsecPolicies as a URL, --dsecJwks as a file with --dsecIssuer', async (t) => {
  const { pap } = await servers(t);
  const dir = mkdtempSync(join(tmpdir(), 'dsec-'));
  writeFileSync(join(dir, 'jwks.json'), JSON.stringify({ keys: [rsa.publicJwk, { kty: 'oct', k: 'c2VjcmV0', kid: 'hmac' }] }));
  pap.policies = [anyonePolicy('urn:p:any')];
  const { driver } = await register({
    dsecJwks: join(dir, 'jwks.json'),
    dsecIssuer: 'did:web:verifier.example',
    dsecPolicies: `${pap.served.url}/policy?page=0&pageSize=25`,
  });
  const instance = dsecInstances().at(-1)!;
  t.ok(await waitFor(() => instance.keys !== null && instance.policies !== null));
  t.same([...instance.keys!.keys.keys()], ['rsa-1'], 'a symmetric key is never used');
  const r = await authenticate(driver, request(bearer(await signToken(rsa))));
  t.equal(r.verdict, AuthVerdict.Allow);
  t.equal((await authorize(driver, read, r.identity)).verdict, AuthVerdict.Allow);
});

t.test('a key source that is no JWK Set leaves the keys missing and says so', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'dsec-'));
  writeFileSync(join(dir, 'jwks.json'), JSON.stringify({ nokeys: true }));
  const { driver, host } = await register({ dsecJwks: join(dir, 'jwks.json'), dsecIssuer: 'x', dsecPolicies: join(fixtures, 'one.json') });
  t.teardown(authShutdown);
  const instance = dsecInstances().at(-1)!;
  t.ok(await waitFor(() => host.lines.some((l) => /reading the keys failed/.test(l.msg))));
  t.equal(instance.keys, null);
  t.equal((await authenticate(driver, request(bearer(await signToken(rsa))))).verdict, AuthVerdict.Unavailable);
});

t.test('new sets reach the non-primary instances; one that starts late asks for them', async (t) => {
  const { verifier, pap, options } = await servers(t);
  pap.policies = [anyonePolicy('urn:p:read')];
  const opts = { ...options, dsecRefresh: 1 };
  const early = await register(opts, false);
  const primary = await register(opts, true);
  const [earlyInstance, primaryInstance] = dsecInstances().slice(-2);
  t.ok(await waitFor(() => earlyInstance!.policies !== null && earlyInstance!.keys !== null), 'broadcast to the early worker');
  t.equal(earlyInstance!.primary, false);
  t.equal(primary.host.lines.length > 0, true);
  const late = await register(opts, false);
  const lateInstance = dsecInstances().at(-1)!;
  t.ok(await waitFor(() => lateInstance.policies !== null && lateInstance.keys !== null), 'the late worker asked and got the sets');
  t.equal((await authorize(late.driver, read, CREDENTIAL)).verdict, AuthVerdict.Allow);
  t.same(pap.served.requests.filter((u) => u.includes('page=0')).length >= 1, true);
  // a change is broadcast
  pap.policies = [anyonePolicy('urn:p:delete', 'odrl:delete')];
  t.ok(
    await waitFor(async () => (await authorize(early.driver, del, CREDENTIAL)).verdict === AuthVerdict.Allow, 4000),
    'the new policies reached the worker',
  );
  t.equal((await authorize(late.driver, read, CREDENTIAL)).verdict, AuthVerdict.Deny);
  const rsa2 = await makeKey('rsa-2', 'RS256');
  verifier.keys = [rsa2.publicJwk];
  t.ok(await waitFor(() => lateInstance.keys?.keys.has('rsa-2') === true, 4000), 'the new key set reached the worker');
  t.ok(primaryInstance!.keys?.keys.has('rsa-2'));
  t.equal(primaryInstance!.primary, true);
});

t.test('--dsecStrippedPath makes http:path read the x-stripped-path header', async (t) => {
  const { pap, options } = await servers(t);
  pap.policies = [
    {
      'odrl:uid': 'urn:p:path',
      'odrl:permission': {
        'odrl:action': 'odrl:read',
        'odrl:assignee': 'vc:any',
        'odrl:target': {
          '@type': 'odrl:AssetCollection',
          'odrl:refinement': {
            'odrl:leftOperand': 'http:path',
            'odrl:operator': 'http:isInPath',
            'odrl:rightOperand': '/ngsi-ld/v1/entities',
          },
        },
      },
    },
  ];
  const stripped = await register({ ...options, dsecStrippedPath: true });
  const plain = await register(options);
  const [a, b] = dsecInstances().slice(-2);
  t.ok(await waitFor(() => a!.policies !== null && b!.policies !== null));
  const behindGateway = request({ path: '/provider/ngsi-ld/v1/entities', headers: { 'x-stripped-path': '/ngsi-ld/v1/entities' } });
  t.equal((await authorize(stripped.driver, behindGateway, null)).verdict, AuthVerdict.Allow);
  t.equal((await authorize(plain.driver, behindGateway, null)).verdict, AuthVerdict.Deny, 'a client cannot forge the header by default');
});

t.test('identities turn into text and back; the entity hook allows; release is harmless', async (t) => {
  const { pap, options } = await servers(t);
  pap.policies = [anyonePolicy('urn:p:any')];
  // owners are kept with --dsecNgsild only (seed 000 §5.8)
  const { driver: owners } = await register({ ...options, dsecNgsild: true });
  const text = owners.identitySave!(CREDENTIAL);
  t.type(text, 'string');
  t.same(owners.identityRestore!(text as string), CREDENTIAL);
  t.equal(owners.identitySave!(null), null, 'no one has no owner record');
  t.equal(owners.identityRestore!('{broken'), null);
  const { driver } = await register(options);
  t.equal(driver.identitySave, undefined, 'the reference mode keeps no owner');
  t.equal(
    await driver.entity!(read, CREDENTIAL, { id: 'urn:ngsi-ld:Car:1', types: [], storedTypes: false, read: true }, {}),
    AuthVerdict.Allow,
  );
  t.doesNotThrow(() => driver.release!(read, CREDENTIAL));
});

t.test('authShutdown stops every background read', async (t) => {
  const { verifier, pap, options } = await servers(t);
  pap.policies = [anyonePolicy('urn:p:any')];
  await register({ ...options, dsecRefresh: 1 });
  const instance = dsecInstances().at(-1)!;
  t.ok(await waitFor(() => instance.policies !== null && instance.keys !== null));
  authShutdown();
  t.equal(dsecInstances().length, 0);
  const before = pap.served.requests.length + verifier.served.requests.length;
  await new Promise((r) => setTimeout(r, 1500));
  t.equal(pap.served.requests.length + verifier.served.requests.length, before, 'no read after shutdown');
});
