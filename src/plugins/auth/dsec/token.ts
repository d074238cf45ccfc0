// Access-token checks of seed 000 §5.5: a compact JWS verified with the key of its `kid` (signature checked once
// per exact token, 1024 kept), then the claims checked on every request.

import { compactVerify, decodeProtectedHeader } from 'jose';
import { LRUCache } from 'lru-cache';
import type { KeySet } from './key-set.js';

/** seed 000 §8: kept checked tokens. */
export const TOKEN_CACHE_SIZE = 1024;

export interface ClaimRules {
  issuer: string;
  audience: string | null;
  leewaySeconds: number;
}

/** The result of a check: the credential (plain data) or why the token does not hold. */
export type TokenResult = { ok: true; credential: unknown } | { ok: false; reason: string; unknownKid: boolean };

interface Checked {
  /** The whole token: the cache is keyed by its last characters, a hit holds only for the same whole token. */
  token: string;
  payload: Record<string, unknown>;
  /** The answer once the claims hold, built once per token (the claims are checked on every request). */
  accepted: TokenResult;
}

/**
 * The cache key: the token's last characters, the end of its signature. A request brings its token as a new
 * string whose hash V8 has not computed yet; hashing 32 characters instead of the whole JWT (often over 500)
 * keeps the front thread's lookup short, and the one comparison with the kept token is a plain memory compare.
 */
const KEY_CHARS = 32;

function cacheKey(token: string): string {
  return token.length > KEY_CHARS ? token.slice(token.length - KEY_CHARS) : token;
}

const decoder = new TextDecoder();

/** Longest excerpt of a token header value a refusal quotes. */
const SHOWN_CHARS = 64;

/**
 * A value of the token's protected header as a refusal names it. Anyone can send any header without a key, and the
 * reason reaches the 401's WWW-Authenticate and body: only visible ASCII is kept (anything else, space included,
 * becomes `?`), and a long value is cut.
 */
export function shown(value: unknown): string {
  const text = (typeof value === 'string' ? value : (JSON.stringify(value) ?? String(value))).replace(/[^\x21-\x7e]/g, '?');
  return text.length > SHOWN_CHARS ? text.slice(0, SHOWN_CHARS - 3) + '...' : text;
}

function refused(reason: string, unknownKid = false): TokenResult {
  return { ok: false, reason, unknownKid };
}

/** `Authorization: Bearer <JWT>`, the scheme word case-insensitive (§5.5 rule 1); null when there is none. */
export function bearerToken(header: string | undefined): string | null {
  if (header === undefined) return null;
  const h = header.trimStart();
  if (h.length < 6 || !startsWithBearer(h)) return null;
  if (h.length > 6 && h.charCodeAt(6) !== 32 && h.charCodeAt(6) !== 9) return null;
  return h.slice(6).trim();
}

const BEARER = 'bearer';

/** `bearer` in any case, compared by character code: no lower-cased copy per request. */
function startsWithBearer(h: string): boolean {
  // an ASCII letter with bit 0x20 set is its lower case; no other character becomes one of `bearer` that way
  for (let i = 0; i < 6; i++) if ((h.charCodeAt(i) | 0x20) !== BEARER.charCodeAt(i)) return false;
  return true;
}

export class TokenVerifier {
  private readonly cache = new LRUCache<string, Checked>({ max: TOKEN_CACHE_SIZE });
  private keySet: KeySet | null = null;
  /** Bumped at each key-set change so a verification begun under the old set is not kept. */
  private generation = 0;

  get keys(): KeySet | null {
    return this.keySet;
  }

  /** §5.5 rule 5: kept tokens are dropped whenever the key set changes. */
  setKeys(keys: KeySet): void {
    this.keySet = keys;
    this.generation++;
    this.cache.clear();
  }

  get cachedCount(): number {
    return this.cache.size;
  }

  /** A token already signature-checked: its claims are checked now, without waiting. */
  checkCached(token: string, rules: ClaimRules, nowSeconds: number): TokenResult | null {
    const hit = this.cache.get(cacheKey(token));
    if (hit === undefined || hit.token !== token) return null;
    return claimsRefusal(hit.payload, rules, nowSeconds) ?? hit.accepted;
  }

