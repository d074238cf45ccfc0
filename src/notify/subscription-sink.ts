// The pipeline worker's change sink (ARCHITECTURE.md step 11): each committed entity change is matched against
// the thread's subscription index and every notification due is built here (the worker has the contexts), then
// posted to the notifier thread in one message per write.
import { BroadcastChannel } from 'node:worker_threads';
import type { ChangeSink } from '../pipeline/change-sink.js';
import type { WriteEvent } from '../store/contract.js';
import type { Logger } from '../logger.js';
import { matchChange } from '../ngsild/subscription/match.js';
import { buildNotification, type NotificationPayload } from '../ngsild/subscription/payload.js';
import { NOTIFY_CHANNEL, channelName, type DueNotification } from './channel.js';
import type { SubscriptionSync } from './subscription-sync.js';

/** The body and headers of a notification the notifier builds (DueNotification.join). */
const UNBUILT: NotificationPayload = { body: '', headers: [] };

export class SubscriptionSink implements ChangeSink {
  private readonly channel: BroadcastChannel;
  /**
   * An auth plugin keeps subscription owners: every notification is left for the notifier to build, which decides
   * its entities for the owner (seed 000 §5.3, notify/owner-filter.ts) in its turn of its lane.
   */
  ownerFiltered = false;

  constructor(
    readonly sync: SubscriptionSync,
    private readonly log: Logger,
  ) {
    this.channel = new BroadcastChannel(channelName(NOTIFY_CHANNEL, sync.instance));
    this.channel.unref();
  }

  caughtUp(): Promise<void> | undefined {
    return this.sync.behind() ? this.sync.caughtUp() : undefined;
  }

  /** Behind the announced changes, a subscription may be on its way here: wanted until caught up. */
  wants(tenant: string): boolean {
    return this.sync.behind() || this.sync.index.holds(tenant);
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
          // A join reads the store (async), and so does the owner's decision: the notifier builds such a notification
          // when it sends it, in its place in the order of its subscription and entity; the write's answer does not
          // wait for it.
          const unbuilt = sub.join !== undefined || this.ownerFiltered;
          const payload = unbuilt ? UNBUILT : buildNotification(sub, [m.entity], m.trigger);
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
          if (unbuilt) d.join = { entities: [m.entity], trigger: m.trigger };
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
