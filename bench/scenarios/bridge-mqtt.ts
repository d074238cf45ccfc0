// Issue 19 benchmarks, run on their own (`node dist/bench/scenarios/bridge-mqtt.js [--rounds 3] [--duration 5]
// [--connections 20] [--samples 20000] [--only inbound,notify] [--out file]`) against the Mosquitto of
// test/services/mosquitto.sh (started when it is not running); `make bench` runs it and the section replaces the
// "MQTT bridge" section of bench/RESULTS.md (or goes to --out):
// (1) inbound: samples per second from one topic into writes of one attribute (published at QoS 1 as fast as the
// server takes them, timed until the attribute holds the last one), beside HTTP PATCHes of the same attribute in the
// same round, as a ratio (target >= 1.0: a sample skips HTTP); (2) notifications per second to MQTT (one subscription
// per entity, a local subscriber counting) beside the same notifications to a local HTTP receiver.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import mqtt from 'mqtt';
import { benchId } from '../bench-entity.js';
import { runLoad, failedRequests, type LoadResult } from '../load.js';
import { NGSI, attributePatches, expectStatus, seedEntities, send } from '../ngsi-client.js';
import { startServer, type ServerProcess } from '../server-process.js';
import { machineAtStart, sectionMarkers, writeResultsSection } from '../results-section.js';
import { median, range } from '../stats.js';

const MAIN = fileURLToPath(new URL('../../src/main.js', import.meta.url));
const REPO = fileURLToPath(new URL('../../../', import.meta.url));
const { begin: BEGIN, end: END } = sectionMarkers('bridge-mqtt');
const NOTIFIED = 1000;
const IN_TOPIC = 'ldbroker-bench/in/temperature';
const CREATE_CONCURRENCY = 16;

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '3' },
    duration: { type: 'string', default: '5' },
    connections: { type: 'string', default: '20' },
    samples: { type: 'string', default: '20000' },
    out: { type: 'string' },
    only: { type: 'string' },
  },
});
const rounds = Number(values.rounds);
const durationS = Number(values.duration);
const connections = Number(values.connections);
const samples = Number(values.samples);

/** The shared test Mosquitto's plain listener (mqtt://127.0.0.1:port). */
function mosquittoUrl(): string {
  execFileSync('bash', [join(REPO, 'test/services/mosquitto.sh')], { stdio: ['ignore', 'ignore', 'inherit'] });
  const env = readFileSync(join(REPO, '.services/mosquitto.env'), 'utf8');
  return /MQTT_URL=(\S+)/.exec(env)![1]!;
}

function broker(args: string[]): Promise<ServerProcess> {
  return startServer('broker', MAIN, ['--port', '0', '--host', '127.0.0.1', '--logLevel', 'info', ...args]);
}

async function measurePatches(url: string, ids: readonly string[]): Promise<LoadResult> {
  const r = await runLoad(attributePatches(ids), { url, connections, durationS, warmupS: Math.min(2, durationS) });
  if (failedRequests(r) > 0) throw new Error(`failed requests: ${JSON.stringify(r.statusCodes)} errors ${r.errors}`);
  return r;
}

async function temperatureOf(url: string, id: string): Promise<unknown> {
  const a = await send(url, 'GET', `${NGSI}/entities/${encodeURIComponent(id)}?options=keyValues`);
  return a.status === 200 ? (JSON.parse(a.body) as { temperature?: unknown }).temperature : undefined;
}

async function inbound(lines: string[], server: string): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'ldbroker-bench-bridge-'));
  const config = join(dir, 'bridges.json');
  const id = benchId(1);
  writeFileSync(
    config,
    JSON.stringify({
      mqtt: {
        server: { uri: server },
        ngsild: {
          topics: {
            [IN_TOPIC]: { entityId: id, entityType: 'Bench', attribute: 'temperature', channelInfo: [{ key: 'MQTT-QoS', value: '1' }] },
          },
        },
      },
    }),
  );
  const b = await broker(['--bridges', 'mqtt', '--bridgeConfig', config]);
  const device = await mqtt.connectAsync(server, { protocolVersion: 5 });
  try {
    await seedEntities(b.url, [id]);
    // The bridge subscribes in the background: wait until a sample lands.
    for (let i = 0; (await temperatureOf(b.url, id)) !== -1; i++) {
      if (i > 100) throw new Error('the bridge never wrote a sample');
      await device.publishAsync(IN_TOPIC, '-1', { qos: 1 });
      await new Promise((r) => setTimeout(r, 100));
    }
    lines.push(
      `### Inbound: ${samples} samples on one topic (QoS 1) into one attribute, beside HTTP PATCH of that attribute`,
      '',
      '| round | samples/s | PATCH req/s (same attribute, same broker) | ratio |',
      '|---|---:|---:|---:|',
    );
    const ratios: number[] = [];
    for (let round = 0; round < rounds; round++) {
      const patch = await measurePatches(b.url, [id]);
      const base = round * samples * 10;
      const start = Date.now();
      const publishing: Promise<unknown>[] = [];
      for (let k = 1; k <= samples; k++) {
        publishing.push(device.publishAsync(IN_TOPIC, String(base + k), { qos: 1 }));
        if (publishing.length >= 1000) await Promise.all(publishing.splice(0));
      }
      await Promise.all(publishing);
      const deadline = Date.now() + 120_000;
      while ((await temperatureOf(b.url, id)) !== base + samples) {
        if (Date.now() > deadline) throw new Error('the last sample was not written within 120 s');
        await new Promise((r) => setTimeout(r, 10));
      }
      const perSecond = samples / ((Date.now() - start) / 1000);
      const ratio = perSecond / patch.requestsPerSecond;
      ratios.push(ratio);
      lines.push(`| ${round + 1} | ${perSecond.toFixed(0)} | ${patch.requestsPerSecond.toFixed(0)} | ${ratio.toFixed(2)} |`);
      process.stderr.write(
        `inbound round ${round + 1}: ${perSecond.toFixed(0)} samples/s, ${patch.requestsPerSecond.toFixed(0)} PATCH/s\n`,
      );
    }
    const m = median(ratios);
    lines.push(
      '',
      `Target: ratio >= 1.0: measured **${m.toFixed(2)}** (median; range ${range(ratios, 2)}) - ${m >= 1 ? 'met' : 'MISSED'}.`,
      '',
    );
  } finally {
    await device.endAsync(true);
    await b.stop();
  }
}

