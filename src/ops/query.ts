// Query entities (CIM 009 v1.8 §5.7.2, §6.4.3.2, §6.23): GET /entities and POST /entityOperations/query compile
// their selection once (type expression, ids, idPattern, q, scopeQ, geoQ, attrs) into an index lookup plus one
// predicate, page with limit/offset, count on request, and render every entity in the chosen format.
import { LdError, RefusalError, badRequest } from '../ngsild/problem.js';
import type { StoredEntity } from '../ngsild/entity/model.js';
import { renderEntity } from '../ngsild/entity/render.js';
import { renderGeoJson, featureCollection } from '../ngsild/entity/geojson.js';
import { isUri, isPlainObject } from '../ngsild/entity/syntax.js';
import { parseTypeExpression, compileTypeExpression } from '../ngsild/query/type-expression.js';
import { parseQ } from '../ngsild/query/q-parser.js';
import { compileQ } from '../ngsild/query/q-eval.js';
import { parseScopeQ, compileScopeQ } from '../ngsild/query/scopeq.js';
import { parseGeoQuery, parseGeoQueryObject, compileGeoQuery } from '../ngsild/query/geoq.js';
import { compileIdPattern } from '../ngsild/query/id-pattern.js';
import type { ResolvedContext } from '../ngsild/context/resolved.js';
import type { LdRequest } from '../pipeline/ld-request.js';
import type { WorkerContext } from '../pipeline/worker-context.js';
import type { OpHandler, OpResult } from './op.js';
import { renderOptions, type RenderOptions } from './render-options.js';
import { readableEntity } from './entity-auth.js';
import { GEO_JSON } from '../pipeline/media.js';
import { joinOptions, flatLinked, renderInline, type JoinOptions } from './linked.js';

/**
 * Default page size (CIM 009 v1.8 §6.3.10) and the documented maximum: above it a query is refused with
 * TooManyResults, which table 5.5.2-1 maps to HTTP 403.
 */
export const DEFAULT_LIMIT = 20;
export const MAX_LIMIT = 1000;

const GET_PARAMS = new Set([
  'id', 'type', 'idPattern', 'attrs', 'pick', 'omit', 'q', 'csf', 'georel', 'geometry', 'coordinates', 'geoproperty',
  'geometryProperty', 'lang', 'scopeQ', 'options', 'format', 'limit', 'offset', 'count', 'local', 'datasetId',
  'join', 'joinLevel', 'containedBy', 'entityMap', 'expandValues', 'via',
]);
const POST_PARAMS = new Set(['options', 'format', 'limit', 'offset', 'count', 'local', 'lang', 'geometryProperty', 'join', 'joinLevel', 'containedBy', 'entityMap', 'expandValues', 'pick', 'omit', 'datasetId', 'via']);

/** One entity selector: the `entities` members of a Query, or the id/type/idPattern parameters. */
interface Selector {
  ids?: string[];
  typeText?: string;
  idPattern?: string;
}

interface Selection {
  selectors: Selector[];
  attrs?: string[];
  q?: string;
  scopeQ?: string;
  geo?: ReturnType<typeof parseGeoQuery>;
}

function paging(req: LdRequest): { limit: number; offset: number; count: boolean } {
  const q = req.query;
  const limit = intParam(q.get('limit'), 'limit', DEFAULT_LIMIT);
  const offset = intParam(q.get('offset'), 'offset', 0);
  if (limit > MAX_LIMIT) throw new LdError('TooManyResults', `limit ${limit} is above the maximum ${MAX_LIMIT}`);
  const countText = q.get('count');
  if (countText !== undefined && countText !== 'true' && countText !== 'false') throw badRequest(`count: '${countText}' is not true or false`);
  const words = q.get('options')?.split(',') ?? [];
  const count = countText === 'true' || words.includes('count');
  // CIM 009 §6.3.10: limit=0 asks for the count alone, so it needs count=true.
  if (limit === 0 && !count) throw badRequest('limit=0 is only allowed with count=true');
  return { limit, offset, count };
}

function intParam(text: string | undefined, name: string, dflt: number): number {
  if (text === undefined) return dflt;
  if (!/^\d{1,9}$/.test(text)) throw badRequest(`${name}: '${text}' is not a non-negative integer`);
  return Number(text);
}

