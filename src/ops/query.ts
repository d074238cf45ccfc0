// Query entities (CIM 009 v1.8 §5.7.2, §6.4.3.2, §6.23): GET /entities and POST /entityOperations/query compile
// their selection once (type expression, ids, idPattern, q, scopeQ, geoQ, attrs) into an index lookup plus one
// predicate, sort with orderBy (v1.9.1 §4.23), page with limit/offset, count on request, and render every entity.
import { LdError, RefusalError, badRequest } from '../ngsild/problem.js';
import type { StoredEntity } from '../ngsild/entity/model.js';
import type { EntityQuery } from '../store/contract.js';
import { renderEntity, rendersAnything } from '../ngsild/entity/render.js';
import { parseProjectionList } from '../ngsild/query/projection.js';
import { parseOrderBy } from '../ngsild/query/order-by.js';
import { renderGeoJson, featureCollection } from '../ngsild/entity/geojson.js';
import { parseTypeExpression, compileTypeExpression } from '../ngsild/query/type-expression.js';
import { parseQ } from '../ngsild/query/q-parser.js';
import { compileQ } from '../ngsild/query/q-eval.js';
import { parseScopeQ, compileScopeQ } from '../ngsild/query/scopeq.js';
import { compileGeoQuery, geoQuerySearchBox } from '../ngsild/query/geoq.js';
import { compileIdPattern } from '../ngsild/query/id-pattern.js';
import { checkNameSize, checkedNames } from '../ngsild/entity/limits.js';
import type { ResolvedContext } from '../ngsild/context/resolved.js';
import type { LdRequest } from '../pipeline/ld-request.js';
import type { WorkerContext } from '../pipeline/worker-context.js';
import type { OpHandler, OpResult } from '../pipeline/handler.js';
import { renderOptions, setProjection, type RenderOptions } from './render-options.js';
import { paging, selectionFromBody, selectionFromParams, type Selection } from './selection.js';
import { readableEntity } from './entity-auth.js';
import { boolParam } from './types.js';
import { GEO_JSON } from '../pipeline/media.js';
import { pageLinks } from './page-links.js';
import { LdOp } from '../ngsild/operations.js';
import { joinOptions, flatLinked, renderInline, joinedFeatures, type JoinOptions } from './linked.js';

/** Re-exported for the other query-like operations; TooManyResults is HTTP 403 (table 5.5.2-1). */
export { DEFAULT_LIMIT, MAX_LIMIT } from './selection.js';

/**
 * Compiles a selection into the store query: type index lookups where the types allow, one predicate for the rest.
 * With pick or omit, an entity they would leave empty does not match (CIM 009 v1.8.1 §4.21), so pages stay full.
 */
export function compileSelection(sel: Selection, ctx: ResolvedContext, opts?: RenderOptions, expandValues?: ReadonlySet<string>): Pick<EntityQuery, 'typeIris' | 'ids' | 'filter' | 'geo'> {
  const preds: Array<(e: StoredEntity) => boolean> = [];
  const expandType = checkedNames(ctx.expandTerm.bind(ctx), 'type');
  let typeIris: string[] | undefined;
  let ids: string[] | undefined;
  if (sel.selectors.length === 1) {
    const s = sel.selectors[0]!;
    if (s.ids !== undefined) ids = s.ids;
    if (s.typeText !== undefined) {
      const compiled = compileTypeExpression(parseTypeExpression(s.typeText), expandType);
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
      const type = s.typeText === undefined ? undefined : compileTypeExpression(parseTypeExpression(s.typeText), expandType);
      const pattern = s.idPattern === undefined ? undefined : compileIdPattern(s.idPattern);
      return (e: StoredEntity): boolean =>
        (idSet === undefined || idSet.has(e.id)) && (type === undefined || type.matches(e.type)) && (pattern === undefined || pattern(e.id));
    });
    const allTyped = sel.selectors.every((s) => s.typeText !== undefined);
    if (allTyped) {
      const union = new Set<string>();
      let indexable = true;
      for (const s of sel.selectors) {
        const c = compileTypeExpression(parseTypeExpression(s.typeText!), expandType);
        if (c.typeIris === undefined) { indexable = false; break; }
        for (const t of c.typeIris) union.add(t);
      }
      if (indexable) typeIris = [...union];
    }
    preds.push((e) => each.some((f) => f(e)));
  }
  if (sel.attrs !== undefined) {
    // CIM 009 §4.x: with attrs, only entities holding at least one of them are returned.
    const iris = sel.attrs.map((a) => checkNameSize(ctx.expandTerm(a), 'attrs'));
    preds.push((e) => iris.some((iri) => e[iri] !== undefined));
  }
  if (sel.q !== undefined) preds.push(compileQ(parseQ(sel.q), ctx.expandTerm.bind(ctx), expandValues));
  if (sel.scopeQ !== undefined) {
    const scope = compileScopeQ(parseScopeQ(sel.scopeQ));
    preds.push((e) => scope(e.scope));
  }
  if (opts !== undefined && mayRenderEmpty(opts)) preds.push((e) => rendersAnything(e, ctx, opts));
  let geo: EntityQuery['geo'];
  if (sel.geo !== undefined) {
    preds.push(compileGeoQuery(sel.geo));
    const box = geoQuerySearchBox(sel.geo);
    if (box !== undefined) geo = { attrIri: sel.geo.geopropertyIri, box };
  }
  const filter = preds.length === 0 ? undefined : preds.length === 1 ? preds[0] : (e: StoredEntity) => preds.every((p) => p(e));
  return { typeIris, ids, filter, geo };
}

