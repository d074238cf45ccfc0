// The store contract test suite (issue 14 item 6): every Store method, every shape of EntityQuery, tenants, document
// collections and the history, run against any store plugin: `storeContractSuite(t, open)` where `open` opens an
// empty store for one subtest (embdb here; docdb, issue 17, calls the same function). Expected answers come from the
// contract's text and ngsild/query's evaluators, never from the store kit's planning.
import type { Test } from 'tap';
import type { BatchItem, EntityQuery, EntitySelectionQuery, Store, WriteEvent } from '../../../../src/store/contract.js';
import type { History, TemporalEntityQuery } from '../../../../src/history/contract.js';
import type { AttrInstance, StoredEntity } from '../../../../src/ngsild/entity/model.js';
import { ENTITY_CORE_MEMBERS } from '../../../../src/ngsild/entity/model.js';
import { appendAttributes, deleteAttribute, mergeEntity, replaceEntity } from '../../../../src/ngsild/entity/merge.js';
import { changeOf } from '../../../../src/ngsild/entity/write-change.js';
import { parseQ } from '../../../../src/ngsild/query/q-parser.js';
import { resolveQ, asWritten } from '../../../../src/ngsild/query/q-resolve.js';
import { compileQ } from '../../../../src/ngsild/query/q-eval.js';
import { parseScopeQ, compileScopeQ } from '../../../../src/ngsild/query/scopeq.js';
import {
  parseTypeExpression,
  resolveTypeExpression,
  compileTypeExpression,
  anyTypeOf,
} from '../../../../src/ngsild/query/type-expression.js';
import { compileIdPattern } from '../../../../src/ngsild/query/id-pattern.js';
import { compileGeoQuery, parseGeoQueryObject } from '../../../../src/ngsild/query/geoq.js';
import { parseOrderBy } from '../../../../src/ngsild/query/order-by.js';

/** What one subtest runs against: an empty store, and the history its writes feed when it has one. */
export interface ContractSubject {
  store: Store;
  history?: History;
}

/** Opens an empty subject for one subtest (closing it at the subtest's teardown). */
export type OpenSubject = (t: Test, opts: { history: boolean }) => Promise<ContractSubject>;

const NS = 'https://example.org/ns/';
const expand = (term: string): string => (term.includes(':') ? term : NS + term);
const T0 = '2026-01-01T00:00:00.000Z';
const TYPES = ['A', 'B', 'C'];
const N = 36;
const TENANTS = ['', 'city', 'city2'];

/** The data every query runs on: entities of one, two or three types, with numbers, names, relationships, places, scopes. */
function entityOf(k: number): StoredEntity {
  const e: StoredEntity = {
    id: `urn:ngsi-ld:${TYPES[k % 3]}:${String(k).padStart(2, '0')}`,
    type: [NS + TYPES[k % 3]!],
    createdAt: T0,
    modifiedAt: T0,
  };
  if (k % 5 === 0) e.type.push(NS + 'D');
  const speed: AttrInstance[] = [{ type: 'Property', value: k, createdAt: T0, modifiedAt: T0 }];
  if (k % 4 === 0) speed.push({ type: 'Property', value: k * 10, datasetId: 'urn:ds:1', createdAt: T0, modifiedAt: T0 });
  e[NS + 'speed'] = speed;
  if (k % 2 === 0) e[NS + 'name'] = [{ type: 'Property', value: `n${(k * 7) % N}`, createdAt: T0, modifiedAt: T0 }];
  if (k % 3 === 1) e[NS + 'owner'] = [{ type: 'Relationship', object: `urn:ngsi-ld:P:${k % 4}`, createdAt: T0, modifiedAt: T0 }];
  if (k % 6 !== 5)
    e[NS + 'location'] = [
      { type: 'GeoProperty', value: { type: 'Point', coordinates: [10 + k * 0.01, 50 + (k % 5) * 0.01] }, createdAt: T0, modifiedAt: T0 },
    ];
  if (k % 7 === 0) e[NS + 'kind'] = [{ type: 'Property', value: NS + 'Sedan', createdAt: T0, modifiedAt: T0 }];
  if (k % 4 === 1) e.scope = ['/city/north'];
  if (k % 4 === 2) e.scope = ['/city/south', '/x'];
  if (k === 3) e.expiresAt = '2030-01-01T00:00:00Z';
  return e;
}
const DATA = Array.from({ length: N }, (_, k) => entityOf(k));

const create = (e: StoredEntity): BatchItem<string> => ({
  id: e.id,
  mutation: (cur) => {
    if (cur !== undefined) throw new Error(`${e.id} exists`);
    return { next: e, result: 'created' };
  },
});

async function load(store: Store, tenant: string, entities: StoredEntity[] = DATA): Promise<void> {
  const outcomes = await store.mutateEntities(tenant, entities.map(create), { createTenant: true });
  if (!outcomes.every((o) => o.ok)) throw new Error('the data could not be loaded');
}

