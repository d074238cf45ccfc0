// HTTP delivery of notifications (CIM 009 v1.8 §5.3.2 HTTP binding) on the notifier thread: one undici keep-alive
// Pool per origin, one bounded queue per endpoint split in lanes by order key, a timeout per request. A slow or
// dead receiver only fills its own queue; what does not fit is a failure of its subscription, never memory.
//
// Order (issue 4: "notifications for one entity and subscription keep their order"). The order key is subscription
// and entity; seq is the store's write sequence of the change (LMDB's transaction id), so for two writes A and B of
// one entity where A committed before B, seq(A) < seq(B). A lane sends one notification at a time, its waiting
// items of one order key sorted by seq (lane.ts), and it starts sending on the next event-loop turn (setImmediate),
// so the notifications that arrived together are sorted before the first goes out. What is guaranteed: when A's
// notification reaches the notifier before B's is sent, A's is sent (and answered) before B's. That holds for every
// write that happens before another (B sent after A's response: A's worker posted before answering), and for
// concurrent writes from several pipeline workers whose messages arrive within one turn or while the lane is busy.
// What is not: a notification that arrives after a later one of its key already went out is sent late, not dropped.
import { Pool } from 'undici';
import type { Logger } from '../logger.js';
import type { DueNotification } from './channel.js';
import { Lane } from './lane.js';

/** Due notifications one endpoint may hold (queued and in flight). */
export const ENDPOINT_QUEUE_MAX = 10_000;
/** Requests in flight per endpoint. */
const LANES = 8;
const POOL_CONNECTIONS = 32;
export const DEFAULT_TIMEOUT_MS = 10_000;
/** Pools idle this long are closed, so a deleted subscription's receiver holds no sockets. */
const POOL_IDLE_MS = 60_000;

export interface DeliveryOutcome {
  due: DueNotification;
  ok: boolean;
  /** False when no request went out (queue full, unusable URI): a failure that was not sent. */
  sent: boolean;
  /** ISO time the request was sent (or refused for overflow). */
  at: string;
  /** Why it failed: HTTP status, timeout, connection error, queue full. */
  reason?: string;
}

interface Endpoint {
  url: URL;
  lanes: Lane<Endpoint>[];
  queued: number;
}

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

  constructor(private readonly report: (o: DeliveryOutcome) => void, private readonly log: Logger, opts: { queueMax?: number } = {}) {
    this.queueMax = opts.queueMax ?? ENDPOINT_QUEUE_MAX;
    this.sweeper = setInterval(() => this.sweep(), POOL_IDLE_MS);
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
        this.tell({ due, ok: false, sent: false, at: new Date().toISOString(), reason: 'invalid endpoint URI' });
        return;
      }
      const created: Endpoint = { url, lanes: [], queued: 0 };
      for (let i = 0; i < LANES; i++) created.lanes.push(new Lane(created));
      ep = created;
      this.endpoints.set(due.uri, ep);
    }
    if (ep.queued >= this.queueMax) {
      this.tell({ due, ok: false, sent: false, at: new Date().toISOString(), reason: `endpoint queue full (${this.queueMax})` });
      return;
    }
    ep.queued++;
    const lane = ep.lanes[hash(due.orderKey) % LANES]!;
    lane.push(due);
    if (!lane.busy) {
      lane.busy = true;
      if (this.starting.push(lane) === 1) setImmediate(this.startLanes);
    }
  }

  /** Notifications waiting or in flight, all endpoints. */
  pending(): number {
    let n = 0;
    for (const ep of this.endpoints.values()) n += ep.queued;
    return n;
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.sweeper);
    await Promise.allSettled([...this.pools.values()].map((p) => p.pool.destroy()));
    this.pools.clear();
  }

  private async drain(lane: Lane<Endpoint>): Promise<void> {
    const ep = lane.endpoint;
    try {
      for (let due = lane.shift(); due !== undefined && !this.closed; due = lane.shift()) {
        const outcome = await this.send(ep, due);
        // Counted out before the report, so whoever the report wakes sees the endpoint's room as it is.
        ep.queued--;
        this.tell(outcome);
      }
    } finally {
      // A lane left busy would never be drained again: every later notification of its order keys would wait forever.
      lane.busy = false;
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
      entry = { pool: new Pool(origin, { connections: POOL_CONNECTIONS, keepAliveTimeout: 30_000, connect: { timeout: DEFAULT_TIMEOUT_MS } }), lastUsed: 0 };
      this.pools.set(origin, entry);
    }
    entry.lastUsed = Date.now();
    return entry.pool;
  }

  /** Never throws: whatever goes wrong building or sending the request is the notification's failure. */
  private async send(ep: Endpoint, due: DueNotification): Promise<DeliveryOutcome> {
    const at = new Date().toISOString();
    const timeout = due.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), timeout);
    try {
      // CIM 009 §5.3.1: notifiedAt is the time the notification is sent.
      const body = `{"notifiedAt":"${at}",${due.body.slice(1)}`;
      const headers: Record<string, string> = {};
      for (let i = 0; i < due.headers.length; i += 2) headers[due.headers[i]!.toLowerCase()] = due.headers[i + 1]!;
      const res = await this.poolFor(ep.url).request({
        method: 'POST',
        path: ep.url.pathname + ep.url.search,
        headers,
        body,
        headersTimeout: timeout,
        bodyTimeout: timeout,
        signal: controller.signal,
      });
      await res.body.dump();
      if (res.statusCode >= 200 && res.statusCode < 300) return { due, ok: true, sent: true, at };
      return { due, ok: false, sent: true, at, reason: `HTTP ${res.statusCode}` };
    } catch (e) {
      const reason = controller.signal.aborted ? `no answer within ${timeout} ms` : e instanceof Error ? `${(e as { code?: string }).code ?? e.name}: ${e.message}` : String(e);
      if (this.log.isLevelEnabled('debug')) this.log.debug({ uri: due.uri, reason }, 'notification failed');
      return { due, ok: false, sent: true, at, reason };
    } finally {
      clearTimeout(timer);
    }
  }

  private sweep(): void {
    const now = Date.now();
    for (const [origin, entry] of this.pools) {
      if (now - entry.lastUsed < POOL_IDLE_MS) continue;
      this.pools.delete(origin);
      void entry.pool.close().catch(() => undefined);
    }
    for (const [uri, ep] of this.endpoints) if (ep.queued === 0) this.endpoints.delete(uri);
  }
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
