import t from 'tap';
import { expandEntity, expandFragment, expandAttributes, expandAttributeFragment } from '../../src/ngsild/entity/expand.js';
import { renderEntity } from '../../src/ngsild/entity/render.js';
import { MAX_NESTING } from '../../src/ngsild/entity/depth.js';
import type { AttrInstance } from '../../src/ngsild/entity/model.js';
import { mapContext, DEFAULT_VOCAB, NGSI_LD } from './helpers/map-context.js';
import { fixture, ldErrorOf } from './helpers/entity-fixtures.js';

const ctx = mapContext({ schema: 'https://schema.org/' });
const now = '2024-05-01T12:00:00Z';
const dc = (term: string): string => DEFAULT_VOCAB + term;

interface Pair {
  name: string;
  entity?: Record<string, unknown>;
  concise?: unknown;
  keyValues?: unknown;
  normalized?: unknown;
}

t.test('normalized input of every attribute type renders back unchanged (sysAttrs off)', async (t) => {
  for (const c of fixture<Pair[]>('roundtrip-normalized.json')) {
    const stored = expandEntity(c.entity, ctx, { now });
    t.same(renderEntity(stored, ctx, { format: 'normalized' }), c.entity, c.name);
    t.strictSame(JSON.parse(JSON.stringify(renderEntity(stored, ctx, { format: 'normalized' }))), c.entity, `${c.name} (exact)`);
  }
});

t.test('concise input is read with the attribute types its members imply', async (t) => {
  for (const c of fixture<Pair[]>('concise-input.json')) {
    t.strictSame(renderEntity(expandEntity(c.concise, ctx, { now }), ctx, { format: 'normalized' }), c.normalized, c.name);
  }
});

t.test('concise output reads back as the same entity', async (t) => {
  for (const file of ['roundtrip-normalized.json', 'concise-input.json']) {
    for (const c of fixture<Pair[]>(file)) {
      const stored = expandEntity(c.entity ?? c.concise, ctx, { now });
      const concise = renderEntity(stored, ctx, { format: 'concise' });
      t.strictSame(expandEntity(concise, ctx, { now }), stored, c.name);
    }
  }
});

t.test('keyValues input makes every member a Property, GeoJSON geometries GeoProperties', async (t) => {
  for (const c of fixture<Pair[]>('keyvalues-input.json')) {
    t.strictSame(
      renderEntity(expandEntity(c.keyValues, ctx, { now, keyValues: true }), ctx, { format: 'normalized' }),
      c.normalized,
      c.name,
    );
  }
});

t.test('keyValues input refuses null values and invalid geometries', async (t) => {
  t.match(
    ldErrorOf(() => expandEntity({ id: 'urn:x:1', type: 'T', a: null }, ctx, { now, keyValues: true })).detail,
    'a: null is not an attribute value',
  );
  t.match(
    ldErrorOf(() =>
      expandEntity({ id: 'urn:x:1', type: 'T', location: { type: 'Point', coordinates: [500, 0] } }, ctx, { now, keyValues: true }),
    ).detail,
    'longitude 500',
  );
  t.match(
    ldErrorOf(() => expandEntity({ id: 'urn:x:1', type: 'T', location: 'here' }, ctx, { now, keyValues: true })).detail,
    'location: must be a GeoProperty',
  );
});

t.test('the stored entity has expanded names, type arrays, instance arrays and timestamps everywhere', async (t) => {
  const e = expandEntity(
    {
      id: 'urn:ngsi-ld:T:1',
      type: 'T',
      scope: '/a/b',
      r: { type: 'Relationship', object: 'urn:x:2', objectType: 'schema:Person', since: { value: 1, note: 'x' } },
      v: { vocab: ['red', 'schema:Blue'] },
      location: { type: 'Point', coordinates: [1, 2] },
    },
    ctx,
    { now },
  );
  t.strictSame(e.type, [dc('T')]);
  t.strictSame(e.scope, ['/a/b']);
  t.equal(e.createdAt, now);
  t.equal(e.modifiedAt, now);
  const r = (e[dc('r')] as AttrInstance[])[0]!;
  t.equal(r.objectType, 'https://schema.org/Person');
  t.equal(r.createdAt, now);
  const since = r[dc('since')] as AttrInstance;
  t.equal(since.modifiedAt, now);
  t.equal((since[dc('note')] as AttrInstance).createdAt, now, 'sub-sub-attribute stamped');
  t.strictSame((e[dc('v')] as AttrInstance[])[0]!.vocab, [dc('red'), 'https://schema.org/Blue']);
  t.equal((e[NGSI_LD + 'location'] as AttrInstance[])[0]!.type, 'GeoProperty');
});

