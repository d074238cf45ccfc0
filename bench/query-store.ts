// Issue 3, "Store and speed", measured in process on the embdb store itself, where a shared machine's noise is small:
// the time of one query by type (limit=20; count=true; limit=0&count=true; a q filter) on three stores holding
// 10k, 100k and 1M entities of another type, measured in alternation so the machine's drift hits them alike.
// The type and count indexes should keep every row flat.
// `node dist/bench/query-store.js [--others 10000,100000,1000000] [--out file]`; the table replaces the
// "Query by type in process" section of bench/RESULTS.md (or goes to --out).
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { EmbdbStore } from '../src/plugins/store/embdb/embdb-store.js';
import { resolveQ } from '../src/ngsild/query/q-resolve.js';
import { parseQ } from '../src/ngsild/query/q-parser.js';
import { anyTypeOf } from '../src/ngsild/query/type-expression.js';
import type { StoredEntity } from '../src/ngsild/entity/model.js';
import type { EntityQuery } from '../src/store/contract.js';
import { machineAtStart, sectionMarkers, writeResultsSection } from './results-section.js';
import { median } from './stats.js';

const { begin: BEGIN, end: END } = sectionMarkers('query-store');
const NS = 'https://uri.etsi.org/ngsi-ld/default-context/';
const QUERIED = 1000;
/** Entities per write transaction while loading. */
const LOAD_BATCH = 10_000;
const PROGRESS_EVERY = 100_000;
/** A timed round lasts at least this long; the median of the rounds is reported. */
const ROUND_MS = 150;
const ROUNDS = 9;

const { values } = parseArgs({ options: { others: { type: 'string', default: '10000,100000,1000000' }, out: { type: 'string' } } });
const steps = values.others!.split(',').map(Number);
const T0 = '2026-11-21T00:00:00.000Z';

function entity(type: string, k: number): StoredEntity {
  return {
    id: `urn:ngsi-ld:${type}:${k}`,
    type: [NS + type],
    createdAt: T0,
    modifiedAt: T0,
    [NS + 'temperature']: [{ type: 'Property', value: k % 40, createdAt: T0, modifiedAt: T0 }],
    [NS + 'name']: [{ type: 'Property', value: `n${k}`, createdAt: T0, modifiedAt: T0 }],
  };
}

/** Creates `type` entities `from`..`to`-1 through the store contract, LOAD_BATCH per transaction. */
async function load(store: EmbdbStore, type: string, from: number, to: number): Promise<void> {
  const started = Date.now();
  for (let s = from; s < to; s += LOAD_BATCH) {
    const items = [];
    for (let k = s; k < Math.min(to, s + LOAD_BATCH); k++) {
      const e = entity(type, k);
      items.push({ id: e.id, mutation: () => ({ next: e, result: undefined }) });
    }
    await store.mutateEntities('', items);
    const done = Math.min(to, s + LOAD_BATCH);
    if (Math.floor(done / PROGRESS_EVERY) > Math.floor(s / PROGRESS_EVERY)) {
      const secs = (Date.now() - started) / 1000;
      process.stdout.write(
        `  loaded ${type} ${done.toLocaleString('en')} / ${to.toLocaleString('en')} (${secs.toFixed(1)} s, ${Math.round((done - from) / secs).toLocaleString('en')} entities/s)\n`,
      );
    }
  }
}

/** Microseconds per query over one round of at least ROUND_MS. */
async function round(store: EmbdbStore, query: EntityQuery): Promise<number> {
  const t0 = process.hrtime.bigint();
  const until = t0 + BigInt(ROUND_MS) * 1_000_000n;
  let n = 0;
  let now = t0;
  do {
    for (let i = 0; i < 10; i++) await store.queryEntities('', query);
    n += 10;
    now = process.hrtime.bigint();
  } while (now < until);
  return Number(now - t0) / 1e3 / n;
}

