// The Snapshot data type (CIM 009 v1.9.1 §5.2.41; member names of the v1.9 core @context): what a client may send to
// create, clone or update one, what the broker keeps, how it answers it, and the status its captures sum up to.
import { badRequest, LdError } from '../problem.js';
import { isPlainObject, isUri } from '../entity/syntax.js';
import { checkIdSize } from '../entity/limits.js';
import { addDuration, parseDuration } from '../temporal/duration.js';

/** Queries one Snapshot captures with (both lists together): each is one pass over the tenant (README "Snapshots"). */
export const MAX_SNAPSHOT_QUERIES = 16;
/** §5.2.41: snapshotPriority is 1 (dropped first) to 10; 5 when not given. */
export const DEFAULT_PRIORITY = 5;

/** The members of a Query (§5.2.23) a capture takes: the entity selection, attrs as its projection, temporalQ. */
export const SNAPSHOT_QUERY_MEMBERS: ReadonlySet<string> = new Set(['type', 'entities', 'attrs', 'q', 'geoQ', 'scopeQ', 'temporalQ']);

/** §5.2.41 table 5.2.41-2: set by the broker; a client sending one is ignored, as the table says. */
const OUTPUT_ONLY = new Set([
  'snapshotStatus',
  'snapshotQueriesDetails',
  'snapshotTemporalQueriesDetails',
  'createdAt',
  'modifiedAt',
  'expiresAt',
  'lastUsedAt',
]);
/**
 * §5.2.41 members this broker does not serve: refused rather than kept and ignored, so that no client waits for a
 * SnapshotNotification (§5.3.4, §5.16.6) that never comes (README "Snapshots").
 */
const UNSUPPORTED = new Set(['endpoint', 'receiverInfo']);

/** ExecutionResult (§5.2.42): how one capture query went. */
export interface ExecutionResult {
  resultStatus: 'success' | 'empty' | 'failure';
  problemDetails?: Record<string, unknown>;
}

/** §5.2.41 snapshotStatus: `preparing` while the captures run, then what they sum up to. */
export type SnapshotStatus = 'preparing' | 'success' | 'partial' | 'empty' | 'failure';

/** A Snapshot as its tenant's `snapshots` collection keeps it. */
export interface SnapshotDoc {
  id: string;
  snapshotQueries?: Record<string, unknown>[];
  snapshotTemporalQueries?: Record<string, unknown>[];
  snapshotLifetime?: string;
  snapshotPriority: number;
  /** Its entity space (snapshot-store.ts snapshotSpace). */
  storageKey: string;
  snapshotStatus: SnapshotStatus;
  snapshotQueriesDetails?: ExecutionResult[];
  snapshotTemporalQueriesDetails?: ExecutionResult[];
  createdAt: string;
  modifiedAt: string;
  expiresAt?: string;
}

/** What a create, clone or update body asks (`null`: an update removes the member). */
export interface SnapshotInput {
  id?: string;
  snapshotQueries?: Record<string, unknown>[];
  snapshotTemporalQueries?: Record<string, unknown>[];
  snapshotLifetime?: string | null;
  snapshotPriority?: number | null;
}

export type SnapshotBodyKind = 'create' | 'clone' | 'update';

const MEMBERS = new Set(['id', 'type', 'snapshotQueries', 'snapshotTemporalQueries', 'snapshotLifetime', 'snapshotPriority']);

/**
 * A Snapshot body: `create` (POST /snapshots: type Snapshot, at least one query list), `clone` (its optional body:
 * the clone's id, lifetime and priority; the queries are the source's) or `update` (PATCH: lifetime and priority).
 */
export function parseSnapshotBody(body: Record<string, unknown>, kind: SnapshotBodyKind): SnapshotInput {
  const out: SnapshotInput = {};
  for (const key of Object.keys(body)) {
    if (key === '@context' || OUTPUT_ONLY.has(key)) continue;
    if (UNSUPPORTED.has(key)) throw new LdError('OperationNotSupported', `${key}: SnapshotNotifications are not sent by this broker`);
    if (!MEMBERS.has(key)) throw badRequest(`unknown Snapshot member '${key.slice(0, 100)}'`);
  }
  if (body.type !== undefined || kind === 'create') {
    if (body.type !== 'Snapshot') throw badRequest(`type: a Snapshot has type 'Snapshot', not '${String(body.type).slice(0, 100)}'`);
  }
  if (body.id !== undefined) {
    // Table 5.2.41-1: the id cannot be modified by an update.
    if (kind === 'update') throw badRequest('id: a Snapshot keeps the id it was created with');
    if (!isUri(body.id)) throw badRequest(`id: '${String(body.id).slice(0, 200)}' is not a URI`);
    out.id = checkIdSize(body.id, 'id');
  }
  if (kind !== 'create' && (body.snapshotQueries !== undefined || body.snapshotTemporalQueries !== undefined))
    throw badRequest(
      `snapshotQueries and snapshotTemporalQueries are given at creation only, not to ${kind === 'clone' ? 'a clone' : 'an update'}`,
    );
  if (body.snapshotQueries !== undefined) out.snapshotQueries = parseQueries(body.snapshotQueries, 'snapshotQueries', false);
  if (body.snapshotTemporalQueries !== undefined)
    out.snapshotTemporalQueries = parseQueries(body.snapshotTemporalQueries, 'snapshotTemporalQueries', true);
  if (kind === 'create' && out.snapshotQueries === undefined && out.snapshotTemporalQueries === undefined)
    throw badRequest('a Snapshot needs snapshotQueries or snapshotTemporalQueries');
  const total = (out.snapshotQueries?.length ?? 0) + (out.snapshotTemporalQueries?.length ?? 0);
  if (total > MAX_SNAPSHOT_QUERIES)
    throw new LdError('TooManyResults', `${total} queries, above the maximum ${MAX_SNAPSHOT_QUERIES} of one Snapshot`);
  if (body.snapshotLifetime !== undefined) out.snapshotLifetime = lifetimeOf(body.snapshotLifetime, kind);
  if (body.snapshotPriority !== undefined) out.snapshotPriority = priorityOf(body.snapshotPriority, kind);
  return out;
}

