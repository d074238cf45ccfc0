// The pipeline worker's change sink (ARCHITECTURE.md step 11): each committed entity change is matched against
// the thread's subscription index and every notification due is built here (the worker has the contexts), then
// posted to the notifier thread in one message per burst: the writes of one commit (one event turn) together.
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
  /**
   * Opened at the first notification this thread posts: every thread holding a BroadcastChannel of the name receives
   * (and wakes for) every message posted on it, so a thread that never notifies (the pipeline threads when the front
   * runs the writes inline) never pays for the others' notifications.
   */
  private channel: BroadcastChannel | undefined = undefined;
  /**
   * An auth plugin keeps subscription owners: every notification is left for the notifier to build, which decides
   * its entities for the owner (seed 000 §5.3, notify/owner-filter.ts) in its turn of its lane.
   */
  ownerFiltered = false;
  /** Due notifications of this burst, posted by `flush` (one message, not one per write: each post costs every thread that holds the channel). */
  private pending: DueNotification[] = [];
  private closed = false;
  private readonly flush = (): void => {
    const due = this.pending;
    this.pending = [];
    if (this.closed) return;
    try {
      this.channel ??= this.open();
      this.channel.postMessage({ due });
    } catch (e) {
      this.log.error({ err: e, notifications: due.length }, 'notifications cannot be handed to the notifier');
    }
  };

  constructor(
    readonly sync: SubscriptionSync,
    private readonly log: Logger,
  ) {}

  private open(): BroadcastChannel {
    const channel = new BroadcastChannel(channelName(NOTIFY_CHANNEL, this.sync.instance));
    channel.unref();
    return channel;
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
    const due = this.pending;
    const waiting = due.length;
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
          due.push(d);
        } catch (e) {
          this.log.error({ err: e, subscription: sub.id, entity: change.id }, 'notification cannot be built');
        }
      }
    }
    // Posted in a microtask queued now: it runs before the continuations of the writes committed with this one, so
    // each write's notifications are posted before its request can be answered (delivery.ts "Order"), and the writes
    // of one commit, resolved in the same turn, share one message.
    if (waiting === 0 && due.length > 0) queueMicrotask(this.flush);
  }

  close(): void {
    this.closed = true;
    this.channel?.close();
    this.sync.close();
  }
}
