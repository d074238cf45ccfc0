// seed 000 §5.5 and §7 through the plugin's contract, against a real verifier (discovery, JWKS) and a real PAP
// on 127.0.0.1: which tokens hold, the 401 challenges, the 503s, the token cache and the key rotation.

import t from 'tap';
import { SignJWT, base64url } from 'jose';
import { AuthVerdict } from '../../src/auth/contract.js';
import { authShutdown, dsecInstances } from '../../src/plugins/auth/dsec/index.js';
import {
  CREDENTIAL,
  FakePap,
  FakeVerifier,
  ISSUER,
  ORG,
  anyonePolicy,
  authenticate,
  authorize,
  bearer,
  makeKey,
  register,
  request,
  rolePolicy,
  serve,
  signToken,
  waitFor,
  type TestKey,
} from '../fixtures/dsec/harness.js';

const rsa = await makeKey('rsa-1', 'RS256');
const ec = await makeKey('ec-1', 'ES256');

async function setup(
  t: { teardown(fn: () => unknown): void },
  extra: Record<string, string | number | boolean> = {},
  keys: TestKey[] = [rsa, ec],
) {
  const verifier = await new FakeVerifier().start();
  verifier.keys = keys.map((k) => k.publicJwk);
  const pap = await new FakePap().start();
  pap.policies = [rolePolicy('urn:p:operators', 'OPERATOR'), anyonePolicy('urn:p:create', 'ngsild:create')];
  const { driver, host } = await register({ dsecDiscovery: verifier.discovery, dsecPap: pap.served.url, dsecOrganization: ORG, ...extra });
  const instance = dsecInstances().at(-1)!;
  t.teardown(async () => {
    authShutdown();
    await verifier.served.close();
    await pap.served.close();
  });
  return { verifier, pap, driver, host, instance };
}

async function ready(instance: ReturnType<typeof dsecInstances>[number]): Promise<boolean> {
  return waitFor(() => instance.keys !== null && instance.policies !== null);
}

t.test('a request without a token is 401 with the challenge "Bearer"', async (t) => {
  const { driver, instance } = await setup(t);
  t.ok(await ready(instance));
  const r = await authenticate(driver, request());
  t.equal(r.verdict, AuthVerdict.Unauthenticated);
  t.equal(r.answer.wwwAuthenticate, 'Bearer');
  t.equal(r.answer.title, 'Unauthorized');
  t.match(r.answer.detail, /access token is required/);
  const basic = await authenticate(driver, request({ headers: { authorization: 'Basic dXNlcjpwYXNz' } }));
  t.equal(basic.answer.wwwAuthenticate, 'Bearer', 'another scheme is no token');
  const preflight = await authenticate(driver, request({ method: 'OPTIONS' }));
  t.equal(preflight.verdict, AuthVerdict.Unauthenticated, 'no exception for a CORS preflight');
  const xAccess = await authenticate(driver, request({ headers: { 'x-access-token': await signToken(rsa) } }));
  t.equal(xAccess.verdict, AuthVerdict.Unauthenticated, 'X-Access-Token is not read');
});

t.test('valid RS256 and ES256 tokens hold, the scheme word in any case, and the credential is the identity', async (t) => {
  const { driver, instance } = await setup(t);
  t.ok(await ready(instance));
  for (const [key, scheme] of [
    [rsa, 'Bearer'],
    [ec, 'bearer'],
    [rsa, 'BEARER'],
  ] as const) {
    const r = await authenticate(driver, request(bearer(await signToken(key), scheme)));
    t.equal(r.verdict, AuthVerdict.Allow, `${key.alg} with scheme ${scheme}`);
    t.same(r.identity, CREDENTIAL);
    t.same(structuredClone(r.identity), r.identity, 'the identity is plain data');
    const z = await authorize(driver, request(), r.identity);
    t.equal(z.verdict, AuthVerdict.Allow, 'and the OPERATOR role reads the entity');
  }
});

