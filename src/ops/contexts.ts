// @context management (CIM 009 v1.8 §5.13, §6.30, §6.31): add a Hosted @context, list the kept ones (Hosted,
// Cached, ImplicitlyCreated), serve one, delete one or reload a Cached one. Kept @contexts live in the store, in the
// collection `jsonldContexts` of the tenant they belong to: a Hosted one to the tenant of its POST, a Cached or
// ImplicitlyCreated one to the tenant whose request fetched or used it (each tenant has its own record).
import { randomUUID } from 'node:crypto';
import { LdError, badRequest, invalidRequest, notFound } from '../ngsild/problem.js';
import { HOSTED_PATH, cachedLocalId, hostedLocalId, type ContextKind, type KeptContext } from '../ngsild/context/context-resolver.js';
import { isCoreContextUrl } from '../ngsild/context/core-contexts.js';
import { tenantLocalId, type ResolvedContext } from '../ngsild/context/resolved.js';
import type { WorkerContext } from '../pipeline/worker-context.js';
import { contextResolverOf, keepUsedContexts, keptContexts, tenantOfLocalId } from '../pipeline/contexts/kept-contexts.js';
import { requestBrokerUrl } from '../pipeline/contexts/served-url.js';
import type { LdRequest } from '../pipeline/ld-request.js';
import type { OpHandler } from '../pipeline/handler.js';
import { boolParam } from './types.js';

const KINDS: readonly ContextKind[] = ['Hosted', 'Cached', 'ImplicitlyCreated'];
const CORE_TIMESTAMP = new Date().toISOString();

interface Entry {
  localId: string;
  url: string;
  kept: KeptContext;
  core: boolean;
}

function entryOf(baseUrl: string, localId: string, kept: KeptContext): Entry {
  const url = kept.kind === 'Cached' && kept.url !== undefined ? kept.url : baseUrl + HOSTED_PATH + encodeURIComponent(localId);
  return { localId, url, kept, core: false };
}

/** The broker's own core @context, listed as a Cached copy of the public document it embeds. */
function coreEntry(ctx: WorkerContext): Entry {
  const url = contextResolverOf(ctx)?.coreUrl ?? 'https://uri.etsi.org/ngsi-ld/v1/ngsi-ld-core-context-v1.8.jsonld';
  return { localId: cachedLocalId(url), url, kept: { kind: 'Cached', url, context: url, timestamp: CORE_TIMESTAMP }, core: true };
}

/**
 * The kept @context a path parameter names (its local id, or its URL percent-encoded in the path) as the request's
 * tenant sees it: a Cached one is its tenant's only (its URL names the tenant's own record); a Hosted or
 * ImplicitlyCreated one is found from any tenant, since its URL, naming its tenant, serves it to JSON-LD processors.
 */
