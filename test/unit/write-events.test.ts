// Write events (issue 14 item 4): what a write changed is computed once where it is applied (merge.ts), handed back by
// the store with the committed write (MutateOptions.events), and read by the subscription matcher and the history
// instead of comparing or guessing.
import t from 'tap';
import { tempEmbdb } from './helpers/embdb.js';
import { EmbdbStore } from '../../src/plugins/store/embdb/embdb-store.js';
import { expandAttributes, expandEntity } from '../../src/ngsild/entity/expand.js';
import { appendAttributes, deleteAttribute, mergeEntity, replaceEntity, updateAttributes } from '../../src/ngsild/entity/merge.js';
import { changeOf } from '../../src/ngsild/entity/write-change.js';
import type { StoredEntity } from '../../src/ngsild/entity/model.js';
import type { WriteEvent } from '../../src/store/contract.js';
import { compileSubscription } from '../../src/ngsild/subscription/compile.js';
import { matchChange } from '../../src/ngsild/subscription/match.js';
import type { SubscriptionBody } from '../../src/ngsild/subscription/model.js';
import { mapContext, DEFAULT_VOCAB } from './helpers/map-context.js';

const ctx = mapContext();
const dc = (term: string): string => DEFAULT_VOCAB + term;
const T0 = '2024-01-01T00:00:00.000Z';
const T1 = '2024-06-01T00:00:00.000Z';
const ID = 'urn:ngsi-ld:Car:1';
const car = (body: Record<string, unknown>, now = T0): StoredEntity => expandEntity({ id: ID, type: 'Car', ...body }, ctx, { now });

function openStore(t: { teardown: (fn: () => void | Promise<void>) => void }, lockPrefer: 'reads' | 'writes' = 'reads'): EmbdbStore {
  const store = tempEmbdb(t, { lockPrefer, troe: 'embdb' });
  return store;
}

t.test('merge.ts reports, per attribute, the datasetIds of the instances a write put there', async (t) => {
  const e = car({
    speed: [
      { type: 'Property', value: 1 },
      { type: 'Property', value: 2, datasetId: 'urn:d:a' },
    ],
    owner: { type: 'Relationship', object: 'urn:p:1' },
  });
  const more = appendAttributes(
    e,
    expandAttributes({ speed: { type: 'Property', value: 3, datasetId: 'urn:d:b' }, fuel: 9 }, ctx, { now: T1 }),
    { noOverwrite: false, now: T1 },
  );
  t.strictSame(more.written, { [dc('speed')]: ['urn:d:b'], [dc('fuel')]: ['@none'] }, 'a new instance and a new attribute');
  const updated = updateAttributes(e, expandAttributes({ speed: { type: 'Property', value: 5, datasetId: 'urn:d:a' } }, ctx, { now: T1 }), {
    now: T1,
  });
  t.strictSame(updated.written, { [dc('speed')]: ['urn:d:a'] }, 'only the instance replaced');
  const gone = deleteAttribute(e, dc('speed'), { datasetId: 'urn:d:a', now: T1 });
  t.strictSame(gone.modified, [dc('speed')]);
  t.strictSame(gone.written, { [dc('speed')]: [] }, 'a deletion writes no instance');
  const replaced = replaceEntity(e, car({ speed: 4 }, T1), T1);
  t.strictSame(replaced.written, { [dc('speed')]: ['@none'] });
  t.strictSame(replaced.deleted, [dc('owner')]);
  const merged = mergeEntity(e, car({ owner: { type: 'Relationship', object: 'urn:p:2' } }, T1), T1);
  t.strictSame(merged.written, { [dc('owner')]: ['@none'] });
});

