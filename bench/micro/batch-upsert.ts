// Micro-benchmark of the write rows of issue 24 without HTTP and the pool hop: what a pipeline worker does for
// POST /entityOperations/upsert of 100 entities (the batch-upsert scenario, replacing) and for POST /entities (create),
// whole and by step: body parse, expansion, store transaction. Compare a build before and after a change. The
// figures are CPU time of the whole process (every thread: garbage collection and lmdb's writer included) per
// request or entity, which a loaded machine disturbs far less than wall time.
// Run: npm run build && node dist/bench/micro/batch-upsert.js
import { runPipeline } from '../../src/pipeline/run.js';
import { handlers } from '../../src/ops/index.js';
import { LdOp } from '../../src/ngsild/operations.js';
import { expandEntity } from '../../src/ngsild/entity/expand.js';
import { replaceEntity } from '../../src/ngsild/entity/merge.js';
import type { PipelineTask } from '../../src/pipeline/task.js';
import { benchEntity } from '../bench-entity.js';
import { bytesOf, openPipeline, run, timeIt as time, upsertTask } from './harness.js';

const BATCH = 100;

/** Per entity where `per` counts a batch's entities; 10 calls per reading of the clock, as some steps are short. */
const timeIt = (name: string, fn: () => unknown, per = 1): Promise<void> =>
  time(name, fn, { per, unit: per % BATCH === 0 ? 'us/entity' : 'us', warmup: 200, step: 10 });

async function main(): Promise<void> {
  const bench = await openPipeline();
  const ctx = bench.ctx;
  const text = JSON.stringify(Array.from({ length: BATCH }, (_, i) => benchEntity(`urn:ngsi-ld:BenchBatch:${i + 1}`)));
  const upsert = (): PipelineTask => upsertTask(text);
  const first = await runPipeline(ctx, upsert(), handlers);
  if (first.status !== 201) throw new Error(`status ${first.status}: ${new TextDecoder().decode(first.body!)}`);
  let created = 0;
  const [head, tail] = JSON.stringify(benchEntity('{{id}}')).split('{{id}}') as [string, string];
  const create = (): PipelineTask => ({
    op: LdOp.CreateEntity,
    route: '/entities',
    method: 'POST',
    path: '/ngsi-ld/v1/entities',
    query: '',
    params: [],
    headers: { contentType: 'application/json' },
    body: bytesOf(`${head}urn:ngsi-ld:BenchCreate:${++created}${tail}`),
  });
  const one = await runPipeline(ctx, create(), handlers);
  if (one.status !== 201) throw new Error(`create: status ${one.status}: ${new TextDecoder().decode(one.body!)}`);

  const body = bytesOf(text);
  const entries = JSON.parse(text) as Record<string, unknown>[];
  const now = new Date().toISOString();
  const context = ctx.contexts.defaultContext;
  const expanded = entries.map((e) => expandEntity(e, context, { now }));
  const stored = await Promise.all(expanded.map((e) => ctx.store.getEntity('', e.id)));
  await timeIt('batch upsert: runPipeline (whole)', () => runPipeline(ctx, upsert(), handlers), BATCH);
  // 50 at once, as the scenario's 50 connections have them on the pipeline thread: what each holds until its
  // transaction commits survives the young generation's collections.
  await timeIt(
    'batch upsert: runPipeline, 50 at once',
    () => Promise.all(Array.from({ length: 50 }, () => runPipeline(ctx, upsert(), handlers))),
    50 * BATCH,
  );
  await timeIt('batch upsert: decode + JSON.parse', () => JSON.parse(new TextDecoder().decode(body)), BATCH);
  await timeIt('batch upsert: expandEntity', () => entries.map((e) => expandEntity(e, context, { now })), BATCH);
  await timeIt('batch upsert: replaceEntity', () => expanded.map((e, i) => replaceEntity(stored[i]!, e, now)), BATCH);
  await timeIt(
    'batch upsert: store.mutateEntities (replace)',
    () =>
      ctx.store.mutateEntities(
        '',
        expanded.map((e) => ({ id: e.id, mutation: () => ({ next: e, result: undefined }) })),
      ),
    BATCH,
  );
  // 50 at once as the scenario's 50 connections send them: lmdb commits the writes of one event turn together.
  await timeIt(
    'create: runPipeline (whole), 50 at once',
    () => Promise.all(Array.from({ length: 50 }, () => runPipeline(ctx, create(), handlers))),
    50,
  );
  await bench.close();
}

run(main);