/** Compiles a selection into the store query: type index lookups where the types allow, one predicate for the rest. */
function compile(sel: Selection, ctx: ResolvedContext): { typeIris?: string[]; ids?: string[]; filter?: (e: StoredEntity) => boolean } {
  const preds: Array<(e: StoredEntity) => boolean> = [];
  let typeIris: string[] | undefined;
  let ids: string[] | undefined;
  if (sel.selectors.length === 1) {
    const s = sel.selectors[0]!;
    if (s.ids !== undefined) ids = s.ids;
    if (s.typeText !== undefined) {
      const compiled = compileTypeExpression(parseTypeExpression(s.typeText), ctx.expandTerm.bind(ctx));
      typeIris = compiled.typeIris;
      if (typeIris === undefined || ids !== undefined) preds.push((e) => compiled.matches(e.type));
    }
    if (s.idPattern !== undefined) {
      const match = compileIdPattern(s.idPattern);
      preds.push((e) => match(e.id));
    }
  } else if (sel.selectors.length > 1) {
    // Several selectors (POST query `entities`): an entity matches when one selector matches it all.
    const each = sel.selectors.map((s) => {
      const idSet = s.ids === undefined ? undefined : new Set(s.ids);
      const type = s.typeText === undefined ? undefined : compileTypeExpression(parseTypeExpression(s.typeText), ctx.expandTerm.bind(ctx));
      const pattern = s.idPattern === undefined ? undefined : compileIdPattern(s.idPattern);
      return (e: StoredEntity): boolean =>
        (idSet === undefined || idSet.has(e.id)) && (type === undefined || type.matches(e.type)) && (pattern === undefined || pattern(e.id));
    });
    const allTyped = sel.selectors.every((s) => s.typeText !== undefined);
    if (allTyped) {
      const union = new Set<string>();
      let indexable = true;
      for (const s of sel.selectors) {
        const c = compileTypeExpression(parseTypeExpression(s.typeText!), ctx.expandTerm.bind(ctx));
        if (c.typeIris === undefined) { indexable = false; break; }
        for (const t of c.typeIris) union.add(t);
      }
      if (indexable) typeIris = [...union];
    }
    preds.push((e) => each.some((f) => f(e)));
  }
  if (sel.attrs !== undefined) {
    // CIM 009 §4.x: with attrs, only entities holding at least one of them are returned.
    const iris = sel.attrs.map((a) => ctx.expandTerm(a));
    preds.push((e) => iris.some((iri) => e[iri] !== undefined));
  }
  if (sel.q !== undefined) preds.push(compileQ(parseQ(sel.q), ctx.expandTerm.bind(ctx)));
  if (sel.scopeQ !== undefined) {
    const scope = compileScopeQ(parseScopeQ(sel.scopeQ));
    preds.push((e) => scope(e.scope));
  }
  if (sel.geo !== undefined) preds.push(compileGeoQuery(sel.geo));
  const filter = preds.length === 0 ? undefined : preds.length === 1 ? preds[0] : (e: StoredEntity) => preds.every((p) => p(e));
  return { typeIris, ids, filter };
}

async function runQuery(req: LdRequest, ctx: WorkerContext, sel: Selection, opts: RenderOptions, join?: JoinOptions): Promise<OpResult> {
  if (sel.selectors.length === 0 && sel.attrs === undefined && sel.q === undefined && sel.geo === undefined)
    throw badRequest('a query needs at least one of type, id, idPattern, attrs, q or a geo-query');
  const { limit, offset, count } = paging(req);
  const { typeIris, ids, filter } = compile(sel, req.context);
  const page = await ctx.store.queryEntities(req.tenant, { ids, typeIris, filter, limit: limit, offset, count });
  // seed 000 §5.1, §5.2: each entity found is asked about; a denied one is left out (the page may be shorter).
  if (ctx.auth !== undefined) page.entities = await readableOnly(req, ctx, page.entities);
  const headers: string[] = [];
  if (count) headers.push('NGSILD-Results-Count', String(page.count ?? 0));
  if (req.media === GEO_JSON) {
    const geometryProperty = req.query.get('geometryProperty');
    const features = page.entities.map((e) => renderGeoJson(e, req.context, { ...opts, geometryProperty }));
    return { status: 200, body: featureCollection(features), headers, withContext: true, geoJson: true };
  }
  if (join?.mode === 'inline') {
    const body: Record<string, unknown>[] = [];
    for (const e of page.entities) body.push(await renderInline(req, ctx, e, join, opts));
    return { status: 200, body, headers, withContext: true };
  }
  const body = page.entities.map((e) => renderEntity(e, req.context, opts));
  if (join?.mode === 'flat') body.push(...(await flatLinked(req, ctx, page.entities, join, opts)));
  return { status: 200, body, headers, withContext: true };
}

