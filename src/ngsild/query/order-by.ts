// orderBy (CIM 009 v1.9.1 §4.23, beyond our v1.8 target): a comma-separated list of sort keys, each an entity member
// (`id`, `type`, `scope`, `createdAt`, `modifiedAt`) or an attribute path of the query language (§4.9:
// `attr.subAttr`, `attr.observedAt`, `attr[member]`) with an optional `;asc` or `;desc`. Compiled once per request.
import type { StoredEntity } from '../entity/model.js';
import { LdError, badRequest } from '../problem.js';
import type { QPath } from './q-ast.js';
import { parseQPath } from './q-parser.js';
import { compilePathValue } from './q-eval.js';
import { asWritten, resolvePath } from './q-resolve.js';

/**
 * The order of an orderBy: the keys as asked and what each sorts on (`targets`, one per key), for a store that sorts
 * natively, and the compiled form for one that sorts what it matched: a sort key per entity and their comparison
 * (which defines the order).
 */
export interface EntityOrder {
  keys: ReadonlyArray<{ path: string; descending: boolean }>;
  targets: ReadonlyArray<OrderTarget>;
  keyOf(entity: StoredEntity): SortKey;
  compare(a: SortKey, b: SortKey): number;
}

export type SortKey = readonly unknown[];

/** What one orderBy key sorts on: an entity member that is not an attribute, or an attribute path, names expanded. */
export type OrderTarget = 'id' | 'type' | 'scope' | QPath;

/** Longest accepted orderBy text and most keys in it: bounds on the work of every comparison of a sort. */
export const ORDER_BY_MAX_LENGTH = 1024;
export const ORDER_BY_MAX_KEYS = 8;

type Expand = (term: string) => string;

/**
 * Parses and compiles `text`. Keys compare their values as follows (the order is ours where §4.23 leaves it open):
 * numbers numerically, strings by code point (DateTimes, stored as UTC ISO 8601, thereby in time order), false before
 * true, arrays element by element, then by kind: numbers < strings < booleans < arrays < objects. An entity without
 * a value for a key sorts after every entity with one, in either direction.
 */
export function parseOrderBy(text: string, expand: Expand): EntityOrder {
  if (text.length === 0) throw badRequest('orderBy: empty');
  if (text.length > ORDER_BY_MAX_LENGTH) throw badRequest(`orderBy: longer than ${ORDER_BY_MAX_LENGTH} characters`);
  const parts = text.split(',');
  if (parts.length > ORDER_BY_MAX_KEYS) throw badRequest(`orderBy: more than ${ORDER_BY_MAX_KEYS} keys`);
  const keys: Array<{ path: string; descending: boolean }> = [];
  const targets: Array<OrderTarget> = [];
  const getters: Array<(e: StoredEntity) => unknown> = [];
  for (const part of parts) {
    const semi = part.indexOf(';');
    const path = (semi < 0 ? part : part.slice(0, semi)).trim();
    const direction = semi < 0 ? 'asc' : part.slice(semi + 1).trim();
    if (direction !== 'asc' && direction !== 'desc')
      throw badRequest(`orderBy: '${direction.slice(0, 40)}' is not asc or desc (in '${part.slice(0, 80)}')`);
    if (path === '') throw badRequest(`orderBy: a key has no path (in '${text.slice(0, 80)}')`);
    const target = targetOf(path, expand);
    keys.push({ path, descending: direction === 'desc' });
    targets.push(target);
    getters.push(typeof target === 'string' ? (e) => e[target] : compilePathValue(target, asWritten));
  }
  const signs = keys.map((k) => (k.descending ? -1 : 1));
  return {
    keys,
    targets,
    keyOf(entity: StoredEntity): SortKey {
      const key = new Array<unknown>(getters.length);
      for (let i = 0; i < getters.length; i++) key[i] = getters[i]!(entity);
      return key;
    },
    compare(a: SortKey, b: SortKey): number {
      for (let i = 0; i < signs.length; i++) {
        const x = a[i];
        const y = b[i];
        if (x === undefined || y === undefined) {
          if (x === y) continue;
          return x === undefined ? 1 : -1;
        }
        const c = compareValues(x, y);
        if (c !== 0) return c * signs[i]!;
      }
      return 0;
    },
  };
}

/** What one key sorts on: an entity member that is not an attribute, or an attribute path with its names expanded. */
function targetOf(path: string, expand: Expand): OrderTarget {
  // Entity members that are not attributes: the id, the types (IRIs as stored) and the scopes.
  if (path === 'id' || path === 'type' || path === 'scope') return path;
  let parsed;
  try {
    parsed = parseQPath(path);
  } catch (error) {
    // The path syntax is q's; its errors are this parameter's.
    if (error instanceof LdError)
      throw badRequest(`orderBy: '${path.slice(0, 80)}' is not an attribute path (${error.detail.replace(/^q: /, '')})`);
    throw error;
  }
  return resolvePath(parsed, expand);
}

const RANK_NUMBER = 0;
const RANK_STRING = 1;
const RANK_BOOLEAN = 2;
const RANK_ARRAY = 3;
const RANK_OTHER = 4;

function rankOf(v: unknown): number {
  switch (typeof v) {
    case 'number':
      return RANK_NUMBER;
    case 'string':
      return RANK_STRING;
    case 'boolean':
      return RANK_BOOLEAN;
    default:
      return Array.isArray(v) ? RANK_ARRAY : RANK_OTHER;
  }
}

/** A total order over JSON values (see parseOrderBy). */
export function compareValues(a: unknown, b: unknown): number {
  const ra = rankOf(a);
  const rb = rankOf(b);
  if (ra !== rb) return ra - rb;
  switch (ra) {
    case RANK_NUMBER:
      return (a as number) < (b as number) ? -1 : (a as number) > (b as number) ? 1 : 0;
    case RANK_STRING:
      return (a as string) < (b as string) ? -1 : (a as string) > (b as string) ? 1 : 0;
    case RANK_BOOLEAN:
      return a === b ? 0 : a === false ? -1 : 1;
    case RANK_ARRAY: {
      const x = a as unknown[];
      const y = b as unknown[];
      const n = Math.min(x.length, y.length);
      for (let i = 0; i < n; i++) {
        const c = compareValues(x[i], y[i]);
        if (c !== 0) return c;
      }
      return x.length - y.length;
    }
    default: {
      const x = JSON.stringify(a) ?? '';
      const y = JSON.stringify(b) ?? '';
      return x < y ? -1 : x > y ? 1 : 0;
    }
  }
}
