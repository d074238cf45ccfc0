// Key layout of the embdb store. Tenants are key prefixes; NUL separates parts (a NUL never occurs in
// a tenant name, an IRI or an entity id, which are all validated before they reach the store).
import { readKey, writeKey } from 'ordered-binary';

const SEP = '\u0000';
const AFTER = '\u0001';

export const entityKey = (tenant: string, id: string): string => tenant + SEP + id;
export const entityPrefix = (tenant: string): { start: string; end: string } => ({ start: tenant + SEP, end: tenant + AFTER });

export const docKey = (tenant: string, collection: string, id: string): string => tenant + SEP + collection + SEP + id;

/**
 * Every embdb database is opened with these: keys in lmdb's own ordered-binary encoding (the same bytes as lmdb's
 * default), compared by LMDB's memcmp. Left to itself lmdb-js installs its own comparator on named databases, which
 * reads keys 4 bytes at a time through a byte swap per word; on the long prefixes keys share here (`urn:ngsi-ld:<Type>:`,
 * type IRIs) it was two thirds of a get (perf of a query by type: 20 gets 28-37 us with it, 15-18 us without).
 * Both orders are plain byte order (ordered-binary is built for it), so a store written with the other comparator
 * reads the same.
 */
export const KEY_CODEC = { keyEncoder: { writeKey, readKey } } as const;
