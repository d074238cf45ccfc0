// The temporal API (CIM 009 v1.8 §5.5, §6.18 to §6.24) on the store's history (`--troe`): query, retrieve, create or
// add instances, delete, attribute and instance routes. Results above the instance cap are paged with 206 and
// Content-Range (§6.3.10): forwards in time without lastN, backwards from the most recent with it.
import { LdError, RefusalError, badRequest, notFound } from '../ngsild/problem.js';
import type { AttrInstance, AttrType } from '../ngsild/entity/model.js';
import { expandAttributes, expandEntity } from '../ngsild/entity/expand.js';
import { isPlainObject, isUri } from '../ngsild/entity/syntax.js';
import { checkInstanceIdSize, checkNameSize } from '../ngsild/entity/limits.js';
import { parseScopeQ } from '../ngsild/query/scopeq.js';
import type { TemporalQueryInput } from '../ngsild/temporal/temporal-query.js';
import { instanceTime, renderTemporalEntity } from '../ngsild/temporal/temporal-render.js';
import type { EntityOrder, SortKey } from '../store/contract.js';
import type {
  AggregatedGroup,
  History,
  HistoryInstance,
  InstancePage,
  TemporalEntityQuery,
  TemporalEntityRecord,
  TimeWindow,
} from '../history/contract.js';
import { parseOrderBy } from '../ngsild/query/order-by.js';
import type { LdRequest } from '../pipeline/ld-request.js';
import type { WorkerContext } from '../pipeline/worker-context.js';
import type { OpHandler, OpResult } from '../pipeline/handler.js';
import { checkEntity, readableAttrs } from './entity-auth.js';
import { compileHistoryFilter, filteredPage } from './temporal-filter.js';
import { asked, projectionMember, projectionParams, temporalParams, type Asked } from './temporal-options.js';
import { deleteAttrParams, entityIdParam } from './entities.js';
import { paging, selectionFromBody, selectionFromParams, storeSelectors, stringMember, type Selection } from './selection.js';
import { API_PREFIX, LdOp } from '../ngsild/operations.js';
import { pageLinks } from './page-links.js';
import { boolParam } from './types.js';
import { pathSegment } from '../ngsild/uri-encode.js';

/**
 * Aggregation reads up to AGGREGATION_CAP instances per attribute before it pages as the other representations do
 * past `--temporalInstanceCap` (README): 206 with Content-Range.
 */
export const AGGREGATION_CAP = 100_000;
/** Most matching temporal entities an orderBy sorts (README "orderBy"); more is 403 TooManyResults. */
export const TEMPORAL_ORDERED_CAP = 20_000;

const nowIso = (): string => new Date().toISOString();

function historyOf(ctx: WorkerContext): History {
  const h = ctx.history;
  if (h === undefined) throw new LdError('OperationNotSupported', 'the temporal API needs a history: start the broker with --troe embdb');
  return h;
}

function withoutContext(body: Record<string, unknown>): Record<string, unknown> {
  if (!('@context' in body)) return body;
  const { ['@context']: _ignored, ...rest } = body;
  return rest;
}

