// What a Snapshot holds (CIM 009 v1.9.1 §5.16.1.4, §5.16.2.4): its queries' entities copied from the tenant into its
// entity space, its temporal queries' evolutions copied into that space's history, a clone's copy of another space,
// and the removal of a space. Through the store and history contracts only, so any store plugin holds Snapshots.
// Every entity copied from the tenant is asked to the entity hook as a read, with its own types (seed 000 §5.2).
import { LdError, RefusalError, problemOf } from '../ngsild/problem.js';
import { ENTITY_CORE_MEMBERS, type AttrInstance, type StoredEntity } from '../ngsild/entity/model.js';
import { parseTemporalQuery, type TemporalQuery } from '../ngsild/temporal/temporal-query.js';
import type { HistoryInstance } from '../ngsild/temporal/history-model.js';
import { isPlainObject } from '../ngsild/entity/syntax.js';
import { SNAPSHOT_QUERY_MEMBERS, type ExecutionResult } from '../ngsild/snapshot/snapshot-body.js';
import type { BatchItem, EntitySelectionQuery } from '../store/contract.js';
import type { History, TemporalEntityQuery } from '../history/contract.js';
import type { LdRequest } from '../pipeline/ld-request.js';
import type { WorkerContext } from '../pipeline/worker-context.js';
import { selectionQuery } from './query.js';
import { selectionFromBody, stringMember } from './selection.js';
import { checkEntity, readableAttrs, readableEntity } from './entity-auth.js';
import { writeEntities } from './changes.js';

/** Entities read and written per step: no step holds one long write or many entities in memory. */
const STEP = 500;
/** Instances of one attribute a temporal capture copies per entity (the same bound as a temporal answer's page). */
const INSTANCES_PER_ATTRIBUTE = 10_000;

/** One capture query compiled: the store's selection, the attributes it keeps (attrs, expanded), its time window. */
export interface CaptureQuery {
  selection: EntitySelectionQuery;
  attrIris?: readonly string[];
  temporal?: TemporalQuery;
}

/** Every query compiled before anything is copied, so a malformed one is the request's 400 with nothing written. */
export function compileQueries(req: LdRequest, queries: readonly Record<string, unknown>[], member: string): CaptureQuery[] {
  return queries.map((q, i) => {
    try {
      const sel = selectionFromBody(req, q, SNAPSHOT_QUERY_MEMBERS);
      const selection = selectionQuery(sel, req.context);
      const out: CaptureQuery = { selection };
      if (selection.attrs !== undefined) out.attrIris = selection.attrs;
      if (q.temporalQ !== undefined) {
        // q and geoQ read an entity's current state; a history holds states of many times (README "Snapshots").
        if (sel.q !== undefined || sel.geo !== undefined)
          throw new LdError('OperationNotSupported', 'q and geoQ are not taken by a temporal query of a Snapshot');
        const tq = q.temporalQ;
        if (!isPlainObject(tq)) throw new LdError('BadRequestData', 'temporalQ: must be an object');
        const lastN = tq.lastN;
        if (lastN !== undefined && typeof lastN !== 'number' && typeof lastN !== 'string')
          throw new LdError('BadRequestData', 'temporalQ.lastN: must be a number');
        out.temporal = parseTemporalQuery({
          timerel: stringMember(tq, 'timerel', 'temporalQ.'),
          timeAt: stringMember(tq, 'timeAt', 'temporalQ.'),
          endTimeAt: stringMember(tq, 'endTimeAt', 'temporalQ.'),
          timeproperty: stringMember(tq, 'timeproperty', 'temporalQ.'),
          lastN,
        });
      }
      return out;
    } catch (e) {
      if (e instanceof LdError) throw new LdError(e.kind, `${member}[${i}]: ${e.detail}`);
      throw e;
    }
  });
}

/** Counts what a Snapshot space holds against `--snapshotMaxEntities` while it is filled. */
export class Budget {
  held = 0;
  constructor(readonly most: number) {}
  /** 403 TooManyResults when `more` would take the Snapshot past its bound. */
  check(more: number): void {
    if (this.held + more > this.most)
      throw new LdError('TooManyResults', `a snapshot holds at most ${this.most} entities (--snapshotMaxEntities)`);
  }
}

/** The entity as a query with attrs keeps it: its core members and the attributes named. */
function projected(e: StoredEntity, attrIris: readonly string[] | undefined): StoredEntity {
  if (attrIris === undefined) return e;
  const out = { id: e.id, type: e.type } as StoredEntity;
  for (const key of Object.keys(e)) if (ENTITY_CORE_MEMBERS.has(key) || attrIris.includes(key)) out[key] = e[key];
  return out;
}

