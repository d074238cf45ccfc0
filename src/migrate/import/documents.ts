// Subscriptions and registrations of the stream through their create routines (seed 001, importer behaviour 3):
// a subscription validated with the clock at its createdAt (stored q, jsonldContext resolved; its status is computed
// at each read, so recomputed, and `isActive: false` kept as a member), then modifiedAt and its counters stored; a
// registration validated, checked for conflicts, then modifiedAt. An id already there is refused (§7).
import { validateSubscription } from '../../ngsild/subscription/validate.js';
import { mapRegistrationNames, mapSubscriptionNames } from '../../ngsild/subscription/names.js';
import { SUBSCRIPTIONS, SUBSCRIPTION_COUNTERS, type SubscriptionCounters, type SubscriptionDoc } from '../../ngsild/subscription/model.js';
import { REGISTRATIONS, validateRegistration, type RegistrationDoc } from '../../ngsild/subscription/registration.js';
import { isDateTime, isPlainObject, show } from '../../ngsild/entity/syntax.js';
import { LdError, badRequest } from '../../ngsild/problem.js';
import type { ImportDeps } from './run-import.js';

function times(data: Record<string, unknown>): { createdAt: string; modifiedAt: string } {
  if (!isDateTime(data.createdAt))
    throw badRequest(`createdAt: ${data.createdAt === undefined ? 'missing' : `${show(data.createdAt)} is not an ISO 8601 date-time`}`);
  const createdAt = data.createdAt;
  if (data.modifiedAt !== undefined && !isDateTime(data.modifiedAt))
    throw badRequest(`modifiedAt: ${show(data.modifiedAt)} is not an ISO 8601 date-time`);
  return { createdAt, modifiedAt: (data.modifiedAt as string | undefined) ?? createdAt };
}

/** CIM 009 §5.2.14 counters of the record's notification; undefined when it carries none. */
function countersOf(notification: unknown): SubscriptionCounters | undefined {
  if (!isPlainObject(notification)) return undefined;
  const c: SubscriptionCounters = { timesSent: 0, timesFailed: 0 };
  for (const k of ['timesSent', 'timesFailed'] as const) {
    const v = notification[k];
    if (v === undefined) continue;
    if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0)
      throw badRequest(`notification.${k}: ${show(v)} is not an integer >= 0`);
    c[k] = v;
  }
  for (const k of ['lastNotification', 'lastSuccess', 'lastFailure'] as const) {
    const v = notification[k];
    if (v === undefined) continue;
    if (!isDateTime(v)) throw badRequest(`notification.${k}: ${show(v)} is not an ISO 8601 date-time`);
    c[k] = v;
  }
  // Kept as the source shows them, zeros included (the stream always carries timesSent and timesFailed).
  const given = ['timesSent', 'timesFailed', 'lastNotification', 'lastSuccess', 'lastFailure'].some((k) => notification[k] !== undefined);
  return given ? c : undefined;
}

export async function importSubscription(deps: ImportDeps, tenant: string, data: Record<string, unknown>): Promise<void> {
  const { createdAt, modifiedAt } = times(data);
  const counters = countersOf(data.notification);
  const expand = deps.core.expandTerm.bind(deps.core);
  const body = mapSubscriptionNames(validateSubscription(data, { expand, schemes: deps.schemes, now: Date.parse(createdAt) }), expand);
  if (data.id === undefined) throw badRequest('id: missing (an imported subscription keeps its id)');
  if (body.jsonldContext !== undefined) {
    try {
      await deps.resolveJsonldContext(body.jsonldContext);
    } catch (e) {
      if (e instanceof LdError && e.kind === 'InvalidRequest') throw badRequest(`jsonldContext: ${e.detail}`);
      // An import often runs where the source's @context server is out of reach: say how to give it a copy.
      if (e instanceof LdError && e.kind === 'LdContextNotAvailable')
        throw new LdError(e.kind, `jsonldContext: ${e.detail} (--contextDir serves a copy of it from a file)`);
      throw e;
    }
  }
  const doc: SubscriptionDoc = { body, context: deps.core.contextValue, createdAt, modifiedAt };
  const inserted = await deps.store
    .collection(tenant, SUBSCRIPTIONS)
    .insert(body.id, doc as unknown as Record<string, unknown>, { createTenant: true });
  if (!inserted) throw new LdError('AlreadyExists', `subscription '${body.id}' already exists`);
  if (counters !== undefined)
    await deps.store.collection(tenant, SUBSCRIPTION_COUNTERS).put(body.id, counters as unknown as Record<string, unknown>);
}

export async function importRegistration(deps: ImportDeps, tenant: string, data: Record<string, unknown>): Promise<void> {
  const { createdAt, modifiedAt } = times(data);
  if (data.id === undefined) throw badRequest('id: missing (an imported registration keeps its id)');
  const body = mapRegistrationNames(validateRegistration(data, Date.parse(createdAt)), deps.core.expandTerm.bind(deps.core));
  await deps.registrationConflicts(tenant, body);
  const doc: RegistrationDoc = { body, context: deps.core.contextValue, createdAt, modifiedAt };
  const inserted = await deps.store
    .collection(tenant, REGISTRATIONS)
    .insert(body.id, doc as unknown as Record<string, unknown>, { createTenant: true });
  if (!inserted) throw new LdError('AlreadyExists', `registration '${body.id}' already exists`);
}
