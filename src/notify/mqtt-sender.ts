// MQTT delivery of notifications (seed 001 §2.1, §6.1; CIM 009 v1.8 §5.3.2 MQTT binding) on the notifier thread,
// beside the HTTP sender of delivery.ts and behind the same lanes, budget and counters: one client per server
// (scheme, host, port, user, password, protocol version) shared by every subscription that names it, each
// notification one published message `{metadata, body}` at the endpoint's QoS. Loaded with the MQTT bridge.
import mqtt, { type IClientOptions, type MqttClient } from 'mqtt';
import { randomBytes } from 'node:crypto';
import type { Logger } from '../logger.js';
import { parseMqttUri, type MqttEndpoint, type MqttNotifierInfo } from '../ngsild/subscription/mqtt-endpoint.js';
import type { DueNotification } from './channel.js';

/** Clients idle this long are closed, so a deleted subscription's server holds no connection. */
const CLIENT_IDLE_MS = 60_000;
const RECONNECT_MS = 1000;
/** Parsed endpoints kept (a subscription's URI is parsed once, not per notification). */
const ENDPOINTS_KEPT = 10_000;

interface ServerClient {
  client: MqttClient;
  lastUsed: number;
  /** The last connection error, told when a notification cannot be sent for want of a connection. */
  lastError: string | undefined;
  /** When a notification last asked for a connection again. */
  triedAt: number;
  /** The connection closed (and MQTT.js may have given up on it: it does after a refusal). */
  closed: boolean;
}

/** What became of one notification: undefined when the server took it (at its QoS), else why not. */
export type MqttSendResult = string | undefined;

export class MqttSender {
  private readonly clients = new Map<string, ServerClient>();
  private readonly endpoints = new Map<string, MqttEndpoint>();

  constructor(
    private readonly log: Logger,
    /** --insecureNotif: accept a self-signed certificate of an mqtts:// server (seed 001 §5). */
    private readonly insecure: boolean,
  ) {}

  /**
   * Publishes `body` (the Notification's JSON with notifiedAt) on the endpoint's topic. A server not connected
   * within the timeout is a failure, and nothing is queued to be published later. Never throws.
   */
  async send(due: DueNotification, body: string, timeoutMs: number, signal: AbortSignal): Promise<MqttSendResult> {
    let ep: MqttEndpoint;
    try {
      ep = this.endpointOf(due.uri);
    } catch (e) {
      return `invalid MQTT endpoint: ${e instanceof Error ? e.message : String(e)}`;
    }
    const info: MqttNotifierInfo = due.mqtt ?? { qos: 0, version: 'mqtt5.0' };
    const server = this.clientFor(ep, info);
    const message = `{"metadata":${JSON.stringify(metadataOf(due.headers))},"body":${body}}`;
    return new Promise<MqttSendResult>((resolve) => {
      let done = false;
      const finish = (result: MqttSendResult): void => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        signal.removeEventListener('abort', aborted);
        server.client.off('connect', publish);
        resolve(result);
      };
      const timer = setTimeout(
        () =>
          finish(
            server.client.connected
              ? `no answer within ${timeoutMs} ms`
              : `MQTT server not connected within ${timeoutMs} ms${server.lastError === undefined ? '' : ` (${server.lastError})`}`,
          ),
        timeoutMs,
      );
      const aborted = (): void => finish(typeof signal.reason === 'string' ? signal.reason : 'aborted');
      const publish = (): void => {
        if (done) return;
        server.client.publish(ep.topic, message, { qos: info.qos }, (err) => {
          finish(err === undefined || err === null ? undefined : `MQTT publish failed: ${err.message}`);
        });
      };
      signal.addEventListener('abort', aborted);
      if (server.client.connected) publish();
      else {
        server.client.once('connect', publish);
        // MQTT.js does not retry a connection the server refused (bad user or password): a new notification does.
        if (server.closed && !server.client.reconnecting && Date.now() - server.triedAt >= RECONNECT_MS) {
          server.triedAt = Date.now();
          server.closed = false;
          server.client.reconnect();
        }
      }
    });
  }

  /** Open clients: one per server and protocol version. */
  get connections(): number {
    return this.clients.size;
  }

  /** Closes the clients not used for CLIENT_IDLE_MS. */
  sweep(now: number): void {
    for (const [key, server] of this.clients) {
      if (now - server.lastUsed < CLIENT_IDLE_MS) continue;
      this.clients.delete(key);
      server.client.end(true);
    }
  }

  async close(): Promise<void> {
    const ending = [...this.clients.values()].map((s) => s.client.endAsync(true).catch(() => undefined));
    this.clients.clear();
    await Promise.all(ending);
  }

  private endpointOf(uri: string): MqttEndpoint {
    let ep = this.endpoints.get(uri);
    if (ep === undefined) {
      ep = parseMqttUri(uri, true);
      if (this.endpoints.size >= ENDPOINTS_KEPT) this.endpoints.clear();
      this.endpoints.set(uri, ep);
    }
    return ep;
  }

  private clientFor(ep: MqttEndpoint, info: MqttNotifierInfo): ServerClient {
    const key = JSON.stringify([ep.secure, ep.host, ep.port, ep.username ?? null, ep.password ?? null, info.version]);
    let server = this.clients.get(key);
    if (server === undefined) {
      const opts: IClientOptions = {
        protocol: ep.secure ? 'mqtts' : 'mqtt',
        host: ep.host,
        port: ep.port,
        protocolVersion: info.version === 'mqtt3.1.1' ? 4 : 5,
        clientId: `ldbroker-notify-${randomBytes(6).toString('hex')}`,
        clean: true,
        reconnectPeriod: RECONNECT_MS,
        connectTimeout: 10_000,
        rejectUnauthorized: !this.insecure,
      };
      if (ep.username !== undefined) opts.username = ep.username;
      if (ep.password !== undefined) opts.password = ep.password;
      const created: ServerClient = { client: mqtt.connect(opts), lastUsed: 0, lastError: undefined, triedAt: 0, closed: false };
      created.client.on('error', (e) => {
        // Retried every second: said when the reason changes. The server's address only: no user or password.
        if (created.lastError !== e.message)
          this.log.warn({ host: ep.host, port: ep.port, err: e.message }, 'MQTT notification server connection failed');
        created.lastError = e.message;
      });
      created.client.on('connect', () => {
        created.lastError = undefined;
        created.closed = false;
      });
      created.client.on('close', () => {
        created.closed = true;
      });
      server = created;
      this.clients.set(key, server);
    }
    server.lastUsed = Date.now();
    return server;
  }
}

/**
 * seed 001 §2.1: the message's metadata is Content-Type, Link and the receiverInfo entries (and NGSILD-Tenant), as
 * the HTTP binding would send them as headers; a later entry of a name replaces an earlier one.
 */
export function metadataOf(flat: readonly string[]): Record<string, string> {
  const metadata: Record<string, string> = {};
  for (let i = 0; i + 1 < flat.length; i += 2) metadata[flat[i]!] = flat[i + 1]!;
  return metadata;
}