/** Notifications per second of one broker whose subscriptions all notify `uri(i)`; `delivered()` counts arrivals. */
async function notifyRate(b: ServerProcess, uri: (i: number) => string, delivered: () => number): Promise<number[]> {
  const ids = Array.from({ length: NOTIFIED }, (_, i) => benchId(i + 1));
  await seedEntities(b.url, ids);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < NOTIFIED) {
      const i = next++;
      const body = {
        type: 'Subscription',
        entities: [{ id: ids[i], type: 'Bench' }],
        watchedAttributes: ['temperature'],
        notificationTrigger: ['attributeUpdated'],
        notification: { endpoint: { uri: uri(i) } },
      };
      await expectStatus(`subscription ${i}`, send(b.url, 'POST', `${NGSI}/subscriptions`, JSON.stringify(body)), [201]);
    }
  };
  await Promise.all(Array.from({ length: CREATE_CONCURRENCY }, worker));
  const rates: number[] = [];
  for (let round = 0; round < rounds; round++) {
    const before = delivered();
    const start = Date.now();
    const r = await runLoad(attributePatches(ids), { url: b.url, connections, durationS, warmupS: 0 });
    const due = r.statusCodes['204'] ?? 0;
    const deadline = Date.now() + 60_000;
    while (delivered() - before < due && Date.now() < deadline) await new Promise((res) => setTimeout(res, 50));
    rates.push((delivered() - before) / ((Date.now() - start) / 1000));
  }
  return rates;
}

async function notify(lines: string[], server: string): Promise<void> {
  let httpDelivered = 0;
  const receiver = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      httpDelivered++;
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  const httpUri = `http://127.0.0.1:${(receiver.address() as { port: number }).port}/notify`;
  let mqttDelivered = 0;
  const subscriber = await mqtt.connectAsync(server, { protocolVersion: 5 });
  await subscriber.subscribeAsync('ldbroker-bench/notify/#', { qos: 1 });
  subscriber.on('message', () => mqttDelivered++);
  const httpBroker = await broker([]);
  const mqttBroker = await broker(['--bridges', 'mqtt']);
  try {
    const http = await notifyRate(
      httpBroker,
      () => httpUri,
      () => httpDelivered,
    );
    const viaMqtt = await notifyRate(
      mqttBroker,
      (i) => `${server}/ldbroker-bench/notify/${i}`,
      () => mqttDelivered,
    );
    lines.push(
      `### Notifications: ${NOTIFIED} entities, one subscription each (MQTT: QoS 0, mqtt5.0, one topic per subscription)`,
      '',
      '| endpoint | notifications/s (median) | range |',
      '|---|---:|---:|',
      `| HTTP (local node:http receiver) | ${median(http).toFixed(0)} | ${range(http)} |`,
      `| MQTT (local Mosquitto, one subscriber) | ${median(viaMqtt).toFixed(0)} | ${range(viaMqtt)} |`,
      '',
    );
  } finally {
    await httpBroker.stop();
    await mqttBroker.stop();
    await subscriber.endAsync(true);
    receiver.close();
  }
}

async function main(): Promise<void> {
  const started = Date.now();
  const server = mosquittoUrl();
  const lines: string[] = [`${new Date().toISOString()}, ${machineAtStart()},`, `${connections} connections, ${durationS} s per run.`, ''];
  const only = values.only?.split(',');
  if (only === undefined || only.includes('inbound')) await inbound(lines, server);
  if (only === undefined || only.includes('notify')) await notify(lines, server);
  lines.push(`Whole run ${((Date.now() - started) / 60000).toFixed(1)} min.`);
  const section = [BEGIN, '## MQTT bridge (issue 19: `node dist/bench/scenarios/bridge-mqtt.js`)', '', ...lines, END].join('\n');
  writeResultsSection('bridge-mqtt', section, values.out);
}

main().catch((e: unknown) => {
  process.stderr.write(`${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
  process.exit(1);
});
