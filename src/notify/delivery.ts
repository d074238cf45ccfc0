// HTTP delivery of notifications (CIM 009 v1.8 §5.3.2 HTTP binding) on the notifier thread: one undici keep-alive
// Pool per origin, one bounded queue per endpoint split in lanes by order key, a timeout per request. A slow or
// dead receiver only fills its own queue; what does not fit is a failure of its subscription, never memory.
//
// Memory (issue 13 item 5). Each endpoint's queue holds at most ENDPOINT_QUEUE_MAX notifications, and all the
// queues together at most `budgetBytes` (--notificationQueueBytes) of waiting notifications: without that total,
// every subscription with a dead endpoint of its own added 10,000 slots. Over the budget, the oldest waiting
// notification of the slowest endpoint (slowest-first.ts) is dropped until the new one fits, so the dead receivers
// pay for the flood, not the healthy ones. A drop is a failure of its subscription, logged by DropWarning. Requests
// in flight are not counted: they are at most LANES per endpoint and end at their timeout, or when their
// subscription is deleted (forget), which also takes its waiting notifications out at once.
//
// Order (issue 4: "notifications for one entity and subscription keep their order"). The order key is subscription
// and entity; seq is the store's write sequence of the change (WriteEvent.seq; embdb: the LMDB transaction id), so for
// two writes A and B of one entity where A committed before B, seq(A) < seq(B). A lane sends one notification at a time, its waiting
// items of one order key sorted by seq (lane.ts), and it starts sending on the next event-loop turn (setImmediate),
// so the notifications that arrived together are sorted before the first goes out. What is guaranteed: when A's
// notification reaches the notifier before B's is sent, A's is sent (and answered) before B's. That holds for every
// write that happens before another (B sent after A's response: A's worker posted before answering), and for
// concurrent writes from several pipeline workers whose messages arrive within one turn or while the lane is busy.
// What is not: a notification that arrives after a later one of its key already went out is sent late, not dropped.
import type { WebSocketNotification } from './websocket-sender.js';
import type { Pool } from 'undici';
import { undici } from '../pipeline/undici-lib.js';
import type { Logger } from '../logger.js';
import type { DueNotification } from './channel.js';
import { Lane, type Waiting } from './lane.js';
import { SlowestFirst, type Ranked } from './slowest-first.js';
import { GAUGE, gaugeOf, readGauge, type NotificationQueueStats } from './queue-gauge.js';
import { DropWarning, type DropKind } from './drop-warning.js';
import type { Completion } from './joined-notifications.js';
import type { MqttSender } from './mqtt-sender.js';
import { HostCounts, type HostCount } from './host-counts.js';
import { NotificationRequest } from './http-request.js';

/** Due notifications one endpoint may hold (queued and in flight). */
export const ENDPOINT_QUEUE_MAX = 10_000;
/** Default of --notificationQueueBytes: the waiting notifications of every endpoint together. */
export const DEFAULT_QUEUE_BYTES = 64 * 1024 * 1024;
/**
 * What a waiting notification holds besides its body and headers (its object, address, order key, the strings'
 * own headers and the queue's bookkeeping), counted against the budget so a flood of small notifications is bounded
 * too. Measured: 100,000 waiting notifications as the channel delivers them (a 407-byte payload each) took 884
 * bytes of heap each, 478 beyond the payload.
 */
const ENVELOPE_BYTES = 512;
/** Requests in flight per endpoint. */
const LANES = 8;
const POOL_CONNECTIONS = 32;
export const DEFAULT_TIMEOUT_MS = 10_000;
/** Pools idle this long are closed, so a deleted subscription's receiver holds no sockets. */
const POOL_IDLE_MS = 60_000;
/** Why a request was aborted when its subscription was deleted. */
const SUBSCRIPTION_DELETED = 'subscription deleted';
/** A notification left with nothing its subscription's owner may read (seed 000 §5.3): not sent, no outcome. */
const NOT_SENT = Symbol('not sent');

