// Memory of a loaded broker (issue 24 item 6): starts a broker with default options, loads N entities by batch upsert,
// serves a mixed load for D minutes and samples the broker process's RSS (VmRSS of /proc/<pid>/status) every few
// seconds. Flat means the floor does not climb: the lowest RSS of the last third (what is left after the garbage
// collector's passes) stays within FLAT_SHARE of the lowest of the middle third. A slope over the last third is
// printed too, but V8's sawtooth (the heaps swing ±30 MB between collections) moves it by ±3 MB/min either way
// in a few minutes, while a leak lifts every floor. Prints a table and replaces the `memory` section of RESULTS.md.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { benchEntity, benchId, ENTITY_TYPE } from './bench-entity.js';
import { runLoad, failedRequests, type LoadRequest } from './load.js';
import { JSON_HEADERS, NGSI, expectStatus, send } from './ngsi-client.js';
import { startServer } from './server-process.js';
import { machineAtStart, sectionMarkers, writeResultsSection } from './results-section.js';

const MAIN = fileURLToPath(new URL('../src/main.js', import.meta.url));
const { begin: BEGIN, end: END } = sectionMarkers('memory');
const BATCH = 1000;
const PARALLEL = 4;
/** The last third's floor may lie at most this share of the RSS above the middle third's and still be flat. */
const FLAT_SHARE = 0.02;

const USAGE = `Usage: node dist/bench/memory.js [options]
  --entities <n>        entities loaded before the load (default 1000000)
  --minutes <m>         minutes of mixed load (default 10; fractions allowed)
  --sample <s>          seconds between RSS samples (default 5)
  --connections <n>     autocannon connections (default 50)
  --out <file>          where the Markdown section goes (default bench/RESULTS.md)
`;

const { values } = parseArgs({
  options: {
    entities: { type: 'string', default: '1000000' },
    minutes: { type: 'string', default: '10' },
    sample: { type: 'string', default: '5' },
    connections: { type: 'string', default: '50' },
    out: { type: 'string' },
    help: { type: 'boolean', default: false },
  },
});
if (values.help === true) {
  process.stdout.write(USAGE);
  process.exit(0);
}
const entities = Number(values.entities);
const minutes = Number(values.minutes);
const sampleS = Number(values.sample);
const connections = Number(values.connections);
for (const [name, v] of [
  ['entities', entities],
  ['minutes', minutes],
  ['sample', sampleS],
  ['connections', connections],
] as const) {
  if (!Number.isFinite(v) || v <= 0) {
    process.stderr.write(`--${name}: not a positive number\n${USAGE}`);
    process.exit(2);
  }
}

interface Sample {
  seconds: number;
  rssMb: number;
  /** RssAnon: the heaps (V8's, malloc's: lmdb's and uWS's buffers). */
  anonMb: number;
  /** RssFile + RssShmem: mapped files, the store's LMDB map first (on tmpfs for the RAM store: shared memory). */
  mappedMb: number;
}

/** A line of /proc/<pid>/status in MB (Linux). */
function statusMb(status: string, field: string, pid: number): number {
  const line = new RegExp(`^${field}:\\s+(\\d+) kB$`, 'm').exec(status);
  if (line === null) throw new Error(`no ${field} in /proc/${pid}/status`);
  return Number(line[1]) / 1024;
}

/** The process's resident set in MB, from the kernel's own line. */
const rssMb = (pid: number): number => statusMb(readFileSync(`/proc/${pid}/status`, 'utf8'), 'VmRSS', pid);

function sampleOf(pid: number, seconds: number): Sample {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return {
    seconds,
    rssMb: statusMb(status, 'VmRSS', pid),
    anonMb: statusMb(status, 'RssAnon', pid),
    mappedMb: statusMb(status, 'RssFile', pid) + statusMb(status, 'RssShmem', pid),
  };
}

/** Least-squares slope of RSS (or of another member) over time, in MB per minute. */
function slopeMbPerMin(samples: readonly Sample[], of: 'rssMb' | 'anonMb' | 'mappedMb' = 'rssMb'): number {
  const n = samples.length;
  if (n < 2) return 0;
  const mx = samples.reduce((a, s) => a + s.seconds, 0) / n;
  const my = samples.reduce((a, s) => a + s[of], 0) / n;
  let num = 0;
  let den = 0;
  for (const s of samples) {
    num += (s.seconds - mx) * (s[of] - my);
    den += (s.seconds - mx) ** 2;
  }
  return den === 0 ? 0 : (num / den) * 60;
}

async function load(url: string): Promise<number> {
  const started = Date.now();
  for (let from = 0; from < entities; from += BATCH * PARALLEL) {
    const batches: Promise<unknown>[] = [];
    for (let s = from; s < Math.min(entities, from + BATCH * PARALLEL); s += BATCH) {
      const body = JSON.stringify(Array.from({ length: Math.min(BATCH, entities - s) }, (_, j) => benchEntity(benchId(s + j + 1))));
      batches.push(expectStatus(`upsert ${s}..`, send(url, 'POST', `${NGSI}/entityOperations/upsert`, body, JSON_HEADERS), [201, 204]));
    }
    await Promise.all(batches);
    const done = Math.min(entities, from + BATCH * PARALLEL);
    if (done % 100_000 === 0 || done === entities)
      process.stdout.write(`  loaded ${done.toLocaleString('en')} (${((Date.now() - started) / 1000).toFixed(1)} s)\n`);
  }
  return (Date.now() - started) / 1000;
}

/**
 * What each connection sends in turn: three reads by id, an attribute update, a query by type; ids spread over the
 * whole store (a multiplicative walk), so the load touches all of it and creates nothing.
 */
