// Snapshots (CIM 009 v1.9.1 §4.3.7 and its Snapshot operations; ETSI TS 104 175 clause 16 since): create, query,
// retrieve, update, delete, clone and purge. A Snapshot copies the entities its queries select into an entity space
// of its own (ngsild/snapshot/snapshot-store.ts), through the store contract alone; the entity routes below
// `/snapshots/{snapshotId}` then serve that space (pipeline/tenant-step.ts). Every entity copied is asked to the
// auth plugin's entity hook with its own types (seed 000 §5.2), as a read; a purge asks each as a deletion.
import { randomUUID } from 'node:crypto';
import { LdError, RefusalError, badRequest, notFound } from '../ngsild/problem.js';
import { API_PREFIX } from '../ngsild/operations.js';
import { isUri } from '../ngsild/entity/syntax.js';
import { checkIdSize } from '../ngsild/entity/limits.js';
import { pathSegment } from '../ngsild/uri-encode.js';
import { ENTITY_CORE_MEMBERS, type StoredEntity } from '../ngsild/entity/model.js';
import { SNAPSHOTS, newSpaceKey, snapshotSpace } from '../ngsild/snapshot/snapshot-store.js';
import {
  SNAPSHOT_QUERY_MEMBERS,
  parseSnapshotBody,
  renderSnapshot,
  type ExecutionResult,
  type SnapshotDoc,
} from '../ngsild/snapshot/snapshot-body.js';
import type { BatchItem, EntitySelectionQuery } from '../store/contract.js';
import type { LdRequest } from '../pipeline/ld-request.js';
import type { WorkerContext } from '../pipeline/worker-context.js';
import type { OpHandler } from '../pipeline/handler.js';
import { selectionQuery } from './query.js';
import { DEFAULT_LIMIT, MAX_LIMIT, selectionFromBody } from './selection.js';
import { checkEntity, readableEntity } from './entity-auth.js';
import { writeEntities } from './changes.js';
import { pageLinks } from './page-links.js';

/** Entities read and written per step of a capture, a clone or a purge: no step holds one long write. */
const STEP = 500;

/** One capture query compiled: the store's selection, and the attributes it keeps (attrs), as expanded names. */
interface CaptureQuery {
  selection: EntitySelectionQuery;
  attrIris?: ReadonlySet<string>;
}

function snapshotIdParam(req: LdRequest): string {
  const id = req.params[0]!;
  if (!isUri(id)) throw badRequest(`snapshot id '${String(id).slice(0, 200)}' is not a URI`);
  return checkIdSize(id, 'snapshot id');
}

async function snapshotDoc(req: LdRequest, ctx: WorkerContext, id: string): Promise<SnapshotDoc> {
  const doc = (await ctx.store.collection(req.tenant, SNAPSHOTS).get(id)) as SnapshotDoc | undefined;
  if (doc === undefined) throw notFound(`snapshot '${id}' does not exist`);
  return doc;
}

/** Every query compiled before anything is copied, so a malformed one is the request's 400 with nothing written. */
function compileQueries(req: LdRequest, queries: readonly Record<string, unknown>[]): CaptureQuery[] {
  return queries.map((q, i) => {
    try {
      const sel = selectionFromBody(req, q, SNAPSHOT_QUERY_MEMBERS);
      const selection = selectionQuery(sel, req.context);
      return selection.attrs === undefined ? { selection } : { selection, attrIris: new Set(selection.attrs) };
    } catch (e) {
      if (e instanceof LdError) throw new LdError(e.kind, `snapshotQueries[${i}]: ${e.detail}`);
      throw e;
    }
  });
}

/** The entity as a query with attrs keeps it: its core members and the attributes named. */
function projected(e: StoredEntity, attrIris: ReadonlySet<string> | undefined): StoredEntity {
  if (attrIris === undefined) return e;
  const out: StoredEntity = { id: e.id, type: e.type } as StoredEntity;
  for (const key of Object.keys(e)) if (ENTITY_CORE_MEMBERS.has(key) || attrIris.has(key)) out[key] = e[key];
  return out;
}

