// An EntityQuery (store/contract.ts) as a MongoDB filter on entity documents (entity-doc.ts), and what is left for
// the worker. `exact` filters answer the selection themselves: the server pages and counts. The others are a
// prefilter that every match passes (never fewer): the worker then tests each candidate with the query's own
// predicate (kit/entity-query.ts entityQueryPredicate) and pages the matches. README "docdb" names each fallback.
import type { Filter } from 'mongodb';
import type { EntityQuery, EntitySelector } from '../../../store/contract.js';
import { fieldKey, type EntityDoc } from './entity-doc.js';
import type { QCompare, QLiteral, QNode, QUri } from '../../../ngsild/query/q-ast.js';
import type { ScopeQuery, ScopePattern } from '../../../ngsild/query/scopeq.js';
import type { TypeExpression, TypeName } from '../../../ngsild/query/type-expression.js';
import { compileIdPattern } from '../../../ngsild/query/id-pattern.js';
import { geoPushdown } from './geo-index.js';

export interface Translated {
  filter: Filter<EntityDoc>;
  /** The filter selects exactly the matches (else it is a prefilter and the worker decides). */
  exact: boolean;
}

const NGSI_LD = 'https://uri.etsi.org/ngsi-ld/';
/** q paths that name entity members (q-eval.ts ENTITY_MEMBERS): not pushed down. */
const ENTITY_MEMBER_PATHS = new Set([NGSI_LD + 'createdAt', NGSI_LD + 'modifiedAt']);

/** Nothing to test on the server. */
const TRUE: Filter<EntityDoc> = {};
const isTrue = (f: Filter<EntityDoc>): boolean => Object.keys(f).length === 0;

function and(parts: Filter<EntityDoc>[]): Filter<EntityDoc> {
  const kept = parts.filter((p) => !isTrue(p));
  if (kept.length === 0) return TRUE;
  return kept.length === 1 ? kept[0]! : { $and: kept };
}

function or(parts: Filter<EntityDoc>[]): Filter<EntityDoc> {
  if (parts.length === 0 || parts.some(isTrue)) return TRUE;
  return parts.length === 1 ? parts[0]! : { $or: parts };
}

/** `geoIndex`: the server is MongoDB, with the 2dsphere index of the shapes in `gi` (geo-index.ts). */
export function translateQuery(query: EntityQuery, geoIndex = false): Translated {
  let exact = true;
  const parts: Filter<EntityDoc>[] = [];
  const selector = (s: EntitySelector): Filter<EntityDoc> => {
    const p: Filter<EntityDoc>[] = [];
    if (s.ids !== undefined) p.push({ _id: { $in: [...s.ids] } });
    if (s.type !== undefined) p.push(typeFilter(s.type));
    if (s.idPattern !== undefined) {
      // A bad pattern is refused (400) here as the worker's own check would. The server's regular expressions are
      // PCRE on MongoDB, whose backtracking one request's pattern could make slow for every other: only a literal
      // prefix (`^urn:x:`) goes to the server, the pattern itself is evaluated in the worker with RE2.
      compileIdPattern(s.idPattern);
      const prefix = literalPrefix(s.idPattern);
      if (prefix !== undefined) p.push({ _id: { $regex: '^' + escapeRegex(prefix) } });
      exact = false;
    }
    return and(p);
  };
  parts.push(selector(query));
  if (query.entities !== undefined && query.entities.length > 0) parts.push(or(query.entities.map(selector)));
  if (query.attrs !== undefined) parts.push({ a: { $in: [...query.attrs] } });
  if (query.scopeQ !== undefined) parts.push(scopeFilter(query.scopeQ));
  if (query.q !== undefined) {
    parts.push(qPrefilter(query.q));
    exact = false;
  }
  if (query.geo !== undefined) {
    // Never exact: the worker evaluates with turf on the plane of longitude and latitude (geoq.ts), the server on
    // the sphere; what goes to the server is a region every match meets (README "docdb", geo-queries).
    exact = false;
    const key = fieldKey(query.geo.geopropertyIri);
    const box = query.geo.georel === 'disjoint' ? undefined : searchBox(query);
    const pushed = geoIndex ? geoPushdown(query.geo, box) : undefined;
    if (pushed !== undefined) {
      const ask = pushed.pieces.map((region) => ({ [pushed.operator]: { $geometry: region } }));
      parts.push(
        (ask.length === 1 ? { 'gi.k': key, 'gi.g': ask[0] } : { 'gi.k': key, $or: ask.map((a) => ({ 'gi.g': a })) }) as Filter<EntityDoc>,
      );
    } else if (box !== undefined) {
      const [w, s, e, n] = box;
      const g = 'gb.' + key;
      parts.push({
        [g + '.w']: { $lte: e },
        [g + '.e']: { $gte: w },
        [g + '.s']: { $lte: n },
        [g + '.n']: { $gte: s },
      } as Filter<EntityDoc>);
    } else parts.push({ a: query.geo.geopropertyIri });
  }
  if (query.projection !== undefined && !keepsIdOrType(query.projection)) exact = false;
  return { filter: and(parts), exact };
}

