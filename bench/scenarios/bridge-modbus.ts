// Issue 20 benchmarks, run on their own (`node dist/bench/scenarios/bridge-modbus.js [--rounds 3] [--duration 5]
// [--channels 1000] [--writes 200] [--out file]`) against the pymodbus device of test/services/pymodbus.sh (started
// when it is not running); `make bench` runs it and the section replaces the "Modbus bridge" section of
// bench/RESULTS.md (or goes to --out):
// (1) polls per second across --channels Channels (holding registers 0..n-1 of one device, 10 attributes per entity,
// pollMs 10 so every Channel is always due: the Bridge's one request at a time is the limit), counted by the device;
// (2) the latency of a write under that polling load: from the PATCH sent to the device receiving the register (its
// clock and ours are the same machine's), one write at a time, spaced so none waits behind another.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { NGSI, send } from '../ngsi-client.js';
import { startServer, type ServerProcess } from '../server-process.js';
import { machineAtStart, sectionMarkers, writeResultsSection } from '../results-section.js';
import { median, range } from '../stats.js';

const MAIN = fileURLToPath(new URL('../../src/main.js', import.meta.url));
const REPO = fileURLToPath(new URL('../../../', import.meta.url));
const { begin: BEGIN, end: END } = sectionMarkers('bridge-modbus');
const PER_ENTITY = 10;
const WRITE_GAP_MS = 50;

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '3' },
    duration: { type: 'string', default: '5' },
    channels: { type: 'string', default: '1000' },
    writes: { type: 'string', default: '200' },
    out: { type: 'string' },
  },
});
const rounds = Number(values.rounds);
const durationS = Number(values.duration);
const channels = Number(values.channels);
const writes = Number(values.writes);

/** The shared test device's Modbus and control ports. */
function device(): { port: number; control: number } {
  execFileSync('bash', [join(REPO, 'test/services/pymodbus.sh')], { stdio: ['ignore', 'ignore', 'inherit'] });
  const env = readFileSync(join(REPO, '.services/pymodbus.env'), 'utf8');
  return { port: Number(/MODBUS_PORT=(\d+)/.exec(env)![1]), control: Number(/MODBUS_CONTROL_PORT=(\d+)/.exec(env)![1]) };
}

/** The device's control port: one JSON line asked, one answered. */
class Control {
  private buffered = '';
  private readonly waiting: Array<(line: string) => void> = [];
  private constructor(private readonly socket: Socket) {
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      this.buffered += chunk;
      let i: number;
      while ((i = this.buffered.indexOf('\n')) >= 0) {
        const line = this.buffered.slice(0, i);
        this.buffered = this.buffered.slice(i + 1);
        this.waiting.shift()?.(line);
      }
    });
  }

  static async open(port: number): Promise<Control> {
    const socket = connect(port, '127.0.0.1');
    await new Promise<void>((resolve, reject) => {
      socket.once('connect', resolve);
      socket.once('error', reject);
    });
    return new Control(socket);
  }

  async ask(msg: Record<string, unknown>): Promise<Record<string, unknown>> {
    const line = await new Promise<string>((resolve) => {
      this.waiting.push(resolve);
      this.socket.write(JSON.stringify(msg) + '\n');
    });
    return JSON.parse(line) as Record<string, unknown>;
  }

  close(): void {
    this.socket.destroy();
  }
}

const entityId = (k: number): string => `urn:ngsi-ld:ModbusBench:${String(k).padStart(5, '0')}`;
const WRITE_ID = 'urn:ngsi-ld:ModbusBench:writes';

