// Issue 5 benchmarks, run on their own because they need brokers the scenario table cannot ask for (--troe) and
// a seed far larger than a scenario's: (1) GET /temporal/entities/{id}?lastN=100 on an entity with 1,000 and with
// 1,000,000 instances (the index by entity, attribute and time should make both cost the same); (2) GET
// /temporal/entities?type=Rare on a history of 10 Rare entities alone and beside --others entities of another type
// (the history's type index should make both cost the same); (3) the write throughput of PATCH
// /entities/{id}/attrs/temperature with --troe embdb against --troe none (target >= 0.7). The rows compared run
// alternately, --rounds times, each beside a bare uWS row of the same round; the table gives medians and ranges.
// `node dist/bench/temporal.js [--instances 1000000] [--others 100000] [--rounds 3] [--duration 5] [--connections 20]
// [--out file]`; the table replaces the "Temporal" section of bench/RESULTS.md (or goes to --out).
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { benchId } from './bench-entity.js';
import { runLoad, failedRequests, type LoadRequest, type LoadResult } from './load.js';
import { JSON_HEADERS, NGSI, attributePatches, expectStatus, seedEntities, send } from './ngsi-client.js';
import { startServer } from './server-process.js';
import { machineAtStart, sectionMarkers, writeResultsSection } from './results-section.js';
import { median, range } from './stats.js';

const MAIN = fileURLToPath(new URL('../src/main.js', import.meta.url));
const { begin: BEGIN, end: END } = sectionMarkers('temporal');
const PER_BODY = 5000;
const SMALL = 1000;
const PATCHED = 1000;

const { values } = parseArgs({
  options: {
    instances: { type: 'string', default: '1000000' },
    others: { type: 'string', default: '100000' },
    rounds: { type: 'string', default: '3' },
    duration: { type: 'string', default: '5' },
    connections: { type: 'string', default: '20' },
    out: { type: 'string' },
  },
});
const bigCount = Number(values.instances);
const otherCount = Number(values.others);
const rounds = Number(values.rounds);
const durationS = Number(values.duration);
const connections = Number(values.connections);
const RARE = 10;
const BARE_SCRIPT = fileURLToPath(new URL('./bare-server.js', import.meta.url));

const broker = (troe: 'none' | 'embdb') =>
  startServer(`broker troe=${troe}`, MAIN, ['--port', '0', '--host', '127.0.0.1', '--logLevel', 'info', '--troe', troe]);

/** `count` instances of `power`, one second apart from 2024-01-01, added through the temporal API. */
async function seedInstances(url: string, id: string, count: number): Promise<void> {
  const start = Date.parse('2024-01-01T00:00:00Z');
  await expectStatus(`temporal create ${id}`, send(url, 'POST', `${NGSI}/temporal/entities`, JSON.stringify({ id, type: 'Meter' })), [201]);
  for (let i = 0; i < count; i += PER_BODY) {
    const power: unknown[] = [];
    for (let k = i; k < Math.min(count, i + PER_BODY); k++)
      power.push({ type: 'Property', value: k, observedAt: new Date(start + k * 1000).toISOString() });
    await expectStatus(
      `instances ${i}.. of ${id}`,
      send(url, 'POST', `${NGSI}/temporal/entities/${id}/attrs`, JSON.stringify({ power })),
      [204],
    );
  }
}

/** `count` entities of `type` created through the entity API (so the history records them), 1000 a batch. */
async function seedTyped(url: string, type: string, count: number): Promise<void> {
  for (let i = 0; i < count; i += 1000) {
    const batch = [];
    for (let k = i; k < Math.min(count, i + 1000); k++)
      batch.push({ id: `urn:ngsi-ld:${type}:${k}`, type, power: { type: 'Property', value: k } });
    await expectStatus(`create ${type} ${i}..`, send(url, 'POST', `${NGSI}/entityOperations/create`, JSON.stringify(batch)), [201]);
  }
}

const lastN = (id: string): LoadRequest[] => [
  { method: 'GET', path: `${NGSI}/temporal/entities/${id}?lastN=100&timerel=after&timeAt=2024-01-01T00:00:00Z` },
];
const byType: LoadRequest[] = [{ method: 'GET', path: `${NGSI}/temporal/entities?type=Rare&lastN=1` }];
const bareGet: LoadRequest[] = [{ method: 'GET', path: `${NGSI}/entities/${benchId(1)}` }];
const barePatch: LoadRequest[] = [
  {
    method: 'PATCH',
    path: `${NGSI}/entities/${benchId(1)}/attrs/temperature`,
    headers: JSON_HEADERS,
    body: '{"type":"Property","value":0}',
  },
];
const patchedIds = Array.from({ length: PATCHED }, (_, i) => benchId(i + 1));
const patches = (): LoadRequest[] => attributePatches(patchedIds);

async function measure(url: string, requests: LoadRequest[]): Promise<LoadResult> {
  const r = await runLoad(requests, { url, connections, durationS, warmupS: Math.min(2, durationS) });
  if (failedRequests(r) > 0) throw new Error(`failed requests: ${JSON.stringify(r.statusCodes)} errors ${r.errors}`);
  return r;
}

interface Row {
  name: string;
  /** The bare row its ratio is taken to, measured in the same round. */
  bare: 'get' | 'patch';
  target: () => string;
  requests: () => LoadRequest[];
  runs: LoadResult[];
  ratios: number[];
}

const rps = (r: Row): number[] => r.runs.map((x) => x.requestsPerSecond);

function line(r: Row): string {
  return `| ${r.name} | ${median(rps(r)).toFixed(0)} | ${range(rps(r))} | ${median(r.runs.map((x) => x.p50Ms))} | ${median(r.runs.map((x) => x.p99Ms))} | ${median(r.ratios).toFixed(3)} |`;
}

