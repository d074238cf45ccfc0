// The command line: one table (name, alias, type, default, help) drives parsing, the environment
// (`BROKER_<OPTION>`, the command line wins) and `-u`. Plugins append their own tables when loaded.
import { cpus } from 'node:os';
import { randomUUID } from 'node:crypto';
import type { OptionSpec, OptionValues } from './plugin/contract.js';
import { OptionError, type BrokerConfig } from './config.js';

export { OptionError, type BrokerConfig } from './config.js';

/**
 * --frontOps auto: cheap up to this many cores. There the front thread shares the cores with the pool, and the hand-off
 * (copy out, wake a thread, copy back) cost about half of a PATCH (issue 24, bench/RESULTS.md); with more cores the one
 * front thread is the ceiling and gives every operation away.
 */
export const FRONT_OPS_AUTO_CORES = 2;

export const brokerOptions: OptionSpec[] = [
  { name: 'port', type: 'int', default: 1026, min: 0, help: 'port of the NGSI-LD API' },
  { name: 'host', type: 'string', default: '0.0.0.0', help: 'address the NGSI-LD API listens on' },
  {
    name: 'database',
    alias: 'db',
    type: 'enum',
    values: ['embdb', 'docdb'],
    default: 'embdb',
    help: "store plugin (its options follow the broker's)",
  },
  {
    name: 'troe',
    type: 'enum',
    values: ['none', 'embdb', 'tsdb'],
    other: '<plugin>',
    default: 'none',
    help: "history of every write (temporal API): none; embdb (in the embedded store, in the write's own transaction); tsdb (QuestDB beside the store, written off the request path: --troeHost and the other --troe* options); or a history plugin beside the store, by name (<pluginDir>/history/<name>.js) or path",
  },
  {
    name: 'temporalInstanceCap',
    type: 'int',
    default: 1000,
    min: 1,
    help: 'most instances of one attribute in a temporal answer; past it the answer is 206 with Content-Range and the rest on the next page (CIM 009 §6.3.10)',
  },
  {
    name: 'snapshotMaxEntities',
    type: 'int',
    default: 100000,
    min: 1,
    help: 'most entities one Snapshot holds; a capture query past it fails (TooManyResults), a clone past it is 403 and leaves no Snapshot (README "Snapshots")',
  },
  {
    name: 'connectionPoolSize',
    type: 'int',
    min: 0,
    help: 'pipeline threads, at most one per core, each serving many requests at once (default: cores with the RAM store, else 32); 0 runs the pipeline on the front thread',
  },
  {
    name: 'frontOps',
    type: 'enum',
    values: ['auto', 'none', 'cheap'],
    default: 'auto',
    help: `operations the front thread runs itself: cheap = those on one entity by id (no join, body up to 16 KiB), the rest in the pool; none = all in the pool; auto = cheap on a machine of up to ${FRONT_OPS_AUTO_CORES} cores, else none (ignored with --connectionPoolSize 0)`,
  },
  { name: 'httpServer', type: 'enum', values: ['uws', 'node'], default: 'uws', help: 'HTTP server: uWebSockets.js or node:http' },
  {
    name: 'subCacheIval',
    type: 'int',
    min: 0,
    help: 'seconds between reloads of the subscriptions from a store other brokers share (docdb), so that a subscription changed on one broker is matched by the others within it; 0: never (default: 5 on a shared store, else 0)',
  },
  { name: 'healthPort', type: 'int', min: 0, help: 'port of /live, /ready, /health and /metrics (off when absent)' },
  {
    name: 'metrics',
    type: 'bool',
    default: true,
    help: 'count requests and time them per operation for /metrics and /health (false: the request path records nothing)',
  },
  {
    name: 'policyApiPort',
    type: 'int',
    min: 0,
    help: "port of the policy API (the PAP's /policy routes, no authentication; off when absent; needs --httpServer uws)",
  },
  { name: 'policyApiHost', type: 'string', default: '127.0.0.1', help: 'address the policy API listens on' },
  {
    name: 'logLevel',
    type: 'enum',
    values: ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'],
    default: 'info',
    help: 'pino log level',
  },
  { name: 'defaultUserContext', type: 'string', help: 'URL of the user context (with the core) for requests that carry none' },
  { name: 'contextDir', type: 'string', help: 'directory of @context files with an index.json mapping URLs to files' },
  {
    name: 'contextSourceAlias',
    type: 'string',
    help: "this broker's name in the Via header of the requests it forwards to context sources, and in /info/sourceIdentity (default: ldbroker- and 8 random hex digits)",
  },
  {
    name: 'forwardTimeout',
    type: 'int',
    default: 5000,
    min: 1,
    help: 'milliseconds a context source has to answer a forwarded request when its registration gives no management.timeout',
  },
  {
    name: 'brokerUrl',
    type: 'string',
    help: "the broker's public address (http[s]://host[:port]): the URLs it gives of the @contexts it serves, notifications included; absent: the address each request reached (its Host)",
  },
  {
    name: 'corsOrigin',
    type: 'string',
    help: 'CORS for browsers: the origin allowed (http[s]://host[:port]), or __ALL (or *) for any; off when absent',
  },
  { name: 'corsMaxAge', type: 'int', default: 86400, min: 0, help: 'CORS: seconds a browser may keep the answer to a preflight' },
  { name: 'maxBodySize', type: 'int', default: 8 * 1024 * 1024, min: 1, help: 'largest request body in bytes (413 above)' },
  {
    name: 'wsMaxInFlight',
    type: 'int',
    default: 64,
    min: 1,
    help: 'WebSocket (/ngsi-ld/v1/ws): requests of one connection running at once; the others wait their turn on the connection',
  },
  {
    name: 'wsMaxQueueBytes',
    type: 'int',
    default: 16 * 1024 * 1024,
    min: 1,
    help: 'WebSocket: bytes of requests of one connection waiting for their turn; a request past it is answered 503 at once',
  },
  {
    name: 'wsMaxBackpressure',
    type: 'int',
    default: 16 * 1024 * 1024,
    min: 1024,
    help: 'WebSocket: bytes of answers and notifications a client has not read; past it its connection is closed (a slow reader)',
  },
  {
    name: 'requestTimeout',
    type: 'int',
    default: 30_000,
    min: 0,
    help: 'milliseconds a request handed to the pipeline threads may take; past it the broker answers 503 and a thread that has not started it skips it (0: no deadline)',
  },
  {
    name: 'maxPendingRequests',
    type: 'int',
    default: 10_000,
    min: 1,
    help: 'requests the pipeline holds at once, queued or running; past it the broker answers 503 Unavailable at once',
  },
  {
    name: 'notificationQueueBytes',
    type: 'int',
    default: 64 * 1024 * 1024,
    min: 1,
    help: 'bytes of notifications waiting for every endpoint together; past it the oldest of the slowest endpoint is dropped (a failure of its subscription)',
  },
  { name: 'pluginDir', type: 'string', help: 'directory of plugins (<pluginDir>/<category>/<name>.js); default: the built-in ones' },
  { name: 'auth', type: 'string', help: 'authorization plugin: a name in <pluginDir>/auth or a path' },
  { name: 'coreContext', type: 'enum', values: ['1.6', '1.7', '1.8', '1.9'], default: '1.8', help: 'version of the default core @context' },
  {
    name: 'bridges',
    type: 'string',
    help: 'bridge plugins, comma-separated names (built in: mqtt; or <pluginDir>/bridge/<name>.js); mqtt also delivers notifications to mqtt:// and mqtts:// endpoints',
  },
  { name: 'bridgeConfig', type: 'string', help: 'JSON file configuring the bridges: a member per bridge, named as it (README "Bridges")' },
  {
    name: 'insecureNotif',
    type: 'bool',
    default: false,
    help: 'accept a self-signed (untrusted) certificate of an mqtts:// or https:// notification endpoint',
  },
  { name: 'fg', type: 'bool', default: false, help: 'accepted for compatibility: the broker always runs in the foreground' },
  { name: 'u', type: 'bool', default: false, help: 'print every option with its default and exit' },
];

