// The entity hook as operations call it (seed 000 §4.3, §5.2): once per entity read or written; a denial
// becomes a RefusalError (403 for one entity, that entry's error in a batch, left out of a query page).
import type { AuthEntity } from '../auth/contract.js';
import { RefusalError } from '../ngsild/problem.js';
import type { StoredEntity } from '../ngsild/entity/model.js';
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

/**
 * A read of a whole entity as the entity hook allows it (seed 000 §5.1, §2.3 partial): the entity, or the entity
 * without the attributes the hook refuses one by one after a `partial` answer. A denial throws its RefusalError
 * (403 for a retrieve); a query catches it and leaves the entity out.
 */
export async function readableEntity(req: LdRequest, ctx: WorkerContext, entity: StoredEntity): Promise<StoredEntity> {
  if (ctx.auth === undefined) return entity;
  const verdict = await checkEntity(req, ctx, { id: entity.id, types: entity.type, storedTypes: true, read: true });
  if (verdict === 'all') return entity;
  const trimmed: StoredEntity = { ...entity };
  for (const key of Object.keys(entity)) {
    if (!key.includes(':') || key === 'id') continue;
    try {
      await checkEntity(req, ctx, { id: entity.id, types: entity.type, storedTypes: true, read: true, attribute: key });
    } catch (e) {
      if (!(e instanceof RefusalError)) throw e;
      delete trimmed[key];
    }
  }
  return trimmed;
}

/**
 * seed 000 §5.8, a read of a temporal entity after a `partial` answer: `attrs` (expanded names to their instances)
 * without the attributes the hook refuses one by one.
 */
export async function readableAttrs<V>(
  req: LdRequest,
  ctx: WorkerContext,
  id: string,
  types: readonly string[],
  attrs: Record<string, V>,
): Promise<Record<string, V>> {
  const kept: Record<string, V> = {};
  for (const key of Object.keys(attrs)) {
    try {
      await checkEntity(req, ctx, { id, types, storedTypes: true, read: true, attribute: key });
      kept[key] = attrs[key] as V;
    } catch (e) {
      if (!(e instanceof RefusalError)) throw e;
    }
  }
  return kept;
}