/**
 * Whether pick/omit can leave an entity with no member. Every entity has an id and a type, so a projection keeping
 * either never can; the predicate (which reads every candidate, and takes a query off the type index's page) is
 * then not needed.
 */
function mayRenderEmpty(opts: RenderOptions): boolean {
  if (opts.sysAttrs) return false;
  const shown = (name: string): boolean => (opts.pick === undefined || opts.pick.has(name)) && (opts.omit === undefined || !opts.omit.has(name));
  return (opts.pick !== undefined || opts.omit !== undefined) && !shown('id') && !shown('type');
}

async function runQuery(req: LdRequest, ctx: WorkerContext, sel: Selection, opts: RenderOptions, join?: JoinOptions): Promise<OpResult> {
  // CIM 009 §6.4.3.2: local=true (no distributed operation) asks for the local entities, a selection on its own.
  const local = boolParam(req, 'local');
  if (!local && sel.selectors.length === 0 && sel.attrs === undefined && sel.q === undefined && sel.geo === undefined)
    throw badRequest('a query needs at least one of type, id, idPattern, attrs, q, a geo-query or local=true');
  const { limit, offset, count } = paging(req);
  const expandValueTerms = req.query.csv('expandValues');
  const expandValues = expandValueTerms === undefined ? undefined : new Set(expandValueTerms.map((a) => req.context.expandTerm(a)));
  const orderText = req.query.get('orderBy');
  const orderBy = orderText === undefined ? undefined : parseOrderBy(orderText, req.context.expandTerm.bind(req.context));
  // One entity past the page tells whether another follows (its rel="next" link), with or without count.
  const page = await ctx.store.queryEntities(req.tenant, { ...compileSelection(sel, req.context, opts, expandValues), orderBy, limit: limit === 0 ? 0 : limit + 1, offset, count });
  if (page.sortCap !== undefined) throw new LdError('TooManyResults', `orderBy sorts at most ${page.sortCap} matching entities: narrow the query`);
  const more = page.entities.length > limit;
  if (more) page.entities.length = limit;
  // seed 000 §5.1, §5.2: each entity found is asked about; a denied one is left out (the page may be shorter).
  if (ctx.auth !== undefined) page.entities = await readableOnly(req, ctx, page.entities);
  const headers: string[] = [];
  if (count) headers.push('NGSILD-Results-Count', String(page.count ?? 0));
  // A POST query's next page needs its body, which no link can carry: only GET /entities has page links.
  if (req.op === LdOp.QueryEntities) headers.push(...pageLinks(req, limit, offset, more));
  if (req.media === GEO_JSON) {
    const geometryProperty = req.query.get('geometryProperty');
    const features = join === undefined
      ? page.entities.map((e) => renderGeoJson(e, req.context, { ...opts, geometryProperty }))
      : await joinedFeatures(req, ctx, page.entities, join, { ...opts, geometryProperty });
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

export const queryEntities: OpHandler = async (req, ctx) => {
  const opts = renderOptions(req);
  const sel = selectionFromParams(req);
  return runQuery(req, ctx, sel, opts, joinOptions(req));
};

const QUERY_MEMBERS = new Set(['type', '@context', 'entities', 'attrs', 'q', 'geoQ', 'scopeQ', 'lang', 'csf', 'temporalQ', 'pick', 'omit', 'datasetId', 'join', 'joinLevel', 'containedBy']);

export const queryPost: OpHandler = async (req, ctx) => {
  const body = req.jsonObject();
  const sel = selectionFromBody(req, body, QUERY_MEMBERS);
  const opts = renderOptions(req);
  const urlProjection = opts.projection;
  opts.pick = opts.omit = opts.projection = undefined;
  if (sel.attrs !== undefined) opts.attrs = new Set(sel.attrs.map((a) => req.context.expandTerm(a)));
  if (typeof body.lang === 'string' && opts.lang === undefined) opts.lang = body.lang;
  // CIM 009 §5.2.23: a Query carries the projections too; URL parameters, when given, win. With attrs, neither (§4.21).
  const pick = urlProjection?.pick ?? (body.pick === undefined ? undefined : parseProjectionList(body.pick, 'pick'));
  const omit = urlProjection?.omit ?? (body.omit === undefined ? undefined : parseProjectionList(body.omit, 'omit'));
  setProjection(opts, pick, omit);
  const datasetId = nameList(body, 'datasetId');
  if (datasetId !== undefined && opts.datasetId === undefined) opts.datasetId = new Set(datasetId);
  return runQuery(req, ctx, sel, opts, joinOptions(req, body));
};

/** A Query member holding names: an array of strings or one comma-separated string. */
function nameList(body: Record<string, unknown>, name: string): string[] | undefined {
  const v = body[name];
  if (v === undefined) return undefined;
  const list = typeof v === 'string' ? v.split(',') : v;
  if (!Array.isArray(list) || list.length === 0 || list.some((x) => typeof x !== 'string' || x === ''))
    throw badRequest(`${name}: must be a non-empty array of names`);
  return list as string[];
}

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
