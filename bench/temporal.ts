// Issue 5 benchmarks, run on their own because they need brokers the scenario table cannot ask for (--troe) and
// a seed far larger than a scenario's: (1) GET /temporal/entities/{id}?lastN=100 on an entity with 1,000 and with
// 1,000,000 instances (the index by entity, attribute and time should make both cost the same); (2) the write
// throughput of PATCH /entities/{id}/attrs/temperature with --troe embdb against --troe none (target >= 0.7).
// `node dist/bench/temporal.js [--instances 1000000] [--duration 10] [--connections 20] [--out file]`; the table
// replaces the "Temporal" section of bench/RESULTS.md (or goes to --out).
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { benchId } from './bench-entity.js';
import { runLoad, failedRequests, type LoadRequest, type LoadResult } from './load.js';
import { JSON_HEADERS, NGSI, expectStatus, seedEntities, send } from './ngsi-client.js';
import { startServer } from './server-process.js';

const MAIN = fileURLToPath(new URL('../src/main.js', import.meta.url));
const RESULTS = fileURLToPath(new URL('../../bench/RESULTS.md', import.meta.url));
const BEGIN = '<!-- temporal:begin -->';
const END = '<!-- temporal:end -->';
const PER_BODY = 5000;
const SMALL = 1000;
const PATCHED = 1000;

const { values } = parseArgs({
  options: {
    instances: { type: 'string', default: '1000000' },
    duration: { type: 'string', default: '10' },
    connections: { type: 'string', default: '20' },
    out: { type: 'string' },
  },
});
const bigCount = Number(values.instances);
const durationS = Number(values.duration);
const connections = Number(values.connections);

const broker = (troe: 'none' | 'embdb') =>
  startServer(`broker troe=${troe}`, MAIN, ['--port', '0', '--host', '127.0.0.1', '--logLevel', 'info', '--troe', troe]);

/** `count` instances of `power`, one second apart from 2024-01-01, added through the temporal API. */
async function seedInstances(url: string, id: string, count: number): Promise<void> {
  const start = Date.parse('2024-01-01T00:00:00Z');
  await expectStatus(`temporal create ${id}`, send(url, 'POST', `${NGSI}/temporal/entities`, JSON.stringify({ id, type: 'Meter' })), [201]);
  for (let i = 0; i < count; i += PER_BODY) {
    const power: unknown[] = [];
    for (let k = i; k < Math.min(count, i + PER_BODY); k++) power.push({ type: 'Property', value: k, observedAt: new Date(start + k * 1000).toISOString() });
    await expectStatus(`instances ${i}.. of ${id}`, send(url, 'POST', `${NGSI}/temporal/entities/${id}/attrs`, JSON.stringify({ power })), [204]);
  }
}

const lastN = (id: string): LoadRequest[] => [{ method: 'GET', path: `${NGSI}/temporal/entities/${id}?lastN=100&timerel=after&timeAt=2024-01-01T00:00:00Z` }];

function patches(): LoadRequest[] {
  let n = 0;
  return [{
    method: 'PATCH',
    path: `${NGSI}/entities/${benchId(1)}/attrs/temperature`,
    headers: JSON_HEADERS,
    body: '{"type":"Property","value":0}',
    next: () => {
      n++;
      return { path: `${NGSI}/entities/${benchId((n % PATCHED) + 1)}/attrs/temperature`, body: `{"type":"Property","value":${n}}` };
    },
  }];
}

async function measure(url: string, requests: LoadRequest[]): Promise<LoadResult> {
  const r = await runLoad(requests, { url, connections, durationS, warmupS: Math.min(2, durationS) });
  if (failedRequests(r) > 0) throw new Error(`failed requests: ${JSON.stringify(r.statusCodes)} errors ${r.errors}`);
  return r;
}

const row = (name: string, r: LoadResult): string => `| ${name} | ${r.requestsPerSecond.toFixed(0)} | ${r.p50Ms} | ${r.p99Ms} |`;

async function main(): Promise<void> {
  const lines: string[] = [];
  const history = await broker('embdb');
  let small: LoadResult;
  let big: LoadResult;
  try {
    const seedStart = Date.now();
    await seedInstances(history.url, 'urn:ngsi-ld:Meter:small', SMALL);
    await seedInstances(history.url, 'urn:ngsi-ld:Meter:big', bigCount);
    const seedS = (Date.now() - seedStart) / 1000;
    small = await measure(history.url, lastN('urn:ngsi-ld:Meter:small'));
    big = await measure(history.url, lastN('urn:ngsi-ld:Meter:big'));
    lines.push(`Seeded ${SMALL + bigCount} instances through the temporal API in ${seedS.toFixed(0)} s (${((SMALL + bigCount) / seedS).toFixed(0)} instances/s).`, '');
  } finally {
    await history.stop();
  }
  const writes: Record<string, LoadResult> = {};
  for (const troe of ['none', 'embdb'] as const) {
    const b = await broker(troe);
    try {
      await seedEntities(b.url, Array.from({ length: PATCHED }, (_, i) => benchId(i + 1)));
      writes[troe] = await measure(b.url, patches());
    } finally {
      await b.stop();
    }
  }
  const lastNRatio = big.requestsPerSecond / small.requestsPerSecond;
  const writeRatio = writes.embdb!.requestsPerSecond / writes.none!.requestsPerSecond;
  lines.push(
    `${new Date().toISOString()}, ${cpus().length} cores, ${connections} connections, ${durationS} s per row.`, '',
    '| row | req/s | p50 ms | p99 ms |', '|---|---|---|---|',
    row(`lastN=100, entity with ${SMALL} instances`, small),
    row(`lastN=100, entity with ${bigCount} instances`, big),
    row('PATCH attribute, --troe none', writes.none!),
    row('PATCH attribute, --troe embdb', writes.embdb!),
    '',
    `- lastN on ${bigCount} vs ${SMALL} instances: ${lastNRatio.toFixed(2)} of the req/s (1.0 = the same time; the instance index keeps it flat).`,
    `- write throughput with --troe embdb: ${writeRatio.toFixed(2)} of --troe none (target >= 0.7).`,
  );
  const section = [BEGIN, '## Temporal (issue 5: `node dist/bench/temporal.js`)', '', ...lines, END].join('\n');
  process.stdout.write(section + '\n');
  const out = values.out ?? RESULTS;
  const previous = existsSync(out) ? readFileSync(out, 'utf8') : '';
  const i = previous.indexOf(BEGIN);
  const j = previous.indexOf(END);
  const next = i >= 0 && j > i ? previous.slice(0, i) + section + previous.slice(j + END.length) : `${previous.trimEnd()}\n\n${section}\n`;
  writeFileSync(out, next.startsWith('\n') ? next.trimStart() : next);
}

main().catch((e: unknown) => {
  process.stderr.write(`${e instanceof Error ? e.stack ?? e.message : String(e)}\n`);
  process.exit(1);
});
