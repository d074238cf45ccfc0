// ops/changes.ts builds a write's events only when something consumes them (issue 24): the change sink when the
// tenant has a subscription in the thread's caught-up index (ChangeSink.wants), a history that records, bridges.
import t from 'tap';
import { writeEntity, writeEntities } from '../../src/ops/changes.js';
import type { ChangeSink } from '../../src/pipeline/change-sink.js';
import type { WorkerContext } from '../../src/pipeline/worker-context.js';
import type { MutateOptions, WriteEvent } from '../../src/store/contract.js';

/** A store whose writes give one event each when asked for events, and note whether they were. */
function fakeStore(asked: boolean[]): unknown {
  const event = (tenant: string, id: string): WriteEvent =>
    ({ tenant, id, before: undefined, after: undefined, change: undefined, seq: 1 }) as unknown as WriteEvent;
  return {
    mutateEntity: async (tenant: string, id: string, _m: unknown, opts?: MutateOptions) => {
      asked.push(opts?.events !== undefined);
      opts?.events?.push(event(tenant, id));
      return 'done';
    },
    mutateEntities: async (tenant: string, items: { id: string }[], opts?: MutateOptions) => {
      asked.push(opts?.events !== undefined);
      for (const it of items) opts?.events?.push(event(tenant, it.id));
      return items.map(() => ({ ok: true }));
    },
  };
}

/** A sink that wants the writes of the tenants in `wanted` (undefined: no wants(), as a sink written before it). */
function sink(published: string[], wanted: Set<string> | undefined): ChangeSink {
  const s: ChangeSink = { publish: (events) => published.push(...events.map((e) => `${e.tenant}/${e.id}`)) };
  if (wanted !== undefined) s.wants = (tenant) => wanted.has(tenant);
  return s;
}

const ctxOf = (over: Partial<WorkerContext>, asked: boolean[]): WorkerContext =>
  ({ store: fakeStore(asked), changes: undefined, log: { error: () => {} }, ...over }) as unknown as WorkerContext;

t.test('a tenant the sink does not want: no events asked for, nothing published; a wanted one: published', async (t) => {
  const asked: boolean[] = [];
  const published: string[] = [];
  const ctx = ctxOf({ changes: sink(published, new Set(['subscribed'])) }, asked);
  t.equal(await writeEntity(ctx, 'quiet', 'urn:a', () => ({ next: undefined, result: undefined })), 'done');
  t.same(asked, [false], 'no events built');
  await writeEntity(ctx, 'subscribed', 'urn:b', () => ({ next: undefined, result: undefined }));
  t.same(asked, [false, true]);
  t.same(published, ['subscribed/urn:b']);
  await writeEntities(ctx, 'quiet', [{ id: 'urn:c' }] as never);
  await writeEntities(ctx, 'subscribed', [{ id: 'urn:d' }] as never);
  t.same(asked, [false, true, false, true], 'a batch the same');
  t.same(published, ['subscribed/urn:b', 'subscribed/urn:d']);
});

t.test('a sink without wants(), bridges or a recording history: events built whatever the sink wants', async (t) => {
  for (const [name, over] of [
    ['a sink without wants()', { changes: sink([], undefined) }],
    ['bridges', { changes: sink([], new Set()), bridges: sink([], undefined) }],
    ['a recording history', { changes: sink([], new Set()), history: { name: 'h', record: async () => {} } }],
  ] as const) {
    const asked: boolean[] = [];
    await writeEntity(ctxOf(over as Partial<WorkerContext>, asked), 'quiet', 'urn:a', () => ({ next: undefined, result: undefined }));
    t.same(asked, [true], name);
  }
});

t.test('nothing listening at all: no events', async (t) => {
  const asked: boolean[] = [];
  await writeEntity(ctxOf({}, asked), '', 'urn:a', () => ({ next: undefined, result: undefined }));
  t.same(asked, [false]);
});