// ---- the expected answer of a query, from the contract's words ----------------------------------------------

function selects(q: EntitySelectionQuery): (e: StoredEntity) => boolean {
  const tests: Array<(e: StoredEntity) => boolean> = [];
  const selector = (s: { ids?: readonly string[]; type?: EntityQuery['type']; idPattern?: string }) => {
    const type = s.type === undefined ? undefined : compileTypeExpression(s.type, asWritten);
    const pattern = s.idPattern === undefined ? undefined : compileIdPattern(s.idPattern);
    return (e: StoredEntity) =>
      (s.ids === undefined || s.ids.includes(e.id)) &&
      (type === undefined || type.matches(e.type)) &&
      (pattern === undefined || pattern(e.id));
  };
  tests.push(selector(q));
  if (q.entities !== undefined && q.entities.length > 0) {
    const each = q.entities.map(selector);
    tests.push((e) => each.some((f) => f(e)));
  }
  if (q.attrs !== undefined) tests.push((e) => q.attrs!.some((a) => e[a] !== undefined));
  if (q.q !== undefined) tests.push(compileQ(q.q, asWritten));
  if (q.scopeQ !== undefined) {
    const s = compileScopeQ(q.scopeQ);
    tests.push((e) => s(e.scope));
  }
  if (q.geo !== undefined) tests.push(compileGeoQuery(q.geo));
  if (q.projection !== undefined) {
    const p = q.projection;
    const kept = (name: string) => (p.pick === undefined || p.pick.includes(name)) && (p.omit === undefined || !p.omit.includes(name));
    tests.push(
      (e) =>
        kept('id') ||
        kept('type') ||
        (kept('scope') && e.scope !== undefined) ||
        (kept('expiresAt') && e.expiresAt !== undefined) ||
        Object.keys(e).some(
          (a) =>
            !ENTITY_CORE_MEMBERS.has(a) &&
            kept(a) &&
            (p.datasetIds === undefined || (e[a] as AttrInstance[]).some((i) => p.datasetIds!.includes(i.datasetId ?? '@none'))),
        ),
    );
  }
  return (e) => tests.every((f) => f(e));
}

const q = (text: string, expandValues?: ReadonlySet<string>) => resolveQ(parseQ(text), expand, expandValues);
const type = (text: string) => resolveTypeExpression(parseTypeExpression(text), expand);
const box = (w: number, s: number, e: number, n: number) =>
  parseGeoQueryObject(
    {
      georel: 'within',
      geometry: 'Polygon',
      coordinates: [
        [
          [w, s],
          [e, s],
          [e, n],
          [w, n],
          [w, s],
        ],
      ],
    },
    expand,
  );

/** Every shape a query can take, each alone and some together. */
const SHAPES: Array<[string, EntitySelectionQuery]> = [
  ['nothing: every entity', {}],
  ['ids', { ids: [DATA[7]!.id, 'urn:ngsi-ld:A:none', DATA[2]!.id, DATA[30]!.id] }],
  ['one type', { type: type('A') }],
  ['types OR', { type: type('B,D') }],
  ['types AND', { type: type('A;D') }],
  ['types AND/OR with parentheses', { type: type('(A;D)|C') }],
  ['a type no entity has', { type: type('Nothing') }],
  ['idPattern', { idPattern: ':0[0-9]$' }],
  ['ids with a type', { ids: [DATA[0]!.id, DATA[1]!.id, DATA[3]!.id], type: type('A') }],
  ['type and idPattern', { type: type('B'), idPattern: '[13579]$' }],
  ['several selectors, all typed', { entities: [{ type: type('A'), idPattern: '1' }, { type: type('C') }] }],
  ['several selectors, one by ids only', { entities: [{ ids: [DATA[4]!.id] }, { type: type('C;D') }] }],
  ['attrs', { attrs: [NS + 'owner', NS + 'kind'] }],
  ['q: number', { q: q('speed>20') }],
  ['q: and/or, datasetId member, relationship', { q: q('(speed<5|speed.datasetId=="urn:ds:1");!owner') }],
  ['q: string range and pattern', { q: q('name=="n1".."n3"|name~=^n2') }],
  ['q: expandValues compares the term expanded', { q: q('kind=="Sedan"', new Set([NS + 'kind'])) }],
  ['q: without expandValues the string as written', { q: q('kind=="Sedan"') }],
  ['scopeQ', { scopeQ: parseScopeQ('/city/#') }],
  ['scopeQ with a wildcard level', { scopeQ: parseScopeQ('/city/+;/x') }],
  ['geo: within a box', { geo: box(10.05, 49.99, 10.2, 50.03) }],
  [
    'geo: near;maxDistance',
    { geo: parseGeoQueryObject({ georel: 'near;maxDistance==2000', geometry: 'Point', coordinates: [10.1, 50.02] }, expand) },
  ],
  [
    'geo: disjoint',
    {
      geo: parseGeoQueryObject(
        {
          georel: 'disjoint',
          geometry: 'Polygon',
          coordinates: [
            [
              [10, 49.9],
              [10.2, 49.9],
              [10.2, 50.1],
              [10, 50.1],
              [10, 49.9],
            ],
          ],
        },
        expand,
      ),
    },
  ],
  ['projection: pick an attribute', { projection: { pick: [NS + 'owner'] } }],
  ['projection: pick scope and expiresAt', { projection: { pick: ['scope', 'expiresAt'] } }],
  [
    'projection: omit id, type and every attribute but one',
    { projection: { omit: ['id', 'type', 'scope', NS + 'speed', NS + 'location', NS + 'owner', NS + 'kind'] } },
  ],
  ['projection: pick with datasetIds', { projection: { pick: [NS + 'speed'], datasetIds: ['urn:ds:1'] } }],
  [
    'together: type, q, geo and scope',
    { type: type('A,B'), q: q('speed>=3'), geo: box(10, 49.99, 10.3, 50.05), scopeQ: parseScopeQ('/city/#') },
  ],
];