t.test('refused tokens are 401 invalid_token with a description', async (t) => {
  const { driver, instance } = await setup(t, { dsecLeeway: 60 });
  t.ok(await ready(instance));
  const now = Math.floor(Date.now() / 1000);
  const header = (h: object) => base64url.encode(JSON.stringify(h));
  const payload = base64url.encode(JSON.stringify({ iss: ISSUER, exp: now + 300, verifiableCredential: CREDENTIAL }));
  const rsaPublicPem = new TextEncoder().encode(JSON.stringify(rsa.publicJwk));
  const hs256 = await new SignJWT({ iss: ISSUER, exp: now + 300 }).setProtectedHeader({ alg: 'HS256', kid: rsa.kid }).sign(rsaPublicPem);
  const rsaUnderEcKid = await new SignJWT({ iss: ISSUER, exp: now + 300 })
    .setProtectedHeader({ alg: 'RS256', kid: ec.kid })
    .sign(rsa.privateKey);
  const valid = await signToken(rsa);
  const [h, p, s] = valid.split('.');
  const cases: Array<[string, string, RegExp]> = [
    ['alg none', `${header({ alg: 'none', kid: rsa.kid })}.${payload}.`, /algorithm none is not accepted/],
    ['HS256 signed with the RSA public key as secret', hs256, /algorithm HS256 is not accepted/],
    ['RS256 under the kid of an EC key', rsaUnderEcKid, /RS256 is not the one of key ec-1/],
    [
      'a changed payload',
      `${h}.${base64url.encode(JSON.stringify({ iss: ISSUER, exp: now + 300, verifiableCredential: { issuer: 'did:web:me' } }))}.${s}`,
      /signature does not verify/,
    ],
    ['a changed signature', `${h}.${p}.${s!.slice(0, -4)}AAAA`, /signature does not verify/],
    ['another issuer', await signToken(rsa, {}, { iss: 'did:web:elsewhere' }), /issuer is not the expected one/],
    ['no issuer', await signToken(rsa, {}, { iss: null }), /issuer is not the expected one/],
    ['expired beyond the leeway', await signToken(rsa, {}, { expSeconds: -61 }), /expired/],
    ['no exp', await signToken(rsa, { exp: undefined }), /no expiry/],
    ['nbf ahead beyond the leeway', await signToken(rsa, { nbf: now + 120 }), /not valid yet/],
    [
      'no kid',
      await new SignJWT({ iss: ISSUER, exp: now + 300 }).setProtectedHeader({ alg: 'RS256' }).sign(rsa.privateKey),
      /names no key/,
    ],
    ['not a JWS', 'abc.def', /not a compact JWS/],
    ['the valid token with its signature padded', `${valid}${'='.repeat((4 - (s!.length % 4)) % 4)}`, /canonical base64url/],
    ['the valid token with a space inside', `${h}.${p!.slice(0, 8)} ${p!.slice(8)}.${s}`, /canonical base64url/],
    ['a JWE-shaped token', `${header({ alg: 'RSA-OAEP', enc: 'A256GCM', kid: rsa.kid })}.a.b.c.d`, /not a compact JWS|not accepted/],
  ];
  for (const [what, token, reason] of cases) {
    const r = await authenticate(driver, request(bearer(token)));
    t.equal(r.verdict, AuthVerdict.Unauthenticated, what);
    t.match(r.answer.wwwAuthenticate, /^Bearer error="invalid_token", error_description="[^"\\]+"$/, `${what}: RFC 6750 challenge`);
    t.match(r.answer.wwwAuthenticate, reason, `${what}: description`);
    t.equal(r.answer.title, 'Unauthorized');
  }
  t.equal(
    (await authenticate(driver, request(bearer(await signToken(rsa, {}, { expSeconds: -59 }))))).verdict,
    AuthVerdict.Allow,
    'expired within the leeway holds',
  );
  t.equal(
    (await authenticate(driver, request(bearer(await signToken(rsa, { nbf: now + 50 }))))).verdict,
    AuthVerdict.Allow,
    'nbf ahead within the leeway holds',
  );
});

