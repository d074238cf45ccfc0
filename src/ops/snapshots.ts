// Snapshots (CIM 009 v1.9.1 §5.16; ETSI TS 104 175 clause 16 since): create (§5.16.1), clone (§5.16.2), retrieve
// (§5.16.3), update (§5.16.4), delete (§5.16.5) and purge (§5.16.7). A Snapshot's entities live in an entity space of
// its own (ngsild/snapshot/snapshot-store.ts), filled by snapshot-capture.ts; the entity and temporal operations
// serve that space when a request names the Snapshot in NGSILD-Snapshot (§6.3.22, pipeline/tenant-step.ts).
import { randomUUID } from 'node:crypto';
import { LdError, badRequest, notFound } from '../ngsild/problem.js';
import { API_PREFIX } from '../ngsild/operations.js';
import { isUri } from '../ngsild/entity/syntax.js';
import { checkIdSize } from '../ngsild/entity/limits.js';
import { pathSegment } from '../ngsild/uri-encode.js';
import type { StoredEntity } from '../ngsild/entity/model.js';
import { parseQ } from '../ngsild/query/q-parser.js';
import { attributesOf, compileQ } from '../ngsild/query/q-eval.js';
import { SNAPSHOTS, newSpaceKey, snapshotSpace } from '../ngsild/snapshot/snapshot-store.js';
import {
  DEFAULT_PRIORITY,
  SNAPSHOT_Q_MEMBERS,
  expiresAtOf,
  isExpired,
  parseSnapshotBody,
  renderSnapshot,
  snapshotAsQTarget,
  statusOf,
  type ExecutionResult,
  type SnapshotDoc,
  type SnapshotInput,
} from '../ngsild/snapshot/snapshot-body.js';
import type { DocCollection } from '../store/contract.js';
import type { LdRequest } from '../pipeline/ld-request.js';
import type { WorkerContext } from '../pipeline/worker-context.js';
import type { OpHandler } from '../pipeline/handler.js';
import { boolParam } from './types.js';
import { Budget, captureEntities, captureEvolutions, compileQueries, copySpace, dropSpace } from './snapshot-capture.js';

/** The Snapshot id of the path; `local` checked too (every Snapshot is this broker's own, §5.5.15). */
function snapshotIdParam(req: LdRequest): string {
  boolParam(req, 'local');
  const id = req.params[0]!;
  if (!isUri(id)) throw badRequest(`snapshot id '${String(id).slice(0, 200)}' is not a URI`);
  return checkIdSize(id, 'snapshot id');
}

const snapshotsOf = (req: LdRequest, ctx: WorkerContext): DocCollection => ctx.store.collection(req.tenant, SNAPSHOTS);

/** Removes a Snapshot and what it holds. */
async function removeSnapshot(req: LdRequest, ctx: WorkerContext, doc: SnapshotDoc): Promise<boolean> {
  const removed = await snapshotsOf(req, ctx).delete(doc.id);
  await dropSpace(ctx, snapshotSpace(doc.storageKey));
  return removed;
}

/** The Snapshot of an id; 404 when there is none, or it has expired (§5.16.1.4: then it is removed). */
async function snapshotDoc(req: LdRequest, ctx: WorkerContext, id: string): Promise<SnapshotDoc> {
  const doc = (await snapshotsOf(req, ctx).get(id)) as SnapshotDoc | undefined;
  if (doc !== undefined && isExpired(doc, Date.now())) await removeSnapshot(req, ctx, doc);
  else if (doc !== undefined) return doc;
  throw notFound(`snapshot '${id}' does not exist`);
}

function location(id: string): string[] {
  return ['Location', `${API_PREFIX}/snapshots/${pathSegment(id)}`];
}

/** What fills a new Snapshot's space: its details, or nothing for a clone. */
type Fill = (space: string, budget: Budget) => Promise<Pick<SnapshotDoc, 'snapshotQueriesDetails' | 'snapshotTemporalQueriesDetails'>>;

/**
 * Reserves the id (409 AlreadyExists) with status `preparing`, fills the new space, then sets the status its results
 * sum up to. A fill that throws (a clone past the bound) removes the Snapshot and its space: the client sees the error
 * and no Snapshot. One deleted while it was filled is not made again.
 */