t.test('client-sent createdAt and modifiedAt are dropped at every level', async (t) => {
  const old = '2000-01-01T00:00:00Z';
  const e = expandEntity(
    {
      id: 'urn:x:1',
      type: 'T',
      createdAt: old,
      modifiedAt: old,
      a: { type: 'Property', value: 1, createdAt: old, modifiedAt: old, s: { value: 2, createdAt: old } },
    },
    ctx,
    { now },
  );
  t.equal(e.createdAt, now);
  const a = (e[dc('a')] as AttrInstance[])[0]!;
  t.equal(a.createdAt, now);
  t.equal(a.modifiedAt, now);
  t.equal((a[dc('s')] as AttrInstance).createdAt, now);
  t.notOk(dc('createdAt') in e, 'not kept as an attribute');
});

t.test('a multi-attribute keeps its instances with the default instance first', async (t) => {
  const e = expandEntity(
    { id: 'urn:x:1', type: 'T', a: [{ value: 1, datasetId: 'urn:d:1' }, { value: 2 }, { value: 3, datasetId: 'urn:d:2' }] },
    ctx,
    { now },
  );
  t.strictSame(
    (e[dc('a')] as AttrInstance[]).map((i) => i.datasetId),
    [undefined, 'urn:d:1', 'urn:d:2'],
  );
});

t.test('type arrays are expanded and deduplicated', async (t) => {
  const e = expandEntity({ id: 'urn:x:1', type: ['T', 'schema:Thing', 'T', dc('T')] }, ctx, { now });
  t.strictSame(e.type, [dc('T'), 'https://schema.org/Thing']);
});

t.test('an attribute type given as an expanded IRI is understood', async (t) => {
  const e = expandEntity({ id: 'urn:x:1', type: 'T', a: { type: NGSI_LD + 'Relationship', object: 'urn:x:2' } }, ctx, { now });
  t.equal((e[dc('a')] as AttrInstance[])[0]!.type, 'Relationship');
});

t.test('a Property explicitly typed keeps a geometry-shaped value as a Property', async (t) => {
  const e = expandEntity({ id: 'urn:x:1', type: 'T', shape: { type: 'Property', value: { type: 'Point', coordinates: [1, 2] } } }, ctx, {
    now,
  });
  t.equal((e[dc('shape')] as AttrInstance[])[0]!.type, 'Property');
  const concise = renderEntity(e, ctx, { format: 'concise' });
  t.strictSame(
    concise.shape,
    { type: 'Property', value: { type: 'Point', coordinates: [1, 2] } },
    'concise keeps the type so it reads back as a Property',
  );
  t.strictSame(expandEntity(concise, ctx, { now }), e);
});

t.test('every invalid input is refused with 400 BadRequestData naming the member', async (t) => {
  for (const c of fixture<{ name: string; body: unknown; detail: string }[]>('invalid-input.json')) {
    const err = ldErrorOf(() => expandEntity(c.body, ctx, { now }));
    t.equal(err.status, 400, c.name);
    t.equal(err.kind, 'BadRequestData', c.name);
    t.ok(err.detail.includes(c.detail), `${c.name}: '${err.detail}' includes '${c.detail}'`);
  }
});

t.test('valid URIs and date-times are accepted', async (t) => {
  for (const id of ['urn:ngsi-ld:X:1', 'http://example.org/a?b=c#d', 'https://x.y/z', 'urn:a', 'tag:x.org,2024:a']) {
    t.equal(expandEntity({ id, type: 'T' }, ctx, { now }).id, id, id);
  }
  for (const observedAt of ['2024-01-01T00:00:00Z', '2024-02-29T23:59:59.123Z', '2024-01-01T00:00:00+02:00', '2024-01-01T00:00:00']) {
    t.doesNotThrow(() => expandEntity({ id: 'urn:x:1', type: 'T', a: { value: 1, observedAt } }, ctx, { now }), observedAt);
  }
});

t.test('valid geometries of every GeoJSON type are accepted', async (t) => {
  const geometries = [
    { type: 'Point', coordinates: [-180, 90, 12] },
    {
      type: 'MultiPoint',
      coordinates: [
        [0, 0],
        [1, 1],
      ],
    },
    {
      type: 'LineString',
      coordinates: [
        [0, 0],
        [1, 1],
      ],
    },
    {
      type: 'MultiLineString',
      coordinates: [
        [
          [0, 0],
          [1, 1],
        ],
        [
          [2, 2],
          [3, 3],
        ],
      ],
    },
    {
      type: 'Polygon',
      coordinates: [
        [
          [0, 0],
          [4, 0],
          [4, 4],
          [0, 0],
        ],
        [
          [1, 1],
          [2, 1],
          [2, 2],
          [1, 1],
        ],
      ],
    },
    {
      type: 'MultiPolygon',
      coordinates: [
        [
          [
            [0, 0],
            [1, 0],
            [1, 1],
            [0, 0],
          ],
        ],
      ],
    },
    {
      type: 'GeometryCollection',
      geometries: [
        { type: 'Point', coordinates: [0, 0] },
        {
          type: 'LineString',
          coordinates: [
            [0, 0],
            [1, 1],
          ],
        },
      ],
    },
  ];
  for (const g of geometries) {
    const e = expandEntity({ id: 'urn:x:1', type: 'T', location: g }, ctx, { now });
    t.strictSame((e[NGSI_LD + 'location'] as AttrInstance[])[0]!.value, g, g.type);
  }
});

