// Subscriptions (CIM 009 v1.8 §5.8, §6.10, §6.11): create, query, retrieve, update and delete, kept as documents of
// the tenant's `subscriptions` collection; every change is applied to this thread's index and broadcast to the
// others. Counters are the notifier's (collection `subscriptionCounters`) and rendered with each subscription.
import { LdError, badRequest, notFound } from '../ngsild/problem.js';
import { isUri } from '../ngsild/entity/syntax.js';
import { checkIdSize } from '../ngsild/entity/limits.js';
import { pathSegment } from '../ngsild/uri-encode.js';
import { validateSubscription, patchSubscription, type ValidateOptions } from '../ngsild/subscription/validate.js';
import {
  SUBSCRIPTIONS,
  SUBSCRIPTION_COUNTERS,
  SUBSCRIPTION_OWNERS,
  renderSubscription,
  type SubscriptionCounters,
  type SubscriptionDoc,
} from '../ngsild/subscription/model.js';
import { mapSubscriptionNames } from '../ngsild/subscription/names.js';
import { SubscriptionSink } from '../notify/subscription-sink.js';
import { broadcastSubscriptionChange } from '../notify/subscription-sync.js';
import { deleteSharedCounters } from '../notify/shared-counters.js';
import { notificationSchemes } from '../notify/transports.js';
import type { SubscriptionChanged } from '../notify/channel.js';
import { API_PREFIX } from '../ngsild/operations.js';
import type { LdRequest } from '../pipeline/ld-request.js';
import type { WorkerContext } from '../pipeline/worker-context.js';
import type { OpHandler } from '../pipeline/handler.js';
import { DEFAULT_LIMIT, MAX_LIMIT } from './query.js';
import { pageLinks } from './page-links.js';
import { hostBrokerUrl } from '../pipeline/contexts/served-url.js';

/**
 * seed 000 §2.6, §3: the sender of a POST or PATCH becomes the subscription's owner, kept beside it (never in it, so
 * nothing that renders a subscription shows it) as the plugin's identitySave text. A sender the plugin keeps no text
 * for (an anonymous one) leaves the subscription without an owner: its notifications then carry nothing (§5.3 rule 3).
 */
async function keepOwner(req: LdRequest, ctx: WorkerContext, id: string): Promise<void> {
  const auth = ctx.auth;
  if (auth === undefined || !auth.keepsOwners) return;
  const owners = ctx.store.collection(req.tenant, SUBSCRIPTION_OWNERS);
  const text = auth.identitySave(req);
  if (text === null) await owners.delete(id);
  else await owners.put(id, { owner: text, savedAt: new Date().toISOString() });
}

function subscriptionIdParam(req: LdRequest): string {
  const id = req.params[0]!;
  if (!isUri(id)) throw badRequest(`subscription id '${String(id).slice(0, 200)}' is not a URI`);
  return checkIdSize(id, 'subscription id');
}

function sysAttrsOption(req: LdRequest): boolean {
  return req.query.options(['sysAttrs']).has('sysAttrs');
}

async function announce(ctx: WorkerContext, change: SubscriptionChanged): Promise<void> {
  if (ctx.changes instanceof SubscriptionSink) await ctx.changes.sync.announce(change);
  else broadcastSubscriptionChange(change, ctx.config.instance);
}

function validateOptions(req: LdRequest, ctx: WorkerContext, keptEndpoint?: string): ValidateOptions {
  return {
    expand: req.context.expandTerm.bind(req.context),
    schemes: notificationSchemes(ctx.config.bridges),
    now: Date.now(),
    connection: req.task.connection,
    keptEndpoint,
  };
}

/** CIM 009 §5.2.14: the counters as the notifier has them now (counter-reader.ts), else as last written. */
async function countersOf(ctx: WorkerContext, tenant: string, ids: readonly string[]): Promise<Array<SubscriptionCounters | undefined>> {
  if (ctx.counters !== undefined) return ctx.counters.read(tenant, ids);
  const stored = ctx.store.collection(tenant, SUBSCRIPTION_COUNTERS);
  return Promise.all(ids.map(async (id) => (await stored.get(id)) as SubscriptionCounters | undefined));
}

