// Query scenarios of issue 3: by type with limit=20 over 100,000 entities, a `q` on a numeric attribute, a geo
// `near`, and one query by type while the store holds 10k, 100k and 1M entities of another type: the type index
// keeps its cost flat. The broker is shared by the scenarios of a run, so each scale step tops the data up.
import type { LoadRequest } from '../load.js';
import { expectStatus, JSON_HEADERS, NGSI, send } from '../ngsi-client.js';
import type { Scenario } from '../scenario.js';

const BATCH = 1000;
/** The smoke run (CI) checks that every request answers 2xx, not the speed: a hundredth of the data will do. */
const SIZE = process.argv.includes('--smoke') ? 0.01 : 1;
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

/** Upserts entities `from`..`to`-1 of `type` in batches, a few requests in flight, printing progress on large seeds. */
async function seedRange(baseUrl: string, type: string, from: number, to: number, geo = false): Promise<void> {
  const starts: number[] = [];
  for (let i = from; i < to; i += BATCH) starts.push(i);
  const started = Date.now();
  let done = from;
  for (let i = 0; i < starts.length; i += PARALLEL) {
    await Promise.all(
      starts.slice(i, i + PARALLEL).map((s) => {
        const body = JSON.stringify(Array.from({ length: Math.min(BATCH, to - s) }, (_, j) => entity(type, s + j, geo)));
        return expectStatus(
          `seeding ${type} ${s}..`,
          send(baseUrl, 'POST', `${NGSI}/entityOperations/upsert`, body, JSON_HEADERS),
          [201, 204],
        );
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

/** How many `Other` entities each scale step has seeded in this broker (scenarios run in order on one broker). */
const seededOther = new Map<string, number>();
async function topUpOther(baseUrl: string, total: number): Promise<void> {
  const have = seededOther.get(baseUrl) ?? 0;
  if (have < total) await seedRange(baseUrl, 'Other', have, total);
  seededOther.set(baseUrl, Math.max(have, total));
}

const get = (path: string): LoadRequest[] => [{ method: 'GET', path }];

const queryType: Scenario = {
  name: 'query-type',
  description: `GET /entities?type=QBench&limit=20 with ${BENCH_N.toLocaleString('en')} QBench entities in the store`,
  targetRatio: 0.15,
  setup: (url) => seedRange(url, 'QBench', 0, BENCH_N),
  requests: () => get(`${NGSI}/entities?type=QBench&limit=20`),
};

const queryQ: Scenario = {
  name: 'query-q',
  description: `GET /entities?type=QBench&q=temperature>=38&limit=20 (1 in 20 of the ${BENCH_N.toLocaleString('en')} match)`,
  setup: (url) => seedRange(url, 'QBench', 0, BENCH_N),
  requests: () => get(`${NGSI}/entities?type=QBench&q=${encodeURIComponent('temperature>=38')}&limit=20`),
};

const queryNear: Scenario = {
  name: 'query-near',
  description: `GET /entities?type=QGeo&georel=near;maxDistance==500 around a point of a ${GEO_N.toLocaleString('en')}-point grid`,
  setup: (url) => seedRange(url, 'QGeo', 0, GEO_N, true),
  requests: () =>
    get(
      `${NGSI}/entities?type=QGeo&georel=${encodeURIComponent('near;maxDistance==500')}&geometry=Point&coordinates=${encodeURIComponent('[2.05,48.005]')}&limit=20`,
    ),
};

/** The same query at three sizes of unrelated data: its cost should not grow with it. */
const scale = (label: string, others: number): Scenario => ({
  name: `query-scale-${label}`,
  description: `GET /entities?type=QScale&limit=20&count=true (${n(1000).toLocaleString('en')} QScale) with ${others.toLocaleString('en')} entities of another type in the store`,
  setup: async (url) => {
    await seedRange(url, 'QScale', 0, n(1000));
    await topUpOther(url, others);
  },
  requests: () => get(`${NGSI}/entities?type=QScale&limit=20&count=true`),
});

export const queryScenarios: Scenario[] = [
  queryType,
  queryQ,
  queryNear,
  scale('10k', n(10_000)),
  scale('100k', n(100_000)),
  scale('1m', n(1_000_000)),
];
