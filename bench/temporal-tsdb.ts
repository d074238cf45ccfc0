// Issue 18 benchmarks of --troe tsdb (QuestDB, started by test/services/questdb.sh), each beside the same on --troe
// embdb: (1) the write throughput of PATCH /entities/{id}/attrs/temperature with --troe tsdb as a ratio to --troe
// none (target >= 0.9: the write path hands rows to the writer thread and never waits for QuestDB), and embdb's for
// comparison; (2) GET /temporal/entities/{id}?lastN=100 on an entity with --instances instances (10,000,000 by
// default); (3) an hourly avg aggregation over the whole of them (QuestDB aggregates them; embdb reads up to its
// aggregation cap of 100,000 instances and answers 206 with the rest on later pages, so its row is one page). The
// rows compared run alternately, --rounds times; the table gives medians and ranges.
// `node dist/bench/temporal-tsdb.js [--instances 10000000] [--rounds 3] [--duration 5] [--connections 20] [--out file]`;
// the table replaces the "Temporal on QuestDB" section of bench/RESULTS.md (or goes to --out).
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { benchId } from './bench-entity.js';
import { runLoad, failedRequests, type LoadRequest, type LoadResult } from './load.js';
import { NGSI, attributePatches, expectStatus, seedEntities, send } from './ngsi-client.js';
import { startServer } from './server-process.js';
import { machineAtStart, writeResultsSection } from './results-section.js';
import { median, range } from './stats.js';

const MAIN = fileURLToPath(new URL('../src/main.js', import.meta.url));
const QUESTDB = fileURLToPath(new URL('../../test/services/questdb.sh', import.meta.url));
const PER_BODY = 5000;
const PATCHED = 1000;
const BIG = 'urn:ngsi-ld:Meter:big';

const { values } = parseArgs({
  options: {
    instances: { type: 'string', default: '10000000' },
    rounds: { type: 'string', default: '3' },
    duration: { type: 'string', default: '5' },
    connections: { type: 'string', default: '20' },
    out: { type: 'string' },
  },
});
const bigCount = Number(values.instances);
const rounds = Number(values.rounds);
const durationS = Number(values.duration);
const connections = Number(values.connections);

type Troe = 'none' | 'embdb' | 'tsdb';

function troeArgs(troe: Troe): string[] {
  if (troe !== 'tsdb') return ['--troe', troe];
  const port = process.env.QDB_HTTP_PORT ?? '59000';
  return ['--troe', 'tsdb', '--troeHost', '127.0.0.1', '--troePort', port, '--troeName', `bench${randomBytes(4).toString('hex')}`];
}

const broker = (troe: Troe, what: string) =>
  startServer(`broker troe=${troe} (${what})`, MAIN, ['--port', '0', '--host', '127.0.0.1', '--logLevel', 'info', ...troeArgs(troe)]);

/** `count` instances of `power`, one second apart from 2024-01-01, added through the temporal API. */
async function seedInstances(url: string, id: string, count: number): Promise<void> {
  const start = Date.parse('2024-01-01T00:00:00Z');
  await expectStatus(`temporal create ${id}`, send(url, 'POST', `${NGSI}/temporal/entities`, JSON.stringify({ id, type: 'Meter' })), [201]);
  for (let i = 0; i < count; i += PER_BODY) {
    const power: unknown[] = [];
    for (let k = i; k < Math.min(count, i + PER_BODY); k++)
      power.push({ type: 'Property', value: k % 1000, observedAt: new Date(start + k * 1000).toISOString() });
    await expectStatus(
      `instances ${i}.. of ${id}`,
      send(url, 'POST', `${NGSI}/temporal/entities/${id}/attrs`, JSON.stringify({ power })),
      [204],
    );
  }
}

const lastN: LoadRequest[] = [{ method: 'GET', path: `${NGSI}/temporal/entities/${BIG}?lastN=100` }];
const hourlyAvg: LoadRequest[] = [
  { method: 'GET', path: `${NGSI}/temporal/entities/${BIG}?format=aggregatedValues&aggrMethods=avg&aggrPeriodDuration=PT1H` },
];
const patchedIds = Array.from({ length: PATCHED }, (_, i) => benchId(i + 1));

/**
 * A read over the whole history takes a second or more: 20 of them at once finished none within a run (0 req/s in
 * every round), and the ones still running held the broker through the next row. Such rows run on HEAVY_CONNECTIONS,
 * and each row starts once the broker has answered a cheap request (what a row left running is done).
 */
const HEAVY_CONNECTIONS = 2;

async function measure(url: string, requests: LoadRequest[], heavy = false): Promise<LoadResult> {
  await expectStatus('the broker is idle again', send(url, 'GET', `${NGSI}/entities?type=Nothing&limit=1`), [200]);
  const r = await runLoad(requests, {
    url,
    connections: heavy ? HEAVY_CONNECTIONS : connections,
    durationS,
    warmupS: Math.min(2, durationS),
  });
  // embdb pages an aggregation past its cap (206): an answer, not a failure.
  if (failedRequests(r) > 0) throw new Error(`failed requests: ${JSON.stringify(r.statusCodes)} errors ${r.errors}`);
  return r;
}