t.test('a configured audience must be in aud', async (t) => {
  const { driver, instance } = await setup(t, { dsecAudience: 'broker' });
  t.ok(await ready(instance));
  t.equal((await authenticate(driver, request(bearer(await signToken(rsa))))).verdict, AuthVerdict.Unauthenticated, 'no aud');
  t.equal(
    (await authenticate(driver, request(bearer(await signToken(rsa, { aud: 'other' }))))).verdict,
    AuthVerdict.Unauthenticated,
    'another aud',
  );
  t.equal(
    (await authenticate(driver, request(bearer(await signToken(rsa, { aud: 'broker' }))))).verdict,
    AuthVerdict.Allow,
    'aud as a string',
  );
  t.equal(
    (await authenticate(driver, request(bearer(await signToken(rsa, { aud: ['x', 'broker'] }))))).verdict,
    AuthVerdict.Allow,
    'aud as a list',
  );
});

t.test('the credential is verifiableCredential, else vc; a verifiablePresentation satisfies no vc: word', async (t) => {
  const { driver, instance } = await setup(t);
  t.ok(await ready(instance));
  const viaVc = await authenticate(driver, request(bearer(await signToken(rsa, { verifiableCredential: undefined, vc: CREDENTIAL }))));
  t.same(viaVc.identity, CREDENTIAL);
  t.equal((await authorize(driver, request(), viaVc.identity)).verdict, AuthVerdict.Allow);
  const vp = await authenticate(
    driver,
    request(bearer(await signToken(rsa, { verifiableCredential: undefined, verifiablePresentation: [CREDENTIAL, CREDENTIAL] }))),
  );
  t.equal(vp.verdict, AuthVerdict.Allow, 'the token itself holds');
  t.equal(vp.identity, null, 'no credential is read');
  t.equal((await authorize(driver, request(), vp.identity)).verdict, AuthVerdict.Deny, 'the vc:role policy does not hold');
  t.equal(
    (await authorize(driver, request({ method: 'POST', path: '/ngsi-ld/v1/entities' }), vp.identity)).verdict,
    AuthVerdict.Allow,
    'a vc:any policy still does',
  );
});

t.test('a checked token is kept by its bytes and its claims are checked again on every request', async (t) => {
  const { driver, instance } = await setup(t, { dsecLeeway: 0 });
  t.ok(await ready(instance));
  const token = await signToken(rsa, {}, { expSeconds: 1 });
  const first = await authenticate(driver, request(bearer(token)));
  t.equal(first.verdict, AuthVerdict.Allow);
  t.notOk(first.sync, 'the first check verifies the signature');
  const second = await authenticate(driver, request(bearer(token)));
  t.equal(second.verdict, AuthVerdict.Allow);
  t.ok(second.sync, 'the second is answered from the kept token');
  t.equal(instance.cachedTokens, 1);
  await new Promise((r) => setTimeout(r, 2100));
  const later = await authenticate(driver, request(bearer(token)));
  t.equal(later.verdict, AuthVerdict.Unauthenticated, 'the kept token has expired since');
  t.ok(later.sync);
  t.match(later.answer.wwwAuthenticate, /expired/);
});

t.test('the token cache holds 1024 tokens', async (t) => {
  const { driver, instance } = await setup(t);
  t.ok(await ready(instance));
  for (let i = 0; i < 1030; i++) await authenticate(driver, request(bearer(await signToken(ec, { jti: String(i) }))));
  t.equal(instance.cachedTokens, 1024);
});

t.test('key rotation: a new kid is picked up without a restart, the old tokens are then refused', async (t) => {
  const { driver, instance, verifier } = await setup(t, { dsecRefresh: 30 }, [rsa]);
  t.ok(await ready(instance));
  const oldToken = await signToken(rsa);
  t.equal((await authenticate(driver, request(bearer(oldToken)))).verdict, AuthVerdict.Allow);
  const rsa2 = await makeKey('rsa-2', 'RS256');
  verifier.keys = [rsa2.publicJwk];
  const newToken = await signToken(rsa2);
  const first = await authenticate(driver, request(bearer(newToken)));
  t.equal(first.verdict, AuthVerdict.Unauthenticated, 'an unknown kid is 401 at first');
  t.match(first.answer.wwwAuthenticate, /key rsa-2 is not in the key set/);
  t.ok(
    await waitFor(async () => (await authenticate(driver, request(bearer(newToken)))).verdict === AuthVerdict.Allow, 3000),
    'the unknown kid made the keys be read at once',
  );
  t.equal(instance.cachedTokens, 1, 'the kept tokens were dropped with the old key set');
  const old = await authenticate(driver, request(bearer(oldToken)));
  t.equal(old.verdict, AuthVerdict.Unauthenticated, 'the old key is gone');
});

