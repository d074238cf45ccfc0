// Brokers for the API tests. startBroker: one in this process (src/broker.ts, built in dist/), listening on ephemeral
// ports, its log lines captured; `call` hands requests to its dispatcher as its server would (Broker.inject) or, for a
// URL or a broker started with { http: true }, sends them over HTTP. spawnBroker: the built broker as a child
// process, for what needs one (signals, kill -9, restarts on a --dbDir, exit codes, stderr).
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import type * as BrokerModule from '../../../src/broker.js';
import type * as CommandLine from '../../../src/command-line.js';
import { docdbArgs, dropDatabases, freshDbName } from './docdb.js';
import { ROOT_URL } from '../../helpers/repo.js';

const DIST = new URL('dist/src/', ROOT_URL);
const MAIN = fileURLToPath(new URL('main.js', DIST));

export interface Broker {
  port: number;
  healthPort?: number;
  url: string;
  /** The child process of a spawned broker; undefined in this process. */
  proc?: ChildProcess;
  /** Log lines (pino JSON) so far, of every thread of the broker. */
  logs: string[];
  /** A broker in this process: requests through its dispatcher without a socket. */
  inject?: (request: BrokerModule.InjectRequest) => Promise<BrokerModule.InjectReply>;
  /** `call` uses HTTP even though `inject` is there. */
  http?: boolean;
  /** Stops the broker: SIGTERM (or `signal`) to a child and its exit code; close() in this process, 0 once done. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

// Spawned brokers of this test process still running: killed when the process ends, however it ends (a tap timeout
// included), so no broker outlives its test and loads the machine for the tests after it.
const live = new Set<ChildProcess>();
const killLive = (): void => {
  for (const p of live) p.kill('SIGKILL');
};
process.once('exit', killLive);
for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) {
  process.once(signal, () => {
    killLive();
    process.kill(process.pid, signal);
  });
}

let brokerModule: Promise<typeof BrokerModule> | undefined;

/**
 * The environment of a broker process: this one's and `env`, without the preload tap puts in NODE_OPTIONS for its
 * coverage (off here), which every thread of the child would load.
 */
function childEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const options = (process.env.NODE_OPTIONS ?? '').split(/\s+/).filter((o) => o !== '' && !o.includes('@tapjs/processinfo'));
  return { ...process.env, NODE_OPTIONS: options.join(' '), ...env };
}

export interface StartOptions {
  /**
   * Requests over HTTP (the server's own reading and framing), not injected; implied by --httpServer. Where a
   * test is about the server (body caps, HEAD and 204 framing), or reads its answers byte for byte.
   */
  http?: boolean;
  /**
   * The broker's default pipeline runner (a pool of threads), not the inline one the helper otherwise asks for with
   * --connectionPoolSize 0; implied by --connectionPoolSize. Where the subject crosses threads: subscription
   * changes, kept @contexts, auth plugin state, batching to threads. One pipeline thread (each costs ~0.25 s of CPU
   * to start) unless the test's --connectionPoolSize asks for more: where the subject is what two pool threads share.
   */
  pool?: boolean;
}

/**
 * A broker in this process with `args` (and BROKER_* from `env` over this process's environment), on ephemeral ports
 * of 127.0.0.1 with a health port. Rejects with the start-up refusal (StartError) where the command would exit 1.
 */
export async function startBroker(args: string[] = [], env: NodeJS.ProcessEnv = {}, opts: StartOptions = {}): Promise<Broker> {
  brokerModule ??= import(new URL('broker.js', DIST).href) as Promise<typeof BrokerModule>;
  const { createBroker } = await brokerModule;
  const logs: string[] = [];
  let partial = '';
  const logDestination = {
    write(text: string): void {
      partial += text;
      let nl: number;
      while ((nl = partial.indexOf('\n')) >= 0) {
        logs.push(partial.slice(0, nl));
        partial = partial.slice(nl + 1);
      }
    },
  };
  const pool = args.includes('--connectionPoolSize') ? [] : ['--connectionPoolSize', opts.pool === true ? '1' : '0'];
  const store = storeArgs(args);
  args = [...args, ...store.args];
  // The broker's threads load built JavaScript: they start without tap's preloads (its TypeScript loader and hooks),
  // which would cost each thread most of its start-up.
  const broker = await createBroker(['--port', '0', '--host', '127.0.0.1', '--healthPort', '0', ...pool, ...args], {
    env: { ...process.env, ...env },
    logDestination,
    threadExecArgv: [],
  });
  let ports: BrokerModule.Ports;
  try {
    ports = await broker.listen();
  } catch (e) {
    await broker.close();
    throw e;
  }
  let stopped: Promise<number> | undefined;
  return {
    port: ports.port,
    healthPort: ports.healthPort,
    url: `http://127.0.0.1:${ports.port}`,
    logs,
    inject: (request) => broker.inject(request),
    http: opts.http === true || args.includes('--httpServer'),
    stop: () => (stopped ??= broker.close('SIGTERM').then(async () => (await store.drop(), 0))),
  };
}

