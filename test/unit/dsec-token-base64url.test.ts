// seed 000 §5.5 with RFC 7515 §2: a token is accepted only in the one canonical base64url spelling its signer
// produced; padding, whitespace, other characters and non-zero unused bits are refused before any verification.
import t from 'tap';
import { TokenVerifier, isCanonicalCompactJws, type ClaimRules } from '../../src/plugins/auth/dsec/token.js';
import { importKeySet, usableKeys } from '../../src/plugins/auth/dsec/key-set.js';
import { ISSUER, makeKey, signToken } from '../fixtures/dsec/harness.js';

const rules: ClaimRules = { issuer: ISSUER, audience: null, leewaySeconds: 0 };
const now = (): number => Math.floor(Date.now() / 1000);
const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

/** The segment with its last character's unused bits set: it decodes to the same bytes. */
function withUnusedBits(segment: string): string {
  const rest = segment.length % 4;
  const last = ALPHABET.indexOf(segment.at(-1)!);
  return segment.slice(0, -1) + ALPHABET[last | (rest === 2 ? 0x0f : 0x03)]!;
}

/** The segment padded as base64 (RFC 4648 §4) would be. */
const padded = (segment: string): string => segment + '='.repeat((4 - (segment.length % 4)) % 4);

for (const alg of ['RS256', 'ES256'] as const) {
  t.test(`${alg}: the signed token holds, every non-canonical spelling of it is refused as invalid`, async (t) => {
    const key = await makeKey(`k-${alg}`, alg);
    const verifier = new TokenVerifier();
    verifier.setKeys(await importKeySet(usableKeys({ keys: [key.publicJwk] })));
    const token = await signToken(key);
    t.ok(isCanonicalCompactJws(token));
    t.match(await verifier.verify(token, rules, now()), { ok: true }, 'the token as signed');
    const [h, p, s] = token.split('.') as [string, string, string];
    t.not(s.length % 4, 0, 'the signature has unused bits to play with');
    const variants: Array<[string, string]> = [
      ['the signature padded with =', `${h}.${p}.${padded(s)}`],
      ['the header padded with =', `${padded(h)}.${p}.${s}`],
      ['unused bits set in the last character of the signature', `${h}.${p}.${withUnusedBits(s)}`],
      ['a space inside the payload', `${h}.${p.slice(0, 10)} ${p.slice(10)}.${s}`],
      ['a tab inside the signature', `${h}.${p}.${s.slice(0, 5)}\t${s.slice(5)}`],
      ['a line feed inside the header', `${h.slice(0, 4)}\n${h.slice(4)}.${p}.${s}`],
      ['the base64 character +', `${h}.${p}.+${s.slice(1)}`],
      ['the base64 character /', `${h}.${p}./${s.slice(1)}`],
      ['a character that is no base64', `${h}.${p}.${s}!`],
      ['a non-ASCII character', `${h}.${p}é.${s}`],
      ['a segment of length 1 modulo 4', `${h}.${p}.${s}${'A'.repeat((5 - (s.length % 4)) % 4)}`],
      ['four segments', `${h}.${p}.${s}.${s}`],
      ['two segments', `${h}.${p}`],
    ];
    for (const [what, variant] of variants) {
      t.not(variant, token, `${what}: differs from the token`);
      t.notOk(isCanonicalCompactJws(variant), `${what}: not canonical`);
      const r = await verifier.verify(variant, rules, now());
      t.match(r, { ok: false, reason: /compact JWS/ }, `${what}: refused`);
      t.equal(verifier.checkCached(variant, rules, now()), null, `${what}: never taken for the cached token`);
    }
  });
}

t.test('canonical base64url: lengths and unused bits', async (t) => {
  t.ok(isCanonicalCompactJws('..'), 'empty segments are canonical (verification then refuses them)');
  t.ok(isCanonicalCompactJws('AA.AAA.AAAA'), 'lengths 2, 3 and 0 modulo 4');
  t.ok(isCanonicalCompactJws('AQ.AAE.-_-_'), 'the last character uses only its data bits');
  t.notOk(isCanonicalCompactJws('AR.AAA.AAAA'), '2 characters: 4 bits unused must be zero');
  t.notOk(isCanonicalCompactJws('AA.AAF.AAAA'), '3 characters: 2 bits unused must be zero');
  t.notOk(isCanonicalCompactJws('A.AA.AA'), '1 character carries no whole byte');
  t.notOk(isCanonicalCompactJws('AA.AA==.AA'), 'no padding');
  t.notOk(isCanonicalCompactJws('AA.AA.AA '), 'no trailing space');
  t.notOk(isCanonicalCompactJws(''), 'nothing');
});
