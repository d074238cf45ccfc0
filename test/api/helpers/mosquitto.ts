// The Mosquitto server of the MQTT tests (test/services/mosquitto.sh: started when it is not running, on 127.0.0.1
// with a plain, a user/password and a TLS listener), and MQTT clients that record what they receive.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { freePort } from './ports.js';
import mqtt, { type IClientOptions, type MqttClient } from 'mqtt';
import { ROOT } from '../../helpers/repo.js';

const REPO = ROOT;
const SCRIPT = `${REPO}test/services/mosquitto.sh`;

export interface Mosquitto {
  /** mqtt://127.0.0.1:<plain port> */
  url: string;
  /** The listener that wants a user and password. */
  authUrl: string;
  /** mqtts:// with a self-signed certificate. */
  tlsUrl: string;
  user: string;
  password: string;
  /** The self-signed certificate, for a test client that trusts it. */
  ca: string;
}

/** Starts the server when it is not running (idempotent, seconds the first time) and reads its addresses. */
export function mosquitto(): Mosquitto {
  execFileSync('bash', [SCRIPT], { stdio: ['ignore', 'ignore', 'pipe'] });
  const env: Record<string, string> = {};
  for (const line of readFileSync(`${REPO}.services/mosquitto.env`, 'utf8').split('\n')) {
    const m = /^export ([A-Z_]+)=(.*)$/.exec(line);
    if (m !== null) env[m[1]!] = m[2]!;
  }
  return {
    url: env.MQTT_URL!,
    authUrl: env.MQTT_AUTH_URL!,
    tlsUrl: env.MQTTS_URL!,
    user: env.MQTT_USER!,
    password: env.MQTT_PASSWORD!,
    ca: env.MQTT_CA!,
  };
}

/** Stops the server (a restart mid-test: mosquitto() starts it again). */
export function stopMosquitto(): void {
  execFileSync('bash', [SCRIPT, 'stop'], { stdio: 'ignore' });
}

export interface Received {
  topic: string;
  payload: string;
  qos: number;
  retain: boolean;
}

/** A client subscribed to `topics` at QoS 2 (so a message arrives at the QoS it was published with). */
export class Listener {
  readonly received: Received[] = [];
  private constructor(readonly client: MqttClient) {
    client.on('message', (topic, payload, packet) => {
      this.received.push({ topic, payload: payload.toString('utf8'), qos: packet.qos, retain: packet.retain });
    });
  }

  static async open(url: string, topics: string[], opts: IClientOptions = {}): Promise<Listener> {
    const client = await mqtt.connectAsync(url, { reconnectPeriod: 200, connectTimeout: 5000, ...opts });
    const listener = new Listener(client);
    await client.subscribeAsync(topics, { qos: 2 });
    return listener;
  }

  /** The messages on `topic`, waiting (bounded) until there are at least n. */
  async on(topic: string, n: number, ms = 8000): Promise<Received[]> {
    const deadline = Date.now() + ms;
    for (;;) {
      const got = this.received.filter((r) => r.topic === topic);
      if (got.length >= n || Date.now() > deadline) return got;
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  async close(): Promise<void> {
    await this.client.endAsync(true);
  }
}

/** A topic no other test uses. */
export function uniqueTopic(name: string): string {
  return `ldbroker-test/${name}/${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
}

// Mosquitto processes of this test process still running: killed when it ends, however it ends (a tap timeout too).
const live = new Set<ChildProcess>();
process.once('exit', () => {
  for (const p of live) p.kill('SIGKILL');
});

/**
 * A Mosquitto of one test (plain listener on a free port of 127.0.0.1, anonymous, no persistence), which the test
 * may stop and start again without disturbing the shared server other test files use at the same time.
 */
export class OwnMosquitto {
  private proc: ChildProcess | undefined;
  private constructor(
    readonly port: number,
    private readonly conf: string,
  ) {}

  get url(): string {
    return `mqtt://127.0.0.1:${this.port}`;
  }

  /** `users`: a password file with these users (none: anonymous clients are welcome). */
  static async start(users?: Record<string, string>): Promise<OwnMosquitto> {
    mosquitto(); // the package is installed
    const port = await freePort();
    const dir = mkdtempSync(join(tmpdir(), 'ldbroker-mosquitto-'));
    const conf = join(dir, 'mosquitto.conf');
    const auth = users === undefined ? 'allow_anonymous true' : `allow_anonymous false\npassword_file ${join(dir, 'passwd')}`;
    writeFileSync(conf, `listener ${port} 127.0.0.1\n${auth}\npersistence false\nlog_dest none\n`);
    chmodSync(dir, 0o755);
    chmodSync(conf, 0o644);
    const own = new OwnMosquitto(port, conf);
    if (users !== undefined) own.setUsers(users);
    await own.restart();
    return own;
  }

  /** Writes the password file (read at the next start). */
  setUsers(users: Record<string, string>): void {
    const file = join(dirname(this.conf), 'passwd');
    writeFileSync(file, '');
    for (const [user, password] of Object.entries(users))
      execFileSync('mosquitto_passwd', ['-b', file, user, password], { stdio: 'ignore' });
    chmodSync(file, 0o644);
  }

  /** Starts it (again) and waits until it accepts connections. */
  async restart(): Promise<void> {
    const proc = spawn('/usr/sbin/mosquitto', ['-c', this.conf], { stdio: 'ignore' });
    live.add(proc);
    proc.once('exit', () => live.delete(proc));
    this.proc = proc;
    const deadline = Date.now() + 10_000;
    while (!(await accepts(this.port))) {
      if (Date.now() > deadline) throw new Error(`mosquitto did not listen on ${this.port}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  /** Stops it and waits until it exited. */
  async stop(): Promise<void> {
    const proc = this.proc;
    this.proc = undefined;
    if (proc === undefined || proc.exitCode !== null) return;
    const exited = new Promise((r) => proc.once('exit', r));
    proc.kill('SIGTERM');
    await exited;
  }
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}
