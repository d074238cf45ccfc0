// The notifier thread's life (ARCHITECTURE.md "Threads"): its own store handle and @context resolver, the
// subscription index (for throttling, periodic timers and deletions), delivery and counters. Due notifications
// arrive from pipeline workers on NOTIFY_CHANNEL, questions about counters on COUNTERS_CHANNEL; the main thread
// says stop, and the counters are flushed first.
import { webSocketSender } from './websocket-sender.js';
import { BroadcastChannel, type MessagePort } from 'node:worker_threads';
import { threadLogger } from '../logger.js';
import { openStoreAndContexts } from '../pipeline/init.js';
import type { WorkerInit } from '../pipeline/worker-context.js';
import { SubscriptionSync } from './subscription-sync.js';
import { CounterBook } from './counters.js';
import { Delivery } from './delivery.js';
import { PeriodicNotifications } from './periodic.js';
import { JoinedNotifications } from './joined-notifications.js';
import {
  COUNTERS_CHANNEL,
  NOTIFY_CHANNEL,
  REGISTRATIONS_CHANNEL,
  channelName,
  type CountersAnswered,
  type CountersAsked,
  type DueBatch,
  type DueNotification,
  type RegistrationChanged,
} from './channel.js';
import { gaugeOf } from './queue-gauge.js';
import type { HostRow } from './host-counts.js';
import { SubordinateSubscriptions } from './subordinate-subscriptions.js';
import { CsourcePeriodic } from './csource-periodic.js';
import { SetOwner } from './set-owner.js';
import { brokerUrlOf } from '../pipeline/contexts/served-url.js';

const DELETED_KEPT = 10_000;

export type NotifierMessage =
  | { kind: 'ready' }
  | { kind: 'stopped' }
  | { kind: 'failed'; error: string }
  /** The answer to the main thread's `{ kind: 'hosts', seq }` (/metrics): the counts per endpoint host. */
  | { kind: 'hosts'; seq: number; rows: HostRow[] };

/** The notifier thread's workerData: the pipeline's, and the queue gauge the main thread reads for /health. */
export interface NotifierData extends WorkerInit {
  queueGauge: SharedArrayBuffer;
}

