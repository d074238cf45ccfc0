// The entity hook as operations call it (seed 000 §4.3, §5.2): once per entity read or written; a denial
// becomes a RefusalError (403 for one entity, that entry's error in a batch, left out of a query page).
import type { AuthEntity } from '../auth/contract.js';
import { RefusalError } from '../ngsild/problem.js';
import type { LdRequest } from '../pipeline/ld-request.js';
import type { WorkerContext } from '../pipeline/worker-context.js';

/** Resolves to 'partial' when only some attributes of a whole-entity read are allowed. */
export async function checkEntity(req: LdRequest, ctx: WorkerContext, entity: AuthEntity): Promise<'all' | 'partial'> {
  if (ctx.auth === undefined) return 'all';
  const verdict = await ctx.auth.entity(req, entity);
  if (verdict === null) return 'all';
  if ('status' in verdict) {
    throw new RefusalError({ type: 'about:blank', title: verdict.title, status: verdict.status, detail: verdict.detail });
  }
  return 'partial';
}
