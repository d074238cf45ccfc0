// Context source registration subscriptions (CIM 009 v1.8.1 §5.11, §6.12, §6.13): create, query, retrieve, update
// and delete, kept in the tenant's `csourceSubscriptions` collection with their notification counters; and their
// notifications (§5.11.7): one when a subscription is created about the registrations it matches then
// (newlyMatching), and one on each registration created, updated or deleted that it matches before or after
// (newlyMatching, updated, noLongerMatching), but to a periodic one (timeInterval), which the notifier thread tells
// every timeInterval seconds (notify/csource-periodic.ts). Sent from the thread of the request that changed the
// registration, after its answer is decided: a slow receiver never holds up the registration's writer.
import { LdError, badRequest, notFound } from '../ngsild/problem.js';
import { isUri } from '../ngsild/entity/syntax.js';
import { checkIdSize } from '../ngsild/entity/limits.js';
import { pathSegment } from '../ngsild/uri-encode.js';
import { validateSubscription, patchSubscription } from '../ngsild/subscription/validate.js';
import { renderSubscription, subscriptionStatus } from '../ngsild/subscription/model.js';
import { mapSubscriptionNames } from '../ngsild/subscription/names.js';
import { REGISTRATIONS, type RegistrationBody, type RegistrationDoc } from '../ngsild/subscription/registration.js';
import { registrationMatches, subscriptionSelections } from '../ngsild/registration/csource-match.js';
import { API_PREFIX } from '../ngsild/operations.js';
import type { LdRequest } from '../pipeline/ld-request.js';
import type { WorkerContext } from '../pipeline/worker-context.js';
import type { OpHandler } from '../pipeline/handler.js';
import { DEFAULT_LIMIT, MAX_LIMIT } from './query.js';
import { pageLinks } from './page-links.js';
import { broadcastRegistrationChanged } from '../notify/subordinate-subscriptions.js';
import {
  CSOURCE_SUBSCRIPTIONS,
  sendCsourceNotification,
  type CsourceSubscriptionDoc,
  type CsourceTriggerReason,
} from '../notify/csource-notification.js';
import { broadcastCsourceSubscriptionChange } from '../notify/csource-periodic.js';

/** A csource notification goes to http(s) endpoints (§5.11.7; the MQTT binding is for entity notifications). */
const SCHEMES: ReadonlySet<string> = new Set(['http', 'https']);

function idParam(req: LdRequest): string {
  const id = req.params[0]!;
  if (!isUri(id)) throw badRequest(`subscription id '${String(id).slice(0, 200)}' is not a URI`);
  return checkIdSize(id, 'subscription id');
}

function validateOptions(req: LdRequest): { expand: (t: string) => string; schemes: ReadonlySet<string>; now: number } {
  return { expand: req.context.expandTerm.bind(req.context), schemes: SCHEMES, now: Date.now() };
}

function intParam(req: LdRequest, name: string, dflt: number): number {
  const text = req.query.get(name);
  if (text === undefined) return dflt;
  if (!/^\d{1,9}$/.test(text)) throw badRequest(`${name}: '${text.slice(0, 30)}' is not a non-negative integer`);
  return Number(text);
}

/** As an entity subscription renders, without the default notificationTrigger: it is about entity changes (§5.2.12). */
function render(req: LdRequest, doc: CsourceSubscriptionDoc, sysAttrs: boolean): Record<string, unknown> {
  const out = renderSubscription(doc, doc.counters, Date.now(), sysAttrs, req.context.compactIri.bind(req.context));
  if (doc.body.notificationTrigger === undefined) delete out.notificationTrigger;
  return out;
}

async function registrationsOf(ctx: WorkerContext, tenant: string): Promise<RegistrationBody[]> {
  const regs: RegistrationBody[] = [];
  for (const { doc } of await ctx.store.collection(tenant, REGISTRATIONS).list()) regs.push((doc as unknown as RegistrationDoc).body);
  return regs;
}

export const createCsourceSubscription: OpHandler = async (req, ctx) => {
  const opts = validateOptions(req);
  const body = mapSubscriptionNames(validateSubscription(req.jsonObject(), opts), opts.expand);
  const now = new Date().toISOString();
  const doc: CsourceSubscriptionDoc = { body, context: req.context.contextValue, createdAt: now, modifiedAt: now };
  const subs = ctx.store.collection(req.tenant, CSOURCE_SUBSCRIPTIONS);
  if (!(await subs.insert(body.id, doc as unknown as Record<string, unknown>, { createTenant: true })))
    throw new LdError('AlreadyExists', `subscription '${body.id}' already exists`);
  broadcastCsourceSubscriptionChange({ tenant: req.tenant, id: body.id, doc }, ctx.config.instance);
  // §5.11.7: the registrations matching it now, notified at once (newlyMatching).
  const sels = subscriptionSelections(body);
  const matching = (await registrationsOf(ctx, req.tenant)).filter((r) => registrationMatches(sels, r));
  if (matching.length > 0 && subscriptionStatus(body, Date.now()) === 'active')
    void notify(ctx, req.tenant, body.id, doc, matching, 'newlyMatching');
  return { status: 201, headers: ['Location', `${API_PREFIX}/csourceSubscriptions/${pathSegment(body.id)}`] };
};