/**
 * Copies entities into a Snapshot's space: an entity two queries select is one entity with the attributes of both.
 * Answers how many entities the space gained; past `--snapshotMaxEntities`, 403 TooManyResults.
 */
async function copyInto(
  req: LdRequest,
  ctx: WorkerContext,
  space: string,
  entities: readonly StoredEntity[],
  held: number,
): Promise<number> {
  const items: BatchItem<boolean>[] = entities.map((e) => ({
    id: e.id,
    mutation: (current) => ({ next: current === undefined ? e : { ...current, ...e }, result: current === undefined }),
  }));
  if (items.length === 0) return 0;
  let added = 0;
  for (const o of await writeEntities(ctx, space, items)) {
    if (!o.ok) throw o.error instanceof LdError ? o.error : new LdError('InternalError', 'a snapshot write failed');
    if (o.result) added++;
  }
  const most = ctx.config.snapshotMaxEntities;
  if (held + added > most) throw new LdError('TooManyResults', `a snapshot holds at most ${most} entities (--snapshotMaxEntities)`);
  return added;
}

/** The entities of a page the entity hook lets the request read (seed 000 §5.2: a refused one is left out). */
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

/** §4.3.7: the capture, query by query, from the request's tenant into `space`; each query's ExecutionResult. */
async function capture(req: LdRequest, ctx: WorkerContext, space: string, queries: readonly CaptureQuery[]): Promise<ExecutionResult[]> {
  const details: ExecutionResult[] = [];
  let held = 0;
  for (const q of queries) {
    let copied = 0;
    // The source is only read, so offsets over it are stable between steps.
    for (let offset = 0; ; offset += STEP) {
      const { entities } = await ctx.store.queryEntities(req.tenant, { ...q.selection, limit: STEP, offset, count: false });
      const kept = (await readable(req, ctx, entities)).map((e) => projected(e, q.attrIris));
      copied += kept.length;
      held += await copyInto(req, ctx, space, kept, held);
      if (entities.length < STEP) break;
    }
    details.push({ resultStatus: copied > 0 ? 'success' : 'empty' });
  }
  return details;
}

/** Every entity of a Snapshot's space removed, with no entity hook: the Snapshot itself is what goes. */
async function dropSpace(ctx: WorkerContext, space: string): Promise<void> {
  for (;;) {
    const { entities } = await ctx.store.queryEntities(space, { limit: STEP, offset: 0, count: false });
    if (entities.length === 0) return;
    await ctx.store.mutateEntities(
      space,
      entities.map((e) => ({ id: e.id, mutation: () => ({ next: null, result: true }) })),
    );
  }
}

/** Runs a fill of a fresh space; on any failure the space is emptied again, so no half-made Snapshot stays. */
async function filled<R>(ctx: WorkerContext, space: string, fill: () => Promise<R>): Promise<R> {
  try {
    return await fill();
  } catch (e) {
    await dropSpace(ctx, space).catch((err: unknown) => ctx.log.error({ err, space }, 'a failed snapshot capture was not undone'));
    throw e;
  }
}

function location(id: string): string[] {
  return ['Location', `${API_PREFIX}/snapshots/${pathSegment(id)}`];
}

/**
 * Reserves the id (409 AlreadyExists), fills the new space, then marks the Snapshot ready. A failed fill removes the
 * Snapshot and its space: the client sees the error and no Snapshot.
 */
async function createWith(
  req: LdRequest,
  ctx: WorkerContext,
  id: string,
  queries: Record<string, unknown>[],
  fill: (space: string) => Promise<ExecutionResult[]>,
): Promise<void> {
  const now = new Date().toISOString();
  const doc: SnapshotDoc = {
    id,
    snapshotQueries: queries,
    storageKey: newSpaceKey(),
    snapshotStatus: 'creating',
    snapshotQueriesDetails: [],
    createdAt: now,
    modifiedAt: now,
  };
  const snapshots = ctx.store.collection(req.tenant, SNAPSHOTS);
  if (!(await snapshots.insert(id, doc as unknown as Record<string, unknown>)))
    throw new LdError('AlreadyExists', `snapshot '${id}' already exists`);
  const space = snapshotSpace(req.tenant, doc.storageKey);
  try {
    doc.snapshotQueriesDetails = await filled(ctx, space, () => fill(space));
  } catch (e) {
    await snapshots.delete(id);
    throw e;
  }
  // Deleted while it captured: what it captured goes too, and the Snapshot is not made again.
  if ((await snapshots.get(id)) === undefined) {
    await dropSpace(ctx, space);
    throw notFound(`snapshot '${id}' was deleted while it was captured`);
  }
  doc.snapshotStatus = 'ready';
  doc.modifiedAt = new Date().toISOString();
  await snapshots.put(id, doc as unknown as Record<string, unknown>);
}