function nested(levels: number): unknown {
  let v: unknown = 1;
  for (let i = 0; i < levels; i++) v = i % 2 === 0 ? { x: v } : [v];
  return v;
}

t.test('a value nested 100 levels deep is refused fast, without recursion', async (t) => {
  const start = process.hrtime.bigint();
  const err = ldErrorOf(() => expandEntity({ id: 'urn:x:1', type: 'T', a: { type: 'Property', value: nested(100) } }, ctx, { now }));
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  t.equal(err.status, 400);
  t.equal(err.detail, `a: nested deeper than ${MAX_NESTING} levels`, 'the detail names the attribute');
  t.ok(ms < 50, `refused in ${ms} ms`);
  const deep = ldErrorOf(() => expandEntity({ id: 'urn:x:1', type: 'T', a: { value: nested(100000) } }, ctx, { now }));
  t.equal(deep.status, 400, 'a 100000-level value is refused too, without a stack overflow');
});

t.test('a value just inside the nesting bound is accepted', async (t) => {
  // body (1) → attribute (2) → instance value holder: the value itself starts at level 3.
  const e = expandEntity({ id: 'urn:x:1', type: 'T', a: { type: 'Property', value: nested(MAX_NESTING - 2) } }, ctx, { now });
  t.ok(dc('a') in e);
});

t.test('expandFragment returns id, added types, scope and attributes', async (t) => {
  const f = expandFragment({ id: 'urn:x:1', type: ['T2'], scope: ['/a'], a: 1, '@context': 'ignored' }, ctx, { now });
  t.equal(f.id, 'urn:x:1');
  t.strictSame(f.types, [dc('T2')]);
  t.strictSame(f.scope, ['/a']);
  t.strictSame(Object.keys(f.attrs), [dc('a')]);
});

t.test('expandFragment refuses an id when forbidId, and a malformed id always', async (t) => {
  t.match(ldErrorOf(() => expandFragment({ id: 'urn:x:1', a: 1 }, ctx, { now, forbidId: true })).detail, 'id: an entity id is not allowed');
  t.match(ldErrorOf(() => expandFragment({ id: 'x', a: 1 }, ctx, { now })).detail, 'id: "x" is not a URI');
  t.match(ldErrorOf(() => expandFragment([], ctx, { now })).detail, 'body: an array is not a JSON object');
});

t.test('expandAttributes refuses type and scope, which update cannot change', async (t) => {
  t.strictSame(Object.keys(expandAttributes({ a: 1, b: { object: 'urn:x:2' } }, ctx, { now })), [dc('a'), dc('b')]);
  t.match(ldErrorOf(() => expandAttributes({ type: 'T', a: 1 }, ctx, { now })).detail, 'type: the entity type cannot be changed');
  t.match(ldErrorOf(() => expandAttributes({ scope: '/a', a: 1 }, ctx, { now })).detail, 'scope:');
  t.match(ldErrorOf(() => expandAttributes({ a: { type: 'Property' } }, ctx, { now })).detail, 'a: a Property needs a value member');
});

t.test('expandAttributeFragment accepts a fragment without type or value member', async (t) => {
  const f = expandAttributeFragment({ observedAt: '2024-01-01T00:00:00Z', unit: { value: 'C' } }, ctx, { now, attrIri: dc('temp') });
  t.equal(f.type, undefined);
  t.equal(f.observedAt, '2024-01-01T00:00:00Z');
  t.equal((f[dc('unit')] as AttrInstance).value, 'C');
  t.equal(f.value, undefined);
  const v = expandAttributeFragment({ value: 21 }, ctx, { now, attrIri: dc('temp') });
  t.equal(v.type, 'Property');
  t.equal(v.value, 21);
  const g = expandAttributeFragment({ value: { type: 'Point', coordinates: [0, 0] } }, ctx, { now, attrIri: NGSI_LD + 'location' });
  t.equal(g.type, 'GeoProperty');
});