export async function runNotifier(init: NotifierData, parent: MessagePort): Promise<void> {
  const log = threadLogger(init.config, 'notifier');
  const { store, contexts } = await openStoreAndContexts(init, log);
  // seed 000 §5.3: the auth plugin's notifier instance decides each notified entity for the subscription's owner.
  // Loaded only when asked, so a build without the auth feature has no auth code to load.
  const owners =
    init.config.auth === undefined
      ? undefined
      : await (await import('./owner-filter.js')).loadOwnerFilter(init, store, (t) => contexts.defaultContext.expandTerm(t), log);
  const counters = new CounterBook(store, log, init.config.storeShared ? init.config.brokerId : undefined);
  await counters.load();
  const lastSent = new Map<string, number>();
  // Deleted subscriptions, so a notification in flight at the delete leaves no counters behind (bounded: the
  // oldest are forgotten; their late outcomes are long past).
  const deleted = new Set<string>();
  const webSocket = webSocketSender(init.config.instance);
  // The MQTT client library (MQTT.js) is loaded only with the MQTT bridge: ~60 ms of CPU at every broker's start.
  const mqtt = init.config.bridges.includes('mqtt')
    ? new (await import('./mqtt-sender.js')).MqttSender(log, init.config.insecureNotif)
    : undefined;
  const delivery = new Delivery(
    (o) => {
      if (deleted.has(`${o.due.tenant}\n${o.due.subscriptionId}`)) return;
      counters.record(o.due.tenant, o.due.subscriptionId, o.ok, o.at, o.reason);
    },
    log,
    {
      budgetBytes: init.config.notificationQueueBytes,
      gauge: gaugeOf(init.queueGauge),
      sending: (due, at) => {
        if (!deleted.has(`${due.tenant}\n${due.subscriptionId}`)) counters.sending(due.tenant, due.subscriptionId, at);
      },
      complete: (due) => joined.complete(due),
      webSocket: webSocket.send,
      mqtt,
      insecure: init.config.insecureNotif,
    },
  );
  let periodic: PeriodicNotifications | undefined;
  const setOwner = init.config.storeShared && init.config.brokerId !== undefined ? new SetOwner(store, init.config.brokerId) : undefined;
  const subordinates = new SubordinateSubscriptions(
    store,
    contexts,
    log,
    init.config.brokerUrl,
    init.config.port === 0 ? undefined : brokerUrlOf(init.config),
    setOwner,
  );
  const sync = new SubscriptionSync(
    store,
    contexts,
    log,
    init.config.instance,
    (tenant, id, sub, doc) => {
      const key = `${tenant}\n${id}`;
      // a PATCH here may have given it another owner (seed 000 §3): read again, not after the cache's 30 s
      owners?.filter.forget(tenant, id);
      if (sub === undefined) {
        counters.forget(tenant, id);
        delivery.forget(tenant, id);
        lastSent.delete(key);
        deleted.add(key);
        if (deleted.size > DELETED_KEPT) deleted.delete(deleted.values().next().value!);
      } else {
        deleted.delete(key);
      }
      periodic?.update(tenant, id, sub);
      subordinates.subscriptionChanged(tenant, id, doc);
    },
    init.config.brokerUrl,
  );
  // A subscription a worker matched may still be on its way here (its change is applied after its @context is
  // resolved): one not found is looked for again once the changes received so far are applied.
  const joined = new JoinedNotifications(
    store,
    async (tenant, id) => {
      const sub = sync.index.get(tenant, id);
      if (sub !== undefined) return sub;
      await sync.settled();
      return sync.index.get(tenant, id);
    },
    owners?.filter,
  );
  const accept = (due: DueNotification): void => {
    if (due.throttlingMs > 0) {
      // CIM 009 §5.2.12 throttling: notifications closer than this to the last one sent are dropped.
      const key = `${due.tenant}\n${due.subscriptionId}`;
      const now = Date.now();
      const last = lastSent.get(key);
      if (last !== undefined && now - last < due.throttlingMs) return;
      lastSent.set(key, now);
    }
    delivery.enqueue(due);
  };
  periodic = new PeriodicNotifications(store, accept, log, joined, setOwner);
  await sync.start();
  subordinates.sweep();
  const csourcePeriodic = new CsourcePeriodic(store, contexts, log, init.config.instance, setOwner);
  await csourcePeriodic.start();
  csourcePeriodic.refreshEvery(init.config.subCacheIval);
  sync.refreshEvery(init.config.subCacheIval);
  subordinates.refreshEvery(init.config.subCacheIval);
  for (const sub of sync.index.each()) periodic.update(sub.tenant, sub.id, sub);

  const channel = new BroadcastChannel(channelName(NOTIFY_CHANNEL, init.config.instance));
  channel.onmessage = (m: unknown) => {
    const batch = (m as { data?: DueBatch }).data;
    if (batch === undefined || !Array.isArray(batch.due)) return;
    for (const due of batch.due) accept(due);
  };
  const asks = new BroadcastChannel(channelName(COUNTERS_CHANNEL, init.config.instance));
  asks.onmessage = (m: unknown) => {
    const ask = (m as { data?: CountersAsked }).data;
    if (ask?.kind !== 'ask' || !Array.isArray(ask.ids)) return;
    // Answered after this turn's I/O, so a receiver's answer already on its socket is counted first.
    setImmediate(() => {
      const answer: CountersAnswered = {
        kind: 'answer',
        asker: ask.asker,
        seq: ask.seq,
        counters: ask.ids.map((id) => counters.get(ask.tenant, id) ?? null),
      };
      asks.postMessage(answer);
    });
  };

  const registrations = new BroadcastChannel(channelName(REGISTRATIONS_CHANNEL, init.config.instance));
  registrations.onmessage = (m: unknown) => {
    const change = (m as { data?: RegistrationChanged }).data;
    if (typeof change?.tenant === 'string' && typeof change.id === 'string') subordinates.registrationChanged(change);
  };

  parent.on('message', (msg: { kind?: string; seq?: number }) => {
    if (msg.kind === 'hosts' && typeof msg.seq === 'number') {
      parent.postMessage({ kind: 'hosts', seq: msg.seq, rows: delivery.hostCounts.rows() } satisfies NotifierMessage);
      return;
    }
    if (msg.kind !== 'stop') return;
    void (async () => {
      channel.close();
      asks.close();
      registrations.close();
      csourcePeriodic.close();
      subordinates.close();
      periodic?.close();
      sync.close();
      await delivery.close();
      webSocket.close();
      await counters.close();
      await owners?.shutdown();
      await store.flush();
      await store.close();
      parent.postMessage({ kind: 'stopped' } satisfies NotifierMessage);
      parent.close();
    })().catch((e: unknown) => {
      log.error({ err: e }, 'notifier stop failed');
      parent.postMessage({ kind: 'stopped' } satisfies NotifierMessage);
    });
  });
  log.debug({ subscriptions: sync.index.size }, 'notifier ready');
  parent.postMessage({ kind: 'ready' } satisfies NotifierMessage);
}
