// Query Entities, distributed (CIM 009 v1.8.1 §5.7.2.4, §4.3.6): the local matches and those of every source whose
// registration covers the selection, asked in parallel, merged by entity id (an entity split across sources is one
// entity), sorted when orderBy asks, then paged. Each source is asked for as many entities as the page needs from
// the start (offset + limit), since which of them fall on the page is known only after merging.
import type { StoredEntity } from '../../ngsild/entity/model.js';
import { LdError, badRequest } from '../../ngsild/problem.js';
import { parseQ } from '../../ngsild/query/q-parser.js';
import { compileQ } from '../../ngsild/query/q-eval.js';
import { registrationAsEntity } from '../registrations.js';
import type { EntityPage, EntityQuery } from '../../store/contract.js';
import { mergeEntityInto, restrictEntity } from '../../ngsild/registration/merge-entity.js';
import { queryTargets, type SourceTarget } from '../../ngsild/registration/match.js';
import type { DiscoverySelection } from '../../ngsild/query/registration-match.js';
import { compileTypeExpression, parseTypeExpression } from '../../ngsild/query/type-expression.js';
import { compileIdPattern } from '../../ngsild/query/id-pattern.js';
import type { LdRequest } from '../../pipeline/ld-request.js';
import type { WorkerContext } from '../../pipeline/worker-context.js';
import type { Selection } from '../selection.js';
import { checkLoop } from './via.js';
import { fanOut, liveRegistrations, localOnly, queryEncode, queryWithout, sourceUrl, sourceWarning } from './sources.js';
import { entityFromSource, parseJson } from './entities-from-source.js';
import { NOT_FORWARDED, type Distributed } from './retrieve.js';
import { LOCAL_ORIGIN } from '../../ngsild/entity-map/entity-map.js';
import { restOfSource, sourcePageParams } from './source-pages.js';

const SELECTOR_PARAMS: ReadonlySet<string> = new Set([...NOT_FORWARDED, 'id', 'type', 'idPattern', 'attrs']);
const RANK = { redirect: 0, exclusive: 0, inclusive: 1, auxiliary: 2 } as const;

/** The selection as discovery matches registrations: one per selector (a Query's `entities` member may hold several). */
function discoverySelections(req: LdRequest, sel: Selection): DiscoverySelection[] {
  const expand = req.context.expandTerm.bind(req.context);
  const attrs = sel.attrs?.map(expand);
  if (sel.selectors.length === 0) return [{ attrs }];
  return sel.selectors.map((s) => ({
    types: s.typeText === undefined ? undefined : compileTypeExpression(parseTypeExpression(s.typeText), expand).matches,
    ids: s.ids,
    idPattern: s.idPattern === undefined ? undefined : compileIdPattern(s.idPattern),
    attrs,
  }));
}

function targetsOf(req: LdRequest, sel: Selection, regs: Parameters<typeof queryTargets>[0], operation: string): SourceTarget[] {
  const seen = new Map<string, SourceTarget>();
  for (const d of discoverySelections(req, sel))
    for (const t of queryTargets(regs, operation, d)) if (!seen.has(t.body.id)) seen.set(t.body.id, t);
  return [...seen.values()];
}

/**
 * The query string asking an exclusive or redirect source for what it holds (§4.3.6.3): its registered types, ids
 * and attributes (those the request asks for among them), then the request's other parameters.
 */
function registeredSelection(req: LdRequest, t: SourceTarget, attrsAsked: readonly string[] | undefined): string {
  const types = new Set<string>();
  const ids = new Set<string>();
  let anyWithoutId = false;
  for (const info of t.infos)
    for (const e of info.entities ?? []) {
      types.add(req.context.compactIri(e.type));
      if (e.id !== undefined) ids.add(e.id);
      else anyWithoutId = true;
    }
  const parts: string[] = [];
  if (types.size > 0) parts.push('type=' + queryEncode([...types].join(',')));
  if (ids.size > 0 && !anyWithoutId) parts.push('id=' + queryEncode([...ids].join(',')));
  let attrs = t.attrs === undefined ? undefined : [...t.attrs].map((a) => req.context.compactIri(a));
  if (attrsAsked !== undefined) attrs = attrs === undefined ? [...attrsAsked] : attrs.filter((a) => attrsAsked.includes(a));
  if (attrs !== undefined && attrs.length > 0) parts.push('attrs=' + queryEncode(attrs.join(',')));
  const rest = queryWithout(req.task.query, SELECTOR_PARAMS);
  if (rest !== '') parts.push(rest);
  return parts.join('&');
}

