// The Modbus devices of the Modbus bridge tests: test/services/modbus-device.py on pymodbus (installed by
// test/services/pymodbus.sh), one per test on free ports of 127.0.0.1, which the test may stop, start again, make
// slow or make answer exceptions through its control port, and whose registers it sets and reads.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { freePorts } from './ports.js';
import { ROOT } from '../../helpers/repo.js';

const REPO = ROOT;
const SCRIPT = `${REPO}test/services/pymodbus.sh`;

export type Table = 'coil' | 'discrete' | 'holding' | 'input';

/** Installs pymodbus when missing (idempotent; the shared device's fixed port is not needed); the interpreter and the script. */
function installed(): { python: string; device: string } {
  execFileSync('bash', [SCRIPT, 'install'], { stdio: ['ignore', 'ignore', 'pipe'] });
  const env: Record<string, string> = {};
  for (const line of readFileSync(`${REPO}.services/pymodbus.env`, 'utf8').split('\n')) {
    const m = /^export ([A-Z_]+)=(.*)$/.exec(line);
    if (m !== null) env[m[1]!] = m[2]!;
  }
  return { python: env.MODBUS_PYTHON!, device: env.MODBUS_DEVICE! };
}

// Devices of this test process still running: killed when it ends, however it ends (a tap timeout too).
const live = new Set<ChildProcess>();
process.once('exit', () => {
  for (const p of live) p.kill('SIGKILL');
});

export class OwnModbusDevice {
  private proc: ChildProcess | undefined;
  private ctl: Socket | undefined;
  private buffered = '';
  private answers: Array<(line: string) => void> = [];

  private constructor(
    readonly port: number,
    readonly controlPort: number,
    private readonly python: string,
    private readonly script: string,
  ) {}

  static async start(): Promise<OwnModbusDevice> {
    const { python, device } = installed();
    const [port, control] = await freePorts(2);
    const dev = new OwnModbusDevice(port!, control!, python, device);
    await dev.restart();
    return dev;
  }

  /** Starts it (again: registers back to 0) and waits until both ports accept connections. */
  async restart(): Promise<void> {
    const proc = spawn(this.python, [this.script, '--port', String(this.port), '--control', String(this.controlPort)], {
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    live.add(proc);
    proc.once('exit', () => live.delete(proc));
    this.proc = proc;
    const deadline = Date.now() + 15_000;
    while (!(await accepts(this.port)) || !(await accepts(this.controlPort))) {
      if (proc.exitCode !== null || Date.now() > deadline)
        throw new Error(`the Modbus device did not listen on ${this.port} and ${this.controlPort} (exit code ${proc.exitCode})`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  /** Stops it (SIGTERM, or SIGKILL: the connections reset rather than closed) and waits until it exited. */
  async stop(signal: 'SIGTERM' | 'SIGKILL' = 'SIGTERM'): Promise<void> {
    this.ctl?.destroy();
    this.ctl = undefined;
    const proc = this.proc;
    this.proc = undefined;
    if (proc === undefined || proc.exitCode !== null) return;
    const exited = new Promise((r) => proc.once('exit', r));
    proc.kill(signal);
    await exited;
  }

  async set(table: Table, address: number, values: number[], unit = 1): Promise<void> {
    await this.control({ op: 'set', unit, table, address, values });
  }

  async get(table: Table, address: number, count = 1, unit = 1): Promise<number[]> {
    return (await this.control({ op: 'get', unit, table, address, count })).values as number[];
  }

  /** Every answer waits this long. */
  async delay(ms: number): Promise<void> {
    await this.control({ op: 'delay', ms });
  }

  /** The address answers Modbus exception `code` (0: answers again). */
  async fault(table: Table, address: number, code: number): Promise<void> {
    await this.control({ op: 'fault', table, address, code });
  }

  /** The Modbus writes it received, in order: [unit, table, address, values, wall-clock ms]. */
  async writes(): Promise<Array<[number, Table, number, number[], number]>> {
    return (await this.control({ op: 'writes' })).writes as Array<[number, Table, number, number[], number]>;
  }

  async requests(): Promise<number> {
    return (await this.control({ op: 'requests' })).requests as number;
  }

  private async control(msg: Record<string, unknown>): Promise<Record<string, unknown>> {
    if (this.ctl === undefined) {
      const socket = connect(this.controlPort, '127.0.0.1');
      await new Promise<void>((resolve, reject) => {
        socket.once('connect', resolve);
        socket.once('error', reject);
      });
      socket.setEncoding('utf8');
      socket.on('data', (chunk: string) => {
        this.buffered += chunk;
        let i: number;
        while ((i = this.buffered.indexOf('\n')) >= 0) {
          const line = this.buffered.slice(0, i);
          this.buffered = this.buffered.slice(i + 1);
          this.answers.shift()?.(line);
        }
      });
      this.ctl = socket;
    }
    const line = await new Promise<string>((resolve) => {
      this.answers.push(resolve);
      this.ctl!.write(JSON.stringify(msg) + '\n');
    });
    const answer = JSON.parse(line) as Record<string, unknown>;
    if (answer.error !== undefined) throw new Error(`Modbus device control: ${String(answer.error)}`);
    return answer;
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
