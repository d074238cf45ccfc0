// Starts the built broker (dist/) as a child process on ephemeral ports and talks to it over real HTTP.
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const MAIN = fileURLToPath(new URL('../../../dist/src/main.js', import.meta.url));

export interface Broker {
  port: number;
  healthPort?: number;
  url: string;
  proc: ChildProcess;
  logs: string[];
  /** SIGTERM and wait; resolves with the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

// Brokers of this test process still running: killed when the process ends, however it ends (a tap timeout
// included), so no broker outlives its test and loads the machine for the tests after it.
const live = new Set<ChildProcess>();
const killLive = (): void => { for (const p of live) p.kill('SIGKILL'); };
process.once('exit', killLive);
for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) {
  process.once(signal, () => {
    killLive();
    process.kill(process.pid, signal);
  });
}

export async function startBroker(args: string[] = [], env: NodeJS.ProcessEnv = {}): Promise<Broker> {
  const proc = spawn(process.execPath, [MAIN, '--port', '0', '--host', '127.0.0.1', '--healthPort', '0', ...args], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const logs: string[] = [];
  let stderr = '';
  proc.stderr!.on('data', (d) => { stderr += String(d); });
  live.add(proc);
  const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => { live.delete(proc); resolve(code); }));
  let healthPort: number | undefined;
  const port = await new Promise<number>((resolve, reject) => {
    // A broker that did not start is killed: left running, it would keep the test process alive until tap's timeout.
    const timer = setTimeout(() => { proc.kill('SIGKILL'); reject(new Error(`broker did not start in 20 s\n${logs.join('\n')}\n${stderr}`)); }, 20_000);
    const rl = createInterface({ input: proc.stdout! });
    rl.on('line', (line) => {
      logs.push(line);
      try {
        const rec = JSON.parse(line) as { msg?: string; port?: number };
        if (rec.msg === 'health port listening') healthPort = rec.port;
        if (rec.msg === 'listening' && rec.port !== undefined) { clearTimeout(timer); resolve(rec.port); }
      } catch { /* not a log line */ }
    });
    void exited.then((code) => { clearTimeout(timer); reject(new Error(`broker exited with ${code}\n${stderr}\n${logs.join('\n')}`)); });
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
      return exited;
    },
  };
}

/** Runs the broker binary to completion (for option errors, -u). */
export function runBroker(args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const proc = spawn(process.execPath, [MAIN, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    proc.stdout.on('data', (d) => { stdout += String(d); });
    proc.stderr.on('data', (d) => { stderr += String(d); });
    const timer = setTimeout(() => proc.kill('SIGKILL'), 20_000);
    proc.on('exit', (code) => { clearTimeout(timer); resolve({ code, stdout, stderr }); });
  });
}

export interface Reply {
  status: number;
  headers: Headers;
  text: string;
  json: any;
}

export async function call(broker: Broker | string, method: string, path: string, opts: { body?: unknown; raw?: string | Uint8Array; headers?: Record<string, string> } = {}): Promise<Reply> {
  const base = typeof broker === 'string' ? broker : broker.url;
  const headers: Record<string, string> = { ...(opts.headers ?? {}) };
  let body: string | Uint8Array | undefined = opts.raw;
  if (opts.body !== undefined) {
    body = JSON.stringify(opts.body);
    headers['content-type'] ??= 'application/json';
  }
  const res = await fetch(base + path, { method, headers, body });
  const text = await res.text();
  let json: unknown;
  try { json = text === '' ? undefined : JSON.parse(text); } catch { json = undefined; }
  return { status: res.status, headers: res.headers, text, json };
}

export const NGSI = '/ngsi-ld/v1';
