// Starts a server under test (bare baseline or broker) as a child process, learns its port from the
// `"msg":"listening"` JSON line on stdout, and stops it with SIGTERM reporting the exit code.
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';

const START_TIMEOUT_MS = 30_000;
const STOP_TIMEOUT_MS = 20_000;
const KEPT_LINES = 50;

export interface ServerProcess {
  readonly name: string;
  readonly url: string;
  readonly proc: ChildProcess;
  /** The last lines the server wrote (stdout and stderr), for reports when something fails. */
  tail(): string;
  /** SIGTERM, then the exit code (null when it had to be killed). */
  stop(): Promise<number | null>;
}

export interface StartOptions {
  /** `taskset -c` core list the server runs on (the load generator keeps the others); absent: every core. */
  cores?: string;
  /** Node flags added before the script (BENCH_NODE_FLAGS are added too). */
  nodeFlags?: readonly string[];
  /** Environment variables added to this process's. */
  env?: Record<string, string>;
}

export async function startServer(name: string, script: string, args: readonly string[], opts: StartOptions = {}): Promise<ServerProcess> {
  // BENCH_NODE_FLAGS (e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`): node flags of the servers under test, to profile
  // where a row's time goes (node refuses --cpu-prof in NODE_OPTIONS).
  const flags = [...(process.env.BENCH_NODE_FLAGS ?? '').split(' ').filter((f) => f !== ''), ...(opts.nodeFlags ?? [])];
  const command = [process.execPath, ...flags, script, ...args];
  // taskset execs node in its own process: the pid is the server's, as /proc readings (thread-cpu.ts) need.
  if (opts.cores !== undefined) command.unshift('taskset', '-c', opts.cores);
  const proc = spawn(command[0]!, command.slice(1), {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: opts.env === undefined ? process.env : { ...process.env, ...opts.env },
  });
  const lines: string[] = [];
  const keep = (line: string): void => {
    lines.push(line);
    if (lines.length > KEPT_LINES) lines.shift();
  };
  createInterface({ input: proc.stderr! }).on('line', keep);
  const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));

  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => {
      proc.kill('SIGKILL');
      reject(new Error(`${name} did not report "listening" within ${START_TIMEOUT_MS / 1000} s\n${lines.join('\n')}`));
    }, START_TIMEOUT_MS);
    // stdout is read to the end of the process so a chatty server never blocks on a full pipe.
    createInterface({ input: proc.stdout! }).on('line', (line) => {
      keep(line);
      const port = listeningPort(line);
      if (port !== undefined) {
        clearTimeout(timer);
        resolve(port);
      }
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`${name} exited with ${code} before listening\n${lines.join('\n')}`));
    });
  });

  return {
    name,
    url: `http://127.0.0.1:${port}`,
    proc,
    tail: () => lines.join('\n'),
    async stop() {
      if (proc.exitCode !== null || proc.signalCode !== null) return proc.exitCode;
      proc.kill('SIGTERM');
      const timer = setTimeout(() => proc.kill('SIGKILL'), STOP_TIMEOUT_MS);
      const code = await exited;
      clearTimeout(timer);
      return code;
    },
  };
}

function listeningPort(line: string): number | undefined {
  if (!line.includes('"listening"')) return undefined;
  try {
    const rec = JSON.parse(line) as { msg?: unknown; port?: unknown };
    return rec.msg === 'listening' && typeof rec.port === 'number' ? rec.port : undefined;
  } catch {
    return undefined;
  }
}