function searchBox(query: EntityQuery): [number, number, number, number] | undefined {
  const geo = query.geo!;
  if (geo.georel !== 'near') return geo.bbox;
  if (geo.maxDistance === undefined) return undefined;
  // As geoq.ts geoQuerySearchBox: the query's box grown by the distance (in degrees, over-estimated).
  const [w, s, e, n] = geo.bbox;
  const dLat = geo.maxDistance / 110_000;
  const south = Math.max(-90, s - dLat);
  const north = Math.min(90, n + dLat);
  const cos = Math.cos((Math.max(Math.abs(south), Math.abs(north)) * Math.PI) / 180);
  const dLon = cos < 1e-9 ? 360 : geo.maxDistance / (110_000 * cos);
  if (w - dLon < -180 || e + dLon > 180 || south === -90 || north === 90) return [-180, south, 180, north];
  return [w - dLon, south, e + dLon, north];
}

/** pick/omit (§4.21) that keep id or type keep every entity: nothing to test. */
function keepsIdOrType(p: NonNullable<EntityQuery['projection']>): boolean {
  const kept = (name: string): boolean =>
    (p.pick === undefined || p.pick.includes(name)) && (p.omit === undefined || !p.omit.includes(name));
  return kept('id') || kept('type');
}

// ---- type (§4.17) and scope (§4.19): exact -------------------------------------------------------------------

function typeFilter(node: TypeExpression): Filter<EntityDoc> {
  if ((node as TypeName).kind === 'type') return { t: (node as TypeName).name };
  const composite = node as { kind: 'and' | 'or'; terms: TypeExpression[] };
  const terms = composite.terms.map(typeFilter);
  return composite.kind === 'and' ? { $and: terms } : { $or: terms };
}

function scopeFilter(node: ScopeQuery): Filter<EntityDoc> {
  if ((node as ScopePattern).kind === 'scope') return { s: { $regex: scopeRegex((node as ScopePattern).levels) } };
  const composite = node as { kind: 'and' | 'or'; terms: ScopeQuery[] };
  const terms = composite.terms.map(scopeFilter);
  return composite.kind === 'and' ? { $and: terms } : { $or: terms };
}

/**
 * A scope pattern as a regular expression over one stored scope, as scopeq.ts compileScopeQ splits it (a leading
 * '/' optional, levels between '/'): `+` any one level, a last `#` the scope and anything below it. Only literals,
 * `[^/]*` and one optional tail: no backtracking to speak of on any engine.
 */
export function scopeRegex(levels: readonly string[]): string {
  const subtree = levels[levels.length - 1] === '#';
  const fixed = subtree ? levels.slice(0, -1) : levels;
  if (fixed.length === 0) return '^';
  const body = fixed.map((l) => (l === '+' ? '[^/]*' : escapeRegex(l))).join('/');
  return '^/?' + body + (subtree ? '(/.*)?$' : '$');
}

// ---- q (§4.9): a prefilter ------------------------------------------------------------------------------------

/**
 * A filter every entity matching `node` passes. A term on an attribute needs the attribute (`a`); a comparison
 * with a number, a boolean, an ASCII string (ordering) or strings (equality) needs a qv element that satisfies it,
 * unless the attribute has targets qv does not hold (`qx`). Temporal literals, compound paths, sub-attributes and
 * instance members, patterns and negations need the attribute only; `!attr` and entity members need nothing.
 */
