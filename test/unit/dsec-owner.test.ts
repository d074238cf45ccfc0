// dsec's subscription owner record (seed 000 §2.6, §3 owner rows): the maker's credential saved with its time and
// restored as that credential, with the moment it stops holding kept beside it: the credential's validUntil (VC 1.1
// expirationDate) or --dsecOwnerMaxAge after it was saved; authorize refuses a restored owner past that moment.
import t from 'tap';
import { ownerEnd, ownerEnded, restoreOwner, saveOwner } from '../../src/plugins/auth/dsec/owner.js';
import { AuthVerdict, type AuthAnswer } from '../../src/auth/contract.js';
import { makeHost, newDriver, request } from '../fixtures/dsec/harness.js';
import { authRegister, authShutdown } from '../../src/plugins/auth/dsec/index.js';

const NOW = Date.parse('2026-01-01T00:00:00Z');
const VC = { issuer: 'did:web:a.example', type: ['VerifiableCredential'], credentialSubject: { roles: [] } };

t.test('an identity is saved with its time and restored as that credential', async (t) => {
  const owner = restoreOwner(saveOwner(VC, NOW)!, 0, NOW + 1000);
  t.same(owner, VC, 'every hook decides on it as on a request identity');
  t.equal(ownerEnd(owner), Infinity, 'no lifetime named: it holds until updated or deleted');
  t.equal(ownerEnd(VC), undefined, "a request's identity is no owner: its token bounds it");
  t.notOk(ownerEnded(VC));
});

t.test('no one has no owner record', async (t) => {
  t.equal(saveOwner(null, NOW), null);
  t.equal(saveOwner(undefined, NOW), null);
});

t.test('the lifetime is validUntil, else expirationDate, and --dsecOwnerMaxAge when it ends first', async (t) => {
  const in10s = new Date(NOW + 10_000).toISOString();
  const end = (credential: object, maxAge: number): number | undefined => ownerEnd(restoreOwner(saveOwner(credential, NOW)!, maxAge, NOW));
  t.equal(end({ ...VC, expirationDate: in10s }, 0), NOW + 10_000);
  t.equal(end({ ...VC, validUntil: in10s, expirationDate: '2100-01-01T00:00:00Z' }, 0), NOW + 10_000, 'validUntil first');
  t.equal(end({ ...VC, validUntil: in10s }, 3), NOW + 3000, 'the maximum age ends first');
  t.equal(end({ ...VC, validUntil: in10s }, 60), NOW + 10_000, 'the credential ends first');
  t.equal(end(VC, 5), NOW + 5000);
});

t.test('an owner past its lifetime, or a record that is no owner record, restores as no one', async (t) => {
  t.equal(restoreOwner(saveOwner({ ...VC, expirationDate: '2025-12-31T23:59:59Z' }, NOW)!, 0, NOW), null, 'expired');
  t.equal(restoreOwner(saveOwner(VC, NOW - 10_000)!, 5, NOW), null, 'older than the maximum age');
  t.equal(restoreOwner(saveOwner({ ...VC, validUntil: 'tomorrow' }, NOW)!, 0, NOW), null, 'a lifetime that is no date ends at once');
  t.equal(restoreOwner(saveOwner({ ...VC, validUntil: 20_000_000_000 }, NOW)!, 0, NOW), null, 'a number is no date-time');
  for (const text of [
    '{broken',
    'null',
    '"text"',
    '[]',
    JSON.stringify(VC),
    '{"v":2,"savedAt":1,"credential":{}}',
    '{"v":1,"credential":{}}',
    '{"v":1,"savedAt":1,"credential":"x"}',
  ])
    t.equal(restoreOwner(text, 0, NOW), null, text);
});

t.test('authorize refuses a restored owner once its lifetime is over, and decides on it as on its credential before', async (t) => {
  const driver = newDriver();
  authRegister(driver, makeHost({ dsecJwks: 'absent.json', dsecIssuer: 'x', dsecPolicies: 'absent.json', dsecNgsild: true }, false));
  t.teardown(() => authShutdown());
  const soon = restoreOwner(saveOwner({ ...VC, validUntil: new Date(Date.now() + 150).toISOString() }, Date.now())!, 0, Date.now());
  const answer: AuthAnswer = {};
  t.equal(await driver.authorize!(request(), soon, answer), AuthVerdict.Unavailable, 'while it holds: decided (no policies here: 503)');
  await new Promise((r) => setTimeout(r, 200));
  t.equal(await driver.authorize!(request(), soon, answer), AuthVerdict.Deny, 'past it: 403');
  t.match(answer.detail, /no longer holds/);
  t.same(driver.identityRestore!(driver.identitySave!(VC)!), VC);
});

t.test('the reference mode keeps no owner: notifications are not decided there (seed 000 §5.8)', async (t) => {
  const driver = newDriver();
  authRegister(driver, makeHost({ dsecJwks: 'absent.json', dsecIssuer: 'x', dsecPolicies: 'absent.json' }, false));
  t.teardown(() => authShutdown());
  t.equal(driver.identitySave, undefined, 'no identitySave: the broker keeps no owner and filters no notification');
  t.equal(driver.identityRestore, undefined);
});
