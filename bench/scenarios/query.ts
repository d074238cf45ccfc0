// Query scenarios of issues 3 and 24: by type with limit=20 over 100,000 entities, a `q` on a numeric attribute
// matching 1 in 20, a geo `near`. The broker is shared by the scenarios of a run: a seed already done on a broker is
// not done again. (Unrelated data around the same rows: `--scale`, bench/scale.ts; in process: query-store.ts.)
import type { LoadRequest } from '../load.js';
import { expectStatus, JSON_HEADERS, NGSI, send } from '../ngsi-client.js';
import type { Scenario } from '../scenario.js';

const BATCH = 1000;
/**
 * The smoke run (CI) checks that every request answers 2xx, not the speed: a hundredth of the data will do. The docdb
 * rows (`run.js --docdb`, make bench) seed a tenth: FerretDB seeds about 1,000 entities/s on the shared machine, and a
 * page by type reads every match there (so a page costs the seed's size), which keeps the step within make bench's
 * 20 minutes.
 */
const SIZE = process.argv.includes('--smoke') ? 0.01 : process.argv.includes('--docdb') ? 0.1 : 1;
const n = (count: number): number => Math.max(10, Math.round(count * SIZE));
const BENCH_N = n(100_000);
const GEO_N = n(10_000);
const PARALLEL = 4;
/** A progress line every this many entities seeded (a 1M top-up prints ten). */
const PROGRESS_EVERY = 100_000;

function entity(type: string, k: number, geo: boolean): Record<string, unknown> {
  const e: Record<string, unknown> = {
    id: `urn:ngsi-ld:${type}:${k}`,
    type,
    temperature: { type: 'Property', value: k % 40 },
    name: { type: 'Property', value: `n${k}` },
  };
  // A 1000 × 1000 grid of points 0.001° apart around (2.0, 48.0).
  if (geo)
    e.location = {
      type: 'GeoProperty',
      value: { type: 'Point', coordinates: [2 + (k % 1000) * 0.001, 48 + Math.floor(k / 1000) * 0.001] },
    };
  return e;
}

/**
 * Upserts entities `from`..`to`-1 of `type` in batches, a few requests in flight, printing progress on large seeds.
 * `headers`: e.g. an NGSILD-Tenant.
 */
export async function seedRange(
  baseUrl: string,
  type: string,
  from: number,
  to: number,
  geo = false,
  headers: Record<string, string> = JSON_HEADERS,
): Promise<void> {
  const starts: number[] = [];
  for (let i = from; i < to; i += BATCH) starts.push(i);
  const started = Date.now();
  let done = from;
  for (let i = 0; i < starts.length; i += PARALLEL) {
    await Promise.all(
      starts.slice(i, i + PARALLEL).map((s) => {
        const body = JSON.stringify(Array.from({ length: Math.min(BATCH, to - s) }, (_, j) => entity(type, s + j, geo)));
        return expectStatus(`seeding ${type} ${s}..`, send(baseUrl, 'POST', `${NGSI}/entityOperations/upsert`, body, headers), [201, 204]);
      }),
    );
    const before = done;
    done = Math.min(to, starts[i + PARALLEL] ?? to);
    if (Math.floor(done / PROGRESS_EVERY) > Math.floor(before / PROGRESS_EVERY) || (done === to && to - from >= PROGRESS_EVERY)) {
      const s = (Date.now() - started) / 1000;
      process.stdout.write(
        `    seeded ${type} ${done.toLocaleString('en')} / ${to.toLocaleString('en')} (${s.toFixed(1)} s, ${Math.round((done - from) / s).toLocaleString('en')} entities/s)\n`,
      );
    }
  }
}

/** The seeds done on each broker (url type to), so two scenarios over the same data seed it once. */
const seeded = new Set<string>();
async function seedOnce(baseUrl: string, type: string, to: number, geo = false): Promise<void> {
  const key = `${baseUrl} ${type} ${to}`;
  if (seeded.has(key)) return;
  await seedRange(baseUrl, type, 0, to, geo);
  seeded.add(key);
}

const get = (path: string): LoadRequest[] => [{ method: 'GET', path }];

const queryType: Scenario = {
  name: 'query-type',
  description: `GET /entities?type=QBench&limit=20 with ${BENCH_N.toLocaleString('en')} QBench entities in the store`,
  targetRatio: 0.35,
  seeds: BENCH_N,
  setup: (url) => seedOnce(url, 'QBench', BENCH_N),
  requests: () => get(`${NGSI}/entities?type=QBench&limit=20`),
};

const queryQ: Scenario = {
  name: 'query-q',
  description: `GET /entities?type=QBench&q=temperature>=38&limit=20 (1 in 20 of the ${BENCH_N.toLocaleString('en')} match)`,
  targetRatio: 0.2,
  seeds: BENCH_N,
  setup: (url) => seedOnce(url, 'QBench', BENCH_N),
  requests: () => get(`${NGSI}/entities?type=QBench&q=${encodeURIComponent('temperature>=38')}&limit=20`),
};

const queryNear: Scenario = {
  name: 'query-near',
  description: `GET /entities?type=QGeo&georel=near;maxDistance==500 around a point of a ${GEO_N.toLocaleString('en')}-point grid`,
  targetRatio: 0.2,
  seeds: GEO_N,
  setup: (url) => seedOnce(url, 'QGeo', GEO_N, true),
  requests: () =>
    get(
      `${NGSI}/entities?type=QGeo&georel=${encodeURIComponent('near;maxDistance==500')}&geometry=Point&coordinates=${encodeURIComponent('[2.05,48.005]')}&limit=20`,
    ),
};

export const queryScenarios: Scenario[] = [queryType, queryQ, queryNear];
