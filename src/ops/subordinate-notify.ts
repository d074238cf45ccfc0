// The notifications of subordinate subscriptions (CIM 009 v1.8.1 §5.8 distributed behaviour): a source notifies the
// subscription the broker made on it (notify/subordinate-subscriptions.ts); its entities are relayed to the original
// subscription's endpoint in the original's format, through the notifier as every notification of it is.
import { BroadcastChannel } from 'node:worker_threads';
import { badRequest, notFound } from '../ngsild/problem.js';
import { SUBSCRIPTIONS, NOTIFICATION_TRIGGERS, type NotificationTrigger, type SubscriptionDoc } from '../ngsild/subscription/model.js';
import { compileSubscription } from '../ngsild/subscription/compile.js';
import { isLive } from '../ngsild/subscription/match.js';
import { buildNotification } from '../ngsild/subscription/payload.js';
import type { StoredEntity } from '../ngsild/entity/model.js';
import { NOTIFY_CHANNEL, channelName, type DueNotification } from '../notify/channel.js';
import { SubscriptionSink } from '../notify/subscription-sink.js';
import { SUBORDINATES, type SubordinateRecord } from '../notify/subordinate-subscriptions.js';
import type { OpHandler } from '../pipeline/handler.js';
import { entityFromSource } from './forward/entities-from-source.js';

/** The keys the broker gives its subordinate subscriptions' endpoints (randomUUID). */
const KEY = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
/** Entities relayed from one notification at most: a source's notification is no way around the broker's limits. */
const MAX_RELAYED = 1000;

export const relaySubordinateNotification: OpHandler = async (req, ctx) => {
  const key = req.params[0]!;
  const rec = KEY.test(key) ? ((await ctx.store.collection('', SUBORDINATES).get(key)) as SubordinateRecord | undefined) : undefined;
  if (rec === undefined) throw notFound('no subordinate subscription notifies here');
  const n = req.jsonObject();
  if (n.subscriptionId !== rec.sourceId) throw badRequest(`subscriptionId: not the subordinate subscription notifying here`);
  if (!Array.isArray(n.data)) throw badRequest('data: an array of entities is expected');
  if (n.data.length > MAX_RELAYED) throw badRequest(`data: more than ${MAX_RELAYED} entities`);
  const doc = (await ctx.store.collection(rec.tenant, SUBSCRIPTIONS).get(rec.original)) as SubscriptionDoc | undefined;
  // The original is gone: its subordinate is being deleted (the notifier's next look); nothing to relay.
  if (doc === undefined) return { status: 204 };
  const matchContext = await ctx.contexts.resolve(doc.context);
  const notifyContext = doc.body.jsonldContext === undefined ? matchContext : await ctx.contexts.resolve(doc.body.jsonldContext);
  const sub = compileSubscription(rec.tenant, doc, matchContext, notifyContext, ctx.config.brokerUrl);
  if (!isLive(sub, Date.now())) return { status: 204 };
  // The subordinate notifies with the original's @context (subordinate.ts): its entities expand with it.
  const now = new Date().toISOString();
  const entities: StoredEntity[] = [];
  for (const raw of n.data as unknown[]) {
    const e = entityFromSource({ context: matchContext }, raw, now);
    if (e !== undefined) entities.push(e);
  }
  if (entities.length === 0) return { status: 204 };
  const trigger = NOTIFICATION_TRIGGERS.includes(n.triggerReason as NotificationTrigger)
    ? (n.triggerReason as NotificationTrigger)
    : undefined;
  // seed 000 §5.3 and §5.2.14 join: left to the notifier to build, as a change's notification is.
  const unbuilt = sub.join !== undefined || (ctx.changes instanceof SubscriptionSink && ctx.changes.ownerFiltered);
  const payload = unbuilt ? { body: '', headers: [] } : buildNotification(sub, entities, trigger);
  const due: DueNotification = {
    tenant: rec.tenant,
    subscriptionId: sub.id,
    uri: sub.endpoint.uri,
    headers: payload.headers,
    body: payload.body,
    orderKey: `${sub.id} ${rec.registration}`,
    seq: 0,
    timeoutMs: sub.endpoint.timeoutMs,
    throttlingMs: sub.throttlingMs,
  };
  if (sub.endpoint.mqtt !== undefined) due.mqtt = sub.endpoint.mqtt;
  if (unbuilt) due.join = { entities, trigger };
  const channel = new BroadcastChannel(channelName(NOTIFY_CHANNEL, ctx.config.instance));
  channel.postMessage({ due: [due] });
  channel.close();
  return { status: 204 };
};
