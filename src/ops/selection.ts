// The entity selection shared by queries over current state and over history (CIM 009 v1.8 §5.7.2, §5.7.4):
// the id/type/idPattern selectors, q, scopeQ and geo-query of a GET's parameters or a POST's Query body, and paging.
import { LdError, badRequest } from '../ngsild/problem.js';
import { isPlainObject, isUri } from '../ngsild/entity/syntax.js';
import { checkIdSize, checkedNames } from '../ngsild/entity/limits.js';
import { parseGeoQuery, parseGeoQueryObject, type GeoQuery } from '../ngsild/query/geoq.js';
import { parseTypeExpression, resolveTypeExpression } from '../ngsild/query/type-expression.js';
import { compileIdPattern } from '../ngsild/query/id-pattern.js';
import type { ResolvedContext } from '../ngsild/context/resolved.js';
import type { LdRequest } from '../pipeline/ld-request.js';
import type { EntityQuery, EntitySelector } from '../store/contract.js';

/** Default page size (CIM 009 §6.3.10) and the documented maximum; above it a query is 403 TooManyResults. */
export const DEFAULT_LIMIT = 20;
export const MAX_LIMIT = 1000;

/** One entity selector: an `entities` member of a Query, or the id/type/idPattern parameters. */
export interface Selector {
  ids?: string[];
  typeText?: string;
  idPattern?: string;
}

export interface Selection {
  selectors: Selector[];
  attrs?: string[];
  q?: string;
  scopeQ?: string;
  geo?: GeoQuery;
}

/**
 * The selectors as a store query selects (store/contract.ts EntityQuery): one as ids/type/idPattern, several as
 * `entities`; type names expanded with the request's @context (a name past the size limit, or a malformed type
 * expression or idPattern, is the request's 400 here).
 */
export function storeSelectors(
  selectors: readonly Selector[],
  ctx: ResolvedContext,
): Pick<EntityQuery, 'ids' | 'type' | 'idPattern' | 'entities'> {
  const expandType = checkedNames(ctx.expandTerm.bind(ctx), 'type');
  const converted = selectors.map((s): EntitySelector => {
    const one: EntitySelector = {};
    if (s.ids !== undefined) one.ids = s.ids;
    if (s.typeText !== undefined) one.type = resolveTypeExpression(parseTypeExpression(s.typeText), expandType);
    if (s.idPattern !== undefined) {
      compileIdPattern(s.idPattern);
      one.idPattern = s.idPattern;
    }
    return one;
  });
  if (converted.length === 1) return converted[0]!;
  return converted.length === 0 ? {} : { entities: converted };
}

export function idList(text: string): string[] {
  const ids = text.split(',').map((s) => s.trim());
  for (const id of ids) {
    if (!isUri(id)) throw badRequest(`id: '${String(id).slice(0, 200)}' is not a URI`);
    checkIdSize(id, 'id');
  }
  // An id named twice selects its entity once: the answer is a set of entities (§5.7.2).
  return ids.length > 1 ? [...new Set(ids)] : ids;
}

/** The selection of GET /entities or GET /temporal/entities. */
export function selectionFromParams(req: LdRequest): Selection {
  const q = req.query;
  const selector: Selector = {};
  const id = q.get('id');
  if (id !== undefined) selector.ids = idList(id);
  const type = q.get('type');
  if (type !== undefined) selector.typeText = type;
  const idPattern = q.get('idPattern');
  if (idPattern !== undefined) selector.idPattern = idPattern;
  return {
    selectors: Object.keys(selector).length > 0 ? [selector] : [],
    attrs: q.csv('attrs'),
    q: q.get('q'),
    scopeQ: q.get('scopeQ'),
    geo: parseGeoQuery(
      { georel: q.get('georel'), geometry: q.get('geometry'), coordinates: q.get('coordinates'), geoproperty: q.get('geoproperty') },
      checkedNames(req.context.expandTerm.bind(req.context), 'geoproperty'),
    ),
  };
}

/** A string member of a body object (400 when present and not a string). */
export function stringMember(o: Record<string, unknown>, k: string, where = ''): string | undefined {
  const v = o[k];
  if (v !== undefined && typeof v !== 'string') throw badRequest(`${where}${k}: must be a string`);
  return v as string | undefined;
}

/** The selection of a Query body (POST /entityOperations/query, POST /temporal/entityOperations/query). */
export function selectionFromBody(req: LdRequest, body: Record<string, unknown>, known: ReadonlySet<string>): Selection {
  if (body.type !== undefined && body.type !== 'Query') throw badRequest(`type: a query body has type 'Query', not '${String(body.type)}'`);
  for (const k of Object.keys(body)) if (!known.has(k)) throw badRequest(`unknown Query member '${k}'`);
  const selectors: Selector[] = [];
  if (body.entities !== undefined) {
    if (!Array.isArray(body.entities) || body.entities.length === 0)
      throw badRequest('entities: must be a non-empty array of entity selectors');
    for (const s of body.entities) {
      if (!isPlainObject(s)) throw badRequest('entities: each entry must be an object');
      const one: Selector = {};
      const sid = stringMember(s, 'id', 'entities[].');
      if (sid !== undefined) one.ids = idList(sid);
      const stype = stringMember(s, 'type', 'entities[].');
      if (stype !== undefined) one.typeText = stype;
      const spattern = stringMember(s, 'idPattern', 'entities[].');
      if (spattern !== undefined) one.idPattern = spattern;
      if (Object.keys(one).length === 0) throw badRequest('entities[]: a selector needs id, type or idPattern');
      selectors.push(one);
    }
  }
  let attrs: string[] | undefined;
  if (body.attrs !== undefined) {
    if (!Array.isArray(body.attrs) || body.attrs.some((a) => typeof a !== 'string' || a === ''))
      throw badRequest('attrs: must be an array of attribute names');
    attrs = body.attrs as string[];
  }
  return {
    selectors,
    attrs,
    q: stringMember(body, 'q'),
    scopeQ: stringMember(body, 'scopeQ'),
    geo:
      body.geoQ === undefined
        ? undefined
        : parseGeoQueryObject(body.geoQ, checkedNames(req.context.expandTerm.bind(req.context), 'geoproperty')),
  };
}

/** limit, offset and count (CIM 009 §6.3.10, §6.3.13). */
export function paging(req: LdRequest): { limit: number; offset: number; count: boolean } {
  const q = req.query;
  const limit = intParam(q.get('limit'), 'limit', DEFAULT_LIMIT);
  const offset = intParam(q.get('offset'), 'offset', 0);
  if (limit > MAX_LIMIT) throw new LdError('TooManyResults', `limit ${limit} is above the maximum ${MAX_LIMIT}`);
  const count = q.count();
  // CIM 009 §6.3.10: limit=0 asks for the count alone, so it needs count=true.
  if (limit === 0 && !count) throw badRequest('limit=0 is only allowed with count=true');
  return { limit, offset, count };
}

function intParam(text: string | undefined, name: string, dflt: number): number {
  if (text === undefined) return dflt;
  if (!/^\d{1,9}$/.test(text)) throw badRequest(`${name}: '${text.slice(0, 30)}' is not a non-negative integer`);
  return Number(text);
}
