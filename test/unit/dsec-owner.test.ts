// dsec's subscription owner record (seed 000 §2.6, §3 owner rows): the maker's credential saved with its time and
// restored with the moment it stops holding, the credential's validUntil (VC 1.1 expirationDate) or
// --dsecOwnerMaxAge after it was saved; a restored owner past that moment gives no credential to decide on.
import t from 'tap';
import { credentialOf, isOwner, restoreOwner, saveOwner } from '../../src/plugins/auth/dsec/owner.js';

const NOW = Date.parse('2026-01-01T00:00:00Z');
const VC = { issuer: 'did:web:a.example', type: ['VerifiableCredential'], credentialSubject: { roles: [] } };

t.test('an identity is saved with its time and restored as the owner of that credential', async (t) => {
  const text = saveOwner(VC, NOW)!;
  const owner = restoreOwner(text, 0, NOW + 1000)!;
  t.ok(isOwner(owner));
  t.same(owner.credential, VC);
  t.equal(owner.notAfter, Infinity, 'no lifetime named: it holds until updated or deleted');
  t.same(credentialOf(owner, NOW + 1e12), VC);
  t.equal(credentialOf(VC, NOW), VC, "a request's identity is its credential as it is");
});

t.test('no one has no owner record', async (t) => {
  t.equal(saveOwner(null, NOW), null);
  t.equal(saveOwner(undefined, NOW), null);
});

t.test('the lifetime is validUntil, else expirationDate, and --dsecOwnerMaxAge when it ends first', async (t) => {
  const in10s = new Date(NOW + 10_000).toISOString();
  const vc11 = restoreOwner(saveOwner({ ...VC, expirationDate: in10s }, NOW)!, 0, NOW)!;
  t.equal(vc11.notAfter, NOW + 10_000);
  const vc20 = restoreOwner(saveOwner({ ...VC, validUntil: in10s, expirationDate: '2100-01-01T00:00:00Z' }, NOW)!, 0, NOW)!;
  t.equal(vc20.notAfter, NOW + 10_000, 'validUntil first');
  t.equal(restoreOwner(saveOwner({ ...VC, validUntil: in10s }, NOW)!, 3, NOW)!.notAfter, NOW + 3000, 'the maximum age ends first');
  t.equal(restoreOwner(saveOwner({ ...VC, validUntil: in10s }, NOW)!, 60, NOW)!.notAfter, NOW + 10_000, 'the credential ends first');
  t.equal(restoreOwner(saveOwner(VC, NOW)!, 5, NOW)!.notAfter, NOW + 5000);
  const owner = restoreOwner(saveOwner({ ...VC, validUntil: in10s }, NOW)!, 0, NOW)!;
  t.same(credentialOf(owner, NOW + 9_999), { ...VC, validUntil: in10s });
  t.equal(credentialOf(owner, NOW + 10_000), undefined, 'ended: nothing to decide on');
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