/** The entities of a page the entity hook lets the request read (a refused one is left out, §5.2). */
async function readable(req: LdRequest, ctx: WorkerContext, entities: readonly StoredEntity[]): Promise<StoredEntity[]> {
  if (ctx.auth === undefined) return entities as StoredEntity[];
  const out: StoredEntity[] = [];
  for (const e of entities) {
    try {
      out.push(await readableEntity(req, ctx, e));
    } catch (error) {
      if (!(error instanceof RefusalError)) throw error;
    }
  }
  return out;
}

/** Writes copies into a space: an entity two queries select is one entity with the attributes of both. */
async function copyInto(ctx: WorkerContext, space: string, entities: readonly StoredEntity[]): Promise<number> {
  if (entities.length === 0) return 0;
  const items: BatchItem<boolean>[] = entities.map((e) => ({
    id: e.id,
    mutation: (current) => ({ next: current === undefined ? e : { ...current, ...e }, result: current === undefined }),
  }));
  let added = 0;
  // Registered as a tenant is: a store lays out what it needs for one there (docdb: the database's indexes).
  for (const o of await writeEntities(ctx, space, items, { createTenant: true })) {
    if (!o.ok) throw o.error instanceof LdError ? o.error : new LdError('InternalError', 'a snapshot write failed');
    if (o.result) added++;
  }
  return added;
}

/** A query that fails is reported in the Snapshot's details (§5.2.42), not as the request's error. */
function failed(e: unknown): ExecutionResult {
  const problem = problemOf(e);
  if (problem === undefined) throw e;
  return { resultStatus: 'failure', problemDetails: { ...problem } };
}

/**
 * §5.16.1.4: one query of snapshotQueries, from the request's tenant into `space`. Its matches are counted first: a
 * query that would take the Snapshot past its bound fails (TooManyResults) with nothing of it copied.
 */
export async function captureEntities(
  req: LdRequest,
  ctx: WorkerContext,
  space: string,
  q: CaptureQuery,
  budget: Budget,
): Promise<ExecutionResult> {
  try {
    const { count } = await ctx.store.queryEntities(req.tenant, { ...q.selection, limit: 0, offset: 0, count: true });
    budget.check(count ?? 0);
    let copied = 0;
    // The tenant is only read here, so offsets over it are stable between steps.
    for (let offset = 0; ; offset += STEP) {
      const { entities } = await ctx.store.queryEntities(req.tenant, { ...q.selection, limit: STEP, offset, count: false });
      const kept = (await readable(req, ctx, entities)).map((e) => projected(e, q.attrIris));
      copied += kept.length;
      budget.held += await copyInto(ctx, space, kept);
      if (entities.length < STEP) break;
    }
    return { resultStatus: copied > 0 ? 'success' : 'empty' };
  } catch (e) {
    return failed(e);
  }
}

/** What a history instance is as a new instance: its content, not its identity or system times. */
function asNewInstance(i: HistoryInstance): AttrInstance {
  const { instanceId: _id, createdAt: _c, modifiedAt: _m, deletedAt: _d, ...content } = i;
  return content;
}

/** Copies one temporal entity's instances into the space's history; false when it had none to copy. */
async function copyEvolution(
  h: History,
  space: string,
  record: { id: string; type: string[]; scope?: string[] },
  attrs: Record<string, HistoryInstance[]>,
  now: string,
): Promise<boolean> {
  const copy: Record<string, AttrInstance[]> = {};
  let any = false;
  for (const [attrIri, instances] of Object.entries(attrs)) {
    // A deletion's tombstone is no state of the attribute to copy.
    const kept = instances.filter((i) => i.deletedAt === undefined).map(asNewInstance);
    if (kept.length === 0) continue;
    copy[attrIri] = kept;
    any = true;
  }
  if (!any) return false;
  const entity =
    record.scope === undefined ? { id: record.id, type: record.type } : { id: record.id, type: record.type, scope: record.scope };
  await h.addInstances(space, entity, copy, now, { createTenant: true });
  return true;
}

/**
 * §5.16.1.4: one query of snapshotTemporalQueries, from the tenant's history into the space's: the instances of the
 * selected entities in the temporalQ window (lastN per attribute when given), each entity asked as a read.
 */
