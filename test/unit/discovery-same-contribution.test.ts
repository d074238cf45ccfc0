// sameContribution (store/kit/discovery-counts.ts) lets a store skip the signatures of an entity rewritten in its own
// shape: wherever it answers true the signatures must be equal (else counts would drift), checked here against
// sameSignature over entities that differ in each way a signature sees, and through embdb's counts.
import t from 'tap';
import { entitySignature, sameContribution, sameSignature } from '../../src/store/kit/discovery-counts.js';
import type { StoredEntity } from '../../src/ngsild/entity/model.js';
import { tempEmbdb } from './helpers/embdb.js';

const NS = 'https://example.org/ns/';
const T0 = '2026-01-01T00:00:00Z';

function entity(types: string[], attrs: Array<[string, string[]]>, extra: Record<string, unknown> = {}): StoredEntity {
  const e: StoredEntity = { id: 'urn:ngsi-ld:A:1', type: types.map((x) => NS + x), createdAt: T0, modifiedAt: T0, ...extra };
  for (const [name, kinds] of attrs)
    e[NS + name] = kinds.map((type, i) => ({ type, value: i, ...(i > 0 ? { datasetId: `urn:d:${i}` } : {}) }));
  return e;
}

const variants: StoredEntity[] = [
  entity(['A'], [['speed', ['Property']]]),
  entity(['A'], [['speed', ['Property']]], { scope: ['/x'], modifiedAt: '2027-01-01T00:00:00Z' }),
  entity(['A'], [['speed', ['Relationship']]]),
  entity(['A'], [['speed', ['Property', 'Property']]]),
  entity(['A'], [['speed', ['Property', 'Relationship']]]),
  entity(['A'], [['speed', ['Relationship', 'Property']]]),
  entity(['A'], [['name', ['Property']]]),
  entity(
    ['A'],
    [
      ['speed', ['Property']],
      ['name', ['Property']],
    ],
  ),
  entity(
    ['A'],
    [
      ['name', ['Property']],
      ['speed', ['Property']],
    ],
  ),
  entity(['B'], [['speed', ['Property']]]),
  entity(['A', 'B'], [['speed', ['Property']]]),
  entity(['B', 'A'], [['speed', ['Property']]]),
  entity(['A'], []),
];

t.test('true only where the signatures are equal; true for an entity and its copy', async (t) => {
  for (const a of variants)
    for (const b of variants) {
      if (sameContribution(a, b))
        t.ok(sameSignature(entitySignature(a), entitySignature(b)), `${JSON.stringify(a)} ~ ${JSON.stringify(b)}`);
    }
  for (const a of variants) t.ok(sameContribution(a, structuredClone(a)));
  t.ok(sameContribution(variants[0]!, variants[1]!), 'scope and system members are no attributes');
  t.notOk(sameContribution(variants[0]!, variants[2]!), 'an instance of another attribute type');
  t.notOk(sameContribution(variants[0]!, variants[12]!), 'an attribute fewer');
  t.notOk(sameContribution(variants[12]!, variants[0]!), 'an attribute more');
  t.ok(sameContribution(variants[7]!, variants[8]!), 'the same attributes in another member order');
  t.notOk(sameContribution(variants[7]!, variants[6]!), 'an attribute fewer, the one left the same');
  t.notOk(sameContribution(variants[6]!, variants[7]!), 'an attribute more, the first the same');
});

t.test('embdb: replacing an entity by one of its shape keeps the counts, a changed instance type moves them', async (t) => {
  const store = tempEmbdb(t);
  const put = (e: StoredEntity) => [{ id: e.id, mutation: () => ({ next: e, result: undefined }) }];
  await store.mutateEntities('', put(variants[0]!));
  await store.mutateEntities('', put(variants[1]!));
  let [a] = await store.typeStats('', NS + 'A');
  t.equal(a?.count, 1);
  t.same(a?.attrs[NS + 'speed'], { n: 1, t: { Property: 1 } });
  await store.mutateEntities('', put(variants[2]!));
  [a] = await store.typeStats('', NS + 'A');
  t.equal(a?.count, 1);
  t.same(a?.attrs[NS + 'speed'], { n: 1, t: { Relationship: 1 } });
  const [speed] = await store.attributeStats('', NS + 'speed');
  t.same(speed?.attrTypes, { Relationship: 1 });
});
