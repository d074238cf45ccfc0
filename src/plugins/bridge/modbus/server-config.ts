// `modbus.server` of --bridgeConfig (seed 001 §2.2): host, port, unit, pollMs, timeoutMs. The seed shows no
// defaults; ours (README): port 502 (the Modbus TCP port), unit 1, pollMs 1000, timeoutMs 1000. A member of the wrong
// shape stops the broker at start with one line (bridgeCheckConfig on the main thread).

export interface ModbusServerConfig {
  host: string;
  port: number;
  unit: number;
  pollMs: number;
  timeoutMs: number;
}

const MEMBERS: ReadonlySet<string> = new Set(['host', 'port', 'unit', 'pollMs', 'timeoutMs']);
export const DEFAULTS = { port: 502, unit: 1, pollMs: 1000, timeoutMs: 1000 } as const;

/** The server of the configuration member; throws an Error whose message is the refusal's line. */
export function modbusServerConfig(config: unknown): ModbusServerConfig {
  if (typeof config !== 'object' || config === null || Array.isArray(config)) throw new Error('--bridgeConfig: modbus must be an object');
  for (const k of Object.keys(config))
    if (k !== 'server' && k !== 'ngsild') throw new Error(`--bridgeConfig: modbus.${k.slice(0, 64)}: not a member (server, ngsild)`);
  const s = (config as Record<string, unknown>).server;
  if (s === undefined)
    throw new Error('--bridgeConfig: modbus.server is needed (the device or gateway: host, port, unit, pollMs, timeoutMs)');
  if (typeof s !== 'object' || s === null || Array.isArray(s)) throw new Error('--bridgeConfig: modbus.server must be an object');
  const server = s as Record<string, unknown>;
  for (const k of Object.keys(server))
    if (!MEMBERS.has(k)) throw new Error(`--bridgeConfig: modbus.server.${k.slice(0, 64)}: not a member`);
  const host = server.host;
  // A host name or an IPv4/IPv6 address: nothing else reaches the socket or a log line.
  if (typeof host !== 'string' || !/^[A-Za-z0-9.:_-]{1,253}$/.test(host))
    throw new Error('--bridgeConfig: modbus.server.host: a host name or IP address is needed');
  return {
    host,
    port: integer(server, 'port', DEFAULTS.port, 1, 65535),
    unit: integer(server, 'unit', DEFAULTS.unit, 0, 255),
    pollMs: integer(server, 'pollMs', DEFAULTS.pollMs, 10, 86_400_000),
    timeoutMs: integer(server, 'timeoutMs', DEFAULTS.timeoutMs, 10, 60_000),
  };
}

function integer(server: Record<string, unknown>, key: string, fallback: number, min: number, max: number): number {
  const v = server[key];
  if (v === undefined) return fallback;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max)
    throw new Error(`--bridgeConfig: modbus.server.${key}: an integer ${min}-${max} is needed`);
  return v;
}
