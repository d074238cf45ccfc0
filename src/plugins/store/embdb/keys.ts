// Key layout of the embdb store. Tenants are key prefixes: every key is an array whose first element is the tenant,
// written by ordered-binary as its elements joined by a 0 byte, so a tenant's keys are one contiguous range.
import { readKey, writeKey } from 'ordered-binary';
import { MAX_ID_BYTES } from '../../../ngsild/entity/limits.js';

/**
 * Why arrays and not strings joined with NUL (the layout before index format 5, index-rebuild.ts): ordered-binary
 * writes a string under 64 characters with each character <= 4 escaped as the two bytes 4, c, and a longer one as
 * plain UTF-8, so `tenant NUL id` had two encodings (tenant 4 0 id and tenant 0 id) and a range over the short form's
 * prefix missed every key of 64 characters or more. Array elements are written one by one, each separated by a 0;
 * the parts never hold a character <= 4 (ids are URIs, tenant names and expanded names are checked,
 * ngsild/entity/limits.ts), so short and long parts are both plain UTF-8 and a key's bytes are its parts in order.
 */
export type EntityKey = [string, string];
export type DocKey = [string, string, string];

export const entityKey = (tenant: string, id: string): EntityKey => [tenant, id];
export const docKey = (tenant: string, collection: string, id: string): DocKey => [tenant, collection, id];

/**
 * Whether s can be a part of a stored key: every write refuses ids over MAX_ID_BYTES and names over a shorter limit
 * (ngsild/entity/limits.ts), so a longer part names nothing stored. A read given one (a Relationship's object followed
 * by a join, a registration's or subscription's entity type) finds nothing without handing LMDB a key past its size,
 * which lmdb-js refuses with an exception from 4026 bytes.
 */
export function storablePart(s: string): boolean {
  return s.length * 3 <= MAX_ID_BYTES || Buffer.byteLength(s, 'utf8') <= MAX_ID_BYTES;
}

/**
 * Two ids in the order of their keys: a key part is its UTF-8 bytes (see above), and UTF-8 byte order is code point
 * order. JavaScript's `<` and `sort()` compare UTF-16 units, which put a character above U+FFFF (a surrogate pair,
 * D800-DFFF) before one in U+E000-U+FFFF; at the first unit that differs, both are moved so that surrogates come last.
 */
export function compareIds(a: string, b: string): number {
  const n = a.length < b.length ? a.length : b.length;
  for (let i = 0; i < n; i++) {
    let x = a.charCodeAt(i);
    let y = b.charCodeAt(i);
    if (x === y) continue;
    if (x >= 0xd800) x = x >= 0xe000 ? x - 0x800 : x + 0x2000;
    if (y >= 0xd800) y = y >= 0xe000 ? y - 0x800 : y + 0x2000;
    return x - y;
  }
  return a.length - b.length;
}

/** After the first byte of any part: UTF-8 never holds 0xff and a number's first byte is below 0x20. */
const AFTER_ANY_PART = Uint8Array.of(0xff);

/**
 * Every key of one tenant in a database keyed `[tenant, ...]`: `[tenant]` (the tenant's bytes alone) sorts before
 * them and `[tenant, 0xff]` after them, and before every longer tenant name that starts with this one (whose next
 * byte, a name character, is above the 0 that follows this tenant).
 */
export const tenantRange = (tenant: string): { start: [string]; end: [string, Uint8Array] } => ({
  start: [tenant],
  end: [tenant, AFTER_ANY_PART],
});

/**
 * Every embdb database is opened with these: keys in lmdb's own ordered-binary encoding (the same bytes as lmdb's
 * default), compared by LMDB's memcmp. Left to itself lmdb-js installs its own comparator on named databases, which
 * reads keys 4 bytes at a time through a byte swap per word; on the long prefixes keys share here (`urn:ngsi-ld:<Type>:`,
 * type IRIs) it was two thirds of a get (perf of a query by type: 20 gets 28-37 us with it, 15-18 us without).
 * Both orders are plain byte order (ordered-binary is built for it), so a store written with the other comparator
 * reads the same.
 */
export const KEY_CODEC = { keyEncoder: { writeKey, readKey } } as const;
