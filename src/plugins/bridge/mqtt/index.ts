// The MQTT bridge (seed 001 §2.2, §2.3, §4.2, §6.2, §7): one client to the configured server, opened in the
// background (MQTT.js reconnects by itself; every inbound topic is subscribed again on each connection), one exact
// topic per Channel. A message on a topic is a sample of its attribute; a write of the attribute is published on it.
// Without a `server` the bridge only delivers notifications (src/notify/mqtt-sender.ts) and refuses every Channel.
import mqtt, { type IClientOptions, type MqttClient } from 'mqtt';
import { randomBytes } from 'node:crypto';
import type { Bridge, BridgeHost, ChannelInfoEntry, ChannelVerdict } from '../../../bridge/contract.js';
import { BRIDGE_ABI_VERSION } from '../../../bridge/contract.js';
import {
  MqttEndpointError,
  checkTopic,
  parseMqttUri,
  parseQos,
  parseVersion,
  type MqttQos,
  type MqttServer,
  type MqttVersion,
} from '../../../ngsild/subscription/mqtt-endpoint.js';

export const bridgeAbi = BRIDGE_ABI_VERSION;

const RECONNECT_MS = 1000;
const REPEAT_LOG_MS = 60_000;
/** A connection the server refused is tried again after this long (MQTT.js gives up on it). */
const REFUSED_RETRY_MS = 5000;
const SERVER_MEMBERS = new Set(['uri', 'MQTT-Version', 'clientId']);

interface ServerConfig {
  server: MqttServer;
  version: MqttVersion;
  clientId: string | undefined;
}

/** seed 001 §2.2: `mqtt.server` {uri, MQTT-Version, clientId}; undefined: no server. Throws the refusal's line. */
function serverConfig(config: unknown): ServerConfig | undefined {
  if (config === undefined) return undefined;
  if (typeof config !== 'object' || config === null || Array.isArray(config)) throw new Error('--bridgeConfig: mqtt must be an object');
  const s = (config as Record<string, unknown>).server;
  if (s === undefined) return undefined;
  if (typeof s !== 'object' || s === null || Array.isArray(s)) throw new Error('--bridgeConfig: mqtt.server must be an object');
  const server = s as Record<string, unknown>;
  for (const k of Object.keys(server))
    if (!SERVER_MEMBERS.has(k)) throw new Error(`--bridgeConfig: mqtt.server.${k.slice(0, 64)}: not a member`);
  if (typeof server.uri !== 'string') throw new Error('--bridgeConfig: mqtt.server.uri: a string is needed');
  try {
    const parsed = parseMqttUri(server.uri, false);
    const version = server['MQTT-Version'] === undefined ? 'mqtt5.0' : parseVersion(String(server['MQTT-Version']));
    if (server.clientId !== undefined && (typeof server.clientId !== 'string' || server.clientId === '' || server.clientId.length > 256))
      throw new MqttEndpointError('clientId: a non-empty string of at most 256 characters is needed');
    return { server: parsed, version, clientId: server.clientId as string | undefined };
  } catch (e) {
    // The URI's password is not repeated: the message names the part that is wrong.
    if (e instanceof MqttEndpointError) throw new Error(`--bridgeConfig: mqtt.server: ${e.message.replace(/'[^']*'/, 'the uri')}`);
    throw e;
  }
}

export function bridgeCheckConfig(config: unknown): void {
  serverConfig(config);
}

interface Channel {
  qos: MqttQos;
  active: boolean;
}

class MqttBridge implements Bridge {
  private readonly channels = new Map<string, Channel>();
  /** MQTT 3.1.1 has no no-local: the last payload published per topic, dropped once when it comes back (rule 5). */
  private readonly lastPublished = new Map<string, string>();
  private client: MqttClient | undefined;
  private retry: NodeJS.Timeout | undefined;
  private stopping = false;

  constructor(
    private readonly config: ServerConfig | undefined,
    private readonly host: BridgeHost,
  ) {}

