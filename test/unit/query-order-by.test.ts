// orderBy (CIM 009 v1.9.1 §4.23): keys, directions and paths, the order of values (missing last in both
// directions), refusals of malformed text, and embdb sorting every match before paging, within its cap.
import t from 'tap';
import { tempEmbdb } from './helpers/embdb.js';
import { parseOrderBy, compareValues, ORDER_BY_MAX_KEYS, ORDER_BY_MAX_LENGTH } from '../../src/ngsild/query/order-by.js';
import { EmbdbStore } from '../../src/plugins/store/embdb/embdb-store.js';
import type { StoredEntity } from '../../src/ngsild/entity/model.js';
import { kindOf } from './helpers/errors.js';
import { ofTypes } from './helpers/store-query.js';

const NGSI_LD = 'https://uri.etsi.org/ngsi-ld/';
const NS = 'https://example.org/ns/';
const expand = (term: string): string => (term === 'createdAt' || term === 'modifiedAt' ? NGSI_LD + term : NS + term);

function building(k: string, name: string | undefined, sub: number | undefined, createdAt: string, type = 'Building'): StoredEntity {
  const e: StoredEntity = { id: `urn:ngsi-ld:${type}:${k}`, type: [NS + type], createdAt, modifiedAt: createdAt };
  if (name !== undefined) {
    const inst: Record<string, unknown> = { type: 'Property', value: name, createdAt, modifiedAt: createdAt };
    if (sub !== undefined) inst[NS + 'subProperty'] = { type: 'Property', value: sub };
    e[NS + 'name'] = [inst];
  }
  return e;
}

// Created in the order 2, 1, 3, as the ETSI suite's orderBy tests do.
const E1 = building('1', 'A', 1, '2026-01-01T00:00:02Z');
const E2 = building('2', 'B', 2, '2026-01-01T00:00:01Z');
const E3 = building('3', 'C', 3, '2026-01-01T00:00:03Z');
const NONAME = building('0', undefined, undefined, '2026-01-01T00:00:00Z');

function sorted(text: string, entities: StoredEntity[]): string[] {
  const order = parseOrderBy(text, expand);
  return entities
    .map((e) => ({ e, k: order.keyOf(e) }))
    .sort((a, b) => order.compare(a.k, b.k) || (a.e.id < b.e.id ? -1 : 1))
    .map((x) => x.e.id.split(':').pop()!);
}

t.test('keys: members, attributes, sub-attributes and instance members, ;asc and ;desc, several keys', async (t) => {
  const all = [E3, E1, E2];
  t.same(sorted('name', all), ['1', '2', '3']);
  t.same(sorted('id', all), ['1', '2', '3']);
  t.same(sorted('createdAt', all), ['2', '1', '3']);
  t.same(sorted('name.createdAt', all), ['2', '1', '3']);
  t.same(sorted('name.subProperty', all), ['1', '2', '3']);
  t.same(sorted('name;asc', all), ['1', '2', '3']);
  t.same(sorted('name;desc', all), ['3', '2', '1']);
  t.same(sorted('type,name', all), ['1', '2', '3']);
  t.same(sorted('type;asc,name.subProperty;desc,name;asc', all), ['3', '2', '1']);
  t.same(parseOrderBy('name;desc,id', expand).keys, [
    { path: 'name', descending: true },
    { path: 'id', descending: false },
  ]);
});

t.test('an entity without a value for a key sorts last, ascending and descending', async (t) => {
  t.same(sorted('name', [E2, NONAME, E1]), ['1', '2', '0']);
  t.same(sorted('name;desc', [E2, NONAME, E1]), ['2', '1', '0']);
  t.same(
    sorted('name,createdAt;desc', [NONAME, building('9', undefined, undefined, '2026-02-01T00:00:00Z')]),
    ['9', '0'],
    'the next key decides between missing ones',
  );
});

t.test('values: numbers < strings < booleans < arrays < objects; each kind in its own order', async (t) => {
  const values = [{ b: 1 }, [1, 2], true, 'b', 10, [1], false, 'a', 2, { a: 1 }];
  t.same([...values].sort(compareValues), [2, 10, 'a', 'b', false, true, [1], [1, 2], { a: 1 }, { b: 1 }]);
  t.equal(compareValues('B', 'a'), -1, 'strings by code point');
  t.equal(compareValues(1, 1), 0);
});

