// Query entities (CIM 009 v1.8 §5.7.2, §6.4.3.2, §6.23): GET /entities and POST /entityOperations/query compile
// their selection once (type expression, ids, idPattern, q, scopeQ, geoQ, attrs) into the store's declarative
// query, sort with orderBy (v1.9.1 §4.23), page with limit/offset, count on request, and render every entity.
import { LdError, RefusalError, badRequest } from '../ngsild/problem.js';
import type { StoredEntity } from '../ngsild/entity/model.js';
import type { EntityPage, EntityProjection, EntityQuery, EntitySelectionQuery } from '../store/contract.js';
import { renderEntity } from '../ngsild/entity/render.js';
import { parseProjectionList } from '../ngsild/query/projection.js';
import { parseOrderBy } from '../ngsild/query/order-by.js';
import { renderGeoJson, featureCollection } from '../ngsild/entity/geojson.js';
import { parseQ } from '../ngsild/query/q-parser.js';
import { resolveQ } from '../ngsild/query/q-resolve.js';
import { parseScopeQ } from '../ngsild/query/scopeq.js';
import { checkNameSize } from '../ngsild/entity/limits.js';
import type { ResolvedContext } from '../ngsild/context/resolved.js';
import type { LdRequest } from '../pipeline/ld-request.js';
import type { WorkerContext } from '../pipeline/worker-context.js';
import type { OpHandler, OpResult } from '../pipeline/handler.js';
import { renderOptions, setProjection, type RenderOptions } from './render-options.js';
import { paging, selectionFromBody, selectionFromParams, storeSelectors, type Selection } from './selection.js';
import { readableEntity } from './entity-auth.js';
import { boolParam } from './types.js';
import { GEO_JSON, JSON_TYPE, LD_JSON } from '../pipeline/media.js';
import { pageLinkBase, pageLinks } from './page-links.js';
import { LdOp } from '../ngsild/operations.js';
import { queryWithSources } from './forward/query.js';
import { mapLocation, mapUseOf, pageFromMap, pageWithNewMap } from './entity-maps.js';
import { joinOptions, flatLinked, renderInline, joinedFeatures, type JoinOptions } from './linked.js';
import { compiledGet } from './query-compiled.js';
import { encodedPage, formKeyOf } from './query-fragments.js';

/** Re-exported for the other query-like operations; TooManyResults is HTTP 403 (table 5.5.2-1). */
export { DEFAULT_LIMIT, MAX_LIMIT } from './selection.js';

/**
 * A selection as the store query asks it (store/contract.ts EntityQuery): names expanded with the request's @context,
 * q, scopeQ and type expressions parsed, idPattern checked; every malformed part is the request's 400 here, before
 * the store sees it. With pick or omit, an entity they would leave empty does not match (CIM 009 v1.8.1 §4.21), so
 * pages stay full.
 */
export function selectionQuery(
  sel: Selection,
  ctx: ResolvedContext,
  opts?: RenderOptions,
  expandValues?: ReadonlySet<string>,
): EntitySelectionQuery {
  const query: EntitySelectionQuery = storeSelectors(sel.selectors, ctx);
  // CIM 009 §5.7.2: with attrs, only entities holding at least one of them are returned.
  if (sel.attrs !== undefined) query.attrs = sel.attrs.map((a) => checkNameSize(ctx.expandTerm(a), 'attrs'));
  if (sel.q !== undefined) query.q = resolveQ(parseQ(sel.q), ctx.expandTerm.bind(ctx), expandValues);
  if (sel.scopeQ !== undefined) query.scopeQ = parseScopeQ(sel.scopeQ);
  if (opts !== undefined && mayRenderEmpty(opts)) query.projection = projectionOf(opts, ctx);
  if (sel.geo !== undefined) query.geo = sel.geo;
  return query;
}

/**
 * The projection of the rendering options in the names entities have (EntityProjection): the members by name, the
 * attributes by IRI. The renderer keeps an attribute when the compact form of its IRI is picked, which is the IRI of
 * a picked name whose own compact form is that name.
 */
function projectionOf(opts: RenderOptions, ctx: ResolvedContext): EntityProjection {
  const stored = (names: ReadonlySet<string>): string[] => {
    const out: string[] = [];
    for (const name of names) {
      if (ENTITY_MEMBER_NAMES.has(name)) out.push(name);
      const iri = ctx.expandTerm(name);
      if (ctx.compactIri(iri) === name) out.push(iri);
    }
    return out;
  };
  const p: EntityProjection = {};
  if (opts.pick !== undefined) p.pick = stored(opts.pick);
  if (opts.omit !== undefined) p.omit = stored(opts.omit);
  if (opts.datasetId !== undefined) p.datasetIds = [...opts.datasetId];
  return p;
}