function lifetimeOf(v: unknown, kind: SnapshotBodyKind): string | null {
  if (v === null && kind === 'update') return null;
  if (typeof v !== 'string' || parseDuration(v) === undefined)
    throw badRequest(`snapshotLifetime: '${String(v).slice(0, 60)}' is not an ISO 8601 duration`);
  return v;
}

function priorityOf(v: unknown, kind: SnapshotBodyKind): number | null {
  if (v === null && kind === 'update') return null;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 1 || v > 10)
    throw badRequest(`snapshotPriority: '${String(v).slice(0, 30)}' is not an integer from 1 to 10`);
  return v;
}

function parseQueries(value: unknown, member: string, temporal: boolean): Record<string, unknown>[] {
  if (!Array.isArray(value) || value.length === 0) throw badRequest(`${member}: must be a non-empty array of Query objects`);
  return value.map((q, i) => {
    const at = `${member}[${i}]`;
    if (!isPlainObject(q)) throw badRequest(`${at}: must be a Query object`);
    if (q.type !== 'Query') throw badRequest(`${at}: a Query has type 'Query'`);
    // §5.2.41: the temporal queries carry a temporalQ, the others do not.
    if (temporal !== (q.temporalQ !== undefined)) throw badRequest(`${at}: ${temporal ? 'needs' : 'takes no'} temporalQ`);
    // A Snapshot copies what its queries select; a query naming nothing would copy the whole tenant, which is asked
    // for with an explicit selector (an idPattern of '.*', a type).
    if (q.entities === undefined && q.q === undefined && q.geoQ === undefined && q.scopeQ === undefined)
      throw badRequest(`${at}: a query needs entities, q, geoQ or scopeQ`);
    return q;
  });
}

/** §5.2.41 expiresAt: when a Snapshot of this lifetime, (re)set at `fromMs`, expires; none without a lifetime. */
export function expiresAtOf(lifetime: string | undefined, fromMs: number): string | undefined {
  if (lifetime === undefined) return undefined;
  return new Date(addDuration(fromMs, parseDuration(lifetime)!)).toISOString();
}

/** Whether the Snapshot has expired at `nowMs` (it is then gone, §5.16.1.4). */
export const isExpired = (doc: SnapshotDoc, nowMs: number): boolean => doc.expiresAt !== undefined && Date.parse(doc.expiresAt) <= nowMs;

/**
 * §5.16.1.4: the status the queries' results sum up to: success when every query found something, partial when some
 * did, empty when none failed and none found anything, failure when every query failed.
 */
export function statusOf(results: readonly ExecutionResult[]): SnapshotStatus {
  let success = 0;
  let failure = 0;
  for (const r of results) {
    if (r.resultStatus === 'success') success++;
    else if (r.resultStatus === 'failure') failure++;
  }
  if (success === results.length && success > 0) return 'success';
  if (success > 0) return 'partial';
  return failure > 0 && failure === results.length ? 'failure' : 'empty';
}

/** The Snapshot as the API answers it (§5.2.41): its members, nothing of where its entities are kept. */
export function renderSnapshot(doc: SnapshotDoc): Record<string, unknown> {
  const out: Record<string, unknown> = { id: doc.id, type: 'Snapshot', snapshotStatus: doc.snapshotStatus };
  if (doc.snapshotQueries !== undefined) out.snapshotQueries = doc.snapshotQueries;
  if (doc.snapshotTemporalQueries !== undefined) out.snapshotTemporalQueries = doc.snapshotTemporalQueries;
  if (doc.snapshotQueriesDetails !== undefined) out.snapshotQueriesDetails = doc.snapshotQueriesDetails;
  if (doc.snapshotTemporalQueriesDetails !== undefined) out.snapshotTemporalQueriesDetails = doc.snapshotTemporalQueriesDetails;
  if (doc.snapshotLifetime !== undefined) out.snapshotLifetime = doc.snapshotLifetime;
  out.snapshotPriority = doc.snapshotPriority;
  out.createdAt = doc.createdAt;
  out.modifiedAt = doc.modifiedAt;
  if (doc.expiresAt !== undefined) out.expiresAt = doc.expiresAt;
  return out;
}

/**
 * The Snapshot as the `q` of a purge reads it (§5.16.7: a query on the members of the Snapshot data type): each
 * rendered member as a Property of that name, so the q evaluator of entities evaluates it.
 */
export function snapshotAsQTarget(doc: SnapshotDoc): Record<string, unknown> {
  const rendered = renderSnapshot(doc);
  const out: Record<string, unknown> = { id: doc.id, type: ['Snapshot'], createdAt: doc.createdAt, modifiedAt: doc.modifiedAt };
  for (const [name, value] of Object.entries(rendered)) {
    if (name === 'id' || name === 'type') continue;
    out[name] = [{ type: 'Property', value }];
  }
  return out;
}

/** The member names a purge's q may name (§5.16.7.4: restricted to the Snapshot data type's). */
export const SNAPSHOT_Q_MEMBERS: ReadonlySet<string> = new Set([
  'snapshotQueries',
  'snapshotTemporalQueries',
  'snapshotLifetime',
  'snapshotPriority',
  'snapshotStatus',
  'snapshotQueriesDetails',
  'snapshotTemporalQueriesDetails',
  'createdAt',
  'modifiedAt',
  'expiresAt',
]);