interface Row {
  name: string;
  target: () => string;
  requests: LoadRequest[];
  runs: LoadResult[];
  /** A read over the whole history (measure's HEAVY_CONNECTIONS). */
  heavy?: boolean;
}

const rps = (r: Row): number[] => r.runs.map((x) => x.requestsPerSecond);
const line = (r: Row): string =>
  `| ${r.name} | ${median(rps(r)).toFixed(0)} | ${range(rps(r))} | ${median(r.runs.map((x) => x.p50Ms))} | ${median(r.runs.map((x) => x.p99Ms))} |`;

/** Per round, the ratio of row a to row b, as median and range. */
function pairRatio(a: Row, b: Row): { median: number; range: string } {
  const per = a.runs.map((x, i) => x.requestsPerSecond / b.runs[i]!.requestsPerSecond);
  return { median: median(per), range: range(per, 2) };
}

async function main(): Promise<void> {
  const started = Date.now();
  const machine = machineAtStart();
  execFileSync('bash', [QUESTDB], { stdio: ['ignore', 'ignore', 'inherit'] });
  const writers = { none: await broker('none', 'writes'), embdb: await broker('embdb', 'writes'), tsdb: await broker('tsdb', 'writes') };
  const readers = { embdb: await broker('embdb', 'reads'), tsdb: await broker('tsdb', 'reads') };
  const seeding: string[] = [];
  try {
    for (const b of Object.values(writers)) await seedEntities(b.url, patchedIds);
    for (const [troe, b] of Object.entries(readers)) {
      const t0 = Date.now();
      await seedInstances(b.url, BIG, bigCount);
      // The first read waits until QuestDB applied every row: part of the seeding, not of the measure.
      await expectStatus(`first read on ${troe}`, send(b.url, 'GET', lastN[0]!.path), [200]);
      const s = (Date.now() - t0) / 1000;
      seeding.push(`${bigCount} instances on --troe ${troe} in ${s.toFixed(0)} s (${(bigCount / s).toFixed(0)} instances/s)`);
    }
    const rows: Row[] = [
      { name: 'PATCH attribute, --troe none', target: () => writers.none.url, requests: attributePatches(patchedIds), runs: [] },
      { name: 'PATCH attribute, --troe tsdb', target: () => writers.tsdb.url, requests: attributePatches(patchedIds), runs: [] },
      { name: 'PATCH attribute, --troe embdb', target: () => writers.embdb.url, requests: attributePatches(patchedIds), runs: [] },
      { name: `lastN=100 of ${bigCount}, --troe tsdb`, target: () => readers.tsdb.url, requests: lastN, runs: [], heavy: true },
      { name: `lastN=100 of ${bigCount}, --troe embdb`, target: () => readers.embdb.url, requests: lastN, runs: [], heavy: true },
      { name: `hourly avg over ${bigCount}, --troe tsdb`, target: () => readers.tsdb.url, requests: hourlyAvg, runs: [], heavy: true },
      {
        name: `hourly avg, --troe embdb (one page of 100,000)`,
        target: () => readers.embdb.url,
        requests: hourlyAvg,
        runs: [],
        heavy: true,
      },
    ];
    for (let round = 0; round < rounds; round++) {
      // Alternate the order of each compared pair between rounds, so that neither always runs first.
      const order = round % 2 === 0 ? [0, 1, 2, 3, 4, 5, 6] : [1, 0, 2, 4, 3, 6, 5];
      for (const i of order) {
        const row = rows[i]!;
        const r = await measure(row.target(), row.requests, row.heavy);
        row.runs.push(r);
        process.stderr.write(`round ${round + 1}: ${row.name}: ${r.requestsPerSecond.toFixed(0)} req/s\n`);
      }
    }
    const tsdbWrite = pairRatio(rows[1]!, rows[0]!);
    const embdbWrite = pairRatio(rows[2]!, rows[0]!);
    const lines = [
      `${new Date().toISOString()}, ${machine}, ${connections} connections (${HEAVY_CONNECTIONS} for lastN and avg), ${durationS} s per run after 2 s warm-up, ${rounds} alternated rounds; whole run`,
      `${((Date.now() - started) / 60000).toFixed(1)} min. Seeded: ${seeding.join('; ')}.`,
      '',
      '| row | req/s (median) | req/s range | p50 ms | p99 ms |',
      '|---|---:|---:|---:|---:|',
      ...rows.map(line),
      '',
      `- write throughput with --troe tsdb: **${tsdbWrite.median.toFixed(2)}** of --troe none (rounds ${tsdbWrite.range}; target >= 0.9); --troe embdb: ${embdbWrite.median.toFixed(2)}.`,
    ];
    const section = [
      '<!-- temporal-tsdb:begin -->',
      '## Temporal on QuestDB (issue 18: `node dist/bench/temporal-tsdb.js`)',
      '',
      ...lines,
      '<!-- temporal-tsdb:end -->',
    ];
    writeResultsSection('temporal-tsdb', section.join('\n'), values.out);
  } finally {
    for (const p of [...Object.values(writers), ...Object.values(readers)]) await p.stop();
  }
}

main().catch((e: unknown) => {
  process.stderr.write(`${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
  process.exit(1);
});
