// embdb's discovery counts are moved once per transaction (stats-batch.ts): a batch that creates, changes and
// deletes entities of one type, with a failing entry among them, leaves the counts of the entries that succeeded.
import t from 'tap';
import { tempEmbdb } from './helpers/embdb.js';
import type { StoredEntity } from '../../src/ngsild/entity/model.js';

const NS = 'https://example.org/ns/';
const T0 = '2026-01-01T00:00:00Z';

function entity(k: number, attrs: string[]): StoredEntity {
  const e: StoredEntity = { id: `urn:ngsi-ld:A:${k}`, type: [NS + 'A'], createdAt: T0, modifiedAt: T0 };
  for (const a of attrs) e[NS + a] = [{ type: 'Property', value: k }];
  return e;
}

t.test('one batch: creates, a failing entry, a change of attributes and a delete; counts match the entities kept', async (t) => {
  const store = tempEmbdb(t);
  const put = (e: StoredEntity) => ({ id: e.id, mutation: () => ({ next: e, result: undefined }) });
  const outcomes = await store.mutateEntities('', [
    put(entity(1, ['speed'])),
    put(entity(2, ['speed'])),
    {
      id: 'urn:ngsi-ld:A:3',
      mutation: () => {
        throw new Error('refused');
      },
    },
    put(entity(4, ['speed', 'name'])),
  ]);
  t.same(
    outcomes.map((o) => o.ok),
    [true, true, false, true],
  );
  let [a] = await store.typeStats('', NS + 'A');
  t.equal(a?.count, 3);
  t.equal(a?.attrs[NS + 'speed']?.n, 3);
  t.equal(a?.attrs[NS + 'name']?.n, 1);

  await store.mutateEntities('', [
    put(entity(1, ['name'])),
    { id: 'urn:ngsi-ld:A:2', mutation: () => ({ next: null, result: undefined }) },
    put(entity(5, ['speed'])),
    { id: 'urn:ngsi-ld:A:5', mutation: () => ({ next: null, result: undefined }) },
  ]);
  [a] = await store.typeStats('', NS + 'A');
  t.equal(a?.count, 2, 'A:1 and A:4 remain');
  t.equal(a?.attrs[NS + 'speed']?.n, 1);
  t.equal(a?.attrs[NS + 'name']?.n, 2);
  t.equal((await store.attributeStats('', NS + 'speed'))[0]?.count, 1);

  await store.mutateEntities(
    '',
    [1, 4].map((k) => ({ id: `urn:ngsi-ld:A:${k}`, mutation: () => ({ next: null, result: undefined }) })),
  );
  t.same(await store.typeStats(''), [], 'a type with no entity left has no count record');
  t.same(await store.attributeStats(''), []);
});