  async verify(token: string, rules: ClaimRules, nowSeconds: number): Promise<TokenResult> {
    const keySet = this.keySet;
    if (keySet === null) return refused('no keys');
    if (!isCanonicalCompactJws(token)) return refused('the token is not a compact JWS of canonical base64url');
    let header;
    try {
      header = decodeProtectedHeader(token);
    } catch {
      return refused('the token is not a compact JWS');
    }
    const alg = header.alg;
    if (alg !== 'RS256' && alg !== 'ES256') return refused(`the algorithm ${shown(alg)} is not accepted`);
    if (typeof header.kid !== 'string') return refused('the token names no key (kid)');
    const key = keySet.keys.get(header.kid);
    if (key === undefined) return refused(`the key ${shown(header.kid)} is not in the key set`, true);
    if (key.alg !== alg) return refused(`the algorithm ${alg} is not the one of key ${shown(header.kid)}`);
    const generation = this.generation;
    let payload: unknown;
    try {
      const { payload: bytes } = await compactVerify(token, key.key, { algorithms: [alg] });
      payload = JSON.parse(decoder.decode(bytes));
    } catch {
      return refused('the signature does not verify');
    }
    if (payload === null || typeof payload !== 'object' || Array.isArray(payload)) return refused('the token carries no claims');
    const claims = payload as Record<string, unknown>;
    if (generation === this.generation) this.cache.set(cacheKey(token), { token, payload: claims, accepted: accepted(claims) });
    return checkClaims(claims, rules, nowSeconds);
  }
}

/**
 * Three segments of canonical base64url (RFC 7515 §2, RFC 4648 §5 without padding): only [A-Za-z0-9_-], no '='
 * and no whitespace, no length of 1 modulo 4, and zero bits unused by the last character. The decoder under jose
 * skips other characters and ignores unused bits, so several spellings would otherwise verify as one token (and be
 * cached as different ones); only the one spelling the signer produced is accepted.
 */
export function isCanonicalCompactJws(token: string): boolean {
  let segments = 1;
  let start = 0;
  for (let i = 0; i <= token.length; i++) {
    if (i < token.length) {
      const c = token.charCodeAt(i);
      if (c === 46 /* . */) segments++;
      else if (base64urlValue(c) < 0) return false;
      else continue;
    }
    if (!canonicalEnd(token, start, i)) return false;
    start = i + 1;
  }
  return segments === 3;
}

/** The segment token[start, end) ends as canonical base64url does. */
function canonicalEnd(token: string, start: number, end: number): boolean {
  const rest = (end - start) % 4;
  if (rest === 0) return true;
  if (rest === 1) return false;
  // 2 characters carry 1 byte (4 bits unused), 3 carry 2 bytes (2 bits unused).
  return (base64urlValue(token.charCodeAt(end - 1)) & (rest === 2 ? 0x0f : 0x03)) === 0;
}

function base64urlValue(c: number): number {
  if (c >= 65 && c <= 90) return c - 65;
  if (c >= 97 && c <= 122) return c - 71;
  if (c >= 48 && c <= 57) return c + 4;
  if (c === 45) return 62;
  if (c === 95) return 63;
  return -1;
}

/** §5.5 rule 2 and 3: iss always; exp and nbf with the leeway; aud when configured. */
export function checkClaims(p: Record<string, unknown>, rules: ClaimRules, now: number): TokenResult {
  return claimsRefusal(p, rules, now) ?? accepted(p);
}

/** Why the claims do not hold, or null when they do. */
function claimsRefusal(p: Record<string, unknown>, rules: ClaimRules, now: number): TokenResult | null {
  if (p['iss'] !== rules.issuer) return refused('the issuer is not the expected one');
  const exp = p['exp'];
  if (typeof exp !== 'number') return refused('the token has no expiry (exp)');
  if (now > exp + rules.leewaySeconds) return refused('the token has expired');
  const nbf = p['nbf'];
  if (nbf !== undefined && (typeof nbf !== 'number' || nbf > now + rules.leewaySeconds)) return refused('the token is not valid yet');
  if (rules.audience !== null) {
    const aud = p['aud'];
    if (!(aud === rules.audience || (Array.isArray(aud) && aud.includes(rules.audience)))) {
      return refused('the token is not meant for this audience');
    }
  }
  return null;
}

function accepted(p: Record<string, unknown>): TokenResult {
  // seed 000 §2.7: verifiableCredential, else vc; a verifiablePresentation is not read (§5.5 rule 4)
  const credential = p['verifiableCredential'] !== undefined ? p['verifiableCredential'] : p['vc'];
  return { ok: true, credential: credential === undefined ? null : credential };
}
