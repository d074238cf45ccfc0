// MQTT notification endpoints (seed 001 §2.1, CIM 009 v1.8 §5.3.2 MQTT binding): the URI
// `mqtt[s]://[user[:password]@]host[:port]/topic` and the notifierInfo keys MQTT-QoS and MQTT-Version, read once
// where a subscription is validated (a 400 names what is wrong) and again where the notifier connects.

export type MqttVersion = 'mqtt3.1.1' | 'mqtt5.0';
export type MqttQos = 0 | 1 | 2;

/** seed 001 §8: default ports. */
export const MQTT_DEFAULT_PORT = 1883;
export const MQTTS_DEFAULT_PORT = 8883;
export const MQTT_VERSIONS: readonly MqttVersion[] = ['mqtt3.1.1', 'mqtt5.0'];
/** MQTT 3.1.1 §1.5.3 and 5.0 §1.5.4: a UTF-8 string is at most 65,535 bytes, a topic too. */
const MAX_TOPIC_BYTES = 65_535;

export interface MqttServer {
  secure: boolean;
  host: string;
  port: number;
  username: string | undefined;
  password: string | undefined;
}

export interface MqttEndpoint extends MqttServer {
  topic: string;
}

/** What cannot be used, said for a 400 or a start-up refusal (the caller names the member). */
export class MqttEndpointError extends Error {
  override name = 'MqttEndpointError';
}

/**
 * A server URI, with a topic (`topic: true`, a notification endpoint) or without one (a bridge's server,
 * seed 001 §2.2). Userinfo is percent-decoded; a host is a name, an IPv4 address or a bracketed IPv6 address.
 */
export function parseMqttUri(uri: string, topic: true): MqttEndpoint;
export function parseMqttUri(uri: string, topic: false): MqttServer;
export function parseMqttUri(uri: string, topic: boolean): MqttServer | MqttEndpoint {
  const m = /^(mqtts?):\/\/(?:([^@/?#]*)@)?(\[[0-9a-fA-F:.]+\]|[^:/?#[\]@]+)(?::(\d{1,5}))?(\/[^?]*)?$/i.exec(uri);
  if (m === null) throw new MqttEndpointError(`'${uri.slice(0, 200)}' is not mqtt[s]://[user[:password]@]host[:port]/topic`);
  const secure = m[1]!.toLowerCase() === 'mqtts';
  const port = m[4] === undefined ? (secure ? MQTTS_DEFAULT_PORT : MQTT_DEFAULT_PORT) : Number(m[4]);
  if (port < 1 || port > 65535) throw new MqttEndpointError(`port ${m[4]} is out of range`);
  let username: string | undefined;
  let password: string | undefined;
  if (m[2] !== undefined) {
    const colon = m[2].indexOf(':');
    try {
      username = decodeURIComponent(colon < 0 ? m[2] : m[2].slice(0, colon));
      password = colon < 0 ? undefined : decodeURIComponent(m[2].slice(colon + 1));
    } catch {
      throw new MqttEndpointError('the user or password is not valid percent-encoding');
    }
  }
  const server: MqttServer = { secure, host: m[3]!.replace(/^\[|\]$/g, ''), port, username, password };
  const path = m[5] ?? '';
  if (!topic) {
    if (path !== '' && path !== '/') throw new MqttEndpointError('a server URI has no topic');
    return server;
  }
  // A `#` read as the topic's (not a fragment): refused below as the wildcard it would be.
  let name: string;
  try {
    name = decodeURIComponent(path.slice(1).replace(/#/g, '%23'));
  } catch {
    throw new MqttEndpointError('the topic is not valid percent-encoding');
  }
  checkTopic(name, false);
  return { ...server, topic: name };
}

/**
 * A topic a message is published on (MQTT 5.0 §4.7): not empty, no wildcard, no NUL, at most 65,535 bytes. A
 * subscription's topic filter allows wildcards (`filter: true`); the bridge refuses them by its own rule (§2.3).
 */
export function checkTopic(topic: string, filter: boolean): void {
  if (topic === '') throw new MqttEndpointError('the topic is empty');
  if (!filter && /[+#]/.test(topic)) throw new MqttEndpointError(`the topic '${topic.slice(0, 200)}' holds a wildcard (+ or #)`);
  if (topic.includes('\0')) throw new MqttEndpointError('the topic holds a NUL character');
  if (Buffer.byteLength(topic) > MAX_TOPIC_BYTES) throw new MqttEndpointError(`the topic is longer than ${MAX_TOPIC_BYTES} bytes`);
}

/** seed 001 §2.1: MQTT-QoS 0, 1 or 2 (default 0). */
export function parseQos(value: string): MqttQos {
  if (value === '0' || value === '1' || value === '2') return Number(value) as MqttQos;
  throw new MqttEndpointError(`MQTT-QoS must be 0, 1 or 2, not '${value.slice(0, 50)}'`);
}

/** seed 001 §2.1: MQTT-Version mqtt3.1.1 or mqtt5.0 (default mqtt5.0). */
export function parseVersion(value: string): MqttVersion {
  if ((MQTT_VERSIONS as readonly string[]).includes(value)) return value as MqttVersion;
  throw new MqttEndpointError(`MQTT-Version must be ${MQTT_VERSIONS.join(' or ')}, not '${value.slice(0, 50)}'`);
}

export interface MqttNotifierInfo {
  qos: MqttQos;
  version: MqttVersion;
}

/** The notifierInfo of an MQTT endpoint as flat key/value pairs; keys it does not know are left to others. */
export function mqttNotifierInfo(pairs: readonly { key: string; value: string }[] | undefined): MqttNotifierInfo {
  const info: MqttNotifierInfo = { qos: 0, version: 'mqtt5.0' };
  for (const kv of pairs ?? []) {
    if (kv.key === 'MQTT-QoS') info.qos = parseQos(kv.value);
    else if (kv.key === 'MQTT-Version') info.version = parseVersion(kv.value);
  }
  return info;
}