export const createSnapshot: OpHandler = async (req, ctx) => {
  const input = parseSnapshotBody(req.jsonObject(), true);
  const queries = compileQueries(req, input.snapshotQueries!);
  const id = input.id ?? `urn:ngsi-ld:Snapshot:${randomUUID()}`;
  await createWith(req, ctx, id, input.snapshotQueries!, (space) => capture(req, ctx, space, queries));
  return { status: 201, headers: location(id) };
};

export const retrieveSnapshot: OpHandler = async (req, ctx) => {
  const doc = await snapshotDoc(req, ctx, snapshotIdParam(req));
  return { status: 200, body: renderSnapshot(doc), withContext: true };
};

export const querySnapshots: OpHandler = async (req, ctx) => {
  const limit = intParam(req, 'limit', DEFAULT_LIMIT);
  const offset = intParam(req, 'offset', 0);
  if (limit > MAX_LIMIT) throw new LdError('TooManyResults', `limit ${limit} is above the maximum ${MAX_LIMIT}`);
  const count = req.query.count();
  if (limit === 0 && !count) throw badRequest('limit=0 is only allowed with count=true');
  const snapshots = ctx.store.collection(req.tenant, SNAPSHOTS);
  // One past the page tells whether another follows (its rel="next" link).
  const page = await snapshots.list(offset, limit === 0 ? 0 : limit + 1);
  const more = page.length > limit;
  if (more) page.length = limit;
  const headers: string[] = [];
  if (count) headers.push('NGSILD-Results-Count', String((await snapshots.list()).length));
  headers.push(...pageLinks(req, limit, offset, more));
  return { status: 200, body: page.map(({ doc }) => renderSnapshot(doc as unknown as SnapshotDoc)), headers, withContext: true };
};

function intParam(req: LdRequest, name: string, dflt: number): number {
  const text = req.query.get(name);
  if (text === undefined) return dflt;
  if (!/^\d{1,9}$/.test(text)) throw badRequest(`${name}: '${text.slice(0, 30)}' is not a non-negative integer`);
  return Number(text);
}

/**
 * PATCH /snapshots/{id}: new snapshotQueries capture again, into a new space that replaces the old one only once it
 * is complete (a failed capture leaves the Snapshot as it was); the entities provisioned into the old space go with it.
 */
export const updateSnapshot: OpHandler = async (req, ctx) => {
  const id = snapshotIdParam(req);
  const input = parseSnapshotBody(req.jsonObject(), false);
  const doc = await snapshotDoc(req, ctx, id);
  if (input.snapshotQueries === undefined) return { status: 204 };
  const queries = compileQueries(req, input.snapshotQueries);
  const oldSpace = snapshotSpace(req.tenant, doc.storageKey);
  const key = newSpaceKey();
  const space = snapshotSpace(req.tenant, key);
  const details = await filled(ctx, space, () => capture(req, ctx, space, queries));
  const snapshots = ctx.store.collection(req.tenant, SNAPSHOTS);
  // Deleted while this captured: what it captured goes too.
  if ((await snapshots.get(id)) === undefined) {
    await dropSpace(ctx, space);
    throw notFound(`snapshot '${id}' does not exist`);
  }
  const next: SnapshotDoc = {
    ...doc,
    snapshotQueries: input.snapshotQueries,
    storageKey: key,
    snapshotStatus: 'ready',
    snapshotQueriesDetails: details,
    modifiedAt: new Date().toISOString(),
  };
  await snapshots.put(id, next as unknown as Record<string, unknown>);
  await dropSpace(ctx, oldSpace);
  return { status: 204 };
};