/** The entity members a projection names as they are (render.ts renders them under these names). */
const ENTITY_MEMBER_NAMES: ReadonlySet<string> = new Set(['id', 'type', 'scope', 'expiresAt']);

/**
 * Whether pick/omit can leave an entity with no member. Every entity has an id and a type, so a projection keeping
 * either never can; the predicate (which reads every candidate, and takes a query off the type index's page) is
 * then not needed.
 */
function mayRenderEmpty(opts: RenderOptions): boolean {
  if (opts.sysAttrs) return false;
  const shown = (name: string): boolean =>
    (opts.pick === undefined || opts.pick.has(name)) && (opts.omit === undefined || !opts.omit.has(name));
  return (opts.pick !== undefined || opts.omit !== undefined) && !shown('id') && !shown('type');
}

/** Entity members that are no attribute (§4.5.1, §4.8), which `attrs` may name but which select no entity. */
const NOT_ATTRIBUTES: ReadonlySet<string> = new Set(['id', 'type', 'scope', 'createdAt', 'modifiedAt', 'deletedAt', '@id', '@type']);

/**
 * Whether `attrs` is a filter of its own: CIM 009 §5.7.2.4 counts a list of Attribute names among a query's minimal
 * filters; `attrs=id,type` names entity members, no attribute, so it filters nothing (and selects every entity).
 */
function namesAnAttribute(attrs: readonly string[] | undefined): boolean {
  return attrs !== undefined && attrs.some((a) => !NOT_ATTRIBUTES.has(a));
}

/** A query's store query (one past its page) and its paging, every bad part of it the request's 400. */
export interface CompiledQuery {
  storeQuery: EntityQuery;
  /** The same with readOnly (store/contract.ts): for a page that is only rendered (query-fragments.ts). */
  readOnlyQuery: EntityQuery;
  limit: number;
  offset: number;
  count: boolean;
}

export function compileQuery(req: LdRequest, sel: Selection, opts: RenderOptions | undefined): CompiledQuery {
  // CIM 009 §5.7.2.4, §6.4.3.2: type, attrs, q, a geo-query or local=true (no distributed operation) select; id and
  // idPattern alone do too, as Orion-LD has them (README "Tolerances for real clients").
  const local = boolParam(req, 'local');
  if (!local && sel.selectors.length === 0 && !namesAnAttribute(sel.attrs) && sel.q === undefined && sel.geo === undefined)
    throw badRequest('a query needs at least one of type, id, idPattern, attrs naming an attribute, q, a geo-query or local=true');
  const { limit, offset, count } = paging(req);
  const expandValueTerms = req.query.csv('expandValues');
  const expandValues = expandValueTerms === undefined ? undefined : new Set(expandValueTerms.map((a) => req.context.expandTerm(a)));
  const orderText = req.query.get('orderBy');
  const orderBy = orderText === undefined ? undefined : parseOrderBy(orderText, req.context.expandTerm.bind(req.context));
  // One entity past the page tells whether another follows (its rel="next" link), with or without count.
  const storeQuery: EntityQuery = {
    ...selectionQuery(sel, req.context, opts, expandValues),
    orderBy,
    limit: limit === 0 ? 0 : limit + 1,
    offset,
    count,
  };
  return { storeQuery, readOnlyQuery: { ...storeQuery, readOnly: true }, limit, offset, count };
}