/**
 * TEST_STORE=docdb runs the API tests on docdb (make test runs the store's files a second time so): a broker the
 * test does not give a --database gets one on a fresh database of the tests' MongoDB-wire server, dropped when the
 * broker stops. A broker given --database, or `--troe embdb` (the history inside embdb), keeps what it names.
 */
const EMBDB_OPTIONS = ['--dbDir', '--dbLockPrefer', '--dbCompress', '--dbPageCache'];

export function storeArgs(args: readonly string[]): { args: string[]; drop: () => Promise<void> } {
  const troe = args.indexOf('--troe');
  // `--troe embdb` is the history inside embdb, which docdb refuses: such a broker stays on embdb.
  // So does a broker given embdb's own options (its files on --dbDir across a restart, its lock preference).
  const embdbOnly = (troe >= 0 && args[troe + 1] === 'embdb') || EMBDB_OPTIONS.some((o) => args.includes(o));
  if (process.env.TEST_STORE !== 'docdb' || args.includes('--database') || args.includes('-db') || embdbOnly)
    return { args: [], drop: async () => {} };
  const dbName = freshDbName();
  return { args: docdbArgs(dbName), drop: () => dropDatabases(dbName).catch(() => undefined) };
}

/** The store the API tests run on (TEST_STORE), for a test that has to say which. */
export const testStore = (): 'embdb' | 'docdb' => (process.env.TEST_STORE === 'docdb' ? 'docdb' : 'embdb');

export async function spawnBroker(args: string[] = [], env: NodeJS.ProcessEnv = {}): Promise<Broker> {
  const store = storeArgs(args);
  args = [...args, ...store.args];
  const proc = spawn(process.execPath, [MAIN, '--port', '0', '--host', '127.0.0.1', '--healthPort', '0', ...args], {
    env: childEnv(env),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const logs: string[] = [];
  let stderr = '';
  proc.stderr!.on('data', (d) => {
    stderr += String(d);
  });
  live.add(proc);
  const exited = new Promise<number | null>((resolve) =>
    proc.once('exit', (code) => {
      live.delete(proc);
      resolve(code);
    }),
  );
  let healthPort: number | undefined;
  const port = await new Promise<number>((resolve, reject) => {
    // A broker that did not start is killed: left running, it would keep the test process alive until tap's timeout.
    const timer = setTimeout(() => {
      proc.kill('SIGKILL');
      reject(new Error(`broker did not start in 20 s\n${logs.join('\n')}\n${stderr}`));
    }, 20_000);
    const rl = createInterface({ input: proc.stdout! });
    rl.on('line', (line) => {
      logs.push(line);
      try {
        const rec = JSON.parse(line) as { msg?: string; port?: number };
        if (rec.msg === 'health port listening') healthPort = rec.port;
        if (rec.msg === 'listening' && rec.port !== undefined) {
          clearTimeout(timer);
          resolve(rec.port);
        }
      } catch {
        /* not a log line */
      }
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`broker exited with ${code}\n${stderr}\n${logs.join('\n')}`));
    });
  });
  return {
    port,
    healthPort,
    url: `http://127.0.0.1:${port}`,
    proc,
    logs,
    async stop(signal: NodeJS.Signals = 'SIGTERM') {
      if (proc.exitCode !== null) return proc.exitCode;
      proc.kill(signal);
      const code = await exited;
      await store.drop();
      return code;
    },
  };
}

/**
 * The broker command run in this process as src/main.ts runs it, for option errors and -u where the process itself
 * is not the subject: -u prints the usage (exit 0); a refusal (readArgs, readConfig, createBroker) is a StartError,
 * `ldbroker: <message>` on standard error unless the broker logged it already, and exit 1. A spawned broker costs
 * about a CPU-second of module loading; each file keeps a runBroker case of the real process. A broker that starts
 * is closed at once (code 0).
 */
