// embdb: single writes that come while lmdb's batched writer is busy run as one group in one transaction (issue 24,
// embdb-store.ts mutateEntity): each still ends as if alone: its own result and events, its own error without
// touching the others, and counts that add up to what was written, across tenants. A group undone by an error after
// a put runs its writes again one by one (embdb-write-abort.test.ts covers what is left after each failure).
import t from 'tap';
import { tempEmbdb } from './helpers/embdb.js';
import type { StoredEntity } from '../../src/ngsild/entity/model.js';
import type { WriteEvent } from '../../src/store/contract.js';
import { ofTypes } from './helpers/store-query.js';

const NS = 'https://example.org/ns/';
const T0 = '2026-01-01T00:00:00Z';

function room(id: string, temperature: number, type = NS + 'Room'): StoredEntity {
  return { id, type: [type], createdAt: T0, modifiedAt: T0, [NS + 'temperature']: [{ type: 'Property', value: temperature }] };
}

t.test('writes started together: each gets its own result and events, with one sequence', async (t) => {
  const store = tempEmbdb(t);
  const events = [[], [], []] as WriteEvent[][];
  const ids = ['urn:r:1', 'urn:r:2', 'urn:r:3'];
  const results = await Promise.all(
    ids.map((id, i) => store.mutateEntity('', id, () => ({ next: room(id, i), result: `r${i}` }), { events: events[i] })),
  );
  t.same(results, ['r0', 'r1', 'r2']);
  t.same(
    events.map((e) => e.map((x) => [x.id, x.change.kind, x.after?.[NS + 'temperature']])),
    ids.map((id, i) => [[id, 'create', [{ type: 'Property', value: i }]]]),
    'each call is given the event of its own write only',
  );
  t.equal(new Set(events.map((e) => e[0]!.seq)).size, 1, 'one transaction: one sequence');
  // A later group: a greater sequence (the order of the writes of one entity, store/contract.ts WriteEvent).
  const later: WriteEvent[] = [];
  await store.mutateEntity(
    '',
    'urn:r:1',
    (cur) => ({ next: { ...cur!, [NS + 'temperature']: [{ type: 'Property', value: 9 }] }, result: 0 }),
    {
      events: later,
    },
  );
  t.ok(later[0]!.seq > events[0]![0]!.seq, 'a later write has a greater sequence');
});

t.test("writes started together: a mutation's own error fails its write alone, the counts are the others'", async (t) => {
  const store = tempEmbdb(t);
  const events: WriteEvent[] = [];
  let runs = 0;
  const settled = await Promise.allSettled([
    store.mutateEntity('', 'urn:r:1', () => ({ next: room('urn:r:1', 1), result: 1 })),
    store.mutateEntity(
      '',
      'urn:r:2',
      () => {
        runs++;
        throw new Error('refused');
      },
      { events },
    ),
    store.mutateEntity('a', 'urn:r:3', () => ({ next: room('urn:r:3', 3, NS + 'Hall'), result: 3 }), { createTenant: true }),
    store.mutateEntity('', 'urn:r:4', () => ({ next: room('urn:r:4', 4), result: 4 })),
  ]);
  t.same(
    settled.map((s) => (s.status === 'fulfilled' ? s.value : (s.reason as Error).message)),
    [1, 'refused', 3, 4],
  );
  t.equal(runs, 1, 'the refused mutation ran once: a refusal does not undo the group');
  t.same(events, [], 'no event of the refused write');
  t.equal(await store.getEntity('', 'urn:r:2'), undefined);
  t.same(
    (await store.typeStats('')).map((s) => [s.typeIri, s.count]),
    [[NS + 'Room', 2]],
    'the default tenant counts its two rooms',
  );
  t.same(
    (await store.typeStats('a')).map((s) => [s.typeIri, s.count]),
    [[NS + 'Hall', 1]],
    "tenant a counts its hall, in the same transaction as the default tenant's",
  );
  t.same(
    (await store.attributeStats('')).map((s) => [s.attrIri, s.count]),
    [[NS + 'temperature', 2]],
  );
  t.same(await store.listTenants(), ['a']);
});