export async function captureEvolutions(
  req: LdRequest,
  ctx: WorkerContext,
  h: History,
  space: string,
  q: CaptureQuery,
  budget: Budget,
): Promise<ExecutionResult> {
  try {
    const query: TemporalEntityQuery = { ...temporalSelection(q.selection), limit: STEP, offset: 0, count: true };
    if (q.attrIris !== undefined) query.attrs = q.attrIris;
    const first = await h.queryTemporalEntities(req.tenant, { ...query, limit: 0 });
    budget.check(first.count ?? 0);
    const now = new Date().toISOString();
    let copied = 0;
    for (let offset = 0; ; offset += STEP) {
      const { entities } = await h.queryTemporalEntities(req.tenant, { ...query, offset, count: false });
      for (const record of entities) {
        let allowed: readonly string[] | undefined = q.attrIris;
        if (ctx.auth !== undefined) {
          try {
            if ((await checkEntity(req, ctx, { id: record.id, types: record.type, storedTypes: true, read: true })) === 'partial') {
              const page = await h.instances(req.tenant, record.id, { attrs: q.attrIris, limit: 1 });
              allowed = Object.keys(await readableAttrs(req, ctx, record.id, record.type, page.attrs));
            }
          } catch (error) {
            if (!(error instanceof RefusalError)) throw error;
            continue;
          }
        }
        const page = await h.instances(req.tenant, record.id, {
          attrs: allowed,
          window: q.temporal!.window,
          lastN: q.temporal!.lastN,
          limit: INSTANCES_PER_ATTRIBUTE,
        });
        if (await copyEvolution(h, space, record, page.attrs, now)) copied++;
      }
      if (entities.length < STEP) break;
    }
    budget.held += copied;
    return { resultStatus: copied > 0 ? 'success' : 'empty' };
  } catch (e) {
    return failed(e);
  }
}

/** The selectors of an entity selection, as a temporal entity query takes them. */
function temporalSelection(s: EntitySelectionQuery): Pick<TemporalEntityQuery, 'ids' | 'type' | 'idPattern' | 'entities' | 'scopeQ'> {
  const out: Pick<TemporalEntityQuery, 'ids' | 'type' | 'idPattern' | 'entities' | 'scopeQ'> = {};
  if (s.ids !== undefined) out.ids = s.ids;
  if (s.type !== undefined) out.type = s.type;
  if (s.idPattern !== undefined) out.idPattern = s.idPattern;
  if (s.entities !== undefined) out.entities = s.entities;
  if (s.scopeQ !== undefined) out.scopeQ = s.scopeQ;
  return out;
}

/**
 * §5.16.2.4: a clone holds all the entity and temporal data of its source, each entity asked as a read; the bound of
 * `budget` holds for it as for a capture (403 TooManyResults, nothing left).
 */
export async function copySpace(req: LdRequest, ctx: WorkerContext, from: string, to: string, budget: Budget): Promise<void> {
  const { count } = await ctx.store.queryEntities(from, { limit: 0, offset: 0, count: true });
  budget.check(count ?? 0);
  for (let offset = 0; ; offset += STEP) {
    const { entities } = await ctx.store.queryEntities(from, { limit: STEP, offset, count: false });
    budget.held += await copyInto(ctx, to, await readable(req, ctx, entities));
    if (entities.length < STEP) break;
  }
  const h = ctx.history;
  if (h === undefined) return;
  const now = new Date().toISOString();
  for (let offset = 0; ; offset += STEP) {
    const { entities } = await h.queryTemporalEntities(from, { limit: STEP, offset, count: false });
    for (const record of entities) {
      // Those the copy of entities made already hold the instances their write recorded.
      if ((await h.getTemporalEntity(to, record.id)) !== undefined) continue;
      try {
        await checkEntity(req, ctx, { id: record.id, types: record.type, storedTypes: true, read: true });
      } catch (error) {
        if (!(error instanceof RefusalError)) throw error;
        continue;
      }
      const page = await h.instances(from, record.id, { limit: INSTANCES_PER_ATTRIBUTE });
      await copyEvolution(h, to, record, page.attrs, now);
    }
    if (entities.length < STEP) break;
  }
}

/** Every entity and temporal entity of a space removed, with no entity hook: the Snapshot itself is what goes. */
export async function dropSpace(ctx: WorkerContext, space: string): Promise<void> {
  for (;;) {
    const { entities } = await ctx.store.queryEntities(space, { limit: STEP, offset: 0, count: false });
    if (entities.length === 0) break;
    await ctx.store.mutateEntities(
      space,
      entities.map((e) => ({ id: e.id, mutation: () => ({ next: null, result: true }) })),
    );
  }
  const h = ctx.history;
  if (h === undefined) return;
  for (;;) {
    const { entities } = await h.queryTemporalEntities(space, { limit: STEP, offset: 0, count: false });
    if (entities.length === 0) break;
    for (const record of entities) await h.deleteTemporalEntity(space, record.id);
  }
}
