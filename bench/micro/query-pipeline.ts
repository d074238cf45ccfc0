// Micro-benchmark of what a pipeline worker does for the query rows of bench/scenarios/query.ts (query-type, query-q,
// query-near over the same 100,000 + 10,000 entities, without HTTP and the pool hop), whole and by step: store page,
// render, serialization. Compare a build before and after a change.
// Run: npm run build && node dist/bench/micro/query-pipeline.js [type,q,near] [--uncached]
// (--uncached: embdb's page cache off, --dbPageCache 0, as bench's uws-pool-uncached: every query reads the store)
import { brokerConfig, brokerOptions, parseOptions, splitArgs } from '../../src/options.js';
import { storeDispose, storeOpen, storePrepare } from '../../src/plugins/store/embdb/index.js';
import { createWorkerContext } from '../../src/pipeline/init.js';
import { runPipeline } from '../../src/pipeline/run.js';
import { handlers } from '../../src/ops/index.js';
import { LdOp } from '../../src/ngsild/operations.js';
import { createLogger } from '../../src/logger.js';
import { renderEntity } from '../../src/ngsild/entity/render.js';
import type { PipelineTask } from '../../src/pipeline/task.js';
import type { StoredEntity } from '../../src/ngsild/entity/model.js';
import { anyTypeOf } from '../../src/ngsild/query/type-expression.js';
import { parseGeoQuery } from '../../src/ngsild/query/geoq.js';

const NS = 'https://uri.etsi.org/ngsi-ld/default-context/';
const N = 100_000;
const GEO_N = 10_000;
const ROUND_MS = 200;
const ROUNDS = 9;
const T0 = '2026-11-21T00:00:00.000Z';

function entity(k: number): StoredEntity {
  return {
    id: `urn:ngsi-ld:QBench:${k}`,
    type: [NS + 'QBench'],
    createdAt: T0,
    modifiedAt: T0,
    [NS + 'temperature']: [{ type: 'Property', value: k % 40, createdAt: T0, modifiedAt: T0 }],
    [NS + 'name']: [{ type: 'Property', value: `n${k}`, createdAt: T0, modifiedAt: T0 }],
  };
}

/** The query scenario's geo grid (bench/scenarios/query.ts): 1000 x 10 points 0.001° apart around (2.0, 48.0). */
function geoEntity(k: number): StoredEntity {
  const point = { type: 'Point', coordinates: [2 + (k % 1000) * 0.001, 48 + Math.floor(k / 1000) * 0.001] };
  return {
    id: `urn:ngsi-ld:QGeo:${k}`,
    type: [NS + 'QGeo'],
    createdAt: T0,
    modifiedAt: T0,
    [NS + 'temperature']: [{ type: 'Property', value: k % 40, createdAt: T0, modifiedAt: T0 }],
    [NS + 'name']: [{ type: 'Property', value: `n${k}`, createdAt: T0, modifiedAt: T0 }],
    ['https://uri.etsi.org/ngsi-ld/location']: [{ type: 'GeoProperty', value: point, createdAt: T0, modifiedAt: T0 }],
  };
}

/** The query string of each row, as the scenario sends it. */
const ROWS: Record<string, string> = {
  type: 'type=QBench&limit=20',
  q: `type=QBench&q=${encodeURIComponent('temperature>=38')}&limit=20`,
  near: `type=QGeo&georel=${encodeURIComponent('near;maxDistance==500')}&geometry=Point&coordinates=${encodeURIComponent('[2.05,48.005]')}&limit=20`,
};

/**
 * Wall µs per call (median and range of the rounds) and the process's CPU µs per call over all rounds: on a shared
 * machine the wall time swings with the other work and the CPU time does not (this process is one busy thread).
 */
async function timeIt(name: string, fn: () => unknown): Promise<void> {
  for (let i = 0; i < 500; i++) await fn();
  const rounds: number[] = [];
  const cpu0 = process.cpuUsage();
  let calls = 0;
  for (let r = 0; r < ROUNDS; r++) {
    const t0 = process.hrtime.bigint();
    const until = t0 + BigInt(ROUND_MS) * 1_000_000n;
    let n = 0;
    let now = t0;
    do {
      for (let i = 0; i < 10; i++) await fn();
      n += 10;
      now = process.hrtime.bigint();
    } while (now < until);
    rounds.push(Number(now - t0) / 1e3 / n);
    calls += n;
  }
  const cpu = process.cpuUsage(cpu0);
  rounds.sort((a, b) => a - b);
  process.stdout.write(
    `${name.padEnd(40)} ${rounds[ROUNDS >> 1]!.toFixed(1).padStart(7)} us  (rounds ${rounds[0]!.toFixed(1)}-${rounds[ROUNDS - 1]!.toFixed(1)})` +
      `  cpu ${((cpu.user + cpu.system) / calls).toFixed(1)} us\n`,
  );
}