export interface DeliveryOutcome {
  due: DueNotification;
  ok: boolean;
  /** False when no request went out (dropped by a queue limit, unusable URI): a failure that was not sent. */
  sent: boolean;
  /** ISO time the request was sent (or the notification dropped). */
  at: string;
  /** Why it failed: HTTP status, timeout, connection error, a queue limit. */
  reason?: string;
}

interface Endpoint extends Ranked {
  url: URL;
  /** Its host's counts for /metrics (host-counts.ts). */
  host: HostCount;
  /** Made on first use: an endpoint notified about one entity only ever uses one. */
  lanes: (Lane<Endpoint> | undefined)[];
  /** Waiting and in flight: what ENDPOINT_QUEUE_MAX bounds. */
  queued: number;
}

export interface DeliveryOptions {
  /** Per endpoint, waiting and in flight (ENDPOINT_QUEUE_MAX). */
  queueMax?: number;
  /** All endpoints' waiting notifications, in notificationBytes (DEFAULT_QUEUE_BYTES). */
  budgetBytes?: number;
  /** Where the queue's numbers go (a SharedArrayBuffer's view, read by /health); default: a private one. */
  gauge?: Float64Array;
  /** How often idle pools are closed and empty endpoints removed (POOL_IDLE_MS). */
  sweepMs?: number;
  /** Told as a request goes out, before the receiver can see it (the counters count it sent then). */
  sending?: (due: DueNotification, at: string) => void;
  /**
   * Builds a notification left unbuilt (DueNotification.join) as it comes to be sent; 'gone': its subscription is
   * gone and it fails unsent; 'empty': nothing in it may be sent (seed 000 §5.3), so it is dropped without an outcome.
   * Without it, such a notification fails unsent.
   */
  complete?: (due: DueNotification) => Promise<Completion>;
  /** Sends a notification whose endpoint is a WebSocket connection of the front (websocket-sender.ts). */
  webSocket?: (n: WebSocketNotification) => void;
  /** Sends to mqtt:// and mqtts:// endpoints (the MQTT bridge loaded); without it they fail unsent. */
  mqtt?: MqttSender;
  /** --insecureNotif: an https:// endpoint's self-signed certificate is accepted. */
  insecure?: boolean;
}

/**
 * What a waiting notification counts against the budget: its body and headers in UTF-8, and its envelope. An unbuilt
 * one (DueNotification.join) waits as its notified entities, counted as their JSON text; its linked entities are
 * read as it is sent, and in flight nothing counts.
 */
export function notificationBytes(due: DueNotification): number {
  let n = ENVELOPE_BYTES + (typeof due.body === 'string' ? Buffer.byteLength(due.body) : 0);
  if (Array.isArray(due.headers)) for (const h of due.headers) if (typeof h === 'string') n += Buffer.byteLength(h);
  if (due.join !== undefined) n += Buffer.byteLength(JSON.stringify(due.join.entities));
  return n;
}

const oldestTag = (ep: Endpoint): number => {
  let tag = Infinity;
  for (const lane of ep.lanes) if (lane !== undefined && lane.headTag < tag) tag = lane.headTag;
  return tag;
};

interface PoolEntry {
  pool: Pool;
  lastUsed: number;
}

export class Delivery {
  private readonly endpoints = new Map<string, Endpoint>();
  private readonly pools = new Map<string, PoolEntry>();
  private readonly sweeper: NodeJS.Timeout;
  private closed = false;
  /** Lanes that start sending on the next turn (one setImmediate for all of them). */
  private starting: Lane<Endpoint>[] = [];
  private readonly startLanes = (): void => {
    const lanes = this.starting;
    this.starting = [];
    for (const lane of lanes) void this.drain(lane);
  };

