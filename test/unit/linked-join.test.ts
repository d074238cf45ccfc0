// The join core of linked entity retrieval (CIM 009 v1.8.1 §4.5.23), without a request: the linked entities come from
// a reader function (tenant, ids → entities), read once each, one read per hop (flat) or per entity (inline), never
// more than MAX_JOINED per JoinSource; joinLevel, containedBy and the chain end the join; rendering follows the
// options (format, attrs, pick with braces).
import t from 'tap';
import type { StoredEntity } from '../../src/ngsild/entity/model.js';
import {
  JoinSource,
  MAX_JOINED,
  flatLinked,
  renderInline,
  joinedFeatures,
  type JoinOptions,
  type JoinRenderOptions,
  type ReadEntities,
} from '../../src/ngsild/entity/linked-join.js';
import { parseProjection } from '../../src/ngsild/query/projection.js';
import { mapContext, DEFAULT_VOCAB } from './helpers/map-context.js';

const ctx = mapContext();
const T0 = '2025-01-01T00:00:00Z';
const iri = (term: string): string => DEFAULT_VOCAB + term;

function entity(id: string, type: string, attrs: Record<string, unknown> = {}): StoredEntity {
  const e: StoredEntity = { id, type: [iri(type)], createdAt: T0, modifiedAt: T0 };
  for (const [name, value] of Object.entries(attrs)) {
    e[iri(name)] = [
      typeof value === 'string' && value.startsWith('urn:')
        ? { type: 'Relationship', object: value }
        : Array.isArray(value)
          ? { type: 'Relationship', object: value }
          : { type: 'Property', value },
    ];
  }
  return e;
}

/** A store of entities by tenant, recording each read (tenant and ids). */
function store(entities: StoredEntity[], tenant = ''): { read: ReadEntities; reads: Array<{ tenant: string; ids: string[] }> } {
  const byId = new Map(entities.map((e) => [e.id, e]));
  const reads: Array<{ tenant: string; ids: string[] }> = [];
  return {
    reads,
    read: async (asked, ids) => {
      reads.push({ tenant: asked, ids: [...ids] });
      return asked === tenant ? ids.flatMap((id) => byId.get(id) ?? []) : [];
    },
  };
}

const A = 'urn:ngsi-ld:Node:A';
const B = 'urn:ngsi-ld:Node:B';
const C = 'urn:ngsi-ld:Node:C';
const D = 'urn:ngsi-ld:Node:D';
const normalized: JoinRenderOptions = { format: 'normalized' };
const join = (mode: 'flat' | 'inline', level = 1, containedBy: string[] = []): JoinOptions => ({
  mode,
  level,
  containedBy: new Set(containedBy),
});

// A → B, A → C; B → D; C → A (a cycle back to the primary); D → B (a cycle among linked entities).
const a = entity(A, 'Node', { left: B, right: C, n: 1 });
const b = entity(B, 'Node', { left: D, n: 2 });
const c = entity(C, 'Node', { left: A, n: 3 });
const d = entity(D, 'Node', { left: B, n: 4 });

t.test('flat: the linked entities breadth first, each once, one read per hop, from the tenant given', async (t) => {
  const s = store([a, b, c, d], 'city');
  const one = await flatLinked(new JoinSource('city', s.read, ctx), [a], join('flat', 1), normalized);
  t.same(
    one.map((e) => e.id),
    [B, C],
  );
  t.same(s.reads, [{ tenant: 'city', ids: [B, C] }]);
  s.reads.length = 0;
  const deep = await flatLinked(new JoinSource('city', s.read, ctx), [a], join('flat', 5), normalized);
  t.same(
    deep.map((e) => e.id),
    [B, C, D],
    'D once; the cycles C→A and D→B add nothing',
  );
  t.same(
    s.reads.map((r) => r.ids),
    [[B, C], [D]],
    'one read per hop; the hop that meets only known ids reads nothing',
  );
  t.same(deep[0], { id: B, type: 'Node', left: { type: 'Relationship', object: D }, n: { type: 'Property', value: 2 } });
});

t.test('a missing or unreadable entity is left out and read once; containedBy is never joined nor read', async (t) => {
  const s = store([a, c]);
  const src = new JoinSource('', s.read, ctx);
  t.same(
    (await flatLinked(src, [a], join('flat', 2), normalized)).map((e) => e.id),
    [C],
  );
  t.same(
    s.reads.map((r) => r.ids),
    [[B, C]],
    'B missing: not asked again',
  );
  const s2 = store([a, b, c, d]);
  t.same(
    (await flatLinked(new JoinSource('', s2.read, ctx), [a], join('flat', 3, [B]), normalized)).map((e) => e.id),
    [C],
  );
  t.notOk(
    s2.reads.some((r) => r.ids.includes(B)),
    'B was not read',
  );
});

