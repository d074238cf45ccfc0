// The pipeline worker's change sink (ARCHITECTURE.md step 11): each committed entity change is matched against
// the thread's subscription index and every notification due is built here (the worker has the contexts), then
// posted to the notifier thread in one message per write.
import { BroadcastChannel } from 'node:worker_threads';
import type { ChangeSink } from '../pipeline/change-sink.js';
import type { WriteEvent } from '../store/contract.js';
import type { Logger } from '../logger.js';
import { matchChange } from '../ngsild/subscription/match.js';
import { buildNotification, type NotificationPayload } from '../ngsild/subscription/payload.js';
import type { CompiledSubscription } from '../ngsild/subscription/compile.js';
import type { StoredEntity } from '../ngsild/entity/model.js';
import { NOTIFY_CHANNEL, channelName, type DueNotification } from './channel.js';
import type { SubscriptionSync } from './subscription-sync.js';

/**
 * Which entities of a notification its subscription's owner may read (seed 000 §5.3); the auth plugin's
 * subscription-owner issue provides it. Undefined: every entity is sent.
 */
export type NotificationEntityFilter = (sub: CompiledSubscription, entity: StoredEntity) => boolean;

/** The body and headers of a notification the notifier builds (DueNotification.join). */
const UNBUILT: NotificationPayload = { body: '', headers: [] };

export class SubscriptionSink implements ChangeSink {
  private readonly channel: BroadcastChannel;
  entityFilter: NotificationEntityFilter | undefined;

  constructor(
    readonly sync: SubscriptionSync,
    private readonly log: Logger,
  ) {
    this.channel = new BroadcastChannel(channelName(NOTIFY_CHANNEL, sync.instance));
    this.channel.unref();
  }

  publish(events: readonly WriteEvent[]): void {
    const index = this.sync.index;
    let due: DueNotification[] | undefined;
    let now = 0;
    for (const change of events) {
      const candidates = index.candidates(change.tenant, change.id, change.before, change.after);
      if (candidates.length === 0) continue;
      if (now === 0) now = Date.now();
      for (const sub of candidates) {
        try {
          const m = matchChange(sub, change, now);
          if (m === undefined) continue;
          if (this.entityFilter !== undefined && !this.entityFilter(sub, m.entity)) continue;
          // A join reads the store (async): the notifier builds that notification when it sends it, in its place in
          // the order of its subscription and entity, and the write's answer does not wait for it.
          const payload = sub.join === undefined ? buildNotification(sub, [m.entity], m.trigger) : UNBUILT;
          const d: DueNotification = {
            tenant: sub.tenant,
            subscriptionId: sub.id,
            uri: sub.endpoint.uri,
            headers: payload.headers,
            body: payload.body,
            orderKey: `${sub.id} ${change.id}`,
            seq: change.seq,
            timeoutMs: sub.endpoint.timeoutMs,
            throttlingMs: sub.throttlingMs,
          };
          if (sub.endpoint.mqtt !== undefined) d.mqtt = sub.endpoint.mqtt;
          if (sub.join !== undefined) d.join = { entities: [m.entity], trigger: m.trigger };
          (due ??= []).push(d);
        } catch (e) {
          this.log.error({ err: e, subscription: sub.id, entity: change.id }, 'notification cannot be built');
        }
      }
    }
    if (due !== undefined) this.channel.postMessage({ due });
  }

  close(): void {
    this.channel.close();
    this.sync.close();
  }
}