async function findEntry(req: LdRequest, ctx: WorkerContext, contextId: string): Promise<Entry | undefined> {
  const core = coreEntry(ctx);
  if (contextId === core.localId || isCoreContextUrl(contextId)) return core;
  const localId =
    hostedLocalId(contextId) ??
    (/^[A-Za-z][A-Za-z0-9+.-]*:\/\//.test(contextId) ? tenantLocalId(req.tenant, cachedLocalId(contextId)) : contextId);
  const tenant = tenantOfLocalId(localId);
  const kept = (await keptContexts(ctx, tenant).get(localId)) as KeptContext | undefined;
  if (kept === undefined || (kept.kind === 'Cached' && tenant !== req.tenant)) return undefined;
  return entryOf(requestBrokerUrl(req, ctx.config), localId, kept);
}

/** CIM 009 v1.8.1 §5.13.3: the details of a kept @context; `createdAt` is when it was added, fetched or first used. */
function details(e: Entry): Record<string, unknown> {
  return { URL: e.url, localId: e.localId, kind: e.kept.kind, createdAt: e.kept.timestamp };
}

export const createContext: OpHandler = async (req, ctx) => {
  const body = req.jsonObject();
  // CIM 009 §5.13.2: what lies outside the @context member is discarded.
  const context = body['@context'];
  // CIM 009 §5.13.2: the body is a JSON object with an @context member; without one it is not the structure the
  // operation takes (InvalidRequest), while an @context that is no context is bad content (BadRequestData, below).
  if (context === undefined) throw invalidRequest('the body must be a JSON object with an @context member');
  if (!(typeof context === 'string' || Array.isArray(context) || (typeof context === 'object' && context !== null)))
    throw badRequest('@context must be a URL, a context object, or an array of those');
  let resolved: ResolvedContext;
  try {
    resolved = await ctx.contexts.resolve(context, req.wait);
  } catch (e) {
    if (e instanceof LdError && e.kind === 'InvalidRequest') throw badRequest(e.detail);
    throw e;
  }
  // Kept in the tenant of the request; its local id names the tenant, so that the URL finds it from anywhere.
  const localId = tenantLocalId(req.tenant, randomUUID());
  const kept: KeptContext = { kind: 'Hosted', context, timestamp: new Date().toISOString() };
  await keptContexts(ctx, req.tenant).insert(localId, kept as unknown as Record<string, unknown>);
  // The URLs it names were fetched for this tenant: Cached there. It is Hosted, not also ImplicitlyCreated.
  await keepUsedContexts(req, ctx, resolved, false);
  return { status: 201, headers: ['Location', HOSTED_PATH + localId] };
};

export const listContexts: OpHandler = async (req, ctx) => {
  const withDetails = boolParam(req, 'details');
  const kindText = req.query.get('kind');
  let kind: ContextKind | undefined;
  if (kindText !== undefined) {
    kind = KINDS.find((k) => k.toLowerCase() === kindText.toLowerCase());
    if (kind === undefined) throw badRequest(`kind: '${kindText.slice(0, 80)}' is not one of ${KINDS.join(', ')}`);
  }
  const baseUrl = requestBrokerUrl(req, ctx.config);
  // The core, shared, then the request's tenant's own @contexts only.
  const entries: Entry[] = [coreEntry(ctx)];
  for (const { id, doc } of await keptContexts(ctx, req.tenant).list()) entries.push(entryOf(baseUrl, id, doc as unknown as KeptContext));
  const chosen = kind === undefined ? entries : entries.filter((e) => e.kept.kind === kind);
  return { status: 200, body: withDetails ? chosen.map(details) : chosen.map((e) => e.url) };
};

export const retrieveContext: OpHandler = async (req, ctx) => {
  const withDetails = boolParam(req, 'details');
  const contextId = req.params[0]!;
  // Served whatever the request's tenant: a JSON-LD processor dereferencing the URL sends no NGSILD-Tenant.
  const entry = await findEntry(req, ctx, contextId);
  if (entry === undefined) throw notFound(`the broker keeps no @context '${contextId.slice(0, 300)}'`);
  if (withDetails) return { status: 200, body: details(entry) };
  // CIM 009 §5.13.4: only Hosted and ImplicitlyCreated @contexts are served; a Cached one is its origin's to serve.
  if (entry.kept.kind === 'Cached')
    throw new LdError('OperationNotSupported', `@context '${entry.url}' is Cached: only its details (details=true) are served`, 422);
  return { status: 200, body: { '@context': entry.kept.context } };
};

export const deleteContext: OpHandler = async (req, ctx) => {
  const reload = boolParam(req, 'reload');
  const contextId = req.params[0]!;
  let entry = await findEntry(req, ctx, contextId);
  // A kept @context is managed from its own tenant only; in any other it does not exist.
  if (entry !== undefined && !entry.core && tenantOfLocalId(entry.localId) !== req.tenant) entry = undefined;
  if (entry === undefined) {
    // CIM 009 §5.13.5: a reload applies to Cached @contexts only; an unknown one is not Cached.
    if (reload) throw badRequest(`reload: the broker caches no @context '${contextId.slice(0, 300)}'`);
    throw notFound(`the broker keeps no @context '${contextId.slice(0, 300)}'`);
  }
  // CIM 009 §5.13.5: the core @context cannot be deleted; it may be reloaded, which is a no-op here since the broker
  // embeds it and never downloads it.
  if (entry.core) {
    if (reload) return { status: 204 };
    throw badRequest('the core @context cannot be deleted (reload=true reloads it)');
  }
  if (reload && entry.kept.kind !== 'Cached')
    throw badRequest(`reload: @context '${contextId.slice(0, 300)}' is ${entry.kept.kind}, not Cached`);
  const contexts = contextResolverOf(ctx);
  if (reload) {
    if (contexts === undefined) throw new LdError('OperationNotSupported', 'this broker cannot reload @contexts');
    const doc = await contexts.reload(entry.url, req.wait);
    const kept: KeptContext = { ...entry.kept, context: (doc as Record<string, unknown>)['@context'], timestamp: new Date().toISOString() };
    await keptContexts(ctx, tenantOfLocalId(entry.localId)).put(entry.localId, kept as unknown as Record<string, unknown>);
    return { status: 204 };
  }
  await keptContexts(ctx, tenantOfLocalId(entry.localId)).delete(entry.localId);
  // Every thread drops its copy; another tenant using it keeps its own record and fetches it again when it needs it.
  contexts?.forget(entry.url);
  return { status: 204 };
};