function mixedLoad(): LoadRequest[] {
  let k = 0;
  const nextId = (): string => benchId(((k = (k + 7919) % entities), k + 1));
  const get: LoadRequest = {
    method: 'GET',
    path: `${NGSI}/entities/${benchId(1)}`,
    next: () => ({ path: `${NGSI}/entities/${nextId()}` }),
  };
  let v = 0;
  const patch: LoadRequest = {
    method: 'PATCH',
    path: `${NGSI}/entities/${benchId(1)}/attrs/temperature`,
    headers: JSON_HEADERS,
    body: '{"type":"Property","value":0}',
    next: () => ({ path: `${NGSI}/entities/${nextId()}/attrs/temperature`, body: `{"type":"Property","value":${++v % 100}}` }),
  };
  const query: LoadRequest = { method: 'GET', path: `${NGSI}/entities?type=${ENTITY_TYPE}&limit=20` };
  return [get, get, get, patch, query];
}

const machine = machineAtStart();
const broker = await startServer('broker', MAIN, ['--port', '0', '--host', '127.0.0.1', '--logLevel', 'info']);
const pid = broker.proc.pid!;
let exitCode = 0;
try {
  const idleMb = rssMb(pid);
  process.stdout.write(`broker pid ${pid}, RSS ${idleMb.toFixed(0)} MB at start; loading ${entities.toLocaleString('en')} entities\n`);
  const loadS = await load(broker.url);
  const loadedMb = rssMb(pid);
  process.stdout.write(`loaded in ${loadS.toFixed(1)} s, RSS ${loadedMb.toFixed(0)} MB; ${minutes} min of mixed load\n`);

  const samples: Sample[] = [];
  const started = Date.now();
  const sample = (): void => {
    samples.push(sampleOf(pid, (Date.now() - started) / 1000));
  };
  sample();
  const timer = setInterval(sample, sampleS * 1000);
  const result = await runLoad(mixedLoad(), { url: broker.url, connections, durationS: minutes * 60, warmupS: 0 });
  clearInterval(timer);
  sample();

  const lastThird = samples.filter((s) => s.seconds >= (samples.at(-1)!.seconds * 2) / 3);
  const slope = slopeMbPerMin(lastThird);
  const endMb = samples.at(-1)!.rssMb;
  const end = samples.at(-1)!.seconds;
  const middleThird = samples.filter((s) => s.seconds >= end / 3 && s.seconds < (end * 2) / 3);
  const floor = (of: readonly Sample[]): number => Math.min(...of.map((s) => s.rssMb));
  const floorRise = floor(lastThird) - floor(middleThird);
  const flat = floorRise <= FLAT_SHARE * endMb;
  const peak = Math.max(...samples.map((s) => s.rssMb));
  const failed = failedRequests(result);
  if (failed > 0) exitCode = 1;

  const table = [
    '| t (s) | RSS (MB) | heaps, RssAnon (MB) | mapped, RssFile + RssShmem (MB) |',
    '|---:|---:|---:|---:|',
    ...samples.map((s) => `| ${s.seconds.toFixed(0)} | ${s.rssMb.toFixed(1)} | ${s.anonMb.toFixed(1)} | ${s.mappedMb.toFixed(1)} |`),
  ];
  const first = samples[0]!;
  const body = [
    BEGIN,
    '## Memory (bench/memory.ts)',
    '',
    `A broker with default options, ${entities.toLocaleString('en')} entities loaded by batch upsert (${BATCH} per request, ` +
      `${PARALLEL} in flight), then ${minutes} min of mixed load (${connections} connections, each in turn: 3 GET by id, ` +
      `1 PATCH of an attribute, 1 query by type limit=20; ids spread over the store). RSS of the broker process (VmRSS) ` +
      `every ${sampleS} s. ${machine}.`,
    '',
    `- RSS at start ${idleMb.toFixed(0)} MB; after the load (${loadS.toFixed(1)} s, ${Math.round(entities / loadS).toLocaleString('en')} entities/s) ` +
      `${loadedMb.toFixed(0)} MB; at the end ${endMb.toFixed(0)} MB; peak ${peak.toFixed(0)} MB.`,
    `- Mixed load: ${Math.round(result.requestsPerSecond).toLocaleString('en')} req/s, p99 ${result.p99Ms} ms, ${failed} failed.`,
    `- Floor (lowest RSS) of the middle third ${floor(middleThird).toFixed(0)} MB, of the last third ` +
      `${floor(lastThird).toFixed(0)} MB: ${floorRise >= 0 ? '+' : ''}${floorRise.toFixed(1)} MB, **${flat ? 'flat' : 'growing'}** ` +
      `(flat: a rise under ${FLAT_SHARE * 100}% of the RSS).`,
    `- Last third's least-squares slope ${slope.toFixed(2)} MB/min (the garbage collector's sawtooth moves it): the heaps ` +
      `${slopeMbPerMin(lastThird, 'anonMb').toFixed(2)} MB/min, the mapped store ${slopeMbPerMin(lastThird, 'mappedMb').toFixed(2)} MB/min.`,
    `- Where the RSS is: heaps ${first.anonMb.toFixed(0)} MB and mapped ${first.mappedMb.toFixed(0)} MB as the load starts, ` +
      `${samples.at(-1)!.anonMb.toFixed(0)} and ${samples.at(-1)!.mappedMb.toFixed(0)} MB at its end.`,
    '',
    ...table,
    END,
  ].join('\n');
  writeResultsSection('memory', body, values.out);
} catch (e) {
  process.stderr.write(`${e instanceof Error ? e.message : String(e)}\n${broker.tail()}\n`);
  exitCode = 1;
} finally {
  const code = await broker.stop();
  if (code !== 0 && code !== null) exitCode = 1;
}
process.exit(exitCode);
