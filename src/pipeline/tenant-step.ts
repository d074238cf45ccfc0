// Step 7: the tenant (CIM 009 v1.8 §4.14), resolved only after auth and @context so a refused request creates nothing.
import { LdError, badRequest } from '../ngsild/problem.js';
import type { LdRequest } from './ld-request.js';
import type { WorkerContext } from './worker-context.js';

const TENANT_NAME = /^[a-z0-9_-]{1,50}$/;

/** Tenant names are kept lower-case (as Orion-LD's and the migration stream's, seed 001 behaviour 6). */
export function tenantName(header: string | undefined): string {
  if (header === undefined || header === '') return '';
  const name = header.toLowerCase();
  if (!TENANT_NAME.test(name))
    throw badRequest(`NGSILD-Tenant '${header.slice(0, 60)}' is not a valid tenant name: 1 to 50 letters, digits, '_' or '-'`);
  return name;
}

export async function resolveTenant(req: LdRequest, ctx: WorkerContext, creating: boolean): Promise<void> {
  const tenant = tenantName(req.task.headers.tenant);
  req.tenant = tenant;
  if (tenant === '' || creating) return;
  if (!(await ctx.store.hasTenant(tenant))) throw new LdError('NonexistentTenant', `tenant '${tenant}' does not exist`);
}
