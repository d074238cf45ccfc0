// The @contexts the broker keeps (CIM 009 v1.8 §5.13.1), in the store's collection `jsonldContexts` of the tenant
// they belong to: where every thread's resolver finds them by local id, and how a request keeps those it used.
import { ContextResolver, type ContextToKeep, type HostedContexts } from '../../ngsild/context/context-resolver.js';
import { TENANT_SEPARATOR, type ResolvedContext } from '../../ngsild/context/resolved.js';
import { isTenantName } from '../../ngsild/tenant.js';
import type { DocCollection, Store } from '../../store/contract.js';
import type { LdRequest } from '../ld-request.js';
import type { WorkerContext } from '../worker-context.js';

/** The collection of the @contexts a tenant keeps. */
export const keptContexts = (ctx: WorkerContext, tenant: string): DocCollection => ctx.store.collection(tenant, 'jsonldContexts');

/** The thread's resolver when it keeps @contexts (the broker's own, not a stand-in). */
export function contextResolverOf(ctx: WorkerContext): ContextResolver | undefined {
  return ctx.contexts instanceof ContextResolver ? ctx.contexts : undefined;
}

/**
 * The tenant whose collection keeps the @context of this local id ('' for the default tenant and shared ones). A
 * prefix that is no tenant name (the ids come from clients) is no tenant either: such an id is looked up, and not
 * found, in the default tenant.
 */
export function tenantOfLocalId(localId: string): string {
  const at = localId.indexOf(TENANT_SEPARATOR);
  if (at <= 0) return '';
  const tenant = localId.slice(0, at);
  return isTenantName(tenant) ? tenant : '';
}

/**
 * Every kept @context, found by its local id in the collection of its tenant: what the resolver of each thread
 * reads for Link headers naming a kept @context, and where it records Cached and ImplicitlyCreated ones.
 */
export function keptContextStore(store: Store): HostedContexts {
  return {
    get: (localId) => store.collection(tenantOfLocalId(localId), 'jsonldContexts').get(localId),
    insert: (localId, doc) => store.collection(tenantOfLocalId(localId), 'jsonldContexts').insert(localId, doc),
  };
}

/**
 * CIM 009 v1.8 §5.13.1: keeps, in the tenant of a request that succeeded, the @contexts it used: its inline context
 * as ImplicitlyCreated (unless `implicit` is false), the URLs fetched for it as Cached. Once per thread, tenant and
 * context; a tenant that does not exist (a create that created nothing) keeps nothing. Never throws.
 */
export function keepUsedContexts(req: LdRequest, ctx: WorkerContext, used: ResolvedContext, implicit = true): Promise<void> | undefined {
  const contexts = contextResolverOf(ctx);
  if (contexts === undefined) return undefined;
  const toKeep = contexts.keptFor(req.apiTenant, used, implicit);
  // The hot path: the core context, or one this thread has kept in this tenant already; nothing to wait for.
  if (toKeep.length === 0) return undefined;
  return keep(req, ctx, contexts, toKeep);
}

async function keep(req: LdRequest, ctx: WorkerContext, contexts: ContextResolver, toKeep: readonly ContextToKeep[]): Promise<void> {
  try {
    if (req.apiTenant !== '' && !(await ctx.store.hasTenant(req.apiTenant))) return;
    const collection = keptContexts(ctx, req.apiTenant);
    for (const { localId, doc } of toKeep) await collection.insert(localId, doc as unknown as Record<string, unknown>);
    contexts.kept(toKeep.map((k) => k.localId));
  } catch (e) {
    // The request itself succeeded; a later one keeps them.
    ctx.log.warn({ err: e, tenant: req.apiTenant }, '@contexts used by a request not kept');
  }
}