/**
 * One broker option's value before the plugins' tables are known (it chooses a plugin whose table parsing needs):
 * from the arguments, the environment or its default, checked as parseOptions checks it.
 */
export function earlyOption(raw: RawArgs, name: string, env: NodeJS.ProcessEnv = process.env): string | number | boolean | undefined {
  const spec = brokerOptions.find((s) => s.name === name)!;
  const fromArgs = raw.given.get(spec.name) ?? (spec.alias ? raw.given.get(spec.alias) : undefined);
  const fromEnv = env[`BROKER_${spec.name.toUpperCase()}`];
  const text = fromArgs ?? (fromEnv !== undefined && fromEnv !== '' ? fromEnv : undefined);
  return text === undefined ? spec.default : convert(spec, text);
}

/** Raw `--name value` pairs as given, before the tables of loaded plugins are known. */
export interface RawArgs {
  given: Map<string, string | true>;
}

export function splitArgs(argv: readonly string[]): RawArgs {
  const given = new Map<string, string | true>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (!arg.startsWith('-') || arg === '-' || arg === '--') throw new OptionError(`unexpected argument '${arg}'`);
    let name = arg.replace(/^--?/, '');
    let value: string | true = true;
    const eq = name.indexOf('=');
    if (eq >= 0) {
      value = name.slice(eq + 1);
      name = name.slice(0, eq);
    } else if (i + 1 < argv.length && !isOptionWord(argv[i + 1]!)) value = argv[++i]!;
    given.set(name, value);
  }
  return { given };
}