function attrParam(req: LdRequest): string {
  const name = req.params[1]!;
  if (name === '' || /[<>"'=;()\s]/.test(name)) throw badRequest(`attribute name '${name.slice(0, 200)}' is not valid`);
  return checkNameSize(req.context.expandTerm(name), 'attribute name');
}

// ---- reading instances, with the 206 paging of §6.3.10 ------------------------------------------------------

interface Loaded {
  rec: TemporalEntityRecord;
  page: InstancePage;
  /** aggregatedValues computed by the history (History.aggregate), in place of instances. */
  aggregated?: Record<string, AggregatedGroup[]>;
  /**
   * Attributes whose instances all fall past the page's cut, by type: rendered with no instance rather than left out,
   * so that the answer still says they have instances in the asked time range, on the next page.
   */
  emptied?: Record<string, AttrType>;
}

/**
 * Without timerel, instances are still ordered and picked (lastN) by the time property when it is observedAt (the
 * default, §6.3.x timeproperty): a write at 09:00 after writes at 10:00 and 11:00 is not the last one observed.
 * createdAt and modifiedAt order as written; deletedAt, which few instances have, orders as written too.
 */
const orderedByObservedAt = (a: Asked): boolean => a.tq.window === undefined && a.tq.timeproperty === 'observedAt';

/**
 * The time window instances are read in: timerel's, else with `timeproperty=deletedAt` the instances that have a
 * deletedAt (the tombstones of deletions; §6.3.x: the temporal property the query is about), else none (all).
 */
function instanceWindow(a: Asked): TimeWindow | undefined {
  return a.tq.window ?? (a.tq.timeproperty === 'deletedAt' ? { timeproperty: 'deletedAt' } : undefined);
}

/**
 * CIM 009 v1.8 §6.3.10: the implementation limits the instances of an attribute in one answer (`--temporalInstanceCap`,
 * counted per attribute as the later text of the clause words it: "the maximum number of temporal instances of any
 * Attribute allowed on a page"); aggregation, whose answer is far smaller than what it reads, has its own cap.
 */
async function load(h: History, tenant: string, rec: TemporalEntityRecord, a: Asked, cap: number): Promise<Loaded> {
  // A history that aggregates (a time-series database) reads no instances for aggregatedValues; lastN, which picks
  // instances before they are aggregated, stays with the instances.
  if (a.render.format === 'aggregatedValues' && h.aggregate !== undefined && a.tq.lastN === undefined) {
    const aggregated = await h.aggregate(tenant, rec.id, {
      attrs: a.loadAttrs,
      datasetIds: a.datasetIds,
      window: instanceWindow(a),
      timeproperty: a.tq.timeproperty,
      methods: a.render.aggrMethods ?? [],
      period: a.render.aggrPeriod,
      from: a.render.from,
      to: a.render.to,
    });
    if (aggregated !== undefined) return { rec, page: { attrs: {}, truncated: [] }, aggregated };
  }
  const page = await h.instances(tenant, rec.id, {
    attrs: a.loadAttrs,
    datasetIds: a.datasetIds,
    window: instanceWindow(a),
    ...(orderedByObservedAt(a) ? { order: 'observedAt' as const } : {}),
    lastN: a.tq.lastN,
    limit: a.render.format === 'aggregatedValues' ? AGGREGATION_CAP : cap,
  });
  return { rec, page };
}

/** load(), without the attributes the entity hook refuses one by one after a partial answer (seed 000 §5.8). */
async function readableLoad(
  req: LdRequest,
  ctx: WorkerContext,
  h: History,
  rec: TemporalEntityRecord,
  a: Asked,
  allowed: 'all' | 'partial',
): Promise<Loaded> {
  const l = await load(h, req.tenant, rec, a, ctx.config.temporalInstanceCap);
  if (allowed === 'partial') {
    l.page.attrs = await readableAttrs(req, ctx, rec.id, rec.type, l.page.attrs);
    l.page.truncated = l.page.truncated.filter((attrIri) => attrIri in l.page.attrs);
  }
  return l;
}

/** The time an instance was ordered by: the window's time property, or observedAt without one (load), else createdAt. */
function orderTime(inst: HistoryInstance, a: Asked): number {
  return Date.parse(a.tq.window !== undefined || orderedByObservedAt(a) ? instanceTime(inst, a.tq.timeproperty) : inst.createdAt);
}

/**
 * When some attribute hit the cap, every attribute is cut at the same instant so that the next request (timeAt
 * moved to the range's end, or endTimeAt to its start with lastN) continues where this one stopped.
 */
function pageRange(loaded: readonly Loaded[], a: Asked): string[] {
  const backwards = a.tq.lastN !== undefined;
  let cut: number | undefined;
  for (const { page } of loaded) {
    for (const attrIri of page.truncated) {
      const list = page.attrs[attrIri]!;
      const t = orderTime(list[backwards ? 0 : list.length - 1]!, a);
      cut = cut === undefined ? t : backwards ? Math.max(cut, t) : Math.min(cut, t);
    }
  }
  if (cut === undefined) return [];
  let first = Number.POSITIVE_INFINITY;
  let last = Number.NEGATIVE_INFINITY;
  for (const entry of loaded) {
    const { page } = entry;
    for (const attrIri in page.attrs) {
      const list = page.attrs[attrIri]!;
      const kept = list.filter((i) => (backwards ? orderTime(i, a) >= cut! : orderTime(i, a) <= cut!));
      if (kept.length === 0) {
        delete page.attrs[attrIri];
        (entry.emptied ??= {})[attrIri] = list[list.length - 1]!.type;
      } else {
        page.attrs[attrIri] = kept;
      }
      for (const i of kept) {
        const t = orderTime(i, a);
        if (t < first) first = t;
        if (t > last) last = t;
      }
    }
  }
  const iso = (ms: number): string => new Date(ms).toISOString();
  if (backwards) {
    const end = a.tq.to !== undefined ? a.tq.to : last;
    return ['Content-Range', `date-time ${iso(end)}-${iso(cut)}/${a.tq.lastN}`];
  }
  const start = a.tq.from !== undefined ? a.tq.from : first;
  return ['Content-Range', `date-time ${iso(start)}-${iso(cut)}/*`];
}

function respond(req: LdRequest, loaded: Loaded[], a: Asked, extra: string[], single: boolean): OpResult {
  const range = pageRange(loaded, a);
  let bodies = loaded.map(({ rec, page, emptied, aggregated }) =>
    renderTemporalEntity(rec, page.attrs, req.context, a.render, emptied, aggregated),
  );
  // CIM 009 v1.8.1 §4.21: a query leaves out the entities that pick and omit leave empty (the page may be shorter).
  if (!single && projected(a)) bodies = bodies.filter((b) => Object.keys(b).length > 0);
  return {
    status: range.length > 0 ? 206 : 200,
    body: single ? bodies[0] : bodies,
    headers: [...extra, ...range],
    withContext: true,
  };
}

export const temporalRetrieve: OpHandler = async (req, ctx) => {
  const h = historyOf(ctx);
  const id = entityIdParam(req);
  const a = asked(req, temporalParams(req), req.query.csv('attrs'), req.query.get('lang'), projectionParams(req));
  const rec = await h.getTemporalEntity(req.tenant, id);
  if (rec === undefined) throw notFound(`entity '${id}' has no temporal representation`);
  const allowed = await checkEntity(req, ctx, { id, types: rec.type, storedTypes: true, read: true });
  // The rules of a retrieval (ops/entities.ts noneMatched): attrs naming none of the attributes the history holds
  // (in any time), or pick and omit leaving no member, is ResourceNotFound (CIM 009 v1.8.1 §4.21).
  if (a.attrs !== undefined && Object.keys((await h.instances(req.tenant, id, { attrs: a.attrs, limit: 1 })).attrs).length === 0)
    throw notFound(`entity '${id}' has no instance of any attribute in attrs`);
  const result = respond(req, [await readableLoad(req, ctx, h, rec, a, allowed)], a, [], true);
  if (projected(a) && Object.keys(result.body as object).length === 0) throw notFound(`pick and omit leave no member of entity '${id}'`);
  return result;
};

const projected = (a: Asked): boolean => a.render.pick !== undefined || a.render.omit !== undefined;

// ---- queries ------------------------------------------------------------------------------------------------

async function runQuery(req: LdRequest, ctx: WorkerContext, sel: Selection, a: Asked): Promise<OpResult> {
  // CIM 009 v1.8 §5.7.4 (worded so in its successor, ETSI TS 104 175 clause 10): a query provides at least one of
  // entity types, attrs, q, a geo-query or the local scope (local=true: every local temporal entity). Like the query
  // of current state, an id list or idPattern alone is accepted too (README "Tolerances for real clients": Orion-LD
  // takes them, and they bound the answer as tightly).
  if (!boolParam(req, 'local') && sel.selectors.length === 0 && a.attrs === undefined && sel.q === undefined && sel.geo === undefined)
    throw badRequest('a temporal query needs at least one of type, id, idPattern, attrs, q, a geo-query or local=true');
  const h = historyOf(ctx);
  const { limit, offset, count } = paging(req);
  const expand = req.context.expandTerm.bind(req.context);
  const selection: Pick<TemporalEntityQuery, 'ids' | 'type' | 'idPattern' | 'entities' | 'scopeQ'> = storeSelectors(
    sel.selectors,
    req.context,
  );
  // The history keeps an entity's scope on its temporal entity (the last one recorded), not per instant.
  if (sel.scopeQ !== undefined) selection.scopeQ = parseScopeQ(sel.scopeQ);
  // q and geo-queries are judged on the history, deleted entities included (temporal-filter.ts, history-match.ts).
  const window = instanceWindow(a);
  const shown =
    window !== undefined || a.datasetIds !== undefined ? { attrs: a.attrs, datasetIds: a.datasetIds, window, limit: 1 } : undefined;
  const judge = compileHistoryFilter({ q: sel.q, geo: sel.geo, shown }, a.tq, expand);
  const base = { ...selection, attrs: a.attrs };
  const orderText = req.query.get('orderBy');
  // One entity past the page tells whether another follows (its rel="next" link).
  const pageQuery = { limit: limit === 0 ? 0 : limit + 1, offset, count };
  const { entities: records, count: total } =
    orderText !== undefined
      ? await orderedPage(req, ctx, h, parseOrderBy(orderText, expand), base, judge, pageQuery)
      : judge === undefined
        ? await h.queryTemporalEntities(req.tenant, { ...base, ...pageQuery })
        : await filteredPage(h, req.tenant, base, judge, pageQuery);
  const more = records.length > limit;
  if (more) records.length = limit;
  const loaded: Loaded[] = [];
  for (const rec of records) {
    let allowed: 'all' | 'partial' = 'all';
    if (ctx.auth !== undefined) {
      try {
        allowed = await checkEntity(req, ctx, { id: rec.id, types: rec.type, storedTypes: true, read: true });
      } catch (error) {
        // A denied entity is left out of the page (seed 000 §5.2); any other failure is the request's.
        if (error instanceof RefusalError) continue;
        throw error;
      }
    }
    loaded.push(await readableLoad(req, ctx, h, rec, a, allowed));
  }
  const headers = count ? ['NGSILD-Results-Count', String(total ?? 0)] : [];
  // A POST query's next page needs its body, which no link can carry: only GET /temporal/entities has page links.
  if (req.op === LdOp.TemporalQuery) headers.push(...pageLinks(req, limit, offset, more));
  return respond(req, loaded, a, headers, false);
}

/**
 * orderBy on a temporal query (CIM 009 v1.9.1 §4.23): every matching temporal entity is sorted before the page is
 * cut. Keys are read from the entity's current state (its latest values), or from what the history keeps of a
 * deleted one (id, type, scope, createdAt, modifiedAt); at most TEMPORAL_ORDERED_CAP matches are sorted, more is
 * 403 TooManyResults.
 */
async function orderedPage(
  req: LdRequest,
  ctx: WorkerContext,
  h: History,
  order: EntityOrder,
  base: Omit<TemporalEntityQuery, 'limit' | 'offset' | 'count' | 'afterId'>,
  judge: Parameters<typeof filteredPage>[3] | undefined,
  paging: { limit: number; offset: number; count: boolean },
): Promise<{ entities: TemporalEntityRecord[]; count?: number }> {
  const all = { limit: TEMPORAL_ORDERED_CAP + 1, offset: 0, count: false };
  const { entities } =
    judge === undefined
      ? await h.queryTemporalEntities(req.tenant, { ...base, ...all })
      : await filteredPage(h, req.tenant, base, judge, all);
  if (entities.length > TEMPORAL_ORDERED_CAP)
    throw new LdError('TooManyResults', `orderBy sorts at most ${TEMPORAL_ORDERED_CAP} matching temporal entities: narrow the query`);
  const keyed: Array<{ rec: TemporalEntityRecord; key: SortKey }> = [];
  for (const rec of entities) {
    const current = await ctx.store.getEntity(req.tenant, rec.id);
    keyed.push({ rec, key: order.keyOf(current ?? { ...rec }) });
  }
  keyed.sort((x, y) => order.compare(x.key, y.key) || (x.rec.id < y.rec.id ? -1 : x.rec.id > y.rec.id ? 1 : 0));
  const page = keyed.slice(paging.offset, paging.offset + paging.limit).map((k) => k.rec);
  return paging.count ? { entities: page, count: keyed.length } : { entities: page };
}

export const temporalQuery: OpHandler = async (req, ctx) => {
  const q = req.query;
  const sel = selectionFromParams(req);
  return runQuery(req, ctx, sel, asked(req, temporalParams(req), q.csv('attrs'), q.get('lang'), projectionParams(req)));
};

const QUERY_MEMBERS = new Set([
  'type',
  '@context',
  'entities',
  'attrs',
  'q',
  'geoQ',
  'scopeQ',
  'lang',
  'temporalQ',
  'csf',
  'datasetId',
  'pick',
  'omit',
]);

export const temporalQueryPost: OpHandler = async (req, ctx) => {
  const body = req.jsonObject();
  const sel = selectionFromBody(req, body, QUERY_MEMBERS);
  const str = stringMember;
  const tqBody = body.temporalQ ?? {};
  if (!isPlainObject(tqBody)) throw badRequest('temporalQ: must be an object');
  const lastN = tqBody.lastN ?? req.query.get('lastN');
  if (lastN !== undefined && typeof lastN !== 'number' && typeof lastN !== 'string') throw badRequest('temporalQ.lastN: must be a number');
  const temporal: TemporalQueryInput = {
    timerel: str(tqBody, 'timerel', 'temporalQ.'),
    timeAt: str(tqBody, 'timeAt', 'temporalQ.'),
    endTimeAt: str(tqBody, 'endTimeAt', 'temporalQ.'),
    timeproperty: str(tqBody, 'timeproperty', 'temporalQ.'),
    lastN: lastN as string | number | undefined,
  };
  const url = projectionParams(req);
  return runQuery(
    req,
    ctx,
    sel,
    asked(req, temporal, sel.attrs, str(body, 'lang') ?? req.query.get('lang'), {
      pick: projectionMember(body, 'pick') ?? url.pick,
      omit: projectionMember(body, 'omit') ?? url.omit,
    }),
  );
};

// ---- writes -------------------------------------------------------------------------------------------------

/** Temporal attributes of a body (§4.5.7): each an instance or an array of instances, all of the same name. */
function expandInstances(req: LdRequest, body: Record<string, unknown>, now: string): Record<string, AttrInstance[]> {
  const out: Record<string, AttrInstance[]> = {};
  for (const name of Object.keys(body)) {
    const given = body[name];
    const list = Array.isArray(given) ? given : [given];
    if (list.length === 0) throw badRequest(`${name}: an attribute needs at least one instance`);
    for (const inst of list) {
      if (!isPlainObject(inst)) throw badRequest(`${name}: each instance must be an object`);
      const expanded = expandAttributes({ [name]: inst }, req.context, { now });
      for (const attrIri in expanded) (out[attrIri] ??= []).push(...expanded[attrIri]!);
    }
  }
  return out;
}

function splitHead(body: Record<string, unknown>): { head: Record<string, unknown>; attrs: Record<string, unknown> } {
  const head: Record<string, unknown> = {};
  const attrs: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(body)) {
    if (k === 'id' || k === 'type' || k === 'scope') head[k] = v;
    else if (k === 'createdAt' || k === 'modifiedAt' || k === 'deletedAt') continue;
    else attrs[k] = v;
  }
  return { head, attrs };
}

export const temporalCreate: OpHandler = async (req, ctx) => {
  const h = historyOf(ctx);
  const now = nowIso();
  const { head, attrs } = splitHead(withoutContext(req.jsonObject()));
  const entity = expandEntity(head, req.context, { now });
  const instances = expandInstances(req, attrs, now);
  await askTemporalWrite(req, ctx, h, entity.id, entity.type, Object.keys(instances));
  const created = await h.addInstances(req.tenant, { id: entity.id, type: entity.type, scope: entity.scope }, instances, now, {
    createTenant: true,
  });
  // CIM 009 v1.8 §4.14: a creating request creates its tenant; the tenant registry is the store's, which a history
  // beside it cannot write to (history/contract.ts addInstances).
  if (h !== ctx.store.history) await ctx.store.addTenant(req.tenant);
  return created ? { status: 201, headers: ['Location', `${API_PREFIX}/temporal/entities/${pathSegment(entity.id)}`] } : { status: 204 };
};

/**
 * seed 000 §5.2, §5.8: a temporal create of a new entity is asked about the body's types (a create); of an entity the
 * history holds, about the history's types (an update), and about the types the body adds.
 */
async function askTemporalWrite(
  req: LdRequest,
  ctx: WorkerContext,
  h: History,
  id: string,
  bodyTypes: string[],
  attrsWritten: string[],
): Promise<void> {
  if (ctx.auth === undefined) return;
  const rec = await h.getTemporalEntity(req.tenant, id);
  if (rec === undefined) {
    await checkEntity(req, ctx, { id, types: bodyTypes, storedTypes: false, attrsWritten, creates: true, read: false });
    return;
  }
  await checkEntity(req, ctx, { id, types: rec.type, storedTypes: true, attrsWritten, creates: false, read: false });
  const added = bodyTypes.filter((t) => !rec.type.includes(t));
  if (added.length > 0) await checkEntity(req, ctx, { id, types: added, storedTypes: false, attrsWritten, creates: false, read: false });
}

export const temporalAppendAttrs: OpHandler = async (req, ctx) => {
  const h = historyOf(ctx);
  const id = entityIdParam(req);
  const now = nowIso();
  const body = withoutContext(req.jsonObject());
  if (body.id !== undefined && body.id !== id) throw badRequest(`the body's id '${String(body.id)}' differs from the path's '${id}'`);
  const { attrs } = splitHead(body);
  const instances = expandInstances(req, attrs, now);
  const rec = await h.getTemporalEntity(req.tenant, id);
  if (rec === undefined) throw notFound(`entity '${id}' has no temporal representation`);
  await checkEntity(req, ctx, { id, types: rec.type, storedTypes: true, attrsWritten: Object.keys(instances), read: false });
  await h.addInstances(req.tenant, { id, type: rec.type }, instances, now);
  return { status: 204 };
};

export const temporalDelete: OpHandler = async (req, ctx) => {
  const h = historyOf(ctx);
  const id = entityIdParam(req);
  const rec = await h.getTemporalEntity(req.tenant, id);
  if (rec === undefined) throw notFound(`entity '${id}' has no temporal representation`);
  await checkEntity(req, ctx, { id, types: rec.type, storedTypes: true, read: false });
  if (!(await h.deleteTemporalEntity(req.tenant, id))) throw notFound(`entity '${id}' has no temporal representation`);
  return { status: 204 };
};

export const temporalDeleteAttr: OpHandler = async (req, ctx) => {
  const h = historyOf(ctx);
  const id = entityIdParam(req);
  const attrIri = attrParam(req);
  const { datasetId, deleteAll } = deleteAttrParams(req);
  const rec = await h.getTemporalEntity(req.tenant, id);
  if (rec === undefined) throw notFound(`entity '${id}' has no temporal representation`);
  await checkEntity(req, ctx, { id, types: rec.type, storedTypes: true, attrsWritten: [attrIri], read: false });
  if (!(await h.deleteAttribute(req.tenant, id, attrIri, { datasetId, deleteAll })))
    throw notFound(`entity '${id}' has no instances of '${req.params[1]}'${datasetId ? ` with datasetId '${datasetId}'` : ''}`);
  return { status: 204 };
};

function instanceIdParam(req: LdRequest): string {
  const instanceId = req.params[2]!;
  if (!isUri(instanceId)) throw badRequest(`instanceId '${String(instanceId).slice(0, 200)}' is not a URI`);
  return checkInstanceIdSize(instanceId, 'instanceId');
}

export const temporalUpdateInstance: OpHandler = async (req, ctx) => {
  const h = historyOf(ctx);
  const id = entityIdParam(req);
  const attrIri = attrParam(req);
  const instanceId = instanceIdParam(req);
  const now = nowIso();
  const body = withoutContext(req.jsonObject());
  const expanded = expandAttributes({ [req.params[1]!]: body }, req.context, { now });
  const inst = expanded[attrIri]?.[0];
  if (inst === undefined) throw badRequest('the body is not an attribute instance');
  const rec = await h.getTemporalEntity(req.tenant, id);
  if (rec === undefined) throw notFound(`entity '${id}' has no temporal representation`);
  await checkEntity(req, ctx, { id, types: rec.type, storedTypes: true, attrsWritten: [attrIri], read: false });
  const outcome = await h.updateInstance(req.tenant, id, attrIri, instanceId, inst, now);
  if (outcome === 'notFound') throw notFound(`attribute '${req.params[1]}' of '${id}' has no instance '${instanceId}'`);
  // §6.22.3.1: an instance keeps its attribute's type.
  if (outcome === 'typeMismatch')
    throw badRequest(`instance '${instanceId}' is not a ${inst.type}: an instance PATCH cannot change the attribute type`);
  return { status: 204 };
};

export const temporalDeleteInstance: OpHandler = async (req, ctx) => {
  const h = historyOf(ctx);
  const id = entityIdParam(req);
  const attrIri = attrParam(req);
  const instanceId = instanceIdParam(req);
  const rec = await h.getTemporalEntity(req.tenant, id);
  if (rec === undefined) throw notFound(`entity '${id}' has no temporal representation`);
  await checkEntity(req, ctx, { id, types: rec.type, storedTypes: true, attrsWritten: [attrIri], read: false });
  if (!(await h.deleteInstance(req.tenant, id, attrIri, instanceId)))
    throw notFound(`attribute '${req.params[1]}' of '${id}' has no instance '${instanceId}'`);
  return { status: 204 };
};