t.test('an unknown kid makes at most one key read a second', async (t) => {
  const { driver, instance, verifier } = await setup(t, { dsecRefresh: 30 }, [rsa]);
  t.ok(await ready(instance));
  const before = verifier.jwksRequests();
  const strangers = await Promise.all([1, 2, 3, 4, 5].map((i) => makeKey(`stranger-${i}`, 'ES256')));
  for (const k of strangers) await authenticate(driver, request(bearer(await signToken(k))));
  await new Promise((r) => setTimeout(r, 300));
  t.equal(verifier.jwksRequests() - before, 1, 'five unknown kids, one read');
});

t.test(
  'a flood of forged tokens with random kids reads the key set at most once a second, and a valid token holds meanwhile',
  async (t) => {
    const { driver, instance, verifier } = await setup(t, { dsecRefresh: 30 }, [rsa]);
    t.ok(await ready(instance));
    const valid = await signToken(rsa);
    const before = verifier.jwksRequests();
    const body = base64url.encode(JSON.stringify({ iss: ISSUER, exp: Math.floor(Date.now() / 1000) + 300 }));
    const started = Date.now();
    let forged = 0;
    let letIn = 0;
    let validRefused = 0;
    // Unsigned tokens cost the client nothing: the kid is looked up before any signature is checked.
    while (Date.now() - started < 2500) {
      const kid = `forged-${forged++}-${Math.random().toString(36).slice(2)}`;
      const r = await authenticate(
        driver,
        request(bearer(`${base64url.encode(JSON.stringify({ alg: 'RS256', kid }))}.${body}.c2lnbmF0dXJl`)),
      );
      if (r.verdict !== AuthVerdict.Unauthenticated) letIn++;
      if (forged % 1000 === 0) {
        if ((await authenticate(driver, request(bearer(valid)))).verdict !== AuthVerdict.Allow) validRefused++;
        // Let the forced reads' fetches run between the bursts, as the front's event loop does between requests.
        await new Promise((r) => setImmediate(r));
      }
    }
    t.equal(letIn, 0, 'no forged token was let in');
    t.equal(validRefused, 0, 'the valid token held throughout the flood');
    await new Promise((r) => setTimeout(r, 300));
    const seconds = Math.ceil((Date.now() - started) / 1000);
    const reads = verifier.jwksRequests() - before;
    t.ok(forged > 1000, `${forged} forged tokens`);
    t.ok(reads >= 1, 'an unknown kid does make the keys be read');
    t.ok(reads <= seconds + 1, `${reads} key reads in ${seconds} s of flood: at most one a second`);
  },
);

t.test('keys not loaded yet: a token is 503, a request without token still 401', async (t) => {
  const pap = await new FakePap().start();
  pap.policies = [anyonePolicy('urn:p:any')];
  const closed = await serve(() => {});
  const port = Number(new URL(closed.url).port);
  await closed.close();
  const { driver } = await register({
    dsecDiscovery: `http://127.0.0.1:${port}/.well-known/openid-configuration`,
    dsecPap: pap.served.url,
  });
  const instance = dsecInstances().at(-1)!;
  t.teardown(async () => {
    authShutdown();
    await pap.served.close();
  });
  t.ok(await waitFor(() => instance.policies !== null));
  const r = await authenticate(driver, request(bearer(await signToken(rsa))));
  t.equal(r.verdict, AuthVerdict.Unavailable);
  t.equal(r.answer.title, 'Service Unavailable');
  t.match(r.answer.detail, /keys are not loaded yet/);
  t.equal((await authenticate(driver, request())).verdict, AuthVerdict.Unauthenticated);
  // the verifier comes up on that port: keys are read every second while missing
  const verifier = await new FakeVerifier().start(port);
  verifier.keys = [rsa.publicJwk];
  t.teardown(() => verifier.served.close());
  // keys are read every second while missing: well within this bound once the verifier answers
  t.ok(
    await waitFor(async () => (await authenticate(driver, request(bearer(await signToken(rsa))))).verdict === AuthVerdict.Allow, 2500),
    'the plugin recovers once the verifier answers',
  );
});