/** A word that names an option: not a negative number, and not `-` alone (standard input, `--file -`). */
function isOptionWord(s: string): boolean {
  return s.startsWith('-') && s !== '-' && !/^-\d/.test(s);
}

/** Parses the raw arguments against the tables; an unknown option or a bad value throws OptionError. */
export function parseOptions(raw: RawArgs, tables: readonly OptionSpec[], env: NodeJS.ProcessEnv = process.env): OptionValues {
  const byName = new Map<string, OptionSpec>();
  for (const spec of tables) {
    byName.set(spec.name, spec);
    if (spec.alias) byName.set(spec.alias, spec);
  }
  for (const name of raw.given.keys())
    if (!byName.has(name)) throw new OptionError(`unknown option '-${name.length > 2 ? '-' : ''}${name}'`);
  const values: OptionValues = {};
  for (const spec of tables) {
    const fromArgs = raw.given.get(spec.name) ?? (spec.alias ? raw.given.get(spec.alias) : undefined);
    const fromEnv = env[`BROKER_${spec.name.toUpperCase()}`];
    const text = fromArgs ?? (fromEnv !== undefined && fromEnv !== '' ? fromEnv : undefined);
    values[spec.name] = text === undefined ? spec.default : convert(spec, text);
  }
  return values;
}

function convert(spec: OptionSpec, text: string | true): string | number | boolean {
  const flag = `--${spec.name}`;
  if (spec.type === 'bool') {
    if (text === true) return true;
    if (/^(true|1|yes|on)$/i.test(text)) return true;
    if (/^(false|0|no|off)$/i.test(text)) return false;
    throw new OptionError(`${flag}: '${text}' is not a boolean`);
  }
  if (text === true) throw new OptionError(`${flag} needs a value`);
  if (spec.type === 'int' || spec.type === 'number') {
    const n = Number(text);
    if (text.trim() === '' || !Number.isFinite(n) || (spec.type === 'int' && !Number.isInteger(n)))
      throw new OptionError(`${flag}: '${text}' is not ${spec.type === 'int' ? 'an integer' : 'a number'}`);
    if (spec.min !== undefined && n < spec.min) throw new OptionError(`${flag}: ${n} is below ${spec.min}`);
    return n;
  }
  if (spec.type === 'enum' && !spec.values!.includes(text) && spec.other === undefined)
    throw new OptionError(`${flag}: '${text}' is not one of ${spec.values!.join(', ')}`);
  return text;
}

/** The text `-u` prints: every option, its alias, default and help. */
export function usage(tables: readonly OptionSpec[], program = 'ldbroker'): string {
  const lines = [`Usage: ${program} [options]`, ''];
  for (const spec of tables) {
    const name = `${spec.name.length <= 2 ? '-' : '--'}${spec.name}${spec.alias ? `, -${spec.alias}` : ''}`;
    const kind = spec.type === 'enum' ? [...spec.values!, ...(spec.other === undefined ? [] : [spec.other])].join('|') : spec.type;
    const def = spec.default === undefined ? '' : ` (default: ${String(spec.default)})`;
    lines.push(`  ${name.padEnd(26)} ${kind.padEnd(18)} ${spec.help}${def}`);
  }
  lines.push('', 'Every option also reads BROKER_<OPTION> from the environment (e.g. BROKER_DBLOCKPREFER); the command line wins.');
  return lines.join('\n') + '\n';
}

/** An origin (RFC 6454): scheme, host (a name, IPv4 or [IPv6]) and a port; a trailing slash is allowed. */
const ORIGIN = /^(https?):\/\/([a-z0-9](?:[a-z0-9.-]{0,252})|\[[0-9a-f:.]{2,45}\])(?::(\d{1,5}))?\/?$/;
const DEFAULT_PORT: Record<string, string> = { http: '80', https: '443' };

/**
 * --brokerUrl as the broker writes it into URLs: lower case, without the scheme's default port or a trailing slash.
 * Only an origin: the broker recognises the URLs of the @contexts it serves by their path, /ngsi-ld/v1/jsonldContexts/.
 */
export function parseBrokerUrl(text: string): string {
  const m = ORIGIN.exec(text.toLowerCase());
  const port = m?.[3];
  if (m === null || (port !== undefined && Number(port) > 65535))
    throw new OptionError(`--brokerUrl: '${text.slice(0, 100)}' is not http[s]://host[:port] (no path, query or fragment)`);
  return `${m[1]}://${m[2]}${port === undefined || port === DEFAULT_PORT[m[1]!] ? '' : ':' + port}`;
}