export const queryCsourceSubscriptions: OpHandler = async (req, ctx) => {
  const limit = intParam(req, 'limit', DEFAULT_LIMIT);
  const offset = intParam(req, 'offset', 0);
  if (limit > MAX_LIMIT) throw new LdError('TooManyResults', `limit ${limit} is above the maximum ${MAX_LIMIT}`);
  const count = req.query.count();
  if (limit === 0 && !count) throw badRequest('limit=0 is only allowed with count=true');
  const sysAttrs = req.query.options(['sysAttrs']).has('sysAttrs');
  const subs = ctx.store.collection(req.tenant, CSOURCE_SUBSCRIPTIONS);
  const page = await subs.list(offset, limit === 0 ? 0 : limit + 1);
  const more = page.length > limit;
  if (more) page.length = limit;
  const headers: string[] = [];
  if (count) headers.push('NGSILD-Results-Count', String((await subs.list()).length));
  headers.push(...pageLinks(req, limit, offset, more));
  return {
    status: 200,
    body: page.map(({ doc }) => render(req, doc as unknown as CsourceSubscriptionDoc, sysAttrs)),
    headers,
    withContext: true,
  };
};

export const retrieveCsourceSubscription: OpHandler = async (req, ctx) => {
  const id = idParam(req);
  const sysAttrs = req.query.options(['sysAttrs']).has('sysAttrs');
  const doc = (await ctx.store.collection(req.tenant, CSOURCE_SUBSCRIPTIONS).get(id)) as CsourceSubscriptionDoc | undefined;
  if (doc === undefined) throw notFound(`subscription '${id}' does not exist`);
  return { status: 200, body: render(req, doc, sysAttrs), withContext: true };
};

export const updateCsourceSubscription: OpHandler = async (req, ctx) => {
  const id = idParam(req);
  const fragment = req.jsonObject();
  const subs = ctx.store.collection(req.tenant, CSOURCE_SUBSCRIPTIONS);
  const current = (await subs.get(id)) as CsourceSubscriptionDoc | undefined;
  if (current === undefined) throw notFound(`subscription '${id}' does not exist`);
  const opts = validateOptions(req);
  const body = mapSubscriptionNames(patchSubscription(current.body, fragment, opts), opts.expand);
  const context = req.context === ctx.contexts.defaultContext ? current.context : req.context.contextValue;
  const doc: CsourceSubscriptionDoc = { body, context, createdAt: current.createdAt, modifiedAt: new Date().toISOString() };
  if (current.counters !== undefined) doc.counters = current.counters;
  await subs.put(id, doc as unknown as Record<string, unknown>);
  broadcastCsourceSubscriptionChange({ tenant: req.tenant, id, doc }, ctx.config.instance);
  // §5.11.7: an update is told the registrations it matches now that it did not before (newlyMatching).
  const now = subscriptionSelections(body);
  const before = subscriptionSelections(current.body);
  const fresh = (await registrationsOf(ctx, req.tenant)).filter((r) => registrationMatches(now, r) && !registrationMatches(before, r));
  if (fresh.length > 0 && subscriptionStatus(body, Date.now()) === 'active') void notify(ctx, req.tenant, id, doc, fresh, 'newlyMatching');
  return { status: 204 };
};

export const deleteCsourceSubscription: OpHandler = async (req, ctx) => {
  const id = idParam(req);
  if (!(await ctx.store.collection(req.tenant, CSOURCE_SUBSCRIPTIONS).delete(id))) throw notFound(`subscription '${id}' does not exist`);
  broadcastCsourceSubscriptionChange({ tenant: req.tenant, id, doc: null }, ctx.config.instance);
  return { status: 204 };
};

/**
 * §5.11.7: tells the tenant's csource subscriptions about a registration that changed (`before` undefined: created;
 * `after` undefined: deleted). Runs in the background; its failures are counted on the subscription, never thrown.
 */
export function registrationChanged(
  ctx: WorkerContext,
  tenant: string,
  before: RegistrationBody | undefined,
  after: RegistrationBody | undefined,
): void {
  // §5.8 distributed behaviour: the subordinate subscriptions follow the registrations (notify/subordinate-subscriptions.ts).
  broadcastRegistrationChanged({ tenant, id: (after ?? before)!.id, body: after ?? null }, ctx.config.instance);
  void (async () => {
    for (const { id, doc } of await ctx.store.collection(tenant, CSOURCE_SUBSCRIPTIONS).list()) {
      const sub = doc as unknown as CsourceSubscriptionDoc;
      // A periodic one is told on its clock (notify/csource-periodic.ts), as a periodic entity subscription (§5.2.12).
      if (subscriptionStatus(sub.body, Date.now()) !== 'active' || sub.body.timeInterval !== undefined) continue;
      const sels = subscriptionSelections(sub.body);
      const was = before !== undefined && registrationMatches(sels, before);
      const is = after !== undefined && registrationMatches(sels, after);
      if (is) await notify(ctx, tenant, id, sub, [after], was ? 'updated' : 'newlyMatching');
      else if (was) await notify(ctx, tenant, id, sub, [before], 'noLongerMatching');
    }
  })().catch((e: unknown) => ctx.log.warn({ err: e instanceof Error ? e.message : String(e) }, 'csource notifications failed'));
}

function notify(
  ctx: WorkerContext,
  tenant: string,
  subId: string,
  sub: CsourceSubscriptionDoc,
  regs: RegistrationBody[],
  triggerReason: CsourceTriggerReason,
): Promise<void> {
  return sendCsourceNotification(ctx.store, ctx.contexts, tenant, subId, sub, regs, triggerReason);
}