export const deleteSnapshot: OpHandler = async (req, ctx) => {
  const id = snapshotIdParam(req);
  const doc = await snapshotDoc(req, ctx, id);
  if (!(await ctx.store.collection(req.tenant, SNAPSHOTS).delete(id))) throw notFound(`snapshot '${id}' does not exist`);
  await dropSpace(ctx, snapshotSpace(req.tenant, doc.storageKey));
  return { status: 204 };
};

/**
 * POST /snapshots/{id}/clone: a new Snapshot holding a copy of the entities the source holds now (its captures and
 * what was provisioned into it since), each asked to the entity hook as a read. The body, optional, may name its id.
 */
export const cloneSnapshot: OpHandler = async (req, ctx) => {
  const sourceId = snapshotIdParam(req);
  let cloneId: string | undefined;
  if (req.task.body !== null && req.task.body.byteLength > 0) {
    const body = req.jsonObject();
    for (const key of Object.keys(body))
      if (key !== 'id' && key !== 'type' && key !== '@context')
        throw badRequest(`clone: the body names the clone's id only, not '${key.slice(0, 100)}'`);
    if (body.type !== undefined && body.type !== 'Snapshot')
      throw badRequest(`type: a Snapshot has type 'Snapshot', not '${String(body.type).slice(0, 100)}'`);
    if (body.id !== undefined) {
      if (!isUri(body.id)) throw badRequest(`id: '${String(body.id).slice(0, 200)}' is not a URI`);
      cloneId = checkIdSize(body.id, 'id');
    }
  }
  const source = await snapshotDoc(req, ctx, sourceId);
  // A copy of a capture under way would be a copy of part of it.
  if (source.snapshotStatus !== 'ready') throw new LdError('Conflict', `snapshot '${sourceId}' is still being captured`);
  const sourceSpace = snapshotSpace(req.tenant, source.storageKey);
  const id = cloneId ?? `urn:ngsi-ld:Snapshot:${randomUUID()}`;
  await createWith(req, ctx, id, source.snapshotQueries, async (space) => {
    let held = 0;
    for (let offset = 0; ; offset += STEP) {
      const { entities } = await ctx.store.queryEntities(sourceSpace, { limit: STEP, offset, count: false });
      held += await copyInto(req, ctx, space, await readable(req, ctx, entities), held);
      if (entities.length < STEP) break;
    }
    return source.snapshotQueriesDetails;
  });
  return { status: 201, headers: location(id) };
};

/**
 * POST /snapshots/{id}/purge: removes the entities the Snapshot holds and keeps the Snapshot (to be provisioned
 * again, or captured again with an update). Each entity is asked to the entity hook as a deletion; one it refuses
 * stays, as PurgeEntities leaves it.
 */
export const purgeSnapshot: OpHandler = async (req, ctx) => {
  const id = snapshotIdParam(req);
  const doc = await snapshotDoc(req, ctx, id);
  const space = snapshotSpace(req.tenant, doc.storageKey);
  // Refused entities stay in place and are skipped by the next page.
  let skip = 0;
  for (;;) {
    const { entities } = await ctx.store.queryEntities(space, { limit: STEP, offset: skip, count: false });
    const items: BatchItem<boolean>[] = [];
    for (const e of entities) {
      try {
        await checkEntity(req, ctx, { id: e.id, types: e.type, storedTypes: true, read: false });
      } catch (error) {
        if (!(error instanceof RefusalError)) throw error;
        skip++;
        continue;
      }
      items.push({ id: e.id, mutation: (current) => ({ next: current === undefined ? undefined : null, result: true }) });
    }
    if (items.length > 0) await writeEntities(ctx, space, items);
    if (entities.length < STEP) break;
  }
  await ctx.store
    .collection(req.tenant, SNAPSHOTS)
    .put(id, { ...doc, modifiedAt: new Date().toISOString() } as unknown as Record<string, unknown>);
  return { status: 204 };
};