t.test('writes of one entity started together run in order, each on the state the one before left', async (t) => {
  const store = tempEmbdb(t);
  await store.mutateEntity('', 'urn:r:1', () => ({ next: room('urn:r:1', 0), result: undefined }));
  const add = (n: number) => (cur: StoredEntity | undefined) => {
    const v = (cur![NS + 'temperature'] as Array<{ value: number }>)[0]!.value;
    return { next: room('urn:r:1', v + n), result: v + n };
  };
  t.same(await Promise.all([1, 10, 100].map((n) => store.mutateEntity('', 'urn:r:1', add(n)))), [1, 11, 111]);
  t.same((await store.getEntity('', 'urn:r:1'))![NS + 'temperature'], [{ type: 'Property', value: 111 }]);
  t.equal((await store.typeStats(''))[0]?.count, 1, 'rewrites of one shape move no count');
});

t.test('a delete and a create started together in one group move the counts both ways', async (t) => {
  const store = tempEmbdb(t);
  await store.mutateEntity('', 'urn:r:1', () => ({ next: room('urn:r:1', 0), result: undefined }));
  await Promise.all([
    store.mutateEntity('', 'urn:r:1', () => ({ next: null, result: undefined })),
    store.mutateEntity('', 'urn:r:2', () => ({ next: room('urn:r:2', 2), result: undefined })),
    // Deleting what is not there writes nothing.
    store.mutateEntity('', 'urn:r:none', () => ({ next: null, result: undefined })),
  ]);
  t.same(
    (await store.queryEntities('', { type: ofTypes(NS + 'Room'), limit: 10, offset: 0, count: true })).entities.map((e) => e.id),
    ['urn:r:2'],
  );
  t.equal((await store.typeStats(''))[0]?.count, 1);
  t.same(
    (await store.attributeStats('')).map((s) => s.count),
    [1],
  );
});

t.test('a group undone by an error after a put: every write runs again alone, only the one at fault fails', async (t) => {
  const store = tempEmbdb(t);
  const typeMembers = store.indexedDbs().typeMembers as unknown as { putSync: (k: unknown, v: unknown) => boolean };
  const putSync = typeMembers.putSync.bind(typeMembers);
  typeMembers.putSync = (key, value) => {
    if (value === 'urn:r:bad') throw new Error('injected: the type index refuses it');
    return putSync(key, value);
  };
  const runs = new Map<string, number>();
  const write = (id: string) =>
    store.mutateEntity('', id, () => {
      runs.set(id, (runs.get(id) ?? 0) + 1);
      return { next: room(id, 1), result: id };
    });
  const settled = await Promise.allSettled(['urn:r:1', 'urn:r:bad', 'urn:r:2'].map(write));
  t.same(
    settled.map((s) => s.status),
    ['fulfilled', 'rejected', 'fulfilled'],
  );
  t.same(Object.fromEntries(runs), { 'urn:r:1': 2, 'urn:r:bad': 2, 'urn:r:2': 1 }, 'the group stopped at the fault; each ran again alone');
  t.equal(await store.getEntity('', 'urn:r:bad'), undefined, 'the one at fault is not stored');
  t.same(
    (await store.queryEntities('', { type: ofTypes(NS + 'Room'), limit: 10, offset: 0, count: true })).entities.map((e) => e.id),
    ['urn:r:1', 'urn:r:2'],
  );
  t.equal((await store.typeStats(''))[0]?.count, 2, 'counted once each');
  // The store goes on grouping.
  t.same(await Promise.all(['urn:r:3', 'urn:r:4'].map(write)), ['urn:r:3', 'urn:r:4']);
  t.equal((await store.typeStats(''))[0]?.count, 4);
});

t.test('a closed store rejects a write started after close, and leaves no write waiting', async (t) => {
  const store = tempEmbdb(t);
  await store.mutateEntity('', 'urn:r:1', () => ({ next: room('urn:r:1', 1), result: undefined }));
  await store.close();
  await t.rejects(store.mutateEntity('', 'urn:r:2', () => ({ next: room('urn:r:2', 2), result: undefined })));
});
