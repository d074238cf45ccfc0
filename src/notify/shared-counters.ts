// Subscription counters on a store several brokers share (docdb, README "Deployment on docdb"): each broker counts
// the notifications it sends, so each keeps its own document per subscription, `<subscription id>\n<broker id>`, in
// the tenant's `subscriptionCounters`, and GET adds them up (CIM 009 v1.8 §5.2.14: timesSent and timesFailed are the
// subscription's, whichever broker sent). A lone broker keeps one document per subscription, under its id.
import type { Store } from '../store/contract.js';
import { SUBSCRIPTION_COUNTERS, type SubscriptionCounters } from '../ngsild/subscription/model.js';

/** The document of one broker's counters of a subscription. */
export const counterDocId = (subscriptionId: string, brokerId: string): string => `${subscriptionId}\n${brokerId}`;

/** Several brokers' counters as one: sums, the latest dates, the reason of the latest failure. */
export function addCounters(parts: ReadonlyArray<SubscriptionCounters | undefined>): SubscriptionCounters | undefined {
  let out: SubscriptionCounters | undefined;
  const later = (a: string | undefined, b: string | undefined): string | undefined =>
    a === undefined ? b : b === undefined ? a : Date.parse(b) > Date.parse(a) ? b : a;
  for (const c of parts) {
    if (c === undefined) continue;
    if (out === undefined) {
      out = { ...c };
      continue;
    }
    out.timesSent += c.timesSent;
    out.timesFailed += c.timesFailed;
    out.lastNotification = later(out.lastNotification, c.lastNotification);
    out.lastSuccess = later(out.lastSuccess, c.lastSuccess);
    const failure = later(out.lastFailure, c.lastFailure);
    if (failure !== out.lastFailure) {
      out.lastFailure = failure;
      if (c.lastErrorReason !== undefined) out.lastErrorReason = c.lastErrorReason;
    }
  }
  if (out !== undefined) for (const k of Object.keys(out) as Array<keyof SubscriptionCounters>) if (out[k] === undefined) delete out[k];
  return out;
}

/**
 * The stored counters of other brokers than `brokerId`, of each subscription of `ids`, in order. A document under the
 * subscription's id alone (no broker's) counts too: the counters the importer kept from the source broker (seed 001,
 * importer behaviour 6), or a lone broker's before the store was shared.
 */
export async function othersCounters(
  store: Store,
  tenant: string,
  ids: readonly string[],
  brokerId: string,
): Promise<Array<SubscriptionCounters[]>> {
  const wanted = new Map(ids.map((id, i) => [id, i]));
  const out: SubscriptionCounters[][] = ids.map(() => []);
  for (const { id, doc } of await store.collection(tenant, SUBSCRIPTION_COUNTERS).list()) {
    const nl = id.lastIndexOf('\n');
    if (nl >= 0 && id.slice(nl + 1) === brokerId) continue;
    const at = wanted.get(nl < 0 ? id : id.slice(0, nl));
    if (at !== undefined) out[at]!.push(doc as unknown as SubscriptionCounters);
  }
  return out;
}

/** Removes every broker's counters of a deleted subscription. */
export async function deleteSharedCounters(store: Store, tenant: string, subscriptionId: string): Promise<void> {
  const counters = store.collection(tenant, SUBSCRIPTION_COUNTERS);
  await counters.delete(subscriptionId);
  for (const { id } of await counters.list()) if (id.startsWith(subscriptionId + '\n')) await counters.delete(id);
}
