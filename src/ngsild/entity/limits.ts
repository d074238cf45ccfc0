// The sizes of the ids and names the broker accepts (README "Limits"), checked where a request's ids and names are
// read, so that an oversized one is a 400 naming the limit before anything is looked up or written.
import { badRequest } from '../problem.js';

/*
 * Every store key is made of a tenant name (at most 50 characters, pipeline/tenant-step.ts), ids and names, and LMDB
 * (embdb) refuses a key over 1978 bytes. The longest key, the history's [tenant, entity id, attribute IRI, time,
 * instanceId], is at most 50 + 1024 + 512 + 9 + 256 + 5 separators and escapes = 1856 bytes with these limits, and
 * an id is also a value of the type and spatial indexes (sorted duplicates, held to the same 1978 bytes).
 */

/** Entity ids, datasetIds, subscription and registration ids, in UTF-8 bytes. */
export const MAX_ID_BYTES = 1024;
/** Type and attribute names in UTF-8 bytes, measured on the IRI they expand to (what the store keeps). */
export const MAX_NAME_BYTES = 512;
/** instanceIds named to the temporal API, in UTF-8 bytes. */
export const MAX_INSTANCE_ID_BYTES = 256;

/** A lone surrogate: UTF-8 has no encoding for it, so two such strings could share one key. */
const LONE_SURROGATE = /\p{Cs}/u;

/** The UTF-8 size of s when over max, else undefined; counted only when it could be over (a UTF-16 unit is at most 3 bytes). */
function bytesOver(s: string, max: number): number | undefined {
  if (s.length * 3 <= max) return undefined;
  const bytes = Buffer.byteLength(s, 'utf8');
  return bytes > max ? bytes : undefined;
}

function clip(s: string): string {
  return s.length > 60 ? s.slice(0, 57) + '...' : s;
}

function check(s: string, max: number, at: string, what: string): void {
  const bytes = bytesOver(s, max);
  if (bytes !== undefined)
    throw badRequest(`${clip(at)}: '${clip(s)}' is ${bytes} bytes long; ${what} may be at most ${max} bytes (UTF-8)`);
  if (LONE_SURROGATE.test(s)) throw badRequest(`${clip(at)}: '${clip(s)}' holds an unpaired UTF-16 surrogate, which is not a character`);
}

/** An id (entity, datasetId, subscription, registration) within MAX_ID_BYTES; 400 otherwise. */
export function checkIdSize(id: string, at: string): string {
  check(id, MAX_ID_BYTES, at, 'an id');
  return id;
}

/** An instanceId within MAX_INSTANCE_ID_BYTES; 400 otherwise. */
export function checkInstanceIdSize(instanceId: string, at: string): string {
  check(instanceId, MAX_INSTANCE_ID_BYTES, at, 'an instanceId');
  return instanceId;
}

/**
 * An expanded type or attribute name within MAX_NAME_BYTES and without control characters (a name is checked for
 * them, but an @context may expand it to anything); 400 otherwise.
 */
export function checkNameSize(iri: string, at: string): string {
  check(iri, MAX_NAME_BYTES, at, 'a type or attribute name (expanded)');
  for (let i = 0; i < iri.length; i++) {
    if (iri.charCodeAt(i) < 32)
      throw badRequest(`${clip(at)}: the @context expands it to ${JSON.stringify(clip(iri))}, which holds a control character`);
  }
  return iri;
}

/** An expander of the names a query gives (they become store keys) that answers 400 for one past MAX_NAME_BYTES. */
export function checkedNames(expand: (term: string) => string, at: string): (term: string) => string {
  return (term) => checkNameSize(expand(term), at);
}
