// Micro-benchmark of the spatial index's candidates (src/plugins/store/embdb/geo-index.ts geoCandidates) for the
// query-near row (bench/scenarios/query.ts: 500 m around a point of a 10,000-point grid, 200 ids in the box's two
// cells): current, the cells merged as read and only a page's worth read (21 ids: limit + 1), against the
// candidate it replaced, every id of every cell read, then a Set and a sort; and the page of the entries the query's box
// test (geo-box-test.ts) leaves, as query-near reads them. CPU µs per call, median of rounds.
// Run: npm run build && node dist/bench/micro/geo-candidates.js
import { storeOpen, storePrepare, storeDispose } from '../../src/plugins/store/embdb/index.js';
import type { EmbdbStore } from '../../src/plugins/store/embdb/embdb-store.js';
import { geoCandidates, WIDE } from '../../src/plugins/store/embdb/geo-index.js';
import { geoQuerySearchBox, parseGeoQuery } from '../../src/ngsild/query/geoq.js';
import { geoBoxTest } from '../../src/ngsild/query/geo-box-test.js';
import { createLogger } from '../../src/logger.js';
import type { StoredEntity } from '../../src/ngsild/entity/model.js';

const NS = 'https://uri.etsi.org/ngsi-ld/default-context/';
const LOC = 'https://uri.etsi.org/ngsi-ld/location';
const T0 = '2026-11-21T00:00:00.000Z';
const ROUNDS = 9;
const CALLS = 5000;
const CELL_DEGREES = 0.01;
const COLUMNS = 36_000;

function point(k: number): StoredEntity {
  return {
    id: `urn:ngsi-ld:QGeo:${k}`,
    type: [NS + 'QGeo'],
    createdAt: T0,
    modifiedAt: T0,
    [LOC]: [{ type: 'GeoProperty', value: { type: 'Point', coordinates: [2 + (k % 1000) * 0.001, 48 + Math.floor(k / 1000) * 0.001] } }],
  };
}

function timeIt(name: string, fn: () => unknown): void {
  for (let i = 0; i < 1000; i++) fn();
  const rounds: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    const c0 = process.cpuUsage();
    for (let i = 0; i < CALLS; i++) fn();
    const c = process.cpuUsage(c0);
    rounds.push((c.user + c.system) / CALLS);
  }
  rounds.sort((a, b) => a - b);
  process.stdout.write(
    `${name.padEnd(52)} ${rounds[ROUNDS >> 1]!.toFixed(2).padStart(7)} us  (${rounds[0]!.toFixed(2)}-${rounds[ROUNDS - 1]!.toFixed(2)})\n`,
  );
}

async function main(): Promise<void> {
  const log = createLogger('warn', 'bench');
  const params = { options: {} as Record<string, unknown>, primary: true, log };
  params.options = { ...(await storePrepare(params)) };
  const store = (await storeOpen(params)) as EmbdbStore;
  await store.mutateEntities(
    '',
    Array.from({ length: 10_000 }, (_, k) => point(k)).map((e) => ({ id: e.id, mutation: () => ({ next: e, result: undefined }) })),
  );
  const geo = parseGeoQuery({ georel: 'near;maxDistance==500', geometry: 'Point', coordinates: '[2.05,48.005]' }, () => LOC)!;
  const box = geoQuerySearchBox(geo)!;
  const db = store.indexedDbs().geoCells;
  const test = geoBoxTest(geo, box);
  const page = (n: number, withTest = false): string[] => {
    const out: string[] = [];
    geoCandidates(db, '', LOC, box, withTest ? test : undefined)!((id) => {
      out.push(id);
      return out.length < n;
    });
    return out;
  };
  // What geoCandidates did before: every cell of the box read whole, then a Set and a sort.
  const cell = (lon: number, lat: number): number =>
    Math.floor((lat + 90) / CELL_DEGREES) * COLUMNS + Math.floor((lon + 180) / CELL_DEGREES);
  const cells = [WIDE];
  for (let c = cell(box[0], box[1]); c <= cell(box[2], box[1]); c++) cells.push(c);
  const readWhole = (): string[] => {
    const ids = new Set<string>();
    for (const c of cells) for (const [id] of db.getValues(['', LOC, c])) ids.add(id);
    return [...ids].sort();
  };
  process.stdout.write(`box ${box.map((x) => x.toFixed(4)).join(',')}: ${readWhole().length} candidates in ${cells.length - 1} cells\n`);
  timeIt('candidate before: every id read, Set, sort', readWhole);
  timeIt('current: merged as read, a page of 21', () => page(21));
  timeIt('current: merged as read, all of them', () => page(Number.MAX_SAFE_INTEGER));
  // The query's box test on each entry (geo-box-test.ts): what query-near reads, 20 within 500 m.
  process.stdout.write(`within 500 m by their entries: ${page(Number.MAX_SAFE_INTEGER, true).length}\n`);
  timeIt('current with the box test: a page of 21', () => page(21, true));
  await store.close();
  await storeDispose(params);
}

main().catch((e: unknown) => {
  process.stderr.write(`${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
  process.exit(1);
});