/** Seconds between reloads of the subscriptions on a store other brokers share, unless --subCacheIval says. */
export const SHARED_SUB_CACHE_IVAL = 5;
function frontOps(value: string, cores: number): BrokerConfig['frontOps'] {
  if (value === 'auto') return cores <= FRONT_OPS_AUTO_CORES ? 'cheap' : 'none';
  return value as BrokerConfig['frontOps'];
}
/** --contextSourceAlias: a Via pseudonym (RFC 9110 §7.6.3, a token), written into headers as it is. */
function parseAlias(text: string | undefined): string {
  if (text === undefined) return `ldbroker-${randomUUID().slice(0, 8)}`;
  if (!/^[A-Za-z0-9._~:+-]{1,200}$/.test(text))
    throw new OptionError(`--contextSourceAlias: '${text.slice(0, 100)}' is not 1 to 200 letters, digits and . _ ~ : + -`);
  return text;
}

/** `storeInMemory`: the store plugin keeps its data in this machine's memory (StorePluginModule.storeInMemory). */
export function brokerConfig(values: OptionValues, storeInMemory = false, storeShared = false): BrokerConfig {
  return {
    port: values.port as number,
    host: values.host as string,
    database: values.database as string,
    troe: values.troe as string,
    temporalInstanceCap: values.temporalInstanceCap as number,
    snapshotMaxEntities: values.snapshotMaxEntities as number,
    // seed 001 §4.4: the number of cores with the embedded store in RAM, else 32.
    connectionPoolSize: (values.connectionPoolSize as number | undefined) ?? (storeInMemory ? cpus().length : 32),
    frontOps: frontOps(values.frontOps as string, cpus().length),
    httpServer: values.httpServer as BrokerConfig['httpServer'],
    healthPort: values.healthPort as number | undefined,
    metrics: values.metrics as boolean,
    storeShared,
    subCacheIval: (values.subCacheIval as number | undefined) ?? (storeShared ? SHARED_SUB_CACHE_IVAL : 0),
    policyApiPort: values.policyApiPort as number | undefined,
    policyApiHost: values.policyApiHost as string,
    logLevel: values.logLevel as string,
    defaultUserContext: values.defaultUserContext as string | undefined,
    contextDir: values.contextDir as string | undefined,
    brokerUrl: values.brokerUrl === undefined ? undefined : parseBrokerUrl(values.brokerUrl as string),
    corsOrigin: values.corsOrigin as string | undefined,
    corsMaxAge: values.corsMaxAge as number,
    maxBodySize: values.maxBodySize as number,
    maxPendingRequests: values.maxPendingRequests as number,
    wsMaxInFlight: values.wsMaxInFlight as number,
    wsMaxQueueBytes: values.wsMaxQueueBytes as number,
    wsMaxBackpressure: values.wsMaxBackpressure as number,
    notificationQueueBytes: values.notificationQueueBytes as number,
    pluginDir: values.pluginDir as string | undefined,
    auth: values.auth as string | undefined,
    coreContext: values.coreContext as BrokerConfig['coreContext'],
    bridges: parseBridgeNames(values.bridges as string | undefined),
    bridgeConfig: values.bridgeConfig as string | undefined,
    insecureNotif: values.insecureNotif as boolean,
    contextSourceAlias: parseAlias(values.contextSourceAlias as string | undefined),
    forwardTimeout: values.forwardTimeout as number,
    requestTimeout: requestTimeout(values.requestTimeout as number),
  };
}

/** The longest --requestTimeout: a day (a longer one is a mistake; Node's timers stop at 2^31 ms). */
export const MAX_REQUEST_TIMEOUT = 86_400_000;

function requestTimeout(ms: number): number {
  if (ms > MAX_REQUEST_TIMEOUT) throw new OptionError(`--requestTimeout: ${ms} is above ${MAX_REQUEST_TIMEOUT} (a day)`);
  return ms;
}

/** --bridges: comma-separated plugin names, each once; an empty list loads none. */
export function parseBridgeNames(text: string | undefined): string[] {
  if (text === undefined) return [];
  const names: string[] = [];
  for (const part of text.split(',')) {
    const name = part.trim();
    if (name === '') continue;
    if (!/^[A-Za-z0-9_.-]{1,64}$/.test(name)) throw new OptionError(`--bridges: '${name.slice(0, 64)}' is not a bridge name`);
    if (!names.includes(name)) names.push(name);
  }
  return names;
}
