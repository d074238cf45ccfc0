// Micro-benchmark of the one-entity rows of issue 24 without HTTP: what the front does in runPipeline for GET
// /entities/{id} (the retrieve scenario: 1,000 entities read in turn, normalized and keyValues) and for PATCH
// /entities/{id}/attrs (the patch scenario) and for POST /entities (the create scenario), 50 at once as the scenario's 50 connections. CPU time of the whole
// process per request (every thread: garbage collection and lmdb's writer included), which a loaded machine disturbs
// far less than wall time. Compare a build before and after a change (copy this file and harness.ts into the other worktree).
// Run: npm run build && node dist/bench/micro/one-entity.js [name prefix: only those rows]
import { runPipeline } from '../../src/pipeline/run.js';
import { handlers } from '../../src/ops/index.js';
import { LdOp } from '../../src/ngsild/operations.js';
import type { PipelineTask } from '../../src/pipeline/task.js';
import { benchEntity } from '../bench-entity.js';
import { bytesOf, openPipeline, patchTask, run, timeIt, upsertTask } from './harness.js';

const N = 1000;

async function main(): Promise<void> {
  const bench = await openPipeline();
  const ctx = bench.ctx;
  const id = (i: number): string => `urn:ngsi-ld:Bench:${i}`;
  const upsert = upsertTask(JSON.stringify(Array.from({ length: N }, (_, i) => benchEntity(id(i)))));
  const seeded = await runPipeline(ctx, upsert, handlers);
  if (seeded.status !== 201) throw new Error(`seed: status ${seeded.status}`);
  let k = 0;
  const retrieve = (query: string): PipelineTask => {
    const e = id(k++ % N);
    return {
      op: LdOp.RetrieveEntity,
      route: '/ngsi-ld/v1/entities/:entityId',
      method: 'GET',
      path: `/ngsi-ld/v1/entities/${e}`,
      query,
      params: [e],
      headers: {},
      body: null,
    };
  };
  const patch = (): PipelineTask => {
    const e = id(k++ % N);
    return patchTask(e, k % 40);
  };
  // The create scenario: POST /entities, a new id every request.
  let created = 0;
  const create = (): PipelineTask => ({
    op: LdOp.CreateEntity,
    route: '/entities',
    method: 'POST',
    path: '/ngsi-ld/v1/entities',
    query: '',
    params: [],
    headers: { contentType: 'application/json' },
    body: bytesOf(JSON.stringify(benchEntity(`urn:ngsi-ld:BenchCreate:${++created}`))),
  });
  const only = process.argv[2];
  for (const [name, task] of [
    ['retrieve', () => retrieve('')],
    ['retrieve keyValues', () => retrieve('options=keyValues')],
    ['patch attrs', patch],
    ['create', create],
  ] as const) {
    if (only !== undefined && !name.startsWith(only)) continue;
    const r = await runPipeline(ctx, task(), handlers);
    if (r.status >= 300) throw new Error(`${name}: status ${r.status}: ${new TextDecoder().decode(r.body!)}`);
    await timeIt(
      `${name}: runPipeline, 50 at once`,
      () => Promise.all(Array.from({ length: 50 }, () => runPipeline(ctx, task(), handlers))),
      { per: 50 },
    );
  }
  await bench.close();
}

run(main);