t.test('malformed orderBy is 400 BadRequestData', async (t) => {
  const bad: Array<[string, RegExp]> = [
    ['', /empty/],
    ['name;up', /'up' is not asc or desc/],
    ['name;', /'' is not asc or desc/],
    ['name;asc;desc', /not asc or desc/],
    [';asc', /has no path/],
    ['name,,id', /has no path/],
    ['na me', /not an attribute path/],
    ['name[', /not an attribute path/],
    ['name{a}', /not an attribute path/],
    ['a.', /not an attribute path/],
    [Array.from({ length: ORDER_BY_MAX_KEYS + 1 }, (_, i) => `k${i}`).join(','), /more than 8 keys/],
    ['a'.repeat(ORDER_BY_MAX_LENGTH + 1), /longer than 1024/],
  ];
  for (const [text, detail] of bad) {
    t.equal(
      kindOf(() => parseOrderBy(text, expand)),
      'BadRequestData 400',
      text.slice(0, 40),
    );
    t.throws(() => parseOrderBy(text, expand), { detail }, text.slice(0, 40));
  }
});

async function store(
  t: { teardown: (fn: () => void | Promise<void>) => void },
  entities: StoredEntity[],
  cap?: number,
): Promise<EmbdbStore> {
  const s = tempEmbdb(t, { orderedQueryCap: cap });
  await s.mutateEntities(
    '',
    entities.map((e) => ({ id: e.id, mutation: () => ({ next: e, result: undefined }) })),
  );
  return s;
}

t.test('embdb sorts every match before paging: pages do not overlap and cover all, count is the total', async (t) => {
  const many = Array.from({ length: 57 }, (_, i) =>
    building(`m${String(i).padStart(2, '0')}`, `v${(i * 37) % 57}`, i % 5, '2026-01-01T00:00:00Z'),
  );
  const s = await store(t, [...many, NONAME, building('x', 'v1', 1, '2026-01-01T00:00:00Z', 'Other')]);
  const orderBy = parseOrderBy('name.subProperty;desc,name', expand);
  const seen: string[] = [];
  for (let offset = 0; offset < 80; offset += 10) {
    const page = await s.queryEntities('', { type: ofTypes(NS + 'Building'), orderBy, limit: 10, offset, count: true });
    t.equal(page.count, 58, 'every Building');
    seen.push(...page.entities.map((e) => e.id));
  }
  t.equal(new Set(seen).size, 58, 'no entity on two pages');
  const expected = [...many]
    .sort((a, b) => parseOrderBy('name.subProperty;desc,name', expand).compare(orderBy.keyOf(a), orderBy.keyOf(b)))
    .map((e) => e.id);
  t.same(seen, [...expected, NONAME.id], 'in key order, the one without a name last');
  const filtered = await s.queryEntities('', {
    type: ofTypes(NS + 'Building'),
    idPattern: '0$',
    orderBy: parseOrderBy('name;desc', expand),
    limit: 100,
    offset: 0,
    count: true,
  });
  // names: m20 v56, m40 v55, m10 v28, m30 v27, m50 v26, m00 v0 (strings by code point, descending), no name last.
  t.same(
    filtered.entities.map((e) => e.id.split(':').pop()),
    ['m20', 'm40', 'm10', 'm30', 'm50', 'm00', '0'],
  );
  const byIds = await s.queryEntities('', {
    ids: [E1.id, 'urn:ngsi-ld:Building:m01', 'urn:ngsi-ld:Building:m00'],
    orderBy: parseOrderBy('id;desc', expand),
    limit: 10,
    offset: 0,
    count: false,
  });
  t.same(
    byIds.entities.map((e) => e.id),
    ['urn:ngsi-ld:Building:m01', 'urn:ngsi-ld:Building:m00'],
    'ids that do not exist are left out',
  );
  const byName = parseOrderBy('name', expand);
  const two = await s.queryEntities('', {
    type: ofTypes(NS + 'Other', NS + 'Building'),
    orderBy: byName,
    limit: 3,
    offset: 0,
    count: true,
  });
  t.equal(two.count, 59);
  const everything = [...many, NONAME, building('x', 'v1', 1, '2026-01-01T00:00:00Z', 'Other')];
  const all = everything.sort((a, b) => byName.compare(byName.keyOf(a), byName.keyOf(b)) || (a.id < b.id ? -1 : 1)).map((e) => e.id);
  t.same(
    two.entities.map((e) => e.id),
    all.slice(0, 3),
    'several types sort together',
  );
  t.ok(all.slice(0, 3).includes('urn:ngsi-ld:Other:x'), 'the other type is among the first');
});

t.test('embdb answers sortCap, and no entity, when more entities match than it sorts', async (t) => {
  const s = await store(t, [E1, E2, E3], 2);
  const over = await s.queryEntities('', {
    type: ofTypes(NS + 'Building'),
    orderBy: parseOrderBy('name', expand),
    limit: 10,
    offset: 0,
    count: true,
  });
  t.same(over, { entities: [], sortCap: 2 });
  const fits = await s.queryEntities('', {
    type: ofTypes(NS + 'Building'),
    ids: [E1.id, E2.id],
    orderBy: parseOrderBy('name;desc', expand),
    limit: 10,
    offset: 0,
    count: true,
  });
  t.same(
    fits.entities.map((e) => e.id),
    [E2.id, E1.id],
    'a filter that leaves two fits',
  );
});
