// Step 7: the tenant (CIM 009 v1.8 §4.14), resolved only after auth and @context so a refused request creates nothing;
// with a Snapshot selected (`/snapshots/{snapshotId}/...`, v1.9.1 §4.3.7), the Snapshot's entity space within it.
import { LdError, badRequest, notFound } from '../ngsild/problem.js';
import { isUri } from '../ngsild/entity/syntax.js';
import { checkIdSize } from '../ngsild/entity/limits.js';
import { SNAPSHOTS, snapshotSpace } from '../ngsild/snapshot/snapshot-store.js';
import type { LdRequest } from './ld-request.js';
import type { WorkerContext } from './worker-context.js';

/** A creating operation's tenant is registered by the store with its write (createTenant), never here. */
export async function resolveTenant(req: LdRequest, ctx: WorkerContext, creating: boolean): Promise<void> {
  const tenant = req.namedTenant();
  req.tenant = tenant;
  req.apiTenant = tenant;
  const snapshot = req.task.snapshot;
  if (snapshot !== undefined) {
    req.tenant = await snapshotEntitySpace(ctx, tenant, snapshot);
    return;
  }
  if (tenant === '' || creating) return;
  if (!(await ctx.store.hasTenant(tenant))) throw new LdError('NonexistentTenant', `tenant '${tenant}' does not exist`);
}

/** The entity space of the Snapshot the path names; 404 ResourceNotFound when the tenant has no such Snapshot. */
async function snapshotEntitySpace(ctx: WorkerContext, tenant: string, snapshotId: string): Promise<string> {
  if (!isUri(snapshotId)) throw badRequest(`snapshot id '${String(snapshotId).slice(0, 200)}' is not a URI`);
  checkIdSize(snapshotId, 'snapshot id');
  if (tenant !== '' && !(await ctx.store.hasTenant(tenant))) throw new LdError('NonexistentTenant', `tenant '${tenant}' does not exist`);
  const doc = await ctx.store.collection(tenant, SNAPSHOTS).get(snapshotId);
  const key = doc?.storageKey;
  if (typeof key !== 'string') throw notFound(`snapshot '${snapshotId}' does not exist`);
  return snapshotSpace(tenant, key);
}