t.test('inline: targets under `entity`, joinLevel deep, never back up the chain, one read per entity with links', async (t) => {
  const s = store([a, b, c, d]);
  const out = (await renderInline(new JoinSource('', s.read, ctx), a, join('inline', 3), normalized)) as any;
  t.equal(out.left.entity.id, B);
  t.equal(out.left.entity.left.entity.id, D);
  t.same(out.left.entity.left.entity.left, { type: 'Relationship', object: B }, 'D → B: B is up the chain');
  t.same(out.right.entity.left, { type: 'Relationship', object: A }, 'C → A: A is the primary');
  t.same(
    s.reads.map((r) => r.ids),
    [[B, C], [D]],
    "A's targets in one read, then B's; C's and D's only go up the chain",
  );
  const one = (await renderInline(new JoinSource('', store([a, b, c, d]).read, ctx), a, join('inline', 1), normalized)) as any;
  t.notOk('entity' in one.left.entity.left, 'one hop');
});

t.test('inline keyValues replaces the reference by the entity', async (t) => {
  const out = await renderInline(new JoinSource('', store([a, b, c]).read, ctx), a, join('inline'), { format: 'keyValues' });
  t.same(out, { id: A, type: 'Node', left: { id: B, type: 'Node', left: D, n: 2 }, right: { id: C, type: 'Node', left: A, n: 3 }, n: 1 });
});

t.test("attrs select the primaries' Relationships only; pick braces project the linked entities", async (t) => {
  const s = store([a, b, c, d]);
  const attrs = await flatLinked(new JoinSource('', s.read, ctx), [a], join('flat'), {
    format: 'normalized',
    attrs: new Set([iri('right')]),
  });
  t.same(
    attrs,
    [{ id: C, type: 'Node', left: { type: 'Relationship', object: A }, n: { type: 'Property', value: 3 } }],
    'only `right` followed, C shown whole',
  );
  const pick = parseProjection('id,left{n}', 'pick');
  const opts: JoinRenderOptions = { format: 'normalized', pick: pick.names, projection: { pick } };
  const out = await renderInline(new JoinSource('', s.read, ctx), a, join('inline'), opts);
  t.same(out, { id: A, left: { type: 'Relationship', object: B, entity: { n: { type: 'Property', value: 2 } } } });
});

t.test('one JoinSource reads an entity once for several primaries and at most MAX_JOINED in all', async (t) => {
  const many = Array.from({ length: MAX_JOINED + 5 }, (_, i) => entity(`urn:ngsi-ld:Leaf:${i}`, 'Leaf'));
  const hub = entity('urn:ngsi-ld:Hub:1', 'Hub', { leaves: many.map((e) => e.id) });
  const s = store([hub, ...many, a, b, c]);
  const src = new JoinSource('', s.read, ctx);
  const joined = await flatLinked(src, [hub], join('flat'), normalized);
  t.equal(joined.length, MAX_JOINED, 'the rest stay references');
  t.equal(
    s.reads.reduce((n, r) => n + r.ids.length, 0),
    MAX_JOINED,
  );
  const inline = (await renderInline(src, a, join('inline'), normalized)) as any;
  t.notOk('entity' in inline.left, 'the source has used its bound: nothing more is read');
  const s3 = store([a, b, c]);
  const sharedSrc = new JoinSource('', s3.read, ctx);
  await renderInline(sharedSrc, a, join('inline'), normalized);
  await renderInline(sharedSrc, entity('urn:ngsi-ld:Node:E', 'Node', { left: B }), join('inline'), normalized);
  t.same(
    s3.reads.map((r) => r.ids),
    [[B, C]],
    'B was read for the first primary already',
  );
});

t.test('GeoJSON: flat adds Features after the primaries; inline nests entities in the properties', async (t) => {
  const flat = await joinedFeatures(new JoinSource('', store([a, b, c]).read, ctx), [a], join('flat'), normalized);
  t.same(
    flat.map((f) => f.id),
    [A, B, C],
  );
  const inline = await joinedFeatures(new JoinSource('', store([a, b, c]).read, ctx), [a], join('inline'), normalized);
  t.equal(inline.length, 1);
  t.equal((inline[0]!.properties.left as any).entity.id, B);
});