t.test('a discovery document without issuer leaves every token refused with 503', async (t) => {
  const { driver, instance, verifier } = await setup(t);
  verifier.issuer = null;
  t.ok(await ready(instance));
  const r = await authenticate(driver, request(bearer(await signToken(rsa))));
  t.equal(r.verdict, AuthVerdict.Unavailable);
  t.match(r.answer.detail, /names no issuer/);
});

t.test('no policies yet: every request is 503', async (t) => {
  const verifier = await new FakeVerifier().start();
  verifier.keys = [rsa.publicJwk];
  const pap = await new FakePap().start();
  pap.failPage = 0;
  const { driver } = await register({ dsecDiscovery: verifier.discovery, dsecPap: pap.served.url });
  const { driver: worker } = await register({ dsecDiscovery: verifier.discovery, dsecPap: pap.served.url }, false);
  const instance = dsecInstances()[0]!;
  t.teardown(async () => {
    authShutdown();
    await verifier.served.close();
    await pap.served.close();
  });
  t.ok(await waitFor(() => instance.keys !== null));
  for (const init of [{}, bearer(await signToken(rsa))]) {
    const r = await authenticate(driver, request(init));
    t.equal(r.verdict, AuthVerdict.Unavailable);
    t.match(r.answer.detail, /policies are not loaded yet/);
  }
  const z = await authorize(worker, request(), CREDENTIAL);
  t.equal(z.verdict, AuthVerdict.Unavailable, 'authorize on a worker too');
  t.equal(z.answer.title, 'Service Unavailable');
  pap.failPage = null;
  pap.policies = [anyonePolicy('urn:p:any')];
  t.ok(
    await waitFor(async () => (await authorize(worker, request(), CREDENTIAL)).verdict === AuthVerdict.Allow, 4000),
    'policies are read every second while missing, and reach the worker',
  );
});

t.test('an Authorization header over 512 bytes is logged once; a 100 KB header is a refused token', async (t) => {
  const { driver, instance, host } = await setup(t);
  t.ok(await ready(instance));
  const big = 'x'.repeat(100 * 1024);
  for (let i = 0; i < 3; i++) {
    const r = await authenticate(driver, request(bearer(big)));
    t.equal(r.verdict, AuthVerdict.Unauthenticated);
    t.match(r.answer.wwwAuthenticate, /invalid_token/);
  }
  const valid = await signToken(rsa, { padding: 'p'.repeat(600) });
  t.equal((await authenticate(driver, request(bearer(valid)))).verdict, AuthVerdict.Allow, 'a long valid token holds');
  t.equal(host.lines.filter((l) => /over 512 bytes/.test(l.msg)).length, 1, 'one log line');
});

t.test('--dsecAnonymous lets a request without token in as no one; only vc:any can allow it', async (t) => {
  const { driver, instance } = await setup(t, { dsecAnonymous: true });
  t.ok(await ready(instance));
  const r = await authenticate(driver, request());
  t.equal(r.verdict, AuthVerdict.Allow);
  t.equal(r.identity, null);
  t.equal((await authorize(driver, request(), r.identity)).verdict, AuthVerdict.Deny, 'the role policy does not hold');
  t.equal(
    (await authorize(driver, request({ method: 'POST', path: '/ngsi-ld/v1/entities' }), r.identity)).verdict,
    AuthVerdict.Allow,
    'the vc:any policy does',
  );
  const bad = await authenticate(driver, request(bearer('not-a-token')));
  t.equal(bad.verdict, AuthVerdict.Unauthenticated, 'a bad token is still refused');
});

t.test('a key read that fails keeps the key set in place', async (t) => {
  const { driver, instance, verifier, host } = await setup(t, { dsecRefresh: 1 }, [rsa]);
  t.ok(await ready(instance));
  const keys = instance.keys;
  await verifier.served.close();
  t.ok(await waitFor(() => host.lines.some((l) => /reading the keys failed; the current set is kept/.test(l.msg)), 3000));
  t.equal(instance.keys, keys, 'the old set is kept');
  t.equal((await authenticate(driver, request(bearer(await signToken(rsa))))).verdict, AuthVerdict.Allow);
});