const expand = (term: string): string => (term.includes(':') ? term : NS + term);
const QSCALE = anyTypeOf([NS + 'QScale']);
const QUERIES: Array<{ name: string; query: EntityQuery }> = [
  { name: 'type=QScale&limit=20', query: { type: QSCALE, limit: 20, offset: 0, count: false } },
  { name: 'type=QScale&limit=20&count=true', query: { type: QSCALE, limit: 20, offset: 0, count: true } },
  { name: 'type=QScale&limit=0&count=true', query: { type: QSCALE, limit: 0, offset: 0, count: true } },
  {
    name: 'type=QScale&q=temperature>=38&count=true',
    query: { type: QSCALE, q: resolveQ(parseQ('temperature>=38'), expand), limit: 20, offset: 0, count: true },
  },
];

async function main(): Promise<void> {
  const machine = machineAtStart();
  const dirs: string[] = [];
  const stores: EmbdbStore[] = [];
  const table: number[][] = QUERIES.map(() => []);
  const spreads: string[][] = QUERIES.map(() => []);
  try {
    for (const others of steps) {
      const dir = mkdtempSync(join(existsSync('/dev/shm') ? '/dev/shm' : tmpdir(), 'query-store-'));
      dirs.push(dir);
      const store = new EmbdbStore({ path: join(dir, 'embdb'), sync: 'interval', compress: false, lockPrefer: 'reads', ram: true });
      stores.push(store);
      process.stdout.write(`store ${stores.length}: ${QUERIED} QScale and ${others.toLocaleString('en')} Other entities\n`);
      await load(store, 'QScale', 0, QUERIED);
      await load(store, 'Other', 0, others);
    }
    for (let i = 0; i < QUERIES.length; i++) {
      const query = QUERIES[i]!.query;
      for (const store of stores) for (let w = 0; w < 100; w++) await store.queryEntities('', query);
      const rounds: number[][] = stores.map(() => []);
      for (let r = 0; r < ROUNDS; r++) for (let j = 0; j < stores.length; j++) rounds[j]!.push(await round(stores[j]!, query));
      for (let j = 0; j < stores.length; j++) {
        table[i]!.push(median(rounds[j]!));
        spreads[i]!.push(`${Math.min(...rounds[j]!).toFixed(1)}-${Math.max(...rounds[j]!).toFixed(1)}`);
      }
      process.stdout.write(`  ${QUERIES[i]!.name.padEnd(44)} ${table[i]!.map((us) => `${us.toFixed(1)} us`).join(', ')}\n`);
    }
  } finally {
    for (const store of stores) await store.close();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  }
  const head = steps.map((n) => `${n.toLocaleString('en')} others`);
  const lines = [
    BEGIN,
    '## Query by type in process (issue 3: `node dist/bench/query-store.js`)',
    '',
    `${new Date().toISOString()}, ${machine}; embdb in RAM holding ${QUERIED} QScale entities`,
    'and N entities of type Other (one store per column, loaded through the store contract). Microseconds per `queryEntities`',
    `call: the median of ${ROUNDS} rounds of at least ${ROUND_MS} ms, the stores measured in turn (fastest-slowest round in brackets).`,
    'Flat rows: the cost does not grow with unrelated data.',
    '',
    `| query | ${head.join(' | ')} | last / first |`,
    `|---|${steps.map(() => '---:').join('|')}|---:|`,
    ...QUERIES.map(
      (q, i) =>
        `| ${q.name} | ${table[i]!.map((us, j) => `${us.toFixed(1)} (${spreads[i]![j]})`).join(' | ')} | ${(table[i]!.at(-1)! / table[i]![0]!).toFixed(2)} |`,
    ),
    END,
  ];
  const section = lines.join('\n');
  writeResultsSection('query-store', section, values.out);
}

main().catch((e: unknown) => {
  process.stderr.write(`${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
  process.exit(1);
});