async function createWith(req: LdRequest, ctx: WorkerContext, input: SnapshotInput, fill: Fill): Promise<string> {
  const id = input.id ?? `urn:ngsi-ld:Snapshot:${randomUUID()}`;
  const now = Date.now();
  const at = new Date(now).toISOString();
  const doc: SnapshotDoc = {
    id,
    storageKey: newSpaceKey(),
    snapshotPriority: (input.snapshotPriority as number | undefined) ?? DEFAULT_PRIORITY,
    snapshotStatus: 'preparing',
    createdAt: at,
    modifiedAt: at,
  };
  if (input.snapshotQueries !== undefined) doc.snapshotQueries = input.snapshotQueries;
  if (input.snapshotTemporalQueries !== undefined) doc.snapshotTemporalQueries = input.snapshotTemporalQueries;
  if (typeof input.snapshotLifetime === 'string') {
    doc.snapshotLifetime = input.snapshotLifetime;
    doc.expiresAt = expiresAtOf(input.snapshotLifetime, now);
  }
  const snapshots = snapshotsOf(req, ctx);
  if (!(await snapshots.insert(id, doc as unknown as Record<string, unknown>)))
    throw new LdError('AlreadyExists', `snapshot '${id}' already exists`);
  const space = snapshotSpace(doc.storageKey);
  let details: Awaited<ReturnType<Fill>>;
  try {
    details = await fill(space, new Budget(ctx.config.snapshotMaxEntities));
  } catch (e) {
    await snapshots.delete(id);
    await dropSpace(ctx, space).catch((err: unknown) => ctx.log.error({ err, space }, 'a failed snapshot fill was not undone'));
    throw e;
  }
  if ((await snapshots.get(id)) === undefined) {
    await dropSpace(ctx, space);
    throw notFound(`snapshot '${id}' was deleted while it was captured`);
  }
  Object.assign(doc, details);
  const results = [...(details.snapshotQueriesDetails ?? []), ...(details.snapshotTemporalQueriesDetails ?? [])];
  doc.snapshotStatus = results.length === 0 ? 'success' : statusOf(results);
  doc.modifiedAt = new Date().toISOString();
  await snapshots.put(id, doc as unknown as Record<string, unknown>);
  return id;
}

/**
 * §5.16.1: POST /snapshots. The queries run before the answer (§5.16.1.4 lets them run in the background; here the
 * Snapshot is complete, `snapshotStatus` final, once the client has its 201).
 */
export const createSnapshot: OpHandler = async (req, ctx) => {
  boolParam(req, 'local');
  const input = parseSnapshotBody(req.jsonObject(), 'create');
  const queries = compileQueries(req, input.snapshotQueries ?? [], 'snapshotQueries');
  const temporal = compileQueries(req, input.snapshotTemporalQueries ?? [], 'snapshotTemporalQueries');
  const h = ctx.history;
  if (temporal.length > 0 && h === undefined)
    throw new LdError('OperationNotSupported', 'snapshotTemporalQueries: this broker keeps no history (--troe)');
  const id = await createWith(req, ctx, input, async (space, budget) => {
    const out: Awaited<ReturnType<Fill>> = {};
    if (queries.length > 0) {
      const results: ExecutionResult[] = [];
      for (const q of queries) results.push(await captureEntities(req, ctx, space, q, budget));
      out.snapshotQueriesDetails = results;
    }
    if (temporal.length > 0) {
      const results: ExecutionResult[] = [];
      for (const q of temporal) results.push(await captureEvolutions(req, ctx, h!, space, q, budget));
      out.snapshotTemporalQueriesDetails = results;
    }
    return out;
  });
  return { status: 201, headers: location(id) };
};

/**
 * §5.16.2: POST /snapshots/{id}/clone. A new Snapshot holding the entities and evolutions the source holds now (its
 * capture and what was provisioned into it since), with the source's queries; the optional body gives the clone's
 * id, lifetime and priority.
 */