function idList(text: string): string[] {
  const ids = text.split(',').map((s) => s.trim());
  for (const id of ids) if (!isUri(id)) throw badRequest(`id: '${String(id).slice(0, 200)}' is not a URI`);
  return ids;
}

export const queryEntities: OpHandler = async (req, ctx) => {
  const q = req.query;
  q.only(GET_PARAMS);
  const opts = renderOptions(req);
  const selector: Selector = {};
  const id = q.get('id');
  if (id !== undefined) selector.ids = idList(id);
  const type = q.get('type');
  if (type !== undefined) selector.typeText = type;
  const idPattern = q.get('idPattern');
  if (idPattern !== undefined) selector.idPattern = idPattern;
  const sel: Selection = {
    selectors: Object.keys(selector).length > 0 ? [selector] : [],
    attrs: q.csv('attrs'),
    q: q.get('q'),
    scopeQ: q.get('scopeQ'),
    geo: parseGeoQuery({ georel: q.get('georel'), geometry: q.get('geometry'), coordinates: q.get('coordinates'), geoproperty: q.get('geoproperty') }, req.context.expandTerm.bind(req.context)),
  };
  return runQuery(req, ctx, sel, opts, joinOptions(req));
};

export const queryPost: OpHandler = async (req, ctx) => {
  req.query.only(POST_PARAMS);
  const body = req.jsonObject();
  if (body.type !== undefined && body.type !== 'Query') throw badRequest(`type: a query body has type 'Query', not '${String(body.type)}'`);
  const known = new Set(['type', '@context', 'entities', 'attrs', 'q', 'geoQ', 'scopeQ', 'lang', 'csf', 'temporalQ', 'pick', 'omit', 'datasetId', 'join', 'joinLevel', 'containedBy']);
  for (const k of Object.keys(body)) if (!known.has(k)) throw badRequest(`unknown Query member '${k}'`);
  const selectors: Selector[] = [];
  if (body.entities !== undefined) {
    if (!Array.isArray(body.entities) || body.entities.length === 0) throw badRequest('entities: must be a non-empty array of entity selectors');
    for (const s of body.entities) {
      if (!isPlainObject(s)) throw badRequest('entities: each entry must be an object');
      const sel: Selector = {};
      if (s.id !== undefined) {
        if (typeof s.id !== 'string') throw badRequest('entities[].id: must be a string');
        sel.ids = idList(s.id);
      }
      if (s.type !== undefined) {
        if (typeof s.type !== 'string') throw badRequest('entities[].type: must be a string');
        sel.typeText = s.type;
      }
      if (s.idPattern !== undefined) {
        if (typeof s.idPattern !== 'string') throw badRequest('entities[].idPattern: must be a string');
        sel.idPattern = s.idPattern;
      }
      if (Object.keys(sel).length === 0) throw badRequest('entities[]: a selector needs id, type or idPattern');
      selectors.push(sel);
    }
  }
  const str = (k: string): string | undefined => {
    const v = body[k];
    if (v !== undefined && typeof v !== 'string') throw badRequest(`${k}: must be a string`);
    return v as string | undefined;
  };
  let attrs: string[] | undefined;
  if (body.attrs !== undefined) {
    if (!Array.isArray(body.attrs) || body.attrs.some((a) => typeof a !== 'string' || a === '')) throw badRequest('attrs: must be an array of attribute names');
    attrs = body.attrs as string[];
  }
  const sel: Selection = {
    selectors,
    attrs,
    q: str('q'),
    scopeQ: str('scopeQ'),
    geo: body.geoQ === undefined ? undefined : parseGeoQueryObject(body.geoQ, req.context.expandTerm.bind(req.context)),
  };
  const opts = renderOptions(req);
  if (attrs !== undefined && opts.attrs === undefined) opts.attrs = new Set(attrs.map((a) => req.context.expandTerm(a)));
  if (typeof body.lang === 'string' && opts.lang === undefined) opts.lang = body.lang;
  return runQuery(req, ctx, sel, opts, joinOptions(req, body));
};

async function readableOnly(req: LdRequest, ctx: WorkerContext, entities: StoredEntity[]): Promise<StoredEntity[]> {
  const kept: StoredEntity[] = [];
  for (const e of entities) {
    try {
      kept.push(await readableEntity(req, ctx, e));
    } catch (error) {
      if (!(error instanceof RefusalError)) throw error;
    }
  }
  return kept;
}
