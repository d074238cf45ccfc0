// Context source notifications (CIM 009 v1.8.1 §5.11.7, §5.3.3 CsourceNotification): the registrations a csource
// subscription is told about, sent to its endpoint and counted on the subscription. Used by the pipeline threads
// (on a registration change) and by the notifier thread (periodic ones, csource-periodic.ts).
import { randomUUID } from 'node:crypto';
import type { Store } from '../store/contract.js';
import type { ContextSource } from '../pipeline/worker-context.js';
import { sendToSource } from '../pipeline/source-http.js';
import type { SubscriptionCounters, SubscriptionDoc } from '../ngsild/subscription/model.js';
import type { RegistrationBody } from '../ngsild/subscription/registration.js';
import { mapRegistrationNames } from '../ngsild/subscription/names.js';

export const CSOURCE_SUBSCRIPTIONS = 'csourceSubscriptions';

export interface CsourceSubscriptionDoc extends SubscriptionDoc {
  counters?: SubscriptionCounters;
}

export type CsourceTriggerReason = 'newlyMatching' | 'updated' | 'noLongerMatching';

const NOTIFY_TIMEOUT_MS = 5000;
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,64}$/;
const HEADER_VALUE = /^[\x20-\x7e]{0,1024}$/;

/**
 * Sends one ContextSourceNotification of `regs` (names expanded; compacted with the subscription's @context) and
 * counts its outcome on the subscription. The counters are written only on the subscription as `sub` has it (same
 * modifiedAt): a thread that has not seen an update yet never writes the former body back over it.
 */
export async function sendCsourceNotification(
  store: Store,
  contexts: ContextSource,
  tenant: string,
  subId: string,
  sub: CsourceSubscriptionDoc,
  regs: readonly RegistrationBody[],
  triggerReason: CsourceTriggerReason,
): Promise<void> {
  const rctx = await contexts.resolve(sub.context);
  const compact = rctx.compactIri.bind(rctx);
  const endpoint = sub.body.notification.endpoint;
  const ldJson = endpoint.accept === 'application/ld+json';
  const notification: Record<string, unknown> = {
    id: `urn:ngsi-ld:Notification:${randomUUID()}`,
    type: 'ContextSourceNotification',
    subscriptionId: subId,
    notifiedAt: new Date().toISOString(),
    data: regs.map((r) => mapRegistrationNames(r, compact)),
    triggerReason,
  };
  if (ldJson) notification['@context'] = sub.context ?? rctx.contextValue;
  const headers: Record<string, string> = { 'content-type': ldJson ? 'application/ld+json' : 'application/json' };
  if (tenant !== '') headers['ngsild-tenant'] = tenant;
  for (const kv of endpoint.receiverInfo ?? []) if (HEADER_NAME.test(kv.key) && HEADER_VALUE.test(kv.value)) headers[kv.key] = kv.value;
  const at = new Date().toISOString();
  let ok: boolean;
  try {
    const reply = await sendToSource({
      method: 'POST',
      url: new URL(endpoint.uri),
      headers,
      body: JSON.stringify(notification),
      timeoutMs: NOTIFY_TIMEOUT_MS,
    });
    ok = reply.status >= 200 && reply.status < 300;
  } catch {
    ok = false;
  }
  const subs = store.collection(tenant, CSOURCE_SUBSCRIPTIONS);
  const current = (await subs.get(subId)) as CsourceSubscriptionDoc | undefined;
  if (current === undefined || current.modifiedAt !== sub.modifiedAt) return;
  const c: SubscriptionCounters = current.counters ?? { timesSent: 0, timesFailed: 0 };
  c.timesSent++;
  c.lastNotification = at;
  if (ok) c.lastSuccess = at;
  else {
    c.timesFailed++;
    c.lastFailure = at;
  }
  await subs.put(subId, { ...current, counters: c } as unknown as Record<string, unknown>);
}
