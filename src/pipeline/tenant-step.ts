// Step 7: the tenant (CIM 009 v1.8 §4.14), resolved only after auth and @context so a refused request creates nothing.
import { LdError } from '../ngsild/problem.js';
import type { LdRequest } from './ld-request.js';
import type { WorkerContext } from './worker-context.js';

/** A creating operation's tenant is registered by the store with its write (createTenant), never here. */
export async function resolveTenant(req: LdRequest, ctx: WorkerContext, creating: boolean): Promise<void> {
  const tenant = req.namedTenant();
  req.tenant = tenant;
  if (tenant === '' || creating) return;
  if (!(await ctx.store.hasTenant(tenant))) throw new LdError('NonexistentTenant', `tenant '${tenant}' does not exist`);
}
