// @context management (CIM 009 v1.8 §5.13, §6.30, §6.31): add a Hosted @context, list the kept ones (Hosted,
// Cached, ImplicitlyCreated), serve one, delete one or reload a Cached one. Kept @contexts live in the store
// (collection `jsonldContexts` of the default tenant), which every thread's resolver consults.
import { randomUUID } from 'node:crypto';
import { LdError, badRequest, notFound } from '../ngsild/problem.js';
import {
  ContextResolver, HOSTED_PATH, cachedLocalId, hostedLocalId, type ContextKind, type KeptContext,
} from '../ngsild/context/context-resolver.js';
import { isCoreContextUrl } from '../ngsild/context/core-contexts.js';
import type { BrokerConfig } from '../options.js';
import type { DocCollection } from '../store/contract.js';
import type { WorkerContext } from '../pipeline/worker-context.js';
import type { OpHandler } from './op.js';
import { boolParam } from './types.js';

const KINDS: readonly ContextKind[] = ['Hosted', 'Cached', 'ImplicitlyCreated'];
const CORE_TIMESTAMP = new Date().toISOString();

/** Scheme, host and port of the URLs of the @contexts the broker serves. */
export function brokerUrlOf(config: BrokerConfig): string {
  const host = config.host === '0.0.0.0' || config.host === '::' ? 'localhost' : config.host;
  return `http://${host.includes(':') ? `[${host}]` : host}:${config.port}`;
}

const keptContexts = (ctx: WorkerContext): DocCollection => ctx.store.collection('', 'jsonldContexts');

function resolver(ctx: WorkerContext): ContextResolver | undefined {
  return ctx.contexts instanceof ContextResolver ? ctx.contexts : undefined;
}

interface Entry {
  localId: string;
  url: string;
  kept: KeptContext;
  core: boolean;
}

function entryOf(ctx: WorkerContext, localId: string, kept: KeptContext): Entry {
  const url = kept.kind === 'Cached' && kept.url !== undefined ? kept.url : brokerUrlOf(ctx.config) + HOSTED_PATH + encodeURIComponent(localId);
  return { localId, url, kept, core: false };
}

/** The broker's own core @context, listed as a Cached copy of the public document it embeds. */
function coreEntry(ctx: WorkerContext): Entry {
  const url = resolver(ctx)?.coreUrl ?? 'https://uri.etsi.org/ngsi-ld/v1/ngsi-ld-core-context-v1.8.jsonld';
  return { localId: cachedLocalId(url), url, kept: { kind: 'Cached', url, context: url, timestamp: CORE_TIMESTAMP }, core: true };
}

/** The kept @context a path parameter names: its local id, or its URL (percent-encoded in the path). */
async function findEntry(ctx: WorkerContext, contextId: string): Promise<Entry | undefined> {
  const core = coreEntry(ctx);
  if (contextId === core.localId || isCoreContextUrl(contextId)) return core;
  const localId = hostedLocalId(contextId) ?? (/^[A-Za-z][A-Za-z0-9+.-]*:\/\//.test(contextId) ? cachedLocalId(contextId) : contextId);
  const kept = (await keptContexts(ctx).get(localId)) as KeptContext | undefined;
  return kept === undefined ? undefined : entryOf(ctx, localId, kept);
}

function details(e: Entry): Record<string, unknown> {
  return { URL: e.url, localId: e.localId, kind: e.kept.kind, timestamp: e.kept.timestamp };
}

export const createContext: OpHandler = async (req, ctx) => {
  req.query.only(new Set());
  const body = req.jsonObject();
  // CIM 009 §5.13.2: what lies outside the @context member is discarded.
  const context = body['@context'];
  if (context === undefined) throw badRequest('the body must be a JSON object with an @context member');
  if (!(typeof context === 'string' || Array.isArray(context) || (typeof context === 'object' && context !== null)))
    throw badRequest('@context must be a URL, a context object, or an array of those');
  try {
    await ctx.contexts.resolve(context);
  } catch (e) {
    if (e instanceof LdError && e.kind === 'InvalidRequest') throw badRequest(e.detail);
    throw e;
  }
  const localId = randomUUID();
  const kept: KeptContext = { kind: 'Hosted', context, timestamp: new Date().toISOString() };
  await keptContexts(ctx).insert(localId, kept as unknown as Record<string, unknown>);
  return { status: 201, headers: ['Location', HOSTED_PATH + localId] };
};

export const listContexts: OpHandler = async (req, ctx) => {
  req.query.only(new Set(['details', 'kind']));
  const withDetails = boolParam(req, 'details');
  const kindText = req.query.get('kind');
  let kind: ContextKind | undefined;
  if (kindText !== undefined) {
    kind = KINDS.find((k) => k.toLowerCase() === kindText.toLowerCase());
    if (kind === undefined) throw badRequest(`kind: '${kindText.slice(0, 80)}' is not one of ${KINDS.join(', ')}`);
  }
  const entries: Entry[] = [coreEntry(ctx)];
  for (const { id, doc } of await keptContexts(ctx).list()) entries.push(entryOf(ctx, id, doc as unknown as KeptContext));
  const chosen = kind === undefined ? entries : entries.filter((e) => e.kept.kind === kind);
  return { status: 200, body: withDetails ? chosen.map(details) : chosen.map((e) => e.url) };
};

export const retrieveContext: OpHandler = async (req, ctx) => {
  req.query.only(new Set(['details']));
  const withDetails = boolParam(req, 'details');
  const contextId = req.params[0]!;
  const entry = await findEntry(ctx, contextId);
  if (entry === undefined) throw notFound(`the broker keeps no @context '${contextId.slice(0, 300)}'`);
  if (withDetails) return { status: 200, body: details(entry) };
  // CIM 009 §5.13.4: only Hosted and ImplicitlyCreated @contexts are served; a Cached one is its origin's to serve.
  if (entry.kept.kind === 'Cached')
    throw new LdError('OperationNotSupported', `@context '${entry.url}' is Cached: only its details (details=true) are served`, 422);
  return { status: 200, body: { '@context': entry.kept.context } };
};

export const deleteContext: OpHandler = async (req, ctx) => {
  req.query.only(new Set(['reload']));
  const reload = boolParam(req, 'reload');
  const contextId = req.params[0]!;
  const entry = await findEntry(ctx, contextId);
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
    const doc = await contexts.reload(entry.url);
    const kept: KeptContext = { ...entry.kept, context: (doc as Record<string, unknown>)['@context'], timestamp: new Date().toISOString() };
    await keptContexts(ctx).put(entry.localId, kept as unknown as Record<string, unknown>);
    return { status: 204 };
  }
  await keptContexts(ctx).delete(entry.localId);
  contexts?.forget(entry.url);
  return { status: 204 };
};