async function runQuery(
  req: LdRequest,
  ctx: WorkerContext,
  sel: Selection,
  opts: RenderOptions,
  join: JoinOptions | undefined,
  compiled: CompiledQuery,
  linkBase?: string,
  formKey?: string,
): Promise<OpResult> {
  const { storeQuery, limit, offset, count } = compiled;
  // CIM 009 v1.9.1 §5.5.14, §5.5.9.3: GET /entities with entityMap=true makes an EntityMap of every match and a
  // request naming one in NGSILD-EntityMap is served from it (ops/entity-maps.ts).
  const use = req.op === LdOp.QueryEntities ? await mapUseOf(req, ctx) : undefined;
  // A later page of a POST query would need its body's filters sent to each source by id: not done, and said so.
  if (req.op === LdOp.QueryPost && (boolParam(req, 'entityMap') || req.header('ngsild-entitymap') !== undefined))
    throw new LdError('OperationNotSupported', 'EntityMaps are served on GET /entities and GET/POST /entityMaps, not on a POST query');
  let page: EntityPage;
  let more: boolean;
  let warnings: readonly string[];
  let status = 200;
  const headers: string[] = [];
  // What the store read for a page of its own (none reached a source): the split runner weighs it (front-queries.ts).
  let examined: number | undefined;
  if (use?.wanted === true) {
    const mapped =
      use.doc !== undefined
        ? await pageFromMap(req, ctx, sel, storeQuery, use.doc, limit, offset)
        : await pageWithNewMap(req, ctx, sel, storeQuery, limit, offset);
    // §6.4.3.2: 201 Created when the request made the map.
    if (use.doc === undefined) status = 201;
    ({ page, more, warnings } = mapped);
    headers.push('NGSILD-EntityMap', mapLocation(mapped.mapId));
  } else {
    // CIM 009 v1.8.1 §5.7.2.4: registered context sources are asked too, unless local=true (ops/forward/query.ts).
    const distributed = await queryWithSources(req, ctx, sel, storeQuery);
    // A page of the store alone, rendered as it is (no auth plugin's view of it, no join, not GeoJSON): its entities
    // are only read, so the store may hand out kept ones, and their rendered forms are kept (query-fragments.ts).
    const onlyRendered =
      distributed === undefined && formKey !== undefined && ctx.auth === undefined && join === undefined && req.media !== GEO_JSON;
    page = distributed?.value ?? (await ctx.store.queryEntities(req.tenant, onlyRendered ? compiled.readOnlyQuery : storeQuery));
    if (distributed === undefined) examined = page.examined;
    if (page.sortCap !== undefined)
      throw new LdError('TooManyResults', `orderBy sorts at most ${page.sortCap} matching entities: narrow the query`);
    more = page.entities.length > limit;
    if (more) page.entities.length = limit;
    warnings = distributed?.warnings ?? [];
  }
  // seed 000 §5.1, §5.2: each entity found is asked about; a denied one is left out (the page may be shorter).
  if (ctx.auth !== undefined) page.entities = await readableOnly(req, ctx, page.entities);
  for (const w of warnings) headers.push('NGSILD-Warning', w);
  if (count) headers.push('NGSILD-Results-Count', String(page.count ?? 0));
  // A POST query's next page needs its body, which no link can carry: only GET /entities has page links.
  if (req.op === LdOp.QueryEntities) headers.push(...pageLinks(req, limit, offset, more, linkBase));
  if (req.media === GEO_JSON) {
    const geometryProperty = req.query.get('geometryProperty');
    const features =
      join === undefined
        ? page.entities.map((e) => renderGeoJson(e, req.context, { ...opts, geometryProperty }))
        : await joinedFeatures(req, ctx, page.entities, join, { ...opts, geometryProperty });
    return { status, body: featureCollection(features), headers, withContext: true, geoJson: true };
  }
  if (join?.mode === 'inline') {
    const body: Record<string, unknown>[] = [];
    for (const e of page.entities) body.push(await renderInline(req, ctx, e, join, opts));
    return { status, body, headers, withContext: true };
  }
  if (page.kept === true && formKey !== undefined && (req.media === JSON_TYPE || req.media === LD_JSON))
    return { status, encoded: encodedPage(req, page.entities, opts, formKey), headers, withContext: true, examined };
  const body = page.entities.map((e) => renderEntity(e, req.context, opts));
  if (join?.mode === 'flat') body.push(...(await flatLinked(req, ctx, page.entities, join, opts)));
  return { status, body, headers, withContext: true, examined };
}

export const queryEntities: OpHandler = async (req, ctx) => {
  const { opts, sel, join, query, linkBase, formKey } = compiledGet(req, () => {
    const opts = renderOptions(req);
    const sel = selectionFromParams(req);
    const join = joinOptions(req);
    return { opts, sel, join, query: compileQuery(req, sel, opts), linkBase: pageLinkBase(req), formKey: formKeyOf(req) };
  });
  return runQuery(req, ctx, sel, opts, join, query, linkBase, formKey);
};

export const QUERY_MEMBERS: ReadonlySet<string> = new Set([
  'type',
  '@context',
  'entities',
  'attrs',
  'q',
  'geoQ',
  'scopeQ',
  'lang',
  'csf',
  'temporalQ',
  'pick',
  'omit',
  'datasetId',
  'join',
  'joinLevel',
  'containedBy',
]);

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
  return runQuery(req, ctx, sel, opts, joinOptions(req, body), compileQuery(req, sel, opts));
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
