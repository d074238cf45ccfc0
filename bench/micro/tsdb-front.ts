// What `--troe tsdb` adds to the front's CPU per PATCH /entities/{id}/attrs (issue 18: the write ratio), in process
// and without QuestDB: the PATCH through runPipeline (as the front runs it) on a RAM embdb with no history beside the
// store (--troe none), with one whose record takes the events and does nothing (what building the write events costs
// the store), and with tsdb's record minus the post (facts.ts: the facts of the history's rows, copied into a hold as
// the link holds them for 10 ms, FRONT_HOLD_MS, then dropped). CPU time of the whole process per request, garbage
// collection included.
// Run: npm run build && node dist/bench/micro/tsdb-front.js
import { runPipeline } from '../../src/pipeline/run.js';
import { handlers } from '../../src/ops/index.js';
import type { PipelineTask } from '../../src/pipeline/task.js';
import type { WriteEvent } from '../../src/store/contract.js';
import type { WorkerContext } from '../../src/pipeline/worker-context.js';
import { Bytes, WriteFacts } from '../../src/plugins/history/tsdb/facts.js';
import { benchEntity } from '../bench-entity.js';
import { openPipeline, patchTask, run, timeIt, upsertTask } from './harness.js';

const N = 1000;
/** PATCHes in 10 ms of the front at about 7,000 PATCH/s (link.ts FRONT_HOLD_MS). */
const HELD = 70;
/** PATCHes at once, as the bench's connections (lmdb commits them together). */
const AT_ONCE = 50;

run(async () => {
  const bench = await openPipeline();
  const ctx = bench.ctx;
  const id = (i: number): string => `urn:ngsi-ld:Bench:${i}`;
  const seeded = await runPipeline(ctx, upsertTask(JSON.stringify(Array.from({ length: N }, (_, i) => benchEntity(id(i))))), handlers);
  if (seeded.status !== 201) throw new Error(`seed: status ${seeded.status}`);
  let k = 0;
  const patch = (): PipelineTask => {
    const e = id(k++ % N);
    return patchTask(e, k % 40);
  };
  const w = new WriteFacts();
  const held = new Bytes();
  let heldBytes = 0;
  let n = 0;
  const histories: Array<[string, WorkerContext['history']]> = [
    ['none: no history beside the store', undefined],
    ['events only: a record that does nothing', { record: (): undefined => undefined } as unknown as WorkerContext['history']],
    [
      'tsdb: the facts, held per 10 ms',
      {
        record: (_tenant: string, events: readonly WriteEvent[]): undefined => {
          w.reset({ inst: 'ldb_inst_v2_default', ent: 'ldb_ent_default' });
          for (const ev of events) w.add(ev);
          held.append(w.bytes.buf, w.bytes.len);
          if (++n % HELD === 0) {
            heldBytes += held.len;
            held.len = 0;
          }
          return undefined;
        },
      } as unknown as WorkerContext['history'],
    ],
  ];
  for (let round = 0; round < 2; round++)
    for (const [name, history] of histories) {
      (ctx as { history?: WorkerContext['history'] }).history = history;
      await timeIt(
        `PATCH, ${name}`,
        async () => {
          const rs = await Promise.all(Array.from({ length: AT_ONCE }, () => runPipeline(ctx, patch(), handlers)));
          for (const r of rs) if (r.status !== 204) throw new Error(`status ${r.status}`);
        },
        { per: AT_ONCE },
      );
    }
  process.stdout.write(`(${(heldBytes / Math.max(1, n)).toFixed(0)} bytes of facts a PATCH)\n`);
  await bench.close();
});