async function main(): Promise<void> {
  const config = brokerConfig(parseOptions(splitArgs(['--logLevel', 'warn']), brokerOptions));
  const log = createLogger('warn', 'bench');
  const params = { options: {} as Record<string, unknown>, primary: true, log };
  params.options = { ...(await storePrepare(params)), ...(process.argv.includes('--uncached') ? { dbPageCache: 0 } : {}) };
  const primary = await storeOpen(params);
  for (const [count, make] of [
    [N, entity],
    [GEO_N, geoEntity],
  ] as const) {
    for (let s = 0; s < count; s += 10_000) {
      const items = [];
      for (let k = s; k < s + 10_000; k++) {
        const e = make(k);
        items.push({ id: e.id, mutation: () => ({ next: e, result: undefined }) });
      }
      await primary.mutateEntities('', items);
    }
  }
  const ctx = await createWorkerContext({ config, storeOptions: params.options }, 'bench', log);
  const task = (query: string): PipelineTask => ({
    op: LdOp.QueryEntities,
    route: '/entities',
    method: 'GET',
    path: '/ngsi-ld/v1/entities',
    query,
    params: [],
    headers: {},
    body: null,
  });
  const rows = (process.argv.slice(2).find((a) => !a.startsWith('--')) ?? 'type,q,near').split(',');
  for (const row of rows) {
    const query = ROWS[row];
    if (query === undefined) throw new Error(`no row ${row}: ${Object.keys(ROWS).join(', ')}`);
    const first = await runPipeline(ctx, task(query), handlers);
    const text = new TextDecoder().decode(first.body!);
    if (first.status !== 200) throw new Error(`status ${first.status}: ${text}`);
    process.stdout.write(`query-${row}: ${(JSON.parse(text) as unknown[]).length} entities, ${first.body!.byteLength} bytes\n`);
    await timeIt(`runPipeline ${row} (whole worker side)`, () => runPipeline(ctx, task(query), handlers));
  }
  if (rows.includes('type')) {
    // The steps of query-type.
    const query = { type: anyTypeOf([NS + 'QBench']), limit: 20, offset: 0, count: false };
    const page = (await ctx.store.queryEntities('', query)).entities;
    const rendered = page.map((e) => renderEntity(e, ctx.contexts.defaultContext, { format: 'normalized' }));
    const encoder = new TextEncoder();
    await timeIt('store.queryEntities (page of 20)', () => ctx.store.queryEntities('', query));
    await timeIt('renderEntity x 20', () => page.map((e) => renderEntity(e, ctx.contexts.defaultContext, { format: 'normalized' })));
    await timeIt('JSON.stringify + encode', () => encoder.encode(JSON.stringify(rendered)));
  }
  if (rows.includes('near')) {
    // The store's part of query-near (the spatial index's candidates, their reads and the predicate), as the pipeline
    // asks it: readOnly, a page of 20.
    const geo = parseGeoQuery({ georel: 'near;maxDistance==500', geometry: 'Point', coordinates: '[2.05,48.005]' }, (t) => NS + t)!;
    geo.geopropertyIri = 'https://uri.etsi.org/ngsi-ld/location';
    const query = { type: anyTypeOf([NS + 'QGeo']), geo, limit: 20, offset: 0, count: false, readOnly: true };
    const page = await ctx.store.queryEntities('', query);
    process.stdout.write(`store near: ${page.entities.length} entities, ${page.examined ?? '?'} read\n`);
    await timeIt('store.queryEntities near (readOnly, 20)', () => ctx.store.queryEntities('', query));
  }
  await ctx.store.close();
  await primary.close();
  await storeDispose(params);
}

main().catch((e: unknown) => {
  process.stderr.write(`${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
  process.exit(1);
});