/** Shapes that rightly match nothing in the data. */
const EMPTY = new Set(['a type no entity has', 'q: without expandValues the string as written']);

const idsOf = (list: readonly StoredEntity[]): string[] => list.map((e) => e.id);

export function storeContractSuite(t: Test, open: OpenSubject): void {
  t.test('status, flush and a fresh store', async (t) => {
    const { store } = await open(t, { history: false });
    t.equal(typeof store.name, 'string');
    t.match(store.status(), { open: true, name: store.name });
    await store.flush();
    t.equal(await store.hasTenant(''), true, 'the default tenant always exists');
    t.same(await store.listTenants(), []);
    t.same(await store.queryEntities('', { limit: 10, offset: 0, count: true }), { entities: [], count: 0 });
    t.same(await store.typeStats(''), []);
    t.same(await store.attributeStats(''), []);
  });

  t.test('tenants: a creating write registers one, other writes and refused ones do not, data stays apart', async (t) => {
    const { store } = await open(t, { history: false });
    const e = DATA[0]!;
    await store.mutateEntity('t1', e.id, () => ({ next: e, result: undefined }));
    t.equal(await store.hasTenant('t1'), false, 'a write without createTenant registers nothing');
    await t.rejects(
      store.mutateEntity(
        't2',
        e.id,
        () => {
          throw new Error('refused');
        },
        { createTenant: true },
      ),
    );
    t.equal(await store.hasTenant('t2'), false, 'a refused write registers nothing');
    await store.mutateEntity('t2', e.id, () => ({ next: undefined, result: undefined }), { createTenant: true });
    t.equal(await store.hasTenant('t2'), false, 'a write that writes nothing registers nothing');
    await store.mutateEntity('t3', e.id, () => ({ next: e, result: undefined }), { createTenant: true });
    t.equal(await store.hasTenant('t3'), true);
    t.equal(await store.collection('t4', 'things').insert('x', { a: 1 }, { createTenant: true }), true);
    t.equal(await store.hasTenant('t4'), true, 'a document inserted with createTenant registers its tenant');
    await store.addTenant('t5');
    await store.addTenant('t5');
    await store.addTenant('');
    t.same((await store.listTenants()).sort(), ['t3', 't4', 't5'], 'named tenants, each once; the default one is not listed');
    t.equal(await store.getEntity('', e.id), undefined, 'an entity of one tenant is not in another');
    t.equal(await store.getEntity('t3', 'urn:ngsi-ld:A:none'), undefined);
  });

  t.test('entities: get, types, the result of a mutation, a throwing mutation writes nothing, events', async (t) => {
    const { store } = await open(t, { history: false });
    const e = DATA[5]!;
    const events: WriteEvent[] = [];
    t.equal(
      await store.mutateEntity('', e.id, (cur) => ({ next: cur === undefined ? e : undefined, result: 'made' }), {
        createTenant: true,
        events,
      }),
      'made',
    );
    t.same(await store.getEntity('', e.id), e, 'stored as given');
    t.same(await store.getEntityTypes('', e.id), e.type);
    t.equal(await store.getEntityTypes('', 'urn:ngsi-ld:A:none'), undefined);
    const r = appendAttributes(
      e,
      { [NS + 'speed']: [{ type: 'Property', value: 99, createdAt: T0, modifiedAt: T0 }] },
      { noOverwrite: false, now: '2026-02-01T00:00:00.000Z' },
    );
    await store.mutateEntity(
      '',
      e.id,
      (cur) => {
        t.same(cur, e, 'the mutation gets the current state');
        return { next: r.entity, result: undefined, change: changeOf('append', r) };
      },
      { events },
    );
    t.same((await store.getEntity('', e.id))![NS + 'speed'], r.entity[NS + 'speed']);
    await t.rejects(
      store.mutateEntity(
        '',
        e.id,
        () => {
          throw new Error('no');
        },
        { events },
      ),
      /no/,
    );
    t.same(await store.getEntity('', e.id), r.entity, 'unchanged by the mutation that threw');
    await store.mutateEntity('', e.id, () => ({ next: undefined, result: undefined }), { events });
    await store.mutateEntity('', e.id, () => ({ next: null, result: undefined }), { events });
    t.equal(await store.getEntity('', e.id), undefined, 'deleted');
    await store.mutateEntity('', e.id, () => ({ next: null, result: undefined }), { events });
    t.same(
      events.map((v) => [v.id, v.change.kind, v.before === undefined, v.after === undefined]),
      [
        [e.id, 'create', true, false],
        [e.id, 'append', false, false],
        [e.id, 'delete', false, true],
      ],
      'one event per write that changed the entity',
    );
    t.same(events[1]!.change.written, { [NS + 'speed']: ['@none'] }, 'the change the mutation gave');
    t.same(
      events[2]!.change.deleted.sort(),
      Object.keys(r.entity)
        .filter((k) => !ENTITY_CORE_MEMBERS.has(k))
        .sort(),
      'a delete without a change: every attribute',
    );
    t.ok(events[0]!.seq < events[1]!.seq && events[1]!.seq < events[2]!.seq, 'writes one after the other: growing seq');
  });

  t.test('a batch: one outcome per entry in order, a failing entry alone, an id twice sees its first write', async (t) => {
    const { store } = await open(t, { history: false });
    const events: WriteEvent[] = [];
    const [a, b] = [DATA[0]!, DATA[1]!];
    const outcomes = await store.mutateEntities(
      '',
      [
        create(a),
        {
          id: b.id,
          mutation: () => {
            throw new Error('entry refused');
          },
        },
        create(b),
        {
          id: a.id,
          mutation: (cur) => ({
            next: cur === undefined ? undefined : { ...cur, [NS + 'extra']: [{ type: 'Property', value: 1 }] },
            result: 'again',
          }),
        },
      ],
      { createTenant: true, events },
    );
    t.same(
      outcomes.map((o) => (o.ok ? o.result : (o.error as Error).message)),
      ['created', 'entry refused', 'created', 'again'],
    );
    t.ok((await store.getEntity('', a.id))![NS + 'extra'], 'the second write of an id saw the first');
    t.same(
      events.map((v) => v.id),
      [a.id, b.id, a.id],
      'events of the entries written, in order',
    );
    t.same(
      events.map((v) => v.change.kind),
      ['create', 'create', 'update'],
    );
    t.ok(events[0]!.seq <= events[1]!.seq && events[1]!.seq <= events[2]!.seq, 'in one call, seq does not go back');
    t.same(await store.mutateEntities('', []), []);
  });

  for (const tenant of TENANTS) {
    t.test(`every query shape, tenant '${tenant}': selection, count, pages, ids order, orderBy`, async (t) => {
      const { store } = await open(t, { history: false });
      for (const other of TENANTS)
        if (other !== tenant)
          await load(
            store,
            other,
            DATA.slice(0, 6).map((e) => ({ ...e, id: e.id + ':other' })),
          );
      await load(store, tenant);
      for (const [name, sel] of SHAPES) {
        const expected = DATA.filter(selects(sel));
        if (tenant === '')
          t.ok(
            (expected.length > 0 && expected.length < N) || name === 'nothing: every entity' || EMPTY.has(name),
            `${name}: ${expected.length} of ${N} match`,
          );
        const all = await store.queryEntities(tenant, { ...sel, limit: 1000, offset: 0, count: true });
        t.equal(all.count, expected.length, `${name}: count`);
        t.same(idsOf(all.entities).sort(), idsOf(expected).sort(), `${name}: the entities that match`);
        for (const e of all.entities)
          t.same(
            e,
            DATA.find((d) => d.id === e.id),
            `${name}: whole entities`,
          );
        if (sel.ids !== undefined)
          t.same(
            idsOf(all.entities),
            sel.ids.filter((id) => expected.some((e) => e.id === id)),
            `${name}: in the order of the ids`,
          );
        const pages: StoredEntity[] = [];
        for (let offset = 0; offset < expected.length + 7; offset += 7) {
          const page = await store.queryEntities(tenant, { ...sel, limit: 7, offset, count: false });
          t.equal(page.count, undefined, `${name}: no count unless asked`);
          pages.push(...page.entities);
        }
        t.same(idsOf(pages), idsOf(all.entities), `${name}: pages cut one stable order`);
        t.same(
          await store.queryEntities(tenant, { ...sel, limit: 0, offset: 0, count: true }),
          { entities: [], count: expected.length },
          `${name}: limit 0`,
        );
        const order = parseOrderBy('name;desc,speed', expand);
        const sorted = [...expected].sort(
          (x, y) => order.compare(order.keyOf(x), order.keyOf(y)) || (x.id < y.id ? -1 : x.id > y.id ? 1 : 0),
        );
        const ordered = await store.queryEntities(tenant, { ...sel, orderBy: order, limit: 5, offset: 2, count: true });
        t.same(idsOf(ordered.entities), idsOf(sorted.slice(2, 7)), `${name}: orderBy sorts before paging`);
        t.equal(ordered.count, expected.length, `${name}: orderBy count`);
      }
    });
  }

  t.test('discovery counts follow every write', async (t) => {
    const { store } = await open(t, { history: false });
    await load(store, 'city');
    const check = async (entities: StoredEntity[], when: string): Promise<void> => {
      const types = new Map<string, number>();
      const attrs = new Map<string, { count: number; byType: Map<string, number> }>();
      for (const e of entities) {
        for (const ty of e.type) types.set(ty, (types.get(ty) ?? 0) + 1);
        for (const a of Object.keys(e)) {
          if (ENTITY_CORE_MEMBERS.has(a)) continue;
          const s = attrs.get(a) ?? { count: 0, byType: new Map() };
          s.count++;
          for (const ty of e.type) s.byType.set(ty, (s.byType.get(ty) ?? 0) + 1);
          attrs.set(a, s);
        }
      }
      const typeStats = await store.typeStats('city');
      t.same(new Map(typeStats.map((s) => [s.typeIri, s.count])), types, `${when}: entities per type`);
      const a = typeStats.find((s) => s.typeIri === NS + 'A')!;
      t.equal(
        a.attrs[NS + 'speed']?.n,
        entities.filter((e) => e.type.includes(NS + 'A') && e[NS + 'speed'] !== undefined).length,
        `${when}: attributes per type`,
      );
      t.same(a.attrs[NS + 'speed']?.t, { Property: a.attrs[NS + 'speed']!.n }, `${when}: attribute types per type`);
      t.same(
        (await store.typeStats('city', NS + 'B')).map((s) => s.count),
        types.has(NS + 'B') ? [types.get(NS + 'B')] : [],
        `${when}: one type`,
      );
      t.same(await store.typeStats('city', NS + 'Nothing'), []);
      const attrStats = await store.attributeStats('city');
      t.same(
        new Map(attrStats.map((s) => [s.attrIri, s.count])),
        new Map([...attrs].map(([k, v]) => [k, v.count])),
        `${when}: entities per attribute`,
      );
      const owner = (await store.attributeStats('city', NS + 'owner'))[0];
      t.same(
        owner === undefined ? undefined : new Map(Object.entries(owner.typeIris)),
        attrs.get(NS + 'owner')?.byType,
        `${when}: one attribute, by type`,
      );
      t.same(owner?.attrTypes, attrs.has(NS + 'owner') ? { Relationship: attrs.get(NS + 'owner')!.count } : undefined);
      t.same(await store.typeStats(''), [], 'another tenant counts nothing');
    };
    await check(DATA, 'loaded');
    const kept = DATA.filter((_, k) => k % 4 !== 3)
      .map((e) => (e.id.endsWith('1') ? { ...e, type: [NS + 'B'], [NS + 'owner']: undefined } : e))
      .map((e) => JSON.parse(JSON.stringify(e)) as StoredEntity);
    await store.mutateEntities(
      'city',
      DATA.map((e) => ({ id: e.id, mutation: () => ({ next: kept.find((k) => k.id === e.id) ?? null, result: undefined }) })),
    );
    await check(kept, 'after deletes, retypes and a removed attribute');
  });

  t.test('document collections: insert, put, get, delete, list in insertion order, apart by tenant and name', async (t) => {
    const { store } = await open(t, { history: false });
    const c = store.collection('t', 'things');
    for (let i = 0; i < 12; i++) t.equal(await c.insert(`urn:x:${i}`, { i }), true);
    t.equal(await c.insert('urn:x:3', { i: 'again' }), false, 'insert of an existing id is refused');
    t.same(await c.get('urn:x:3'), { i: 3 });
    await c.put('urn:x:3', { i: 'replaced' });
    t.same(await c.get('urn:x:3'), { i: 'replaced' });
    await c.put('urn:x:new', { i: 'put' });
    t.equal(await c.delete('urn:x:5'), true);
    t.equal(await c.delete('urn:x:5'), false);
    t.equal(await c.get('urn:x:5'), undefined);
    const ids = (await c.list()).map((d) => d.id);
    t.same(
      ids,
      [0, 1, 2, 3, 4, 6, 7, 8, 9, 10, 11].map((i) => `urn:x:${i}`).concat('urn:x:new'),
      'insertion order; a replaced one keeps its place',
    );
    t.same(
      (await c.list(2, 3)).map((d) => d.id),
      ids.slice(2, 5),
      'offset and limit',
    );
    t.same(await store.collection('t', 'other').list(), [], 'another name');
    t.same(await store.collection('', 'things').list(), [], 'another tenant');
    t.equal(await store.collection('t2', 'things').get('urn:x:1'), undefined);
  });

  t.test('document collections: a generation, where the store gives one, moves with every document change', async (t) => {
    const { store } = await open(t, { history: false });
    const c = store.collection('t', 'generations');
    if (c.generation === undefined) {
      t.pass('this store gives none: readers list each time');
      return;
    }
    const seen = [c.generation()];
    const moved = (what: string): void => {
      const g = c.generation!();
      t.notOk(seen.includes(g), `${what} moves it`);
      seen.push(g);
    };
    await c.insert('urn:x:1', { n: 1 });
    moved('an insert');
    t.equal(await c.insert('urn:x:1', { n: 2 }), false);
    t.equal(c.generation(), seen.at(-1), 'a refused insert leaves it');
    await c.put('urn:x:1', { n: 3 });
    moved('a put that replaces');
    await c.put('urn:x:2', { n: 1 });
    moved('a put that creates');
    await c.bump('urn:x:1', 'counters', { inc: { n: 1 } });
    t.equal(c.generation(), seen.at(-1), 'a bump leaves it (counts are not what readers derive)');
    await c.delete('urn:x:1');
    moved('a delete');
    t.equal(await c.delete('urn:x:1'), false);
    t.equal(c.generation(), seen.at(-1), 'a delete of nothing leaves it');
    t.not(store.collection('t', 'other').generation!(), undefined, 'another collection has its own');
  });

  t.test('document collections: bump counts atomically, apart from put, gone with delete', async (t) => {
    const { store } = await open(t, { history: false });
    const c = store.collection('t', 'counted');
    t.equal(await c.bump('urn:x:none', 'counters', { inc: { n: 1 } }), false, 'no such document');
    t.equal(await c.get('urn:x:none'), undefined, 'and none made');
    t.equal(await c.insert('urn:x:1', { name: 'one', counters: { note: 'own' } }), true);
    const N = 40;
    const done = await Promise.all(
      Array.from({ length: N }, (_, i) => c.bump('urn:x:1', 'counters', { inc: { n: 1, odd: i % 2 }, set: { last: `at${i}` } })),
    );
    t.ok(
      done.every((d) => d),
      'every bump found the document',
    );
    const got = (await c.get('urn:x:1')) as { name: string; counters: Record<string, unknown> };
    t.equal(got.counters.n, N, 'concurrent increments: none lost');
    t.equal(got.counters.odd, N / 2);
    t.match(got.counters.last, /^at\d+$/);
    t.equal(got.counters.note, 'own', "the document's other members of it stay");
    // A put of the document as read before a count does not take the count back.
    const before = await c.get('urn:x:1');
    await c.bump('urn:x:1', 'counters', { inc: { n: 1 } });
    await c.put('urn:x:1', { ...before, name: 'renamed' });
    const after = (await c.get('urn:x:1')) as { name: string; counters: Record<string, unknown> };
    t.equal(after.name, 'renamed');
    t.equal(after.counters.n, N + 1, 'the put kept the count made after the read');
    t.same(
      (await c.list()).map((d) => (d.doc as { counters: { n: number } }).counters.n),
      [N + 1],
      'list shows the counts too',
    );
    t.equal(await c.delete('urn:x:1'), true);
    t.equal(await c.insert('urn:x:1', { name: 'new' }), true);
    t.same(await c.get('urn:x:1'), { name: 'new' }, 'a delete removed the counts with the document');
  });

  t.test("the history: fed by the store's writes and by the temporal API, and every read", async (t) => {
    const { store, history } = await open(t, { history: true });
    if (history === undefined) {
      t.pass('this subject keeps no history');
      return;
    }
    const events: WriteEvent[] = [];
    const feed = async (tenant: string): Promise<void> => {
      if (history.record !== undefined && events.length > 0) await history.record(tenant, events.splice(0));
      events.length = 0;
    };
    const tenant = 'h';
    const at = (m: number) => `2026-03-01T00:${String(m).padStart(2, '0')}:00.000Z`;
    const base = DATA.slice(0, 12);
    await store.mutateEntities(tenant, base.map(create), { createTenant: true, events });
    await feed(tenant);
    const e = base[4]!;
    // An update, a replace, a merge that deletes an instance, an attribute delete and an entity delete.
    const upd = appendAttributes(
      e,
      { [NS + 'speed']: [{ type: 'Property', value: 400, observedAt: at(30), createdAt: at(1), modifiedAt: at(1) }] },
      { noOverwrite: false, now: at(1) },
    );
    await store.mutateEntity(tenant, e.id, () => ({ next: upd.entity, result: undefined, change: changeOf('append', upd) }), { events });
    const rep = replaceEntity(
      upd.entity,
      { ...entityOf(4), modifiedAt: at(2), [NS + 'speed']: [{ type: 'Property', value: 401, createdAt: at(2), modifiedAt: at(2) }] },
      at(2),
    );
    await store.mutateEntity(tenant, e.id, () => ({ next: rep.entity, result: undefined, change: changeOf('replace', rep) }), { events });
    const b = base[8]!;
    const mer = mergeEntity(
      b,
      {
        id: b.id,
        type: [],
        createdAt: at(3),
        modifiedAt: at(3),
        [NS + 'speed']: [{ type: 'Property', value: 'urn:ngsi-ld:null', datasetId: 'urn:ds:1' }],
      },
      at(3),
    );
    await store.mutateEntity(tenant, b.id, () => ({ next: mer.entity, result: undefined, change: changeOf('merge', mer) }), { events });
    const del = deleteAttribute(base[2]!, NS + 'name', { now: at(4) });
    await store.mutateEntity(tenant, base[2]!.id, () => ({ next: del.entity, result: undefined, change: changeOf('update', del) }), {
      events,
    });
    await store.mutateEntity(tenant, base[1]!.id, () => ({ next: null, result: undefined }), { events });
    await feed(tenant);

    t.match(await history.getTemporalEntity(tenant, e.id), { id: e.id, type: e.type, createdAt: T0 });
    t.equal(await history.getTemporalEntity('', e.id), undefined, 'another tenant');
    t.same(
      (await history.entityEvents(tenant, e.id)).map((v) => v.kind),
      ['created', 'replaced'],
    );
    t.same(
      (await history.entityEvents(tenant, base[1]!.id)).map((v) => v.kind),
      ['created', 'deleted'],
    );
    t.ok((await history.getTemporalEntity(tenant, base[1]!.id))?.deletedAt, 'a deleted entity keeps its temporal entity');
    const deflt = new Set(['@none']);
    const speed = await history.instances(tenant, e.id, { attrs: [NS + 'speed'], datasetIds: deflt, limit: 100 });
    t.same(
      speed.attrs[NS + 'speed']!.map((i) => i.value),
      [4, 400, 401],
      'created, updated, replaced',
    );
    t.same(new Set(speed.attrs[NS + 'speed']!.map((i) => i.instanceId)).size, 3, 'each instance its own id');
    const ds = await history.instances(tenant, b.id, { attrs: [NS + 'speed'], datasetIds: new Set(['urn:ds:1']), limit: 100 });
    t.same(
      ds.attrs[NS + 'speed']!.map((i) => [i.value, i.deletedAt !== undefined]),
      [
        [80, false],
        ['urn:ngsi-ld:null', true],
      ],
      'a datasetId instance deleted: a tombstone',
    );
    t.same(
      (await history.instances(tenant, base[2]!.id, { attrs: [NS + 'name'], limit: 10 })).attrs[NS + 'name']!.map((i) => i.value),
      [(base[2]![NS + 'name'] as AttrInstance[])[0]!.value, 'urn:ngsi-ld:null'],
      'an attribute deleted: a tombstone',
    );
    t.same(
      (await history.instances(tenant, e.id, { attrs: [NS + 'speed'], datasetIds: deflt, lastN: 1, limit: 10 })).attrs[NS + 'speed']!.map(
        (i) => i.value,
      ),
      [401],
      'lastN',
    );
    const capped = await history.instances(tenant, e.id, { attrs: [NS + 'speed'], datasetIds: deflt, limit: 2 });
    t.same([capped.attrs[NS + 'speed']!.length, capped.truncated], [2, [NS + 'speed']], 'limit truncates');
    const window = await history.instances(tenant, e.id, {
      attrs: [NS + 'speed'],
      datasetIds: deflt,
      window: { timeproperty: 'createdAt', from: Date.parse(at(1)), to: Date.parse(at(2)) },
      limit: 10,
    });
    t.same(
      window.attrs[NS + 'speed']!.map((i) => i.value),
      [400],
      'a createdAt window: from inclusive, to exclusive',
    );
    const observed = await history.instances(tenant, e.id, {
      attrs: [NS + 'speed'],
      window: { timeproperty: 'observedAt', from: Date.parse(at(29)) },
      limit: 10,
    });
    t.same(
      observed.attrs[NS + 'speed']!.map((i) => i.value),
      [400],
      'an observedAt window',
    );
    const deleted = await history.instances(tenant, b.id, { window: { timeproperty: 'deletedAt', from: Date.parse(at(0)) }, limit: 10 });
    t.same(
      Object.values(deleted.attrs)
        .flat()
        .map((i) => i.value),
      ['urn:ngsi-ld:null'],
      'a deletedAt window: tombstones',
    );
    t.same(
      Object.keys((await history.instances(tenant, e.id, { limit: 10 })).attrs).sort(),
      Object.keys(rep.entity)
        .filter((k) => !ENTITY_CORE_MEMBERS.has(k))
        .sort(),
      'every attribute',
    );

    const tq = async (query: Omit<TemporalEntityQuery, 'limit' | 'offset' | 'count'>): Promise<string[]> =>
      (await history.queryTemporalEntities(tenant, { ...query, limit: 100, offset: 0, count: false })).entities.map((r) => r.id).sort();
    const allIds = base.map((x) => x.id).sort();
    t.same(await tq({}), allIds, 'every temporal entity, deleted ones too');
    t.same(
      await tq({ type: type('A') }),
      base
        .filter((x) => x.type.includes(NS + 'A'))
        .map((x) => x.id)
        .sort(),
    );
    t.same(
      await tq({ type: type('A;D') }),
      base
        .filter((x) => x.type.includes(NS + 'A') && x.type.includes(NS + 'D'))
        .map((x) => x.id)
        .sort(),
    );
    t.same(await tq({ ids: [base[3]!.id, 'urn:none'], type: anyTypeOf([NS + 'A']) }), [base[3]!.id]);
    t.same(
      await tq({ idPattern: '0[0-4]$' }),
      allIds.filter((id) => /0[0-4]$/.test(id)),
    );
    t.same(
      await tq({ entities: [{ type: type('B') }, { ids: [base[0]!.id] }] }),
      base
        .filter((x, k) => x.type.includes(NS + 'B') || k === 0)
        .map((x) => x.id)
        .sort(),
    );
    t.same(
      await tq({ scopeQ: parseScopeQ('/city/north') }),
      base
        .filter((x) => x.scope?.includes('/city/north'))
        .map((x) => x.id)
        .sort(),
    );
    t.same(
      await tq({ attrs: [NS + 'owner'] }),
      base
        .filter((x) => x[NS + 'owner'] !== undefined)
        .map((x) => x.id)
        .sort(),
    );
    const counted = await history.queryTemporalEntities(tenant, { type: type('B,C'), limit: 2, offset: 1, count: true });
    t.same(
      [counted.entities.length, counted.count],
      [2, base.filter((x) => x.type.includes(NS + 'B') || x.type.includes(NS + 'C')).length],
      'paging and count',
    );
    const walked: string[] = [];
    for (let afterId: string | undefined; ;) {
      const page = await history.queryTemporalEntities(tenant, { afterId, limit: 5, offset: 0, count: false });
      if (page.entities.length === 0) break;
      walked.push(...page.entities.map((r) => r.id));
      afterId = walked[walked.length - 1];
    }
    t.same(walked.slice().sort(), allIds, 'keyset pages (afterId) walk every temporal entity once');

    // The temporal API's writes.
    const id = 'urn:ngsi-ld:T:1';
    t.equal(
      await history.addInstances(
        'ht',
        { id, type: [NS + 'T'] },
        {
          [NS + 'p']: [
            { type: 'Property', value: 1 },
            { type: 'Property', value: 2, datasetId: 'urn:ds:x' },
          ],
        },
        at(10),
        { createTenant: true },
      ),
      true,
      'created',
    );
    t.equal(
      await history.addInstances('ht', { id, type: [NS + 'U'] }, { [NS + 'p']: [{ type: 'Property', value: 3 }] }, at(11)),
      false,
      'appended',
    );
    t.same((await history.getTemporalEntity('ht', id))?.type, [NS + 'T', NS + 'U'], 'types added');
    const ps = (await history.instances('ht', id, { limit: 10 })).attrs[NS + 'p']!;
    t.same(
      ps.map((i) => i.value),
      [1, 2, 3],
    );
    t.equal(await history.updateInstance('ht', id, NS + 'p', ps[0]!.instanceId, { type: 'Property', value: 10 }, at(12)), 'updated');
    t.equal(
      await history.updateInstance('ht', id, NS + 'p', ps[0]!.instanceId, { type: 'Relationship', object: 'urn:x' }, at(12)),
      'typeMismatch',
    );
    t.equal(await history.updateInstance('ht', id, NS + 'p', 'urn:ngsi-ld:none', { type: 'Property', value: 1 }, at(12)), 'notFound');
    const updated = (await history.instances('ht', id, { limit: 10 })).attrs[NS + 'p']!.find((i) => i.instanceId === ps[0]!.instanceId)!;
    t.same([updated.value, updated.createdAt], [10, ps[0]!.createdAt], 'members replaced, instanceId and createdAt kept');
    t.equal(await history.deleteInstance('ht', id, NS + 'p', ps[2]!.instanceId), true);
    t.equal(await history.deleteInstance('ht', id, NS + 'p', ps[2]!.instanceId), false);
    t.equal(await history.deleteAttribute('ht', id, NS + 'p', { datasetId: 'urn:ds:x', deleteAll: false }), true, 'one datasetId');
    t.same(
      (await history.instances('ht', id, { limit: 10 })).attrs[NS + 'p']!.map((i) => i.value),
      [10],
    );
    t.equal(await history.deleteAttribute('ht', id, NS + 'p', { deleteAll: true }), true);
    t.equal(await history.deleteAttribute('ht', id, NS + 'p', { deleteAll: true }), false, 'nothing left');
    t.equal(await history.deleteTemporalEntity('ht', id), true);
    t.equal(await history.getTemporalEntity('ht', id), undefined);
    t.equal(await history.deleteTemporalEntity('ht', id), false);
    if (history === store.history) t.equal(await store.hasTenant('ht'), true, 'a history inside the store registers the tenant');
  });
}