/** What an EntityMap asks of a query that spans sources (CIM 009 v1.9.1 §5.5.14; ops/entity-maps.ts). */
export interface MapOptions {
  /** Filled with each entity's origins (registration ids, LOCAL_ORIGIN): the query makes a map. */
  origins?: Map<string, string[]>;
  /** Served from a map: only these entities, each asked of its origins alone (id → origins). */
  pinned?: ReadonlyMap<string, readonly string[]>;
  /** With pinned: the store holds none of them, it is not asked. */
  skipLocal?: boolean;
  /** Filled with the registrations whose sources gave no usable answer. */
  failed?: Set<string>;
}

/** Parameters a source is not asked with when a map names the entities: they are asked by id. */
const PINNED_DROPPED: ReadonlySet<string> = new Set([...NOT_FORWARDED, 'id', 'idPattern']);

/**
 * The page of a query that reaches context sources, or undefined when none is reached (local=true, no registration
 * covering it): the caller then asks the store alone. `query` is the store query of the page as the caller built it.
 */
export async function queryWithSources(
  req: LdRequest,
  ctx: WorkerContext,
  sel: Selection,
  query: EntityQuery,
  map: MapOptions = {},
): Promise<Distributed<EntityPage> | undefined> {
  if (localOnly(req)) return undefined;
  // A Query body (POST /entityOperations/query, POST /entityMaps) goes to the sources' POST query.
  const post = req.method === 'POST';
  const csf = csfFilter(req, post);
  const regs = await liveRegistrations(req, ctx);
  if (regs.length === 0) return undefined;
  let targets = targetsOf(req, sel, regs, post ? 'queryBatch' : 'queryEntity');
  if (csf !== undefined) targets = targets.filter((t) => csf(registrationAsEntity(t.body, req.context.expandTerm.bind(req.context))));
  // §5.5.14: with a map, only the registrations it names for the entities asked are matched.
  const pinned = map.pinned;
  const idsOf = (regId: string): string[] => {
    const ids: string[] = [];
    for (const [id, origins] of pinned ?? []) if (origins.includes(regId)) ids.push(id);
    return ids;
  };
  if (pinned !== undefined) targets = targets.filter((t) => idsOf(t.body.id).length > 0);
  if (targets.length === 0) return undefined;
  checkLoop(req, ctx);
  const window = query.offset + query.limit;
  const paged = req.query.get('limit') !== undefined || req.query.get('offset') !== undefined;
  // A map is made of every match: each source is asked page after page (source-pages.ts).
  const making = map.origins !== undefined;
  const sourceLimit = paged ? `limit=${Math.min(Math.max(window, 1), 1000)}` : '';
  const request = (t: SourceTarget, offset: number): { method: string; url: URL; body?: string | Uint8Array; contentType?: string } => {
    if (post)
      return {
        method: 'POST',
        url: sourceUrl(t.body, '/entityOperations/query', making ? sourcePageParams(offset) : ''),
        body: req.bodyBytes() ?? '',
        contentType: req.header('content-type'),
      };
    if (pinned !== undefined) {
      const ids = idsOf(t.body.id);
      const q = [queryWithout(req.task.query, PINNED_DROPPED), 'id=' + queryEncode(ids.join(',')), `limit=${ids.length}`];
      return { method: 'GET', url: sourceUrl(t.body, '/entities', q.filter((s) => s !== '').join('&')) };
    }
    const inclusive = t.mode === 'inclusive' || t.mode === 'auxiliary';
    const q = inclusive ? queryWithout(req.task.query, NOT_FORWARDED) : registeredSelection(req, t, sel.attrs);
    const paging = making ? sourcePageParams(offset) : sourceLimit;
    return { method: 'GET', url: sourceUrl(t.body, '/entities', [q, paging].filter((s) => s !== '').join('&')) };
  };
  const [localPage, outcomes] = await Promise.all([
    map.skipLocal === true ? { entities: [], count: 0 } : ctx.store.queryEntities(req.tenant, { ...query, offset: 0, limit: window }),
    fanOut(req, ctx, targets, (t) => request(t, 0)),
  ]);
  const warnings: string[] = [];
  const origins = map.origins;
  if (origins !== undefined) for (const e of localPage.entities) origins.set(e.id, [LOCAL_ORIGIN]);
  const merged = new Map<string, StoredEntity>();
  // Shallow copies: a source's part is merged into them, and the store's objects may be shared.
  for (const e of localPage.entities) merged.set(e.id, { ...e, type: [...e.type] });
  let extra = 0;
  const now = new Date().toISOString();
  const answered = outcomes.filter((o) => {
    if ('failure' in o) warnings.push(sourceWarning(ctx, o.target, o.failure.reason));
    else if (o.reply.status === 508) return false;
    else if (o.reply.status !== 200 && o.reply.status !== 201) warnings.push(sourceWarning(ctx, o.target, `answered ${o.reply.status}`));
    else return true;
    map.failed?.add(o.target.body.id);
    return false;
  }) as Array<{ target: SourceTarget; reply: { body: string; headers: Record<string, string | string[] | undefined> } }>;
  answered.sort((a, b) => RANK[a.target.mode] - RANK[b.target.mode]);
  for (const o of answered) {
    const list = parseJson(o.reply.body);
    if (!Array.isArray(list)) {
      warnings.push(sourceWarning(ctx, o.target, 'answered no entity list'));
      map.failed?.add(o.target.body.id);
      continue;
    }
    if (making) {
      const failure = await restOfSource(req, ctx, o.target, o.reply.headers, list, request);
      if (failure !== undefined) {
        warnings.push(sourceWarning(ctx, o.target, failure));
        map.failed?.add(o.target.body.id);
      }
    }
    let bad = 0;
    for (const raw of list) {
      const got = entityFromSource(req, raw, now);
      if (got === undefined) {
        bad++;
        continue;
      }
      const e = o.target.attrs === undefined ? got : restrictEntity(got, o.target.attrs);
      if (pinned !== undefined && !pinned.has(e.id)) continue;
      if (origins !== undefined) origins.set(e.id, [...(origins.get(e.id) ?? []), o.target.body.id]);
      const have = merged.get(e.id);
      if (have === undefined) {
        merged.set(e.id, e);
        extra++;
      } else mergeEntityInto(have, e, { weight: o.target.mode, only: o.target.attrs });
    }
    if (bad > 0) warnings.push(sourceWarning(ctx, o.target, `${bad} entities that are not valid NGSI-LD left out`));
  }
  let all = [...merged.values()];
  const order = query.orderBy;
  if (order !== undefined) {
    const keys = new Map(all.map((e) => [e, order.keyOf(e)]));
    all.sort((a, b) => order.compare(keys.get(a)!, keys.get(b)!) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  }
  all = all.slice(query.offset, query.offset + query.limit);
  const page: EntityPage = { entities: all };
  if (query.count) page.count = (localPage.count ?? 0) + extra;
  return { value: page, warnings };
}

/**
 * `csf` (CIM 009 v1.8.1 §4.3.6.2, §6.3.x: a query's context source filter): a q over the registrations' own
 * properties, which selects the sources asked. The properties are read in the request's terms. A csf that does not
 * parse is the request's 400, registrations or not.
 */
function csfFilter(req: LdRequest, post: boolean): ((e: StoredEntity) => boolean) | undefined {
  const text = post ? req.jsonObject().csf : req.query.get('csf');
  if (text === undefined) return undefined;
  if (typeof text !== 'string' || text === '') throw badRequest('csf: must be a non-empty query over registration properties');
  try {
    return compileQ(parseQ(text), req.context.expandTerm.bind(req.context));
  } catch (e) {
    if (e instanceof LdError) throw badRequest(`csf: ${e.detail}`);
    throw e;
  }
}
