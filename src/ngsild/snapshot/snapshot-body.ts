// The Snapshot data type (CIM 009 v1.9.1 §4.3.7 and its Snapshot data type; member names from the v1.9 core
// @context): what a client may send to create or update one, what the broker keeps, and how it answers it.
import { badRequest, LdError } from '../problem.js';
import { isPlainObject, isUri } from '../entity/syntax.js';
import { checkIdSize } from '../entity/limits.js';

/** Queries one Snapshot captures with: each is one pass over the tenant's entities (README "Snapshots"). */
export const MAX_SNAPSHOT_QUERIES = 16;

/** The members of a Query (§5.2.23) a capture takes: the entity selection, and attrs as its projection. */
export const SNAPSHOT_QUERY_MEMBERS: ReadonlySet<string> = new Set(['type', 'entities', 'attrs', 'q', 'geoQ', 'scopeQ']);

/** Members the broker sets: a client sending one is told so (§5.2.2 read-only members). */
const READ_ONLY = new Set(['snapshotStatus', 'snapshotQueriesDetails', 'snapshotTemporalQueriesDetails', 'createdAt', 'modifiedAt']);
/**
 * Members of the v1.9 core @context this broker does not serve: refused rather than kept and ignored, so a client
 * never believes a lifetime or a temporal capture of the past holds (README "Snapshots").
 */
const UNSUPPORTED = new Set(['snapshotTemporalQueries', 'snapshotLifetime', 'snapshotPriority']);

/** ExecutionResult (v1.9.1): how one capture query went. */
export interface ExecutionResult {
  resultStatus: 'success' | 'empty' | 'failure';
  problemDetails?: Record<string, unknown>;
}

export type SnapshotStatus = 'creating' | 'ready';

/** A Snapshot as its tenant's `snapshots` collection keeps it. */
export interface SnapshotDoc {
  id: string;
  snapshotQueries: Record<string, unknown>[];
  /** Its entity space (snapshot-store.ts snapshotSpace). */
  storageKey: string;
  snapshotStatus: SnapshotStatus;
  snapshotQueriesDetails: ExecutionResult[];
  createdAt: string;
  modifiedAt: string;
}

/** What a create or an update body asks. */
export interface SnapshotInput {
  id?: string;
  snapshotQueries?: Record<string, unknown>[];
}

/** A Snapshot body: `creating` for POST /snapshots (type required, id optional), else PATCH's fragment. */
export function parseSnapshotBody(body: Record<string, unknown>, creating: boolean): SnapshotInput {
  const out: SnapshotInput = {};
  for (const key of Object.keys(body)) {
    if (key === '@context') continue;
    if (READ_ONLY.has(key)) throw badRequest(`${key}: is set by the broker, not by a client`);
    if (UNSUPPORTED.has(key)) throw new LdError('OperationNotSupported', `${key}: not supported by this broker (README "Snapshots")`);
    if (key !== 'id' && key !== 'type' && key !== 'snapshotQueries') throw badRequest(`unknown Snapshot member '${key.slice(0, 100)}'`);
  }
  if (body.type !== undefined || creating) {
    if (body.type !== 'Snapshot') throw badRequest(`type: a Snapshot has type 'Snapshot', not '${String(body.type).slice(0, 100)}'`);
  }
  if (body.id !== undefined) {
    if (!creating) throw badRequest('id: a Snapshot keeps the id it was created with');
    if (!isUri(body.id)) throw badRequest(`id: '${String(body.id).slice(0, 200)}' is not a URI`);
    out.id = checkIdSize(body.id, 'id');
  }
  if (body.snapshotQueries !== undefined) out.snapshotQueries = parseQueries(body.snapshotQueries);
  else if (creating) throw badRequest('snapshotQueries: a Snapshot needs at least one query to capture with');
  return out;
}

function parseQueries(value: unknown): Record<string, unknown>[] {
  if (!Array.isArray(value) || value.length === 0) throw badRequest('snapshotQueries: must be a non-empty array of Query objects');
  if (value.length > MAX_SNAPSHOT_QUERIES)
    throw new LdError('TooManyResults', `snapshotQueries: ${value.length} queries, above the maximum ${MAX_SNAPSHOT_QUERIES}`);
  return value.map((q, i) => {
    if (!isPlainObject(q)) throw badRequest(`snapshotQueries[${i}]: must be a Query object`);
    // §4.3.7: a Snapshot is a consistent view of the entities its queries select; a query selecting nothing in
    // particular would copy the whole tenant, which is asked for with an explicit selector.
    if (q.entities === undefined && q.q === undefined && q.geoQ === undefined && q.scopeQ === undefined)
      throw badRequest(`snapshotQueries[${i}]: a query needs entities, q, geoQ or scopeQ`);
    return q;
  });
}

/** The Snapshot as the API answers it: its members, nothing of where its entities are kept. */
export function renderSnapshot(doc: SnapshotDoc): Record<string, unknown> {
  const out: Record<string, unknown> = {
    id: doc.id,
    type: 'Snapshot',
    snapshotStatus: doc.snapshotStatus,
    snapshotQueries: doc.snapshotQueries,
    snapshotQueriesDetails: doc.snapshotQueriesDetails,
  };
  out.createdAt = doc.createdAt;
  out.modifiedAt = doc.modifiedAt;
  return out;
}
