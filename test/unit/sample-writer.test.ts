// The bridge's sample writer (src/bridge/sample-writer.ts): the samples of one entity written in order, one batch at
// a time, those that came meanwhile together in the next; bounded waiting; failures logged, not thrown.
import t from 'tap';
import { pino } from 'pino';
import { SampleWriter, sampleTask, type Sample } from '../../src/bridge/sample-writer.js';
import type { PipelineRunner } from '../../src/pipeline/runner.js';
import type { PipelineResult, PipelineTask } from '../../src/pipeline/task.js';
import { LdOp } from '../../src/ngsild/operations.js';

/** A runner whose tasks wait until released; it records the entries (entity, value) of each. */
class HeldRunner {
  readonly tasks: Array<Array<[string, unknown]>> = [];
  private readonly held: Array<(r: PipelineResult) => void> = [];
  result: PipelineResult = { status: 204, headers: [], body: null };
  run(task: PipelineTask): Promise<PipelineResult> {
    const entries = JSON.parse(new TextDecoder().decode(task.body!)) as Array<{ id: string; level: { value: unknown } }>;
    this.tasks.push(entries.map((e) => [e.id, e.level.value]));
    return new Promise((resolve) => this.held.push(resolve));
  }
  release(): void {
    for (const r of this.held.splice(0)) r(this.result);
  }
}

const sample = (entityId: string, value: unknown): Sample => ({ entityId, entityType: 'Thing', attribute: 'level', value });
const settle = (): Promise<void> => new Promise((r) => setImmediate(r));

t.test('a sample is an internal batch upsert with update, one entry per sample', async (t) => {
  const task = sampleTask([sample('urn:a', 1), sample('urn:a', { x: 2 })]);
  t.match(task, {
    op: LdOp.BatchUpsert,
    method: 'POST',
    query: 'options=update',
    internal: true,
    headers: { contentType: 'application/json' },
  });
  t.same(JSON.parse(new TextDecoder().decode(task.body!)), [
    { id: 'urn:a', type: 'Thing', level: { type: 'Property', value: 1 } },
    { id: 'urn:a', type: 'Thing', level: { type: 'Property', value: { x: 2 } } },
  ]);
});

t.test('one write at a time per entity, in order; what came meanwhile goes in the next; entities apart', async (t) => {
  const runner = new HeldRunner();
  const writer = new SampleWriter(runner as unknown as PipelineRunner, pino({ level: 'silent' }));
  writer.add(sample('urn:a', 1));
  writer.add(sample('urn:b', 'b1'));
  writer.add(sample('urn:a', 2));
  writer.add(sample('urn:a', 3));
  t.same(runner.tasks, [[['urn:a', 1]], [['urn:b', 'b1']]], 'the first of each entity at once');
  runner.release();
  await settle();
  t.same(
    runner.tasks.slice(2),
    [
      [
        ['urn:a', 2],
        ['urn:a', 3],
      ],
    ],
    'the two that waited, together and in order',
  );
  runner.release();
  await settle();
  t.equal(runner.tasks.length, 3, 'nothing more');
  writer.add(sample('urn:a', 4));
  t.same(runner.tasks.at(-1), [['urn:a', 4]], 'a later sample starts at once');
  runner.release();
});

t.test('at most 10,000 samples wait per entity: the oldest are dropped, said in the log', async (t) => {
  const runner = new HeldRunner();
  const lines: string[] = [];
  const log = pino({ level: 'warn' }, { write: (l: string) => lines.push(l) });
  const writer = new SampleWriter(runner as unknown as PipelineRunner, log);
  for (let k = 0; k <= 10_004; k++) writer.add(sample('urn:a', k));
  t.equal(lines.length, 1, 'one warning');
  t.match(lines[0], /the oldest dropped/);
  const written: unknown[] = [];
  for (let i = 0; i < 30 && runner.tasks.length > 0; i++) {
    for (const task of runner.tasks.splice(0)) for (const [, v] of task) written.push(v);
    runner.release();
    await settle();
  }
  t.equal(written.length, 10_001, 'the first (being written) and the last 10,000');
  t.same(written.slice(0, 3), [0, 5, 6], 'samples 1 to 4 were dropped');
  t.equal(written.at(-1), 10_004);
});

t.test('a refused batch is logged (the first, then one in 1000), never thrown', async (t) => {
  const runner = new HeldRunner();
  runner.result = { status: 207, headers: [], body: new TextEncoder().encode('{"errors":[{"entityId":"urn:a"}]}') };
  const lines: string[] = [];
  const writer = new SampleWriter(runner as unknown as PipelineRunner, pino({ level: 'warn' }, { write: (l: string) => lines.push(l) }));
  for (let k = 0; k < 3; k++) {
    writer.add(sample('urn:a', null));
    runner.release();
    await settle();
  }
  t.equal(lines.length, 1);
  t.match(JSON.parse(lines[0]!), { msg: 'samples not written', status: 207, detail: /errors/, failures: 1 });
});