export const cloneSnapshot: OpHandler = async (req, ctx) => {
  const sourceId = snapshotIdParam(req);
  const hasBody = req.task.body !== null && req.task.body.byteLength > 0;
  const input = hasBody ? parseSnapshotBody(req.jsonObject(), 'clone') : {};
  const source = await snapshotDoc(req, ctx, sourceId);
  // A copy of a capture under way would be a copy of part of it.
  if (source.snapshotStatus === 'preparing') throw new LdError('Conflict', `snapshot '${sourceId}' is still being captured`);
  const from = snapshotSpace(source.storageKey);
  const cloneInput: SnapshotInput = {
    ...input,
    snapshotQueries: source.snapshotQueries,
    snapshotTemporalQueries: source.snapshotTemporalQueries,
  };
  const id = await createWith(req, ctx, cloneInput, async (space, budget) => {
    await copySpace(req, ctx, from, space, budget);
    return {};
  });
  return { status: 201, headers: location(id) };
};

export const retrieveSnapshot: OpHandler = async (req, ctx) => {
  const doc = await snapshotDoc(req, ctx, snapshotIdParam(req));
  return { status: 200, body: renderSnapshot(doc), withContext: true };
};

/**
 * §5.16.4: PATCH /snapshots/{id} merges snapshotLifetime (expiresAt is then counted from now) and snapshotPriority;
 * `null` removes one (the priority is then the default again). The queries and the id cannot change.
 */
export const updateSnapshot: OpHandler = async (req, ctx) => {
  const id = snapshotIdParam(req);
  const input = parseSnapshotBody(req.jsonObject(), 'update');
  const doc = await snapshotDoc(req, ctx, id);
  const now = Date.now();
  if (input.snapshotLifetime === null) {
    delete doc.snapshotLifetime;
    delete doc.expiresAt;
  } else if (input.snapshotLifetime !== undefined) {
    doc.snapshotLifetime = input.snapshotLifetime;
    doc.expiresAt = expiresAtOf(input.snapshotLifetime, now);
  }
  if (input.snapshotPriority !== undefined) doc.snapshotPriority = input.snapshotPriority ?? DEFAULT_PRIORITY;
  doc.modifiedAt = new Date(now).toISOString();
  const snapshots = snapshotsOf(req, ctx);
  // Deleted meanwhile: not made again.
  if ((await snapshots.get(id)) === undefined) throw notFound(`snapshot '${id}' does not exist`);
  await snapshots.put(id, doc as unknown as Record<string, unknown>);
  return { status: 204 };
};

export const deleteSnapshot: OpHandler = async (req, ctx) => {
  const doc = await snapshotDoc(req, ctx, snapshotIdParam(req));
  if (!(await removeSnapshot(req, ctx, doc))) throw notFound(`snapshot '${doc.id}' does not exist`);
  return { status: 204 };
};

/**
 * §5.16.7: DELETE /snapshots?q=... removes every Snapshot of the tenant the q matches; the q is mandatory and names
 * members of the Snapshot data type only (§5.16.7.4). Expired Snapshots go too.
 */
export const purgeSnapshots: OpHandler = async (req, ctx) => {
  boolParam(req, 'local');
  const text = req.query.get('q');
  if (text === undefined) throw badRequest('PurgeSnapshots needs q, a query on the members of the Snapshot data type');
  const ast = parseQ(text);
  for (const name of attributesOf(ast)) {
    const member = name.split(/[.[]/)[0]!;
    if (!SNAPSHOT_Q_MEMBERS.has(member)) throw badRequest(`q: '${member.slice(0, 100)}' is no member of the Snapshot data type`);
  }
  const matches = compileQ(ast, (term) => term);
  const now = Date.now();
  const victims: SnapshotDoc[] = [];
  for (const { doc } of await snapshotsOf(req, ctx).list()) {
    const snapshot = doc as unknown as SnapshotDoc;
    if (isExpired(snapshot, now) || matches(snapshotAsQTarget(snapshot) as unknown as StoredEntity)) victims.push(snapshot);
  }
  for (const doc of victims) await removeSnapshot(req, ctx, doc);
  return { status: 204 };
};