  private readonly queueMax: number;
  private readonly budget: number;
  private readonly sending: ((due: DueNotification, at: string) => void) | undefined;
  private readonly complete: ((due: DueNotification) => Promise<Completion>) | undefined;
  private readonly webSocket: ((n: WebSocketNotification) => void) | undefined;
  private readonly mqtt: MqttSender | undefined;
  private readonly insecure: boolean;
  private readonly gauge: Float64Array;
  /** Bytes of the waiting notifications; the gauge's copy is only written while they are within the budget. */
  private queuedBytes = 0;
  private gaugeHeld = false;
  private readonly ranking = new SlowestFirst<Endpoint>(oldestTag);
  private readonly drops: DropWarning;
  /** Enqueue counter: the age rank of each waiting notification (lane.ts Waiting.tag). */
  private nextTag = 0;
  /** 2xx answers so far: an endpoint's rank among the slow ones (slowest-first.ts). */
  private successes = 0;
  /** Sent, failed and queued per endpoint host, for /metrics. */
  readonly hostCounts = new HostCounts();
  /** Deleted subscriptions whose waiting notifications the next purge takes out: id → tenants. */
  private forgetting = new Map<string, Set<string>>();

  constructor(
    private readonly report: (o: DeliveryOutcome) => void,
    private readonly log: Logger,
    opts: DeliveryOptions = {},
  ) {
    this.queueMax = opts.queueMax ?? ENDPOINT_QUEUE_MAX;
    this.budget = opts.budgetBytes ?? DEFAULT_QUEUE_BYTES;
    this.sending = opts.sending;
    this.complete = opts.complete;
    this.webSocket = opts.webSocket;
    this.mqtt = opts.mqtt;
    this.insecure = opts.insecure === true;
    this.gauge = opts.gauge ?? gaugeOf();
    this.gauge.fill(0);
    this.gauge[GAUGE.budgetBytes] = this.budget;
    this.drops = new DropWarning(log, this.gauge);
    this.sweeper = setInterval(() => this.sweep(), opts.sweepMs ?? POOL_IDLE_MS);
    this.sweeper.unref();
  }

  enqueue(due: DueNotification): void {
    if (this.closed) return;
    let ep = this.endpoints.get(due.uri);
    if (ep === undefined) {
      let url: URL;
      try {
        url = new URL(due.uri);
      } catch {
        this.hostCounts.unparsed().failed++;
        this.tell({ due, ok: false, sent: false, at: new Date().toISOString(), reason: 'invalid endpoint URI' });
        return;
      }
      const host = this.hostCounts.of(url);
      ep = { url, host, lanes: new Array<undefined>(LANES).fill(undefined), queued: 0, waiting: 0, lastSuccessSeq: 0, inHeap: false };
      this.endpoints.set(due.uri, ep);
      this.gauge[GAUGE.endpoints]++;
    }
    if (ep.queued >= this.queueMax) {
      this.drop(ep, due, 'endpointFull', `endpoint queue full (${this.queueMax})`);
      return;
    }
    const bytes = notificationBytes(due);
    if (bytes > this.budget) {
      this.drop(ep, due, 'tooLarge', `notification larger than the notification queue (${bytes} > ${this.budget} bytes)`);
      return;
    }
    const i = hash(due.orderKey) % LANES;
    const lane = (ep.lanes[i] ??= new Lane(ep));
    lane.push({ due, bytes, tag: this.nextTag++ });
    ep.queued++;
    ep.host.queued++;
    if (ep.waiting++ === 0) this.ranking.add(ep, ++this.gauge[GAUGE.endpointsQueued]);
    this.gauge[GAUGE.items]++;
    this.queuedBytes += bytes;
    // The new notification counts too: when its own endpoint is the slowest, it may be the one that goes. The gauge,
    // which /health reads from another thread at any moment, is written once the queue is within its budget again.
    this.gaugeHeld = true;
    while (this.queuedBytes > this.budget) if (!this.dropSlowest()) break;
    this.gaugeHeld = false;
    this.gauge[GAUGE.bytes] = this.queuedBytes;
    if (!lane.busy && lane.waiting > 0) {
      lane.busy = true;
      if (this.starting.push(lane) === 1) setImmediate(this.startLanes);
    }
  }