t.test('expandAttributeFragment still validates what it is given', async (t) => {
  t.match(
    ldErrorOf(() => expandAttributeFragment({ type: 'Relationship', object: 'bad' }, ctx, { now, attrIri: dc('temp') })).detail,
    'temp.object: "bad" is not a URI',
  );
  t.match(
    ldErrorOf(() => expandAttributeFragment({ value: 'x' }, ctx, { now, attrIri: NGSI_LD + 'location' })).detail,
    'location: must be a GeoProperty',
  );
  t.match(ldErrorOf(() => expandAttributeFragment({ observedAt: 'x' }, ctx, { now, attrIri: dc('temp') })).detail, 'temp.observedAt');
  t.match(
    ldErrorOf(() => expandAttributeFragment({ s: { type: 'Property' } }, ctx, { now, attrIri: dc('temp') })).detail,
    'temp.s: a Property needs a value member',
  );
  t.match(ldErrorOf(() => expandAttributeFragment(5, ctx, { now, attrIri: dc('temp') })).detail, 'body: 5 is not a JSON object');
});

t.test('deletion markers: JSON null and urn:ngsi-ld:null become the value member urn:ngsi-ld:null where deletion is meant', async (t) => {
  const f = expandFragment(
    {
      a: null,
      b: 'urn:ngsi-ld:null',
      c: { value: null },
      location: 'urn:ngsi-ld:null',
      r: { object: 'urn:ngsi-ld:null' },
      s: { value: 1, sub: null },
    },
    ctx,
    { now },
  );
  for (const name of ['a', 'b', 'c']) t.equal(f.attrs[dc(name)]![0]!.value, 'urn:ngsi-ld:null', name);
  t.equal(f.attrs[NGSI_LD + 'location']![0]!.value, 'urn:ngsi-ld:null', 'location may be deleted');
  t.equal(f.attrs[dc('r')]![0]!.object, 'urn:ngsi-ld:null');
  t.equal((f.attrs[dc('s')]![0]![dc('sub')] as AttrInstance).value, 'urn:ngsi-ld:null');
  const merge = expandEntity({ id: 'urn:x:1', type: 'T', a: null, l: { languageMap: null } }, ctx, { now, allowNull: true });
  t.equal((merge[dc('a')] as AttrInstance[])[0]!.value, 'urn:ngsi-ld:null');
  t.strictSame((merge[dc('l')] as AttrInstance[])[0]!.languageMap, { '@none': 'urn:ngsi-ld:null' });
  t.match(
    ldErrorOf(() => expandEntity({ id: 'urn:x:1', type: 'T', a: null }, ctx, { now })).detail,
    'a: null is not an attribute value',
    'not on create',
  );
  t.match(
    ldErrorOf(() => expandEntity({ id: 'urn:x:1', type: 'T', location: 'urn:ngsi-ld:null' }, ctx, { now })).detail,
    'location: must be a GeoProperty',
    'not on create',
  );
});

t.test('a merge-patch may leave out the entity type, and cannot delete it', async (t) => {
  t.strictSame(expandEntity({ id: 'urn:x:1', a: 1 }, ctx, { now, allowNull: true }).type, [], 'no type: none to add');
  for (const type of [null, 'urn:ngsi-ld:null']) {
    const err = ldErrorOf(() => expandEntity({ id: 'urn:x:1', type, a: 1 }, ctx, { now, allowNull: true }));
    t.equal(err.status, 400, `${String(type)}: refused`);
    t.equal(err.detail, 'type: the entity type cannot be deleted (null in a merge-patch)');
  }
  t.match(
    ldErrorOf(() => expandEntity({ id: 'urn:x:1', type: [null], a: 1 }, ctx, { now, allowNull: true })).detail,
    'type: null is not a string',
  );
  t.match(
    ldErrorOf(() => expandEntity({ id: 'urn:x:1', a: 1 }, ctx, { now })).detail,
    'type: the entity type is missing',
    'a create needs it',
  );
});

t.test("sub-attributes named like JavaScript's own members (constructor, toString, __proto__) are sub-attributes", async (t) => {
  const body = JSON.parse(
    '{"id":"urn:x:1","type":"T","a":{"type":"Property","value":1,"constructor":{"type":"Property","value":2},"toString":3,"__proto__":{"type":"Property","value":4}}}',
  ) as unknown;
  const a = (expandEntity(body, ctx, { now })[dc('a')] as AttrInstance[])[0]!;
  t.equal((a[dc('constructor')] as AttrInstance).value, 2);
  t.equal((a[dc('toString')] as AttrInstance).value, 3);
  t.equal((a[dc('__proto__')] as AttrInstance).value, 4);
  t.match(
    ldErrorOf(() => expandEntity({ id: 'urn:x:1', type: 'T', a: { type: 'Property', value: 1, object: 'urn:x:2' } }, ctx, { now })).detail,
    'a.object: not a member of a Property',
    'a value member of another type is still refused',
  );
});