/** Per round, the ratio of row a to row b (their runs alternate within the round), as median and range. */
function pairRatio(a: Row, b: Row): { median: number; range: string } {
  const per = a.runs.map((x, i) => x.requestsPerSecond / b.runs[i]!.requestsPerSecond);
  return { median: median(per), range: range(per, 2) };
}

async function main(): Promise<void> {
  const started = Date.now();
  const machine = machineAtStart();
  const bare = await startServer('bare-uws', BARE_SCRIPT, ['127.0.0.1', '0']);
  const full = await broker('embdb');
  const lean = await broker('embdb');
  const none = await broker('none');
  const seeding: string[] = [];
  try {
    let t0 = Date.now();
    await seedInstances(full.url, 'urn:ngsi-ld:Meter:small', SMALL);
    await seedInstances(full.url, 'urn:ngsi-ld:Meter:big', bigCount);
    let s = (Date.now() - t0) / 1000;
    seeding.push(
      `${SMALL + bigCount} instances through the temporal API in ${s.toFixed(0)} s (${((SMALL + bigCount) / s).toFixed(0)} instances/s)`,
    );
    t0 = Date.now();
    await seedTyped(full.url, 'Other', otherCount);
    s = (Date.now() - t0) / 1000;
    seeding.push(
      `${otherCount} entities of type Other by batch create with --troe embdb in ${s.toFixed(0)} s (${(otherCount / s).toFixed(0)} entities/s)`,
    );
    for (const b of [full, lean]) await seedTyped(b.url, 'Rare', RARE);
    for (const b of [lean, none])
      await seedEntities(
        b.url,
        Array.from({ length: PATCHED }, (_, i) => benchId(i + 1)),
      );

    const rows: Row[] = [
      { name: 'bare uWS, GET', bare: 'get', target: () => bare.url, requests: () => bareGet, runs: [], ratios: [] },
      {
        name: `lastN=100, entity with ${SMALL} instances`,
        bare: 'get',
        target: () => full.url,
        requests: () => lastN('urn:ngsi-ld:Meter:small'),
        runs: [],
        ratios: [],
      },
      {
        name: `lastN=100, entity with ${bigCount} instances`,
        bare: 'get',
        target: () => full.url,
        requests: () => lastN('urn:ngsi-ld:Meter:big'),
        runs: [],
        ratios: [],
      },
      {
        name: `type=Rare (${RARE}), history without other types`,
        bare: 'get',
        target: () => lean.url,
        requests: () => byType,
        runs: [],
        ratios: [],
      },
      {
        name: `type=Rare (${RARE}), beside ${otherCount} of type Other`,
        bare: 'get',
        target: () => full.url,
        requests: () => byType,
        runs: [],
        ratios: [],
      },
      { name: 'bare uWS, PATCH', bare: 'patch', target: () => bare.url, requests: () => barePatch, runs: [], ratios: [] },
      { name: 'PATCH attribute, --troe none', bare: 'patch', target: () => none.url, requests: patches, runs: [], ratios: [] },
      { name: 'PATCH attribute, --troe embdb', bare: 'patch', target: () => lean.url, requests: patches, runs: [], ratios: [] },
    ];
    for (let round = 0; round < rounds; round++) {
      // Alternate the order of each compared pair between rounds, so that neither always runs first.
      const order = round % 2 === 0 ? [0, 1, 2, 3, 4, 5, 6, 7] : [0, 2, 1, 4, 3, 5, 7, 6];
      for (const i of order) {
        const row = rows[i]!;
        const r = await measure(row.target(), row.requests());
        row.runs.push(r);
        process.stderr.write(`round ${round + 1}: ${row.name}: ${r.requestsPerSecond.toFixed(0)} req/s\n`);
      }
      for (const row of rows) {
        const b = rows[row.bare === 'get' ? 0 : 5]!.runs[round]!;
        row.ratios.push(row.runs[round]!.requestsPerSecond / b.requestsPerSecond);
      }
    }
    const last = pairRatio(rows[2]!, rows[1]!);
    const type = pairRatio(rows[4]!, rows[3]!);
    const write = pairRatio(rows[7]!, rows[6]!);
    const lines = [
      `${new Date().toISOString()}, ${machine}, ${connections} connections, ${durationS} s per run after 2 s warm-up, ${rounds} alternated rounds; whole run`,
      `${((Date.now() - started) / 60000).toFixed(1)} min. Seeded: ${seeding.join('; ')}.`,
      '',
      '| row | req/s (median) | req/s range | p50 ms | p99 ms | ratio to bare uWS (median) |',
      '|---|---:|---:|---:|---:|---:|',
      ...rows.map(line),
      '',
      `- lastN=100 on ${bigCount} vs ${SMALL} instances: **${last.median.toFixed(2)}** of the req/s (rounds ${last.range}; 1.0 = the same time).`,
      `- type=Rare beside ${otherCount} entities of another type vs alone: **${type.median.toFixed(2)}** (rounds ${type.range}; the history's type index).`,
      `- write throughput with --troe embdb: **${write.median.toFixed(2)}** of --troe none (rounds ${write.range}; target >= 0.7).`,
    ];
    writeSection(lines);
  } finally {
    for (const p of [none, lean, full, bare]) await p.stop();
  }
}

function writeSection(lines: readonly string[]): void {
  const section = [BEGIN, '## Temporal (issue 5: `node dist/bench/temporal.js`)', '', ...lines, END].join('\n');
  writeResultsSection('temporal', section, values.out);
}

main().catch((e: unknown) => {
  process.stderr.write(`${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
  process.exit(1);
});