export async function runBrokerHere(
  args: string[],
  env: NodeJS.ProcessEnv = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  const cl = (await import(new URL('command-line.js', DIST).href)) as typeof CommandLine;
  brokerModule ??= import(new URL('broker.js', DIST).href) as Promise<typeof BrokerModule>;
  const { createBroker } = await brokerModule;
  let stdout = '';
  const logDestination = { write: (text: string) => void (stdout += text) };
  const all = { ...process.env, ...env };
  try {
    const parsed = await cl.readArgs(args, all);
    if (parsed.values.u === true) return { code: 0, stdout: parsed.usage, stderr: '' };
    cl.readConfig(parsed);
    const broker = await createBroker(parsed, { env: all, listen: true, logDestination, threadExecArgv: [] });
    await broker.close();
    return { code: 0, stdout, stderr: '' };
  } catch (e) {
    if (!(e instanceof cl.StartError)) throw e;
    return { code: 1, stdout, stderr: e.logged ? '' : `ldbroker: ${e.message}\n` };
  }
}

/** Runs the broker binary to completion (for option errors, -u). */
export function runBroker(args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const proc = spawn(process.execPath, [MAIN, ...args], { env: childEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    proc.stdout.on('data', (d) => {
      stdout += String(d);
    });
    proc.stderr.on('data', (d) => {
      stderr += String(d);
    });
    const timer = setTimeout(() => proc.kill('SIGKILL'), 20_000);
    proc.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

export interface Reply {
  status: number;
  headers: Headers;
  text: string;
  json: any;
}

export interface CallOptions {
  body?: unknown;
  raw?: string | Uint8Array;
  headers?: Record<string, string>;
}

export async function call(broker: Broker | string, method: string, path: string, opts: CallOptions = {}): Promise<Reply> {
  const base = typeof broker === 'string' ? broker : broker.url;
  const headers: Record<string, string> = { ...(opts.headers ?? {}) };
  let body: string | Uint8Array | undefined = opts.raw;
  if (opts.body !== undefined) {
    body = JSON.stringify(opts.body);
    headers['content-type'] ??= 'application/json';
  }
  if (typeof broker !== 'string' && broker.inject !== undefined && broker.http !== true)
    return injected(broker, base, method, path, headers, body);
  const res = await fetch(base + path, { method, headers, body });
  const text = await res.text();
  return { status: res.status, headers: res.headers, text, json: parse(text) };
}

/**
 * The request fetch() would send, handed to the broker's dispatcher: the URL normalized and encoded as fetch does,
 * the same default headers (Accept, Host, User-Agent...; text/plain for a string body without a type), header values
 * trimmed; the answer read as fetch would (the headers of one name joined, no body after HEAD).
 */
async function injected(
  broker: Broker,
  base: string,
  method: string,
  path: string,
  given: Record<string, string>,
  body: string | Uint8Array | undefined,
): Promise<Reply> {
  const url = new URL(base + path);
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(given)) headers[name.toLowerCase()] = value.replace(/^[\t\n\r ]+|[\t\n\r ]+$/g, '');
  if (typeof body === 'string' && headers['content-type'] === undefined) headers['content-type'] = 'text/plain;charset=UTF-8';
  const bytes = typeof body === 'string' ? new TextEncoder().encode(body) : body;
  const sent: Record<string, string> = {
    host: url.host,
    connection: 'keep-alive',
    ...headers,
  };
  sent.accept ??= '*/*';
  sent['accept-language'] ??= '*';
  sent['sec-fetch-mode'] ??= 'cors';
  sent['user-agent'] ??= 'node';
  sent['accept-encoding'] ??= 'gzip, deflate';
  if (bytes !== undefined) sent['content-length'] = String(bytes.byteLength);
  const reply = await broker.inject!({ method, url: url.pathname + url.search, headers: sent, body: bytes ?? null });
  const replyHeaders = new Headers();
  for (const [name, value] of reply.headers) replyHeaders.append(name, value);
  const text = new TextDecoder().decode(reply.body);
  return { status: reply.status, headers: replyHeaders, text, json: parse(text) };
}

function parse(text: string): unknown {
  try {
    return text === '' ? undefined : JSON.parse(text);
  } catch {
    return undefined;
  }
}

export const NGSI = '/ngsi-ld/v1';