function percentile(xs: readonly number[], p: number): number {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

async function main(): Promise<void> {
  const started = Date.now();
  const dev = device();
  const control = await Control.open(dev.control);
  const topics: Record<string, unknown> = {};
  for (let i = 0; i < channels; i++)
    topics[`holding/${i}`] = { entityId: entityId(Math.floor(i / PER_ENTITY)), entityType: 'ModbusBench', attribute: `r${i % PER_ENTITY}` };
  topics[`holding/${channels}`] = {
    entityId: WRITE_ID,
    entityType: 'ModbusBench',
    attribute: 'setpoint',
    channelInfo: [{ key: 'poll', value: '1000' }],
  };
  const dir = mkdtempSync(join(tmpdir(), 'ldbroker-bench-modbus-'));
  const config = join(dir, 'bridges.json');
  writeFileSync(
    config,
    JSON.stringify({ modbus: { server: { host: '127.0.0.1', port: dev.port, pollMs: 10, timeoutMs: 1000 }, ngsild: { topics } } }),
  );
  const b: ServerProcess = await startServer('broker', MAIN, [
    '--port',
    '0',
    '--host',
    '127.0.0.1',
    '--bridges',
    'modbus',
    '--bridgeConfig',
    config,
  ]);
  const lines: string[] = [`${new Date().toISOString()}, ${machineAtStart()}, pymodbus device on loopback.`, ''];
  try {
    // Every Channel polled once (its first sample written) before measuring.
    const deadline = Date.now() + 120_000;
    for (;;) {
      const r = await send(b.url, 'GET', `${NGSI}/entities/${encodeURIComponent(WRITE_ID)}`);
      if (r.status === 200) break;
      if (Date.now() > deadline) throw new Error(`the bridge wrote no sample in 120 s\n${b.tail()}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    lines.push(
      `### Polls per second: ${channels} Channels on one device (pollMs 10: always due)`,
      '',
      '| round | polls/s | every Channel once (s) |',
      '|---|---:|---:|',
    );
    const rates: number[] = [];
    for (let round = 0; round < rounds; round++) {
      const before = (await control.ask({ op: 'requests' })).requests as number;
      const t0 = Date.now();
      await new Promise((r) => setTimeout(r, durationS * 1000));
      const polls = ((await control.ask({ op: 'requests' })).requests as number) - before;
      const rate = polls / ((Date.now() - t0) / 1000);
      rates.push(rate);
      lines.push(`| ${round + 1} | ${rate.toFixed(0)} | ${(channels / rate).toFixed(2)} |`);
      process.stderr.write(`polls round ${round + 1}: ${rate.toFixed(0)} polls/s\n`);
    }
    lines.push('', `Median **${median(rates).toFixed(0)}** polls/s (range ${range(rates)}).`, '');

    // Write latency under the same polling load.
    const already = ((await control.ask({ op: 'writes' })).writes as unknown[]).length;
    const sentAt: number[] = [];
    for (let k = 0; k < writes; k++) {
      sentAt.push(Date.now());
      const r = await send(
        b.url,
        'PATCH',
        `${NGSI}/entities/${encodeURIComponent(WRITE_ID)}/attrs/setpoint`,
        JSON.stringify({ type: 'Property', value: k + 1 }),
      );
      if (r.status !== 204) throw new Error(`PATCH answered ${r.status}`);
      await new Promise((r) => setTimeout(r, WRITE_GAP_MS));
    }
    const writeDeadline = Date.now() + 30_000;
    let got: Array<[number, string, number, number[], number]> = [];
    while (got.length < writes && Date.now() < writeDeadline) {
      got = ((await control.ask({ op: 'writes' })).writes as typeof got).slice(already);
      await new Promise((r) => setTimeout(r, 100));
    }
    if (got.length < writes) throw new Error(`the device received ${got.length} of ${writes} writes`);
    // Each write's value is its number (k + 1): the device's time of it less the time its PATCH was sent.
    const latencies = got.map((w) => w[4] - sentAt[w[3][0]! - 1]!);
    lines.push(
      `### Write latency under that polling load: ${writes} PATCHes, one every ${WRITE_GAP_MS} ms, to the device`,
      '',
      '| p50 ms | p90 ms | p99 ms | max ms |',
      '|---:|---:|---:|---:|',
      `| ${percentile(latencies, 50).toFixed(1)} | ${percentile(latencies, 90).toFixed(1)} | ${percentile(latencies, 99).toFixed(1)} | ${Math.max(...latencies).toFixed(1)} |`,
      '',
    );
  } finally {
    control.close();
    await b.stop();
  }
  lines.push(`Whole run ${((Date.now() - started) / 60000).toFixed(1)} min.`);
  const section = [BEGIN, '## Modbus bridge (issue 20: `node dist/bench/scenarios/bridge-modbus.js`)', '', ...lines, END].join('\n');
  writeResultsSection('bridge-modbus', section, values.out);
}

main().catch((e: unknown) => {
  process.stderr.write(`${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
  process.exit(1);
});