/**
 * CIM 009 §5.8.1.4, §5.8.2.4: the jsonldContext a subscription names is resolved when it is given, so a subscription
 * is not created (or changed) to notify with a @context the broker cannot obtain (503 LdContextNotAvailable) or read
 * (400 BadRequestData). The notifier resolves it again (subscription-sync.ts), from the cache the resolver keeps.
 */
async function checkJsonldContext(req: LdRequest, ctx: WorkerContext, url: string | undefined): Promise<void> {
  if (url === undefined) return;
  try {
    await ctx.contexts.resolve(url, req.wait);
  } catch (e) {
    if (e instanceof LdError && e.kind === 'InvalidRequest') throw badRequest(`jsonldContext: ${e.detail}`);
    throw e;
  }
}

export const createSubscription: OpHandler = async (req, ctx) => {
  const opts = validateOptions(req, ctx);
  const body = mapSubscriptionNames(validateSubscription(req.jsonObject(), opts), opts.expand);
  await checkJsonldContext(req, ctx, body.jsonldContext);
  const now = new Date().toISOString();
  const doc: SubscriptionDoc = { body, context: req.context.contextValue, createdAt: now, modifiedAt: now };
  // Where its notifications' Link names the @contexts the broker serves (without --brokerUrl): the address the
  // client reached, not the configured one (`--host 0.0.0.0`, `--port 0`, a proxy's).
  const brokerUrl = hostBrokerUrl(req);
  if (brokerUrl !== undefined) doc.brokerUrl = brokerUrl;
  // CIM 009 v1.8 §4.14: a creating request creates its tenant; a tenant that holds only subscriptions exists too.
  const inserted = await ctx.store
    .collection(req.tenant, SUBSCRIPTIONS)
    .insert(body.id, doc as unknown as Record<string, unknown>, { createTenant: true });
  if (!inserted) throw new LdError('AlreadyExists', `subscription '${body.id}' already exists`);
  // After the insert, so a create of an existing id never takes its owner; until the record is written, a
  // notification of the subscription finds no owner and carries nothing.
  await keepOwner(req, ctx, body.id);
  await announce(ctx, { tenant: req.tenant, id: body.id, doc });
  return { status: 201, headers: ['Location', `${API_PREFIX}/subscriptions/${pathSegment(body.id)}`] };
};

export const querySubscriptions: OpHandler = async (req, ctx) => {
  const limit = intParam(req, 'limit', DEFAULT_LIMIT);
  const offset = intParam(req, 'offset', 0);
  if (limit > MAX_LIMIT) throw new LdError('TooManyResults', `limit ${limit} is above the maximum ${MAX_LIMIT}`);
  const count = req.query.count();
  const sysAttrs = sysAttrsOption(req);
  const subs = ctx.store.collection(req.tenant, SUBSCRIPTIONS);
  // One subscription past the page tells whether another follows (its rel="next" link).
  const page = await subs.list(offset, limit === 0 ? 0 : limit + 1);
  const more = page.length > limit;
  if (more) page.length = limit;
  const now = Date.now();
  const compact = req.context.compactIri.bind(req.context);
  const counters = await countersOf(
    ctx,
    req.tenant,
    page.map((p) => p.id),
  );
  const body = page.map(({ doc }, i) => renderSubscription(doc as unknown as SubscriptionDoc, counters[i], now, sysAttrs, compact));
  const headers: string[] = [];
  if (count) headers.push('NGSILD-Results-Count', String((await subs.list()).length));
  headers.push(...pageLinks(req, limit, offset, more));
  return { status: 200, body, headers, withContext: true };
};

