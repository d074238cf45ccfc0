// @context management (CIM 009 v1.8 §5.13, §6.30, §6.31): add a Hosted @context, list the kept ones (Hosted,
// Cached, ImplicitlyCreated), serve one, delete one or reload a Cached one. Kept @contexts live in the store, in the
// collection `jsonldContexts` of the tenant they belong to: a Hosted one to the tenant of its POST, a Cached or
// ImplicitlyCreated one to the tenant whose request fetched or used it (each tenant has its own record).
import { randomUUID } from 'node:crypto';
import { LdError, badRequest, notFound } from '../ngsild/problem.js';
import {
  ContextResolver, HOSTED_PATH, cachedLocalId, hostedLocalId, type ContextKind, type ContextToKeep, type HostedContexts, type KeptContext,
} from '../ngsild/context/context-resolver.js';
import { isCoreContextUrl } from '../ngsild/context/core-contexts.js';
import { TENANT_SEPARATOR, tenantLocalId, type ResolvedContext } from '../ngsild/context/resolved.js';
import type { BrokerConfig } from '../options.js';
import type { DocCollection, Store } from '../store/contract.js';
import type { WorkerContext } from '../pipeline/worker-context.js';
import type { LdRequest } from '../pipeline/ld-request.js';
import type { OpHandler } from '../pipeline/handler.js';
import { boolParam } from './types.js';

const KINDS: readonly ContextKind[] = ['Hosted', 'Cached', 'ImplicitlyCreated'];
const CORE_TIMESTAMP = new Date().toISOString();

/** Scheme, host and port of the URLs of the @contexts the broker serves, from its configured address. */
export function brokerUrlOf(config: BrokerConfig): string {
  const host = config.host === '0.0.0.0' || config.host === '::' ? 'localhost' : config.host;
  return `http://${host.includes(':') ? `[${host}]` : host}:${config.port}`;
}

// A Host header (RFC 9110 §7.2): a name or IPv4 address, or a bracketed IPv6 address, and an optional port.
const HOST_HEADER = /^(?:[A-Za-z0-9](?:[A-Za-z0-9.-]{0,252})|\[[0-9A-Fa-f:.]{2,45}\])(?::\d{1,5})?$/;

/**
 * The broker's address as the client reached it: the request's Host, so that the URLs listed work behind a proxy
 * or a port mapping; the configured address when the request has no usable Host.
 */
export function requestBrokerUrl(req: LdRequest, config: BrokerConfig): string {
  const host = req.header('host');
  return host !== undefined && HOST_HEADER.test(host) ? `http://${host}` : brokerUrlOf(config);
}

/**
 * A URL of a @context the broker serves (an ImplicitlyCreated one in a Link header), as the client can reach it: the
 * resolver names it with the configured address, which behind a proxy, a port mapping or `--host 0.0.0.0` is not
 * the one the client used. Any other URL is answered as it is.
 */
export function servedUrl(req: LdRequest, config: BrokerConfig, url: string): string {
  if (!url.includes(HOSTED_PATH)) return url;
  const configured = brokerUrlOf(config);
  return url.startsWith(configured + HOSTED_PATH) ? requestBrokerUrl(req, config) + url.slice(configured.length) : url;
}

/** A tenant name as the tenant step accepts it (CIM 009 §4.14; lower-case, see tenant-step.ts). */
const TENANT_NAME = /^[a-z0-9_-]{1,50}$/;

/**
 * The tenant whose collection keeps the @context of this local id ('' for the default tenant and shared ones). A
 * prefix that is no tenant name (the ids come from clients) is no tenant either: such an id is looked up, and not
 * found, in the default tenant.
 */
export function tenantOfLocalId(localId: string): string {
  const at = localId.indexOf(TENANT_SEPARATOR);
  if (at <= 0) return '';
  const tenant = localId.slice(0, at);
  return TENANT_NAME.test(tenant) ? tenant : '';
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

const keptContexts = (ctx: WorkerContext, tenant: string): DocCollection => ctx.store.collection(tenant, 'jsonldContexts');

function resolver(ctx: WorkerContext): ContextResolver | undefined {
  return ctx.contexts instanceof ContextResolver ? ctx.contexts : undefined;
}

/**
 * CIM 009 v1.8 §5.13.1: keeps, in the tenant of a request that succeeded, the @contexts it used: its inline context
 * as ImplicitlyCreated (unless `implicit` is false), the URLs fetched for it as Cached. Once per thread, tenant and
 * context; a tenant that does not exist (a create that created nothing) keeps nothing. Never throws.
 */
export function keepUsedContexts(req: LdRequest, ctx: WorkerContext, used: ResolvedContext, implicit = true): Promise<void> | undefined {
  const contexts = resolver(ctx);
  if (contexts === undefined) return undefined;
  const toKeep = contexts.keptFor(req.tenant, used, implicit);
  // The hot path: the core context, or one this thread has kept in this tenant already; nothing to wait for.
  if (toKeep.length === 0) return undefined;
  return keep(req, ctx, contexts, toKeep);
}

async function keep(req: LdRequest, ctx: WorkerContext, contexts: ContextResolver, toKeep: readonly ContextToKeep[]): Promise<void> {
  try {
    if (req.tenant !== '' && !(await ctx.store.hasTenant(req.tenant))) return;
    const collection = keptContexts(ctx, req.tenant);
    for (const { localId, doc } of toKeep) await collection.insert(localId, doc as unknown as Record<string, unknown>);
    contexts.kept(toKeep.map((k) => k.localId));
  } catch (e) {
    // The request itself succeeded; a later one keeps them.
    ctx.log.warn({ err: e, tenant: req.tenant }, '@contexts used by a request not kept');
  }
}

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
  const url = resolver(ctx)?.coreUrl ?? 'https://uri.etsi.org/ngsi-ld/v1/ngsi-ld-core-context-v1.8.jsonld';
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
  const localId = hostedLocalId(contextId)
    ?? (/^[A-Za-z][A-Za-z0-9+.-]*:\/\//.test(contextId) ? tenantLocalId(req.tenant, cachedLocalId(contextId)) : contextId);
  const tenant = tenantOfLocalId(localId);
  const kept = (await keptContexts(ctx, tenant).get(localId)) as KeptContext | undefined;
  if (kept === undefined || (kept.kind === 'Cached' && tenant !== req.tenant)) return undefined;
  return entryOf(requestBrokerUrl(req, ctx.config), localId, kept);
}

function details(e: Entry): Record<string, unknown> {
  return { URL: e.url, localId: e.localId, kind: e.kept.kind, timestamp: e.kept.timestamp };
}

export const createContext: OpHandler = async (req, ctx) => {
  const body = req.jsonObject();
  // CIM 009 §5.13.2: what lies outside the @context member is discarded.
  const context = body['@context'];
  if (context === undefined) throw badRequest('the body must be a JSON object with an @context member');
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
  if (entry.core) throw badRequest('the core @context cannot be deleted or reloaded');
  if (reload && entry.kept.kind !== 'Cached') throw badRequest(`reload: @context '${contextId.slice(0, 300)}' is ${entry.kept.kind}, not Cached`);
  const contexts = resolver(ctx);
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
