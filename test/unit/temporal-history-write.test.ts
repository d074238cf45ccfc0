// historyOfWrite (store kit): what one entity write adds to any history, embdb in its transaction or tsdb after
// the commit: events, the temporal entity, new instances and tombstones (seed 001, importer behaviour 4).
import t from 'tap';
import { historyOfWrite as ofWrite } from '../../src/store/kit/history-of-write.js';
import { changeBetween } from '../../src/ngsild/entity/write-change.js';
import type { StoredEntity } from '../../src/store/contract.js';

/** The history of a write whose change is found by comparing the states (as a store does for a mutation that gives none). */
const historyOfWrite = (current: StoredEntity | undefined, next: StoredEntity | null, newInstanceId: (ms: number) => string) =>
  ofWrite(current, next, changeBetween(current, next ?? undefined), newInstanceId);

const A = 'https://example.org/a';
const B = 'https://example.org/b';
let n = 0;
const ids = (ms: number): string => `urn:i:${ms}:${++n}`;
const T1 = '2024-01-01T00:00:01.000Z';
const T2 = '2024-01-01T00:00:02.000Z';
const base = (at: string, attrs: Record<string, unknown>): StoredEntity => ({
  id: 'urn:x:1',
  type: ['https://example.org/T'],
  createdAt: T1,
  modifiedAt: at,
  ...attrs,
});

t.test('a create is fresh, has a created event and one instance per attribute instance', async (t) => {
  const w = historyOfWrite(undefined, base(T1, { [A]: [{ type: 'Property', value: 1, createdAt: T1, modifiedAt: T1 }] }), ids);
  t.equal(w.fresh, true);
  t.same(w.event, { kind: 'created', at: T1 });
  t.same(
    w.instances.map((i) => [i.attrIri, i.instance.value, i.instance.createdAt]),
    [[A, 1, T1]],
  );
});

t.test('an update records the touched instance only; a removed attribute leaves a tombstone', async (t) => {
  const kept = { type: 'Property', value: 'k', createdAt: T1, modifiedAt: T1 };
  const current = base(T1, { [A]: [{ type: 'Property', value: 1, createdAt: T1, modifiedAt: T1 }], [B]: [kept] });
  const touched = historyOfWrite(
    current,
    base(T2, { [A]: [{ type: 'Property', value: 2, createdAt: T1, modifiedAt: T2 }], [B]: [kept] }),
    ids,
  );
  t.equal(touched.event, undefined, 'not a replace');
  t.equal(touched.entity, undefined, 'types and scope unchanged');
  t.same(
    touched.instances.map((i) => [i.attrIri, i.instance.value]),
    [[A, 2]],
  );
  const removed = historyOfWrite(current, base(T2, { [A]: current[A] }), ids);
  t.same(
    removed.instances.map((i) => [i.attrIri, i.instance.value, i.instance.deletedAt]),
    [[B, 'urn:ngsi-ld:null', T2]],
  );
});

t.test('a delete gives a deleted event, a deleted temporal entity and a tombstone per instance', async (t) => {
  const current = base(T1, {
    [A]: [
      { type: 'Relationship', object: 'urn:o:1', createdAt: T1, modifiedAt: T1 },
      { type: 'Relationship', object: 'urn:o:2', datasetId: 'urn:d:1', createdAt: T1, modifiedAt: T1 },
    ],
  });
  const w = historyOfWrite(current, null, ids);
  t.equal(w.event?.kind, 'deleted');
  t.ok(w.entity?.deletedAt);
  t.same(
    w.instances.map((i) => [i.instance.type, i.instance.object, i.instance.datasetId]),
    [
      ['Relationship', 'urn:ngsi-ld:null', undefined],
      ['Relationship', 'urn:ngsi-ld:null', 'urn:d:1'],
    ],
  );
  t.same(historyOfWrite(undefined, null, ids), { fresh: false, instances: [] }, 'deleting nothing records nothing');
});
