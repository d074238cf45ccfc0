// Step 7: the tenant (CIM 009 v1.8 §4.14), resolved only after auth and @context so a refused request creates nothing;
// with NGSILD-Snapshot (v1.9.1 §6.3.22) on an entity or temporal operation, the Snapshot's entity space within it.
import { LdError, badRequest, notFound } from '../ngsild/problem.js';
import { SNAPSHOTS, snapshotSpace } from '../ngsild/snapshot/snapshot-store.js';
import { isExpired, type SnapshotDoc } from '../ngsild/snapshot/snapshot-body.js';
import { LdOp } from '../ngsild/operations.js';
import type { LdRequest } from './ld-request.js';
import type { WorkerContext } from './worker-context.js';

/** A creating operation's tenant is registered by the store with its write (createTenant), never here. */
export async function resolveTenant(req: LdRequest, ctx: WorkerContext, creating: boolean): Promise<void> {
  const tenant = req.namedTenant();
  req.tenant = tenant;
  req.apiTenant = tenant;
  const snapshot = req.snapshotId();
  if (snapshot !== undefined && req.operation.inSnapshot) {
    req.tenant = await snapshotEntitySpace(ctx, tenant, snapshot);
    return;
  }
  // §6.3.22: the Snapshot API's own resources are never served on a Snapshot; the header names none of them.
  if (snapshot !== undefined && !isSnapshotOperation(req.op))
    throw badRequest(`NGSILD-Snapshot: ${req.operation.name} is not served on a Snapshot (README "Snapshots")`);
  if (tenant === '' || creating) return;
  if (!(await ctx.store.hasTenant(tenant))) throw new LdError('NonexistentTenant', `tenant '${tenant}' does not exist`);
}

const SNAPSHOT_OPERATIONS: ReadonlySet<LdOp> = new Set([
  LdOp.CreateSnapshot,
  LdOp.CloneSnapshot,
  LdOp.RetrieveSnapshot,
  LdOp.UpdateSnapshot,
  LdOp.DeleteSnapshot,
  LdOp.PurgeSnapshots,
]);
const isSnapshotOperation = (op: LdOp): boolean => SNAPSHOT_OPERATIONS.has(op);

/** The entity space of the Snapshot the header names; 404 ResourceNotFound when the tenant has no such Snapshot. */
async function snapshotEntitySpace(ctx: WorkerContext, tenant: string, snapshotId: string): Promise<string> {
  if (tenant !== '' && !(await ctx.store.hasTenant(tenant))) throw new LdError('NonexistentTenant', `tenant '${tenant}' does not exist`);
  const doc = (await ctx.store.collection(tenant, SNAPSHOTS).get(snapshotId)) as SnapshotDoc | undefined;
  // §5.16.1.4: an expired Snapshot is gone (its removal is DeleteSnapshot's or a purge's).
  if (doc === undefined || typeof doc.storageKey !== 'string' || isExpired(doc, Date.now()))
    throw notFound(`snapshot '${snapshotId}' does not exist`);
  return snapshotSpace(doc.storageKey);
}
