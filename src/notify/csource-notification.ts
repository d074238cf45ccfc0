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
import { relevantInformation, subscriptionSelections } from '../ngsild/registration/csource-match.js';

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
 * counts its outcome on the subscription (nothing when it was deleted meanwhile).
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
  const sels = subscriptionSelections(sub.body);
  const compact = rctx.compactIri.bind(rctx);
  const endpoint = sub.body.notification.endpoint;
  const ldJson = endpoint.accept === 'application/ld+json';
  const notification: Record<string, unknown> = {
    id: `urn:ngsi-ld:Notification:${randomUUID()}`,
    type: 'ContextSourceNotification',
    subscriptionId: subId,
    notifiedAt: new Date().toISOString(),
    data: regs.map((r) => mapRegistrationNames(relevantInformation(sels, r), compact)),
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
  // One atomic count (DocCollection.bump): the threads and brokers notifying this subscription at once each count.
  await store.collection(tenant, CSOURCE_SUBSCRIPTIONS).bump(subId, 'counters', {
    inc: { timesSent: 1, timesFailed: ok ? 0 : 1 },
    set: ok ? { lastNotification: at, lastSuccess: at } : { lastNotification: at, lastFailure: at },
  });
}