export const retrieveSubscription: OpHandler = async (req, ctx) => {
  const id = subscriptionIdParam(req);
  const sysAttrs = sysAttrsOption(req);
  const doc = (await ctx.store.collection(req.tenant, SUBSCRIPTIONS).get(id)) as SubscriptionDoc | undefined;
  if (doc === undefined) throw notFound(`subscription '${id}' does not exist`);
  const compact = req.context.compactIri.bind(req.context);
  const [counters] = await countersOf(ctx, req.tenant, [id]);
  return { status: 200, body: renderSubscription(doc, counters, Date.now(), sysAttrs, compact), withContext: true };
};

export const updateSubscription: OpHandler = async (req, ctx) => {
  const id = subscriptionIdParam(req);
  const fragment = req.jsonObject();
  const subs = ctx.store.collection(req.tenant, SUBSCRIPTIONS);
  const current = (await subs.get(id)) as SubscriptionDoc | undefined;
  if (current === undefined) throw notFound(`subscription '${id}' does not exist`);
  const opts = validateOptions(req, ctx, current.body.notification.endpoint.uri);
  // The kept names are IRIs already (expanding an IRI leaves it as it is); the fragment's are terms of this request.
  const body = mapSubscriptionNames(patchSubscription(current.body, fragment, opts), opts.expand);
  if (fragment.jsonldContext !== undefined && fragment.jsonldContext !== null) await checkJsonldContext(req, ctx, body.jsonldContext);
  // An update that carries its own @context gives the subscription that @context; one without keeps the former.
  const context = req.context === ctx.contexts.defaultContext ? current.context : req.context.contextValue;
  const doc: SubscriptionDoc = { body, context, createdAt: current.createdAt, modifiedAt: new Date().toISOString() };
  const brokerUrl = hostBrokerUrl(req) ?? current.brokerUrl;
  if (brokerUrl !== undefined) doc.brokerUrl = brokerUrl;
  // The new owner first: should the update fail after it, the subscription as it was notifies with the rights of
  // whoever tried to change it, never with its former owner's to an endpoint someone else set.
  await keepOwner(req, ctx, id);
  await subs.put(id, doc as unknown as Record<string, unknown>);
  await announce(ctx, { tenant: req.tenant, id, doc });
  return { status: 204 };
};

export const deleteSubscription: OpHandler = async (req, ctx) => {
  const id = subscriptionIdParam(req);
  if (!(await ctx.store.collection(req.tenant, SUBSCRIPTIONS).delete(id))) throw notFound(`subscription '${id}' does not exist`);
  if (ctx.config.storeShared) await deleteSharedCounters(ctx.store, req.tenant, id);
  else await ctx.store.collection(req.tenant, SUBSCRIPTION_COUNTERS).delete(id);
  await ctx.store.collection(req.tenant, SUBSCRIPTION_OWNERS).delete(id);
  await announce(ctx, { tenant: req.tenant, id, doc: null });
  return { status: 204 };
};

/**
 * The broker's own request when a WebSocket connection closes (seed 000 §5.1 rule 3: not asked to the auth plugin):
 * the subscriptions of the tenant whose endpoint is that connection are deleted as DELETE would.
 */
export const deleteConnectionSubscriptions: OpHandler = async (req, ctx) => {
  const connection = req.task.connection;
  if (req.task.internal !== true || connection === undefined) throw new LdError('OperationNotSupported', 'not a request a client can make');
  const subs = ctx.store.collection(req.tenant, SUBSCRIPTIONS);
  for (const { id, doc } of await subs.list()) {
    if ((doc as unknown as SubscriptionDoc).body.notification.endpoint.uri !== connection) continue;
    if (!(await subs.delete(id))) continue;
    await ctx.store.collection(req.tenant, SUBSCRIPTION_COUNTERS).delete(id);
    await ctx.store.collection(req.tenant, SUBSCRIPTION_OWNERS).delete(id);
    await announce(ctx, { tenant: req.tenant, id, doc: null });
  }
  return { status: 204 };
};

function intParam(req: LdRequest, name: string, dflt: number): number {
  const text = req.query.get(name);
  if (text === undefined) return dflt;
  if (!/^\d{1,9}$/.test(text)) throw badRequest(`${name}: '${text}' is not a non-negative integer`);
  return Number(text);
}