for (const lockPrefer of ['reads', 'writes'] as const) {
  t.test(`dbLockPrefer ${lockPrefer}: the store hands back each committed write's event, its change as the mutation gave it`, async (t) => {
    const store = openStore(t, lockPrefer);
    const events: WriteEvent[] = [];
    const created = car({ speed: 1 });
    await store.mutateEntity('', ID, () => ({ next: created, result: undefined }), { events });
    t.equal(events.length, 1);
    t.match(events[0], {
      tenant: '',
      id: ID,
      before: undefined,
      after: created,
      change: { kind: 'create', created: [dc('speed')], written: { [dc('speed')]: ['@none'] } },
    });
    const r = appendAttributes(created, expandAttributes({ speed: 2 }, ctx, { now: T1 }), { noOverwrite: false, now: T1 });
    const change = changeOf('append', r);
    await store.mutateEntity('', ID, () => ({ next: r.entity, result: undefined, change }), { events });
    t.equal(events[1]!.change, change, 'the change the operation computed, as it is');
    t.ok(events[1]!.seq > events[0]!.seq, 'a later write has a greater seq');
    await store.mutateEntity('', ID, () => ({ next: undefined, result: undefined }), { events });
    await store.mutateEntity('', 'urn:ngsi-ld:Car:none', () => ({ next: null, result: undefined }), { events });
    t.equal(events.length, 2, 'no event for a write that changed nothing');
    await store.mutateEntities(
      '',
      [
        { id: 'urn:ngsi-ld:Car:2', mutation: () => ({ next: car({ speed: 1 }), result: 1 }) },
        {
          id: 'urn:ngsi-ld:Car:3',
          mutation: () => {
            throw new Error('refused');
          },
        },
        { id: ID, mutation: (cur) => ({ next: null, result: 2 }) },
      ],
      { events },
    );
    t.same(
      events.slice(2).map((e) => [e.id, e.change.kind, e.after === undefined]),
      [
        ['urn:ngsi-ld:Car:2', 'create', false],
        [ID, 'delete', true],
      ],
      'a batch: the events of the entries written, in order, none of the one that failed',
    );
    t.equal(events[2]!.seq, events[3]!.seq, 'one transaction, one seq');
    await t.rejects(
      store.mutateEntity(
        '',
        ID,
        () => {
          throw new Error('refused');
        },
        { events },
      ),
    );
    t.equal(events.length, 4, 'none for a write that threw');
  });
}

t.test("the history records a replace by the write's kind, not by guessing from its effect", async (t) => {
  const store = openStore(t);
  const history = store.history!;
  const bare = car({});
  await store.mutateEntity('', ID, () => ({ next: bare, result: undefined }));
  // PUT over an entity without attributes: the old guess needed attributes before to call it a replace.
  const put = replaceEntity(bare, car({ speed: 1 }, T1), T1);
  await store.mutateEntity('', ID, () => ({ next: put.entity, result: undefined, change: changeOf('replace', put) }));
  t.same(
    (await history.entityEvents('', ID)).map((e) => e.kind),
    ['created', 'replaced'],
  );
  // A merge-patch that deletes the only attribute and adds another leaves only instances new at its time, as a replace
  // would (the old guess took it for one): it is a merge.
  const T2 = '2024-07-01T00:00:00.000Z';
  const patch = car({ speed: { type: 'Property', value: 'urn:ngsi-ld:null' }, fuel: 3 }, T2);
  const merged = mergeEntity(put.entity, patch, T2);
  await store.mutateEntity('', ID, () => ({ next: merged.entity, result: undefined, change: changeOf('merge', merged) }));
  t.same(
    (await history.entityEvents('', ID)).map((e) => e.kind),
    ['created', 'replaced'],
    'no replaced event for a merge',
  );
  const page = await history.instances('', ID, { limit: 10 });
  t.same(
    page.attrs[dc('speed')]!.map((i) => i.value),
    [1, 'urn:ngsi-ld:null'],
    'the merge deleted speed: a tombstone',
  );
  t.same(
    page.attrs[dc('fuel')]!.map((i) => i.value),
    [3],
  );
});

t.test('the matcher reads the change the operation computed: per datasetId, without comparing values', async (t) => {
  const sub = (body: Partial<SubscriptionBody>) =>
    compileSubscription(
      '',
      {
        body: {
          id: `urn:ngsi-ld:Subscription:${Math.random()}`,
          type: 'Subscription',
          entities: [{ type: 'Car' }],
          notification: { endpoint: { uri: 'http://r/n' } },
          ...body,
        },
        context: null,
        createdAt: '',
        modifiedAt: '',
      },
      ctx,
      ctx,
    );
  const before = car({
    speed: [
      { type: 'Property', value: 1 },
      { type: 'Property', value: 2, datasetId: 'urn:d:a' },
    ],
  });
  const r = appendAttributes(before, expandAttributes({ speed: { type: 'Property', value: 2, datasetId: 'urn:d:a' } }, ctx, { now: T1 }), {
    noOverwrite: false,
    now: T1,
  });
  const write = { before, after: r.entity, change: changeOf('append', r) };
  t.equal(
    matchChange(sub({ datasetId: ['urn:d:a'] }), write, Date.parse(T1))?.trigger,
    'attributeUpdated',
    'the instance written, its value the same',
  );
  t.equal(matchChange(sub({ datasetId: ['@none'] }), write, Date.parse(T1)), undefined, 'the default instance was not written');
  const untouched = { before, after: r.entity, change: { ...changeOf('append', r), modified: [], previous: {}, written: {} } };
  t.equal(matchChange(sub({}), untouched, Date.parse(T1)), undefined, 'what the change does not name did not change');
});
