// The verifier's keys (seed 000 §2.8): a JWK Set of RSA and EC P-256 public keys, each selected by `kid`, each
// bound to the one algorithm its type allows (RS256, ES256; §5.5 rule 2).

import { importJWK, type JWK } from 'jose';

type PublicKey = Awaited<ReturnType<typeof importJWK>>;

export type KeyAlg = 'RS256' | 'ES256';

export interface VerifierKey {
  readonly alg: KeyAlg;
  readonly key: PublicKey;
}

export interface KeySet {
  readonly keys: ReadonlyMap<string, VerifierKey>;
  /** Canonical text of the usable keys: two sets with the same text are the same set. */
  readonly fingerprint: string;
}

/** The public members of a usable key, or null for a key this plugin never uses. */
function publicJwk(k: unknown): (JWK & { kid: string }) | null {
  if (k === null || typeof k !== 'object') return null;
  const j = k as Record<string, unknown>;
  if (typeof j['kid'] !== 'string' || (j['use'] !== undefined && j['use'] !== 'sig')) return null;
  if (j['kty'] === 'RSA' && typeof j['n'] === 'string' && typeof j['e'] === 'string') {
    return { kty: 'RSA', kid: j['kid'], n: j['n'], e: j['e'] };
  }
  if (j['kty'] === 'EC' && j['crv'] === 'P-256' && typeof j['x'] === 'string' && typeof j['y'] === 'string') {
    return { kty: 'EC', kid: j['kid'], crv: 'P-256', x: j['x'], y: j['y'] };
  }
  return null;
}

export class KeySetError extends Error {}

/** Checks that a document is a JWK Set; answers the canonical list of its usable keys. */
export function usableKeys(doc: unknown): Array<JWK & { kid: string }> {
  if (doc === null || typeof doc !== 'object' || !Array.isArray((doc as Record<string, unknown>)['keys'])) {
    throw new KeySetError('the document is no JWK Set (no keys array)');
  }
  const out: Array<JWK & { kid: string }> = [];
  for (const k of (doc as { keys: unknown[] }).keys) {
    const j = publicJwk(k);
    if (j !== null) out.push(j);
  }
  out.sort((a, b) => (a.kid < b.kid ? -1 : a.kid > b.kid ? 1 : 0));
  return out;
}

export function fingerprintOf(keys: ReadonlyArray<JWK & { kid: string }>): string {
  return JSON.stringify(keys);
}

export async function importKeySet(keys: ReadonlyArray<JWK & { kid: string }>): Promise<KeySet> {
  const map = new Map<string, VerifierKey>();
  for (const jwk of keys) {
    const alg: KeyAlg = jwk.kty === 'RSA' ? 'RS256' : 'ES256';
    try {
      map.set(jwk.kid, { alg, key: await importJWK(jwk, alg) });
    } catch {
      // a malformed key is left out; the others still verify
    }
  }
  return { keys: map, fingerprint: fingerprintOf(keys) };
}