  /** The subscription was deleted: its waiting notifications are taken out on the next turn (one pass for many). */
  forget(tenant: string, subscriptionId: string): void {
    if (this.forgetting.size === 0) setImmediate(this.purge);
    const tenants = this.forgetting.get(subscriptionId);
    if (tenants === undefined) this.forgetting.set(subscriptionId, new Set([tenant]));
    else tenants.add(tenant);
  }

  /** Notifications waiting or in flight, all endpoints. */
  pending(): number {
    return this.gauge[GAUGE.items]! + this.gauge[GAUGE.inFlight]!;
  }

  stats(): NotificationQueueStats {
    return readGauge(this.gauge);
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.sweeper);
    this.drops.close();
    await Promise.allSettled([...this.pools.values()].map((p) => p.pool.destroy()));
    await this.mqtt?.close();
    this.pools.clear();
  }

  private async drain(lane: Lane<Endpoint>): Promise<void> {
    const ep = lane.endpoint;
    const g = this.gauge;
    try {
      for (let item = this.closed ? undefined : lane.shift(); item !== undefined; item = this.closed ? undefined : lane.shift()) {
        this.leave(ep, item);
        g[GAUGE.inFlight]++;
        lane.sending = item;
        lane.ended = undefined;
        const built = item.due.join === undefined ? undefined : await this.build(item.due);
        const outcome = built === NOT_SENT ? undefined : (built ?? (await this.sendNow(ep, item.due, lane)));
        lane.sending = undefined;
        // Counted out before the report, so whoever the report wakes sees the endpoint's room as it is.
        g[GAUGE.inFlight]--;
        ep.queued--;
        ep.host.queued--;
        if (outcome === undefined) continue;
        if (outcome.sent) ep.host.sent++;
        if (outcome.ok) ep.lastSuccessSeq = ++this.successes;
        else ep.host.failed++;
        this.tell(outcome);
      }
    } finally {
      // A lane left busy would never be drained again: every later notification of its order keys would wait forever.
      lane.busy = false;
    }
  }

  private sendNow(ep: Endpoint, due: DueNotification, lane: Lane<Endpoint>): Promise<DeliveryOutcome> {
    const at = new Date().toISOString();
    if (this.sending !== undefined) this.tellSending(due, at);
    return this.send(ep, due, lane, at);
  }

  /**
   * Builds an unbuilt notification (DueNotification.join) in its turn of its lane, so the ones of its order key
   * behind it wait for it. Undefined when it is ready to send; NOT_SENT when nothing in it may be sent; else the
   * outcome of one that will not be sent.
   */
  private async build(due: DueNotification): Promise<DeliveryOutcome | typeof NOT_SENT | undefined> {
    let reason: string;
    try {
      const completion = this.complete === undefined ? undefined : await this.complete(due);
      if (completion === 'ready') return undefined;
      if (completion === 'empty') return NOT_SENT;
      reason = completion === undefined ? 'notification cannot be built' : SUBSCRIPTION_DELETED;
    } catch (e) {
      this.log.error({ err: e, subscription: due.subscriptionId }, 'notification cannot be built');
      reason = `notification cannot be built: ${e instanceof Error ? e.message : String(e)}`;
    }
    return { due, ok: false, sent: false, at: new Date().toISOString(), reason };
  }

  /** A waiting notification leaves the queue (sent, dropped or purged); in flight or gone, it no longer counts. */
  private leave(ep: Endpoint, item: Waiting): void {
    const g = this.gauge;
    this.queuedBytes -= item.bytes;
    if (!this.gaugeHeld) g[GAUGE.bytes] = this.queuedBytes;
    g[GAUGE.items]--;
    if (--ep.waiting === 0) g[GAUGE.endpointsQueued]--;
  }

  /** Drops the oldest waiting notification of the slowest endpoint; false when nothing waits. */
  private dropSlowest(): boolean {
    const ep = this.ranking.slowest();
    if (ep === undefined) return false;
    let oldest: Lane<Endpoint> | undefined;
    for (const lane of ep.lanes) if (lane !== undefined && lane.headTag < (oldest?.headTag ?? Infinity)) oldest = lane;
    const item = oldest!.shift()!;
    this.leave(ep, item);
    ep.queued--;
    ep.host.queued--;
    this.drop(ep, item.due, 'overBudget', `dropped: the notification queue is over its ${this.budget} bytes`);
    return true;
  }

  /** A notification that did not fit: a failure of its subscription that was not sent. */
  private drop(ep: Endpoint, due: DueNotification, kind: DropKind, reason: string): void {
    this.gauge[GAUGE.dropped]++;
    ep.host.failed++;
    this.drops.note(kind);
    this.tell({ due, ok: false, sent: false, at: new Date().toISOString(), reason });
  }

  private readonly purge = (): void => {
    const deleted = this.forgetting;
    this.forgetting = new Map();
    const gone = (item: Waiting): boolean => deleted.get(item.due.subscriptionId)?.has(item.due.tenant) === true;
    for (const [uri, ep] of this.endpoints) {
      for (const lane of ep.lanes) {
        if (lane === undefined) continue;
        for (const item of lane.removeWhere(gone)) {
          this.leave(ep, item);
          ep.queued--;
          ep.host.queued--;
        }
        // Its request in flight too: a dead receiver would hold the socket and the endpoint until the timeout.
        if (lane.sending !== undefined && gone(lane.sending)) {
          lane.ended = SUBSCRIPTION_DELETED;
          lane.abort?.(SUBSCRIPTION_DELETED);
        }
      }
      if (ep.queued === 0) this.removeEndpoint(uri);
    }
  };

  private removeEndpoint(uri: string): void {
    this.endpoints.delete(uri);
    this.gauge[GAUGE.endpoints]--;
  }

  private tellSending(due: DueNotification, at: string): void {
    try {
      this.sending!(due, at);
    } catch (e) {
      this.log.error({ err: e, subscription: due.subscriptionId }, 'notification sending cannot be recorded');
    }
  }

  /** A throwing report must not end the lane that called it. */
  private tell(outcome: DeliveryOutcome): void {
    try {
      this.report(outcome);
    } catch (e) {
      this.log.error({ err: e, subscription: outcome.due.subscriptionId }, 'notification outcome cannot be recorded');
    }
  }

  private poolFor(url: URL): Pool {
    const origin = url.origin;
    let entry = this.pools.get(origin);
    if (entry === undefined) {
      entry = {
        pool: new (undici().Pool)(origin, {
          connections: POOL_CONNECTIONS,
          keepAliveTimeout: 30_000,
          connect: { timeout: DEFAULT_TIMEOUT_MS, ...(this.insecure ? { rejectUnauthorized: false } : {}) },
        }),
        lastUsed: 0,
      };
      this.pools.set(origin, entry);
    }
    entry.lastUsed = Date.now();
    return entry.pool;
  }

  /** Never throws: whatever goes wrong building or sending the request is the notification's failure. */
  private async send(ep: Endpoint, due: DueNotification, lane: Lane<Endpoint>, at: string): Promise<DeliveryOutcome> {
    const timeout = due.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    // CIM 009 §5.3.1: notifiedAt is the time the notification is sent.
    const body = `{"notifiedAt":"${at}",${due.body.slice(1)}`;
    let reason: string | undefined;
    try {
      if (ep.url.protocol === 'mqtt:' || ep.url.protocol === 'mqtts:') {
        if (this.mqtt === undefined) return { due, ok: false, sent: false, at, reason: 'the MQTT bridge is not loaded' };
        reason = await this.sendMqtt(due, body, lane, timeout);
      } else if (ep.url.protocol === 'urn:') {
        // A WebSocket connection of this broker: handed to the front thread, which writes it on the connection.
        if (this.webSocket === undefined) return { due, ok: false, sent: false, at, reason: 'no WebSocket transport' };
        this.webSocket({ uri: due.uri, subscriptionId: due.subscriptionId, headers: due.headers, body });
      } else {
        reason = await this.sendHttp(ep, due, body, lane, timeout);
      }
    } catch (e) {
      reason = e instanceof Error ? `${(e as { code?: string }).code ?? e.name}: ${e.message}` : String(e);
    }
    if (reason === undefined) return { due, ok: true, sent: true, at };
    if (this.log.isLevelEnabled('debug')) this.log.debug({ uri: due.uri, subscription: due.subscriptionId, reason }, 'notification failed');
    return { due, ok: false, sent: true, at, reason };
  }

  /** undefined when answered 2xx, else why not; ended early by its timeout or by its subscription's deletion. */
  private sendHttp(ep: Endpoint, due: DueNotification, body: string, lane: Lane<Endpoint>, timeout: number): Promise<string | undefined> {
    // The endpoint's pool first: undici's load (at its first use in this thread) is no part of its time to answer.
    const pool = this.poolFor(ep.url);
    const request = new NotificationRequest();
    lane.abort = (reason) => request.abort(reason);
    if (lane.ended !== undefined) request.abort(lane.ended);
    const timer = setTimeout(() => request.abort(`no answer within ${timeout} ms`), timeout);
    pool.dispatch(
      {
        method: 'POST',
        path: ep.url.pathname + ep.url.search,
        headers: requestHeaders(due.headers),
        body,
        headersTimeout: timeout,
        bodyTimeout: timeout,
      },
      request,
    );
    return request.done.finally(() => {
      clearTimeout(timer);
      lane.abort = undefined;
    });
  }

  /** seed 001 §6.1: one published message; the outcome counts as an HTTP request's would. */
  private async sendMqtt(due: DueNotification, body: string, lane: Lane<Endpoint>, timeout: number): Promise<string | undefined> {
    const controller = new AbortController();
    lane.abort = (reason) => controller.abort(reason);
    if (lane.ended !== undefined) controller.abort(lane.ended);
    try {
      return await this.mqtt!.send(due, body, timeout, controller.signal);
    } finally {
      lane.abort = undefined;
    }
  }

  private sweep(): void {
    const now = Date.now();
    this.mqtt?.sweep(now);
    for (const [origin, entry] of this.pools) {
      if (now - entry.lastUsed < POOL_IDLE_MS) continue;
      this.pools.delete(origin);
      void entry.pool.close().catch(() => undefined);
    }
    for (const [uri, ep] of this.endpoints) if (ep.queued === 0) this.removeEndpoint(uri);
  }
}

/**
 * The headers of a notification request, named as given (undici sends them so: Link, Content-Type, NGSILD-Tenant and
 * receiverInfo keys as the subscription wrote them, for receivers that compare names case-sensitively although RFC
 * 9110 §5.1 makes them case-insensitive). A later header of a name replaces an earlier one in any case (receiverInfo
 * over NGSILD-Tenant), so no name goes out twice.
 */
export function requestHeaders(flat: readonly string[]): Record<string, string> {
  const headers: Record<string, string> = {};
  const given = new Map<string, string>();
  for (let i = 0; i < flat.length; i += 2) {
    const name = flat[i]!;
    const lower = name.toLowerCase();
    const earlier = given.get(lower);
    if (earlier !== undefined && earlier !== name) delete headers[earlier];
    given.set(lower, name);
    headers[name] = flat[i + 1]!;
  }
  return headers;
}

/** FNV-1a of the order key: picks the lane. */
function hash(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}
