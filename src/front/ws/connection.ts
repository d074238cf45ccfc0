// One WebSocket connection of the NGSI-LD transport: its messages run through the dispatcher as exchanges, several at
// once, answered in the order they finish and matched by correlation id. Its memory is bounded three ways: requests
// running (maxInFlight), requests waiting for their turn (maxQueueBytes, past it each is answered 503 at once), and
// answers the client has not read (maxBackpressure, past it the connection is closed: a slow reader cannot grow the
// broker's memory, seed 000 §5.1 and STYLE "one client must never slow another").
import type { Exchange } from '../exchange.js';
import { LdError } from '../../ngsild/problem.js';
import { API_PREFIX } from '../../ngsild/operations.js';
import { problemResult } from '../../pipeline/problem-result.js';
import type { Logger } from '../../logger.js';
import { isRejected, readWsMessage, type WsRequest } from './message.js';
import { WsExchange, encodeAnswer } from './ws-exchange.js';

export interface WsLimits {
  maxBodySize: number;
  /** Messages of one connection running in the pipeline at once. */
  maxInFlight: number;
  /** Bytes of messages of one connection waiting for their turn. */
  maxQueueBytes: number;
  /** Bytes of answers (and notifications) a connection's client has not read before it is closed (--wsMaxBackpressure). */
  maxBackpressure: number;
}

/** What a connection needs of the server's socket. */
export interface WsSocket {
  send(bytes: Uint8Array): void;
  bufferedAmount(): number;
  /** Closes at once, without waiting for the client (it is not reading). */
  terminate(): void;
}

/** Tenants one connection may make subscriptions in: each is asked once when it closes (ws/notifications.ts). */
export const MAX_SUBSCRIPTION_TENANTS = 64;
const SUBSCRIPTIONS_PATH = `${API_PREFIX}/subscriptions`;

export class WsConnection {
  open = true;
  /** Tenants ('' the default) this connection sent subscription creates and updates to. */
  readonly subscriptionTenants = new Set<string>();
  private readonly queue: WsRequest[] = [];
  private queueBytes = 0;
  private inFlight = 0;
  /** Requests running, told when the socket closes (pool-runner.ts skips those no thread started). */
  private readonly running = new Set<WsExchange>();
  /** Below this many unread bytes the connection takes more of its waiting messages (a quarter of the bound). */
  private readonly resumeBelow: number;

  constructor(
    /** The connection's identifier: `urn:ngsi-ld:WebSocket:<uuid>`, the endpoint of its subscriptions. */
    readonly id: string,
    private readonly socket: WsSocket,
    private readonly limits: WsLimits,
    private readonly run: (ex: Exchange) => Promise<void>,
    private readonly log: Logger,
  ) {
    this.resumeBelow = Math.max(1, Math.floor(limits.maxBackpressure / 4));
  }

  /** A message as the server received it; `bytes` is only valid during this call (uWS neuters it after). */
  message(bytes: ArrayBuffer): void {
    if (!this.open) return;
    const m = readWsMessage(bytes, this.limits.maxBodySize);
    if (isRejected(m)) return this.refuse(m.correlationId, m.problem);
    if ((m.method === 'POST' || m.method === 'PATCH') && m.path.startsWith(SUBSCRIPTIONS_PATH)) {
      const tenant = m.headers['ngsild-tenant'] ?? '';
      if (!this.subscriptionTenants.has(tenant)) {
        if (this.subscriptionTenants.size >= MAX_SUBSCRIPTION_TENANTS)
          return this.refuse(
            m.correlationId,
            new LdError('BadRequestData', `a WebSocket connection makes subscriptions in ${MAX_SUBSCRIPTION_TENANTS} tenants at most`),
          );
        this.subscriptionTenants.add(tenant);
      }
    }
    if (this.queueBytes + m.size > this.limits.maxQueueBytes && this.queue.length > 0) {
      // Its queue is full because it does not read what it was answered: a slow reader, not a fast writer.
      if (this.socket.bufferedAmount() >= this.resumeBelow) return this.slowReader();
      const e = new LdError('Unavailable', `this connection holds ${this.queueBytes} bytes of requests waiting already; retry later`);
      return this.refuse(m.correlationId, e, ['Retry-After', '1']);
    }
    this.queue.push(m);
    this.queueBytes += m.size;
    this.pump();
  }

  /** The first message of a connection: its identifier, the endpoint of subscriptions notified on it. */
  hello(): void {
    this.send(new TextEncoder().encode(JSON.stringify({ metadata: { connection: this.id } })));
  }

  /** The client read some answers (uWS drain): waiting messages may go on. */
  drain(): void {
    this.pump();
  }

  /**
   * The socket is gone: waiting messages are dropped; running ones answer nowhere, and those a pipeline thread has not
   * started are not run (as for an HTTP client that went away).
   */
  closed(): void {
    this.open = false;
    this.queue.length = 0;
    this.queueBytes = 0;
    const running = [...this.running];
    this.running.clear();
    for (const ex of running) ex.closed();
  }

  /** Sends one message (an answer or a notification); closes the connection once its unread bytes pass the bound. */
  send(bytes: Uint8Array): void {
    if (!this.open) return;
    this.socket.send(bytes);
    if (this.socket.bufferedAmount() > this.limits.maxBackpressure) this.slowReader();
  }

  private slowReader(): void {
    const unread = this.socket.bufferedAmount();
    const waiting = this.queueBytes;
    this.log.warn(
      { connection: this.id, unread, waiting, limit: this.limits.maxBackpressure },
      'websocket closed: the client does not read its answers',
    );
    this.closed();
    this.socket.terminate();
  }

  private pump(): void {
    while (
      this.open &&
      this.queue.length > 0 &&
      this.inFlight < this.limits.maxInFlight &&
      this.socket.bufferedAmount() < this.resumeBelow
    ) {
      const m = this.queue.shift()!;
      this.queueBytes -= m.size;
      this.inFlight++;
      const ex = new WsExchange(m, this.id, this.limits.maxBodySize, (bytes) => this.send(bytes));
      this.running.add(ex);
      void this.run(ex).finally(() => {
        this.running.delete(ex);
        this.inFlight--;
        this.pump();
      });
    }
  }

  private refuse(correlationId: string | null, problem: LdError, headers: string[] = []): void {
    const result = problemResult(problem.toProblem(), headers);
    this.send(encodeAnswer(correlationId, result.status, result.headers, result.body));
  }
}