  channelAdd(endpoint: string): ChannelVerdict {
    // seed 001 §2.3 rule 6, §7: without a server a Channel is refused.
    if (this.config === undefined)
      return { state: 'refused', reason: 'the MQTT bridge has no server (mqtt.server): it only delivers notifications' };
    // Rule 2: an exact topic; a wildcard makes the Channel dormant.
    if (/[+#]/.test(endpoint))
      return { state: 'dormant', reason: `the topic '${endpoint.slice(0, 200)}' holds a wildcard (+ or #): a Channel's topic is exact` };
    try {
      checkTopic(endpoint, false);
    } catch (e) {
      return { state: 'dormant', reason: (e as Error).message };
    }
    this.channels.set(endpoint, { qos: 0, active: true });
    return { state: 'active' };
  }

  /** Rule 3: MQTT-QoS (0, 1, 2) only; an unknown key or a bad value refuses the Channel. */
  channelAddInfo(endpoint: string, info: readonly ChannelInfoEntry[]): ChannelVerdict {
    const channel = this.channels.get(endpoint);
    if (channel === undefined) return { state: 'refused', reason: 'not added' };
    for (const kv of info) {
      if (kv.key !== 'MQTT-QoS') {
        this.channels.delete(endpoint);
        return { state: 'refused', reason: `unknown channelInfo key '${kv.key.slice(0, 64)}' (the MQTT bridge takes MQTT-QoS)` };
      }
      try {
        channel.qos = parseQos(kv.value);
      } catch (e) {
        this.channels.delete(endpoint);
        return { state: 'refused', reason: (e as Error).message };
      }
    }
    return { state: 'active' };
  }

  async start(): Promise<void> {
    if (this.config === undefined) return;
    const { server, version, clientId } = this.config;
    const opts: IClientOptions = {
      protocol: server.secure ? 'mqtts' : 'mqtt',
      host: server.host,
      port: server.port,
      protocolVersion: version === 'mqtt3.1.1' ? 4 : 5,
      clientId: clientId ?? `ldbroker-bridge-${randomBytes(6).toString('hex')}`,
      clean: true,
      reconnectPeriod: RECONNECT_MS,
      connectTimeout: 10_000,
      // Subscribed again below on every connection, with no-local: MQTT.js's own resubscription is not needed.
      resubscribe: false,
    };
    if (server.username !== undefined) opts.username = server.username;
    if (server.password !== undefined) opts.password = server.password;
    // Rule 1: in the background; a server that is not up yet stops nothing.
    const client = mqtt.connect(opts);
    this.client = client;
    client.on('connect', () => this.subscribeAll(client));
    // A server that refuses or is down is retried every second: said when the reason changes, else once a minute.
    let said = '';
    let saidAt = 0;
    client.on('error', (e) => {
      const now = Date.now();
      if (e.message === said && now - saidAt < REPEAT_LOG_MS) return;
      said = e.message;
      saidAt = now;
      this.host.log.warn({ host: server.host, port: server.port, err: e.message }, 'MQTT bridge connection failed');
      // A connection the server refused (a CONNACK code: bad user or password, not authorized) is not retried by
      // MQTT.js: retried here, less often, so a server whose users were being set up is joined once they are.
      if (typeof (e as { code?: unknown }).code === 'number') this.retryLater(client);
    });
    client.on('connect', () => {
      said = '';
    });
    client.on('message', (topic, payload) => this.message(topic, payload));
  }

  publish(endpoint: string, value: unknown): void {
    const channel = this.channels.get(endpoint);
    if (channel === undefined || this.client === undefined) return;
    // Rule 4: a write publishes the value's JSON.
    const payload = JSON.stringify(value) ?? 'null';
    if (this.config!.version === 'mqtt3.1.1') this.lastPublished.set(endpoint, payload);
    this.client.publish(endpoint, payload, { qos: channel.qos }, (err) => {
      if (err) this.host.log.warn({ topic: endpoint, err: err.message }, 'MQTT bridge publish failed');
    });
  }

  async stop(): Promise<void> {
    this.stopping = true;
    clearTimeout(this.retry);
    await this.client?.endAsync(true);
  }

  private retryLater(client: MqttClient): void {
    if (this.retry !== undefined || this.stopping) return;
    this.retry = setTimeout(() => {
      this.retry = undefined;
      if (!this.stopping && !client.connected && !client.reconnecting) client.reconnect();
    }, REFUSED_RETRY_MS);
  }

  private subscribeAll(client: MqttClient): void {
    const topics: Record<string, { qos: MqttQos; nl?: boolean }> = {};
    let any = false;
    for (const [topic, channel] of this.channels) {
      if (!channel.active) continue;
      // Rule 5: MQTT 5's no-local: the bridge's own publications do not come back.
      topics[topic] = this.config!.version === 'mqtt5.0' ? { qos: channel.qos, nl: true } : { qos: channel.qos };
      any = true;
    }
    if (!any) return;
    client.subscribe(topics, (err, granted) => {
      if (err) {
        this.host.log.warn({ err: err.message }, 'MQTT bridge cannot subscribe');
        return;
      }
      for (const g of granted ?? []) {
        // MQTT 5.0 §3.9.3: a reason code of 0x80 or above refuses the subscription.
        if (g.qos >= 0x80)
          this.host.channelState(g.topic, { state: 'dormant', reason: `the MQTT server refused the subscription (${g.qos})` });
      }
    });
  }

  private message(topic: string, payload: Buffer): void {
    if (!this.channels.has(topic)) return;
    const text = payload.toString('utf8');
    if (this.lastPublished.get(topic) === text) {
      this.lastPublished.delete(topic);
      return;
    }
    // Rule 4: JSON is the value as it is; anything else a JSON string.
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      value = text;
    }
    this.host.sample(topic, value);
  }
}

export function bridgeOpen(config: unknown, host: BridgeHost): Bridge {
  return new MqttBridge(serverConfig(config), host);
}