export function qPrefilter(node: QNode): Filter<EntityDoc> {
  switch (node.kind) {
    case 'and':
      return and(node.terms.map(qPrefilter));
    case 'or':
      return or(node.terms.map(qPrefilter));
    case 'notExists':
      return TRUE;
    case 'exists':
    case 'match':
      return attrNeeded(node.path.attr);
    case 'compare': {
      const need = attrNeeded(node.path.attr);
      if (isTrue(need) || node.path.attr.length > 1 || node.path.compound.length > 0) return need;
      const cond = valueCondition(node);
      if (cond === undefined) return need;
      const k = node.path.attr[0]!;
      return { $or: [{ ['qv.' + fieldKey(k)]: cond }, { qx: k }] } as Filter<EntityDoc>;
    }
  }
}

function attrNeeded(path: readonly string[]): Filter<EntityDoc> {
  const first = path[0]!;
  if (path.length === 1 && ENTITY_MEMBER_PATHS.has(first)) return TRUE;
  return { a: first };
}

type Cond = Record<string, unknown> | string | number | boolean;

/** The condition a qv value meets when the comparison holds on it, or undefined when none is pushed down. */
function valueCondition(node: QCompare): Cond | undefined {
  const v = node.value;
  if (node.op === '!=') return undefined;
  if (node.op === '==') {
    if (v.kind === 'range') return rangeCondition(v.min, v.max);
    const items = v.kind === 'list' ? v.items : [v];
    const values: Array<string | number | boolean> = [];
    for (const item of items) {
      const eq = equalValues(item);
      if (eq === undefined) return undefined;
      values.push(...eq);
    }
    return values.length === 1 ? values[0]! : { $in: values };
  }
  if (v.kind !== 'number' && v.kind !== 'string') return undefined;
  if (v.kind === 'string' && !isAscii(v.value)) return undefined;
  const op = node.op === '>' ? '$gt' : node.op === '>=' ? '$gte' : node.op === '<' ? '$lt' : '$lte';
  return { [op]: v.value };
}

/**
 * The stored values equal to a literal: a number or boolean as it is; a string or URI as written or as its
 * expansion (a VocabProperty, or expandValues, compares the expansion; a Property or object the text).
 */
function equalValues(lit: QLiteral | QUri): Array<string | number | boolean> | undefined {
  switch (lit.kind) {
    case 'number':
    case 'boolean':
      return [lit.value];
    case 'string':
    case 'uri':
      return lit.expanded === undefined || lit.expanded === lit.value ? [lit.value] : [lit.value, lit.expanded];
    default:
      return undefined;
  }
}

function rangeCondition(min: QLiteral, max: QLiteral): Cond | undefined {
  if (min.kind === 'number' && max.kind === 'number') return { $gte: min.value, $lte: max.value };
  if (min.kind === 'string' && max.kind === 'string' && isAscii(min.value) && isAscii(max.value))
    return { $gte: min.value, $lte: max.value };
  return undefined;
}

/**
 * Ordering against an ASCII string is the same in UTF-8 byte order (the server's) as in UTF-16 code unit order
 * (q-eval.ts, RFC 8259 §8.3): the first difference is an ASCII character on one side.
 */
const isAscii = (s: string): boolean => /^[\x00-\x7f]*$/.test(s);

// ---- regular expressions ---------------------------------------------------------------------------------------

export const escapeRegex = (s: string): string => s.replace(/[\\^$.*+?()[\]{}|/-]/g, '\\$&');

/** The literal text an idPattern starts with when anchored (`^urn:ngsi-ld:Car:` → `urn:ngsi-ld:Car:`), else undefined. */
export function literalPrefix(pattern: string): string | undefined {
  // An alternation anywhere may leave the anchor behind (`^a|b`): no prefix is certain.
  if (!pattern.startsWith('^') || pattern.includes('|')) return undefined;
  let out = '';
  for (let i = 1; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === '\\') {
      const n = pattern[i + 1];
      if (n !== undefined && /[.\-/:]/.test(n)) {
        out += n;
        i++;
        continue;
      }
      break;
    }
    if (c === '\u0000') break; // never sent to the server: PostgreSQL (FerretDB's backend) refuses it in a string
    if (/[.*+?()[\]{}|^$]/.test(c)) {
      // a quantifier applies to the character before it: that one is not certain either
      if (/[*+?{]/.test(c)) out = out.slice(0, -1);
      break;
    }
    out += c;
  }
  return out.length > 0 ? out : undefined;
}
