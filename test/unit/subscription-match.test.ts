// Matching of entity changes against compiled subscriptions (CIM 009 v1.8 §5.8.6): the index finds only the
// subscriptions of the entity's types and ids, and the full test applies triggers, watched attributes, filters,
// isActive, expiresAt and datasetId; showChanges and deleted attributes shape the notified entity.
import t from 'tap';
import { compileSubscription, type CompiledSubscription } from '../../src/ngsild/subscription/compile.js';
import { SubscriptionIndex, matchChange, changedAttrs } from '../../src/ngsild/subscription/match.js';
import { buildNotification } from '../../src/ngsild/subscription/payload.js';
import type { SubscriptionBody, SubscriptionDoc } from '../../src/ngsild/subscription/model.js';
import type { StoredEntity } from '../../src/ngsild/entity/model.js';
import { mapContext, DEFAULT_VOCAB } from './helpers/map-context.js';
import { changeBetween, type EntityWrite } from '../../src/ngsild/entity/write-change.js';

const ctx = mapContext();
const V = (term: string): string => DEFAULT_VOCAB + term;
const NOW = Date.parse('2025-06-01T00:00:00Z');

function compiled(body: Partial<SubscriptionBody>, tenant = ''): CompiledSubscription {
  const doc: SubscriptionDoc = {
    body: {
      id: `urn:ngsi-ld:Subscription:${Math.random()}`,
      type: 'Subscription',
      notification: { endpoint: { uri: 'http://r/n' } },
      ...body,
    },
    context: null,
    createdAt: '',
    modifiedAt: '',
  };
  return compileSubscription(tenant, doc, ctx, ctx);
}

const car = (attrs: Record<string, unknown>, id = 'urn:ngsi-ld:Car:1', type = 'Car'): StoredEntity => ({
  id,
  type: [V(type)],
  createdAt: '2025-01-01T00:00:00Z',
  modifiedAt: '2025-01-01T00:00:00Z',
  ...attrs,
});
const p = (value: unknown, extra: Record<string, unknown> = {}): unknown[] => [{ type: 'Property', value, ...extra }];
/** A write between two states, its change found by comparing them (as a store does for a mutation that gives none). */
const w = (before: StoredEntity | undefined, after: StoredEntity | undefined): EntityWrite => ({
  before,
  after,
  change: changeBetween(before, after),
});

t.test('holds: a tenant with a subscription, not one without nor one whose last subscription went', async (t) => {
  const index = new SubscriptionIndex();
  t.equal(index.holds(''), false, 'an empty index');
  const a = compiled({ entities: [{ type: 'Car' }] }, 'a');
  const b = compiled({ entities: [{ type: 'Car' }] }, 'a');
  index.upsert(a);
  index.upsert(b);
  t.equal(index.holds('a'), true);
  t.equal(index.holds(''), false, 'another tenant');
  index.remove('a', a.id);
  t.equal(index.holds('a'), true, 'one left');
  index.remove('a', b.id);
  t.equal(index.holds('a'), false, 'none left (the tenant stays in the index)');
  t.same(index.candidates('a', 'urn:ngsi-ld:Car:1', undefined, car({})), [], 'and candidates agree');
});

t.test('the index gives a change only the subscriptions of its types, ids and wildcards', async (t) => {
  const index = new SubscriptionIndex();
  const onCar = compiled({ entities: [{ type: 'Car' }] });
  const onBus = compiled({ entities: [{ type: 'Bus' }] });
  const byId = compiled({ entities: [{ type: '*', id: 'urn:ngsi-ld:Car:1' }] });
  const anyType = compiled({ entities: [{ type: '*' }] });
  const watchedOnly = compiled({ watchedAttributes: ['speed'] });
  const otherTenant = compiled({ entities: [{ type: 'Car' }] }, 'other');
  for (let i = 0; i < 1000; i++) index.upsert(compiled({ entities: [{ type: `Other${i}` }] }));
  for (const s of [onCar, onBus, byId, anyType, watchedOnly, otherTenant]) index.upsert(s);
  const found = index.candidates('', 'urn:ngsi-ld:Car:1', undefined, car({}));
  t.same(new Set(found), new Set([onCar, byId, anyType, watchedOnly]));
  t.same(
    new Set(index.candidates('', 'urn:ngsi-ld:Car:2', undefined, car({}, 'urn:ngsi-ld:Car:2'))),
    new Set([onCar, anyType, watchedOnly]),
  );
  const retyped = index.candidates('', 'urn:ngsi-ld:Car:2', car({}, 'urn:ngsi-ld:Car:2'), car({}, 'urn:ngsi-ld:Car:2', 'Bus'));
  t.ok(retyped.includes(onCar) && retyped.includes(onBus), 'a change of type concerns the old and the new type');
  index.remove('', onCar.id);
  t.notOk(
    index.candidates('', 'urn:ngsi-ld:Car:2', undefined, car({}, 'urn:ngsi-ld:Car:2')).includes(onCar),
    'a removed subscription is gone',
  );
  t.equal(index.candidates('nobody', 'urn:ngsi-ld:Car:1', undefined, car({})).length, 0);
  t.equal(index.size, 1005);
});

t.test('a selector with an id is found by that id only: one subscription per entity costs other writes nothing', async (t) => {
  const index = new SubscriptionIndex();
  const perEntity = Array.from({ length: 100 }, (_, i) => compiled({ entities: [{ id: `urn:ngsi-ld:Car:${i}`, type: 'Car' }] }));
  for (const s of perEntity) index.upsert(s);
  t.same(index.candidates('', 'urn:ngsi-ld:Car:7', undefined, car({}, 'urn:ngsi-ld:Car:7')), [perEntity[7]]);
  t.equal(index.candidates('', 'urn:ngsi-ld:Car:700', undefined, car({}, 'urn:ngsi-ld:Car:700')).length, 0);
  t.equal(
    matchChange(perEntity[7]!, w(undefined, car({ [V('x')]: p(1) }, 'urn:ngsi-ld:Car:7', 'Bus')), NOW),
    undefined,
    'the type still has to match',
  );
});

t.test('default triggers: created and updated attributes notify; a deletion does not', async (t) => {
  const s = compiled({ entities: [{ type: 'Car' }] });
  t.equal(matchChange(s, w(undefined, car({ [V('speed')]: p(1) })), NOW)?.trigger, 'attributeCreated');
  t.equal(matchChange(s, w(car({ [V('speed')]: p(1) }), car({ [V('speed')]: p(2) })), NOW)?.trigger, 'attributeUpdated');
  t.equal(matchChange(s, w(car({ [V('speed')]: p(1) }), undefined), NOW), undefined);
  t.equal(matchChange(s, w(car({ [V('speed')]: p(1) }), car({})), NOW), undefined, 'attributeDeleted is not a default trigger');
  t.equal(matchChange(s, w(undefined, car({})), NOW), undefined, 'an entity without attributes creates none');
});

t.test('every notificationTrigger', async (t) => {
  const before = car({ [V('a')]: p(1), [V('b')]: p(1) });
  const after = car({ [V('a')]: p(2), [V('c')]: p(1) });
  const trig = (tr: SubscriptionBody['notificationTrigger']) => compiled({ entities: [{ type: 'Car' }], notificationTrigger: tr });
  t.equal(matchChange(trig(['entityCreated']), w(undefined, after), NOW)?.trigger, 'entityCreated');
  t.equal(matchChange(trig(['entityCreated']), w(before, after), NOW), undefined);
  t.equal(matchChange(trig(['entityUpdated']), w(before, after), NOW)?.trigger, 'entityUpdated');
  t.equal(matchChange(trig(['attributeCreated']), w(before, after), NOW)?.trigger, 'attributeCreated');
  t.equal(matchChange(trig(['attributeUpdated']), w(before, after), NOW)?.trigger, 'attributeUpdated');
  const del = matchChange(trig(['attributeDeleted']), w(before, after), NOW);
  t.equal(del?.trigger, 'attributeDeleted');
  t.same((del?.entity[V('b')] as Array<{ value: unknown }>)[0]!.value, 'urn:ngsi-ld:null');
  const gone = matchChange(trig(['entityDeleted']), w(before, undefined), NOW);
  t.equal(gone?.trigger, 'entityDeleted');
  t.type(gone?.entity.deletedAt, 'string');
});

t.test('watchedAttributes, q, scopeQ and idPattern decide; isActive and expiresAt silence', async (t) => {
  const watched = compiled({ entities: [{ type: 'Car' }], watchedAttributes: ['speed'] });
  t.equal(
    matchChange(watched, w(car({ [V('speed')]: p(1), [V('fuel')]: p(1) }), car({ [V('speed')]: p(1), [V('fuel')]: p(2) })), NOW),
    undefined,
  );
  t.ok(matchChange(watched, w(car({ [V('speed')]: p(1) }), car({ [V('speed')]: p(2) })), NOW));
  const q = compiled({ entities: [{ type: 'Car' }], q: 'speed>10' });
  t.equal(matchChange(q, w(undefined, car({ [V('speed')]: p(5) })), NOW), undefined);
  t.ok(matchChange(q, w(undefined, car({ [V('speed')]: p(50) })), NOW));
  const scope = compiled({ entities: [{ type: 'Car' }], scopeQ: '/a/#' });
  t.ok(matchChange(scope, w(undefined, car({ scope: ['/a/b'], [V('x')]: p(1) })), NOW));
  t.equal(matchChange(scope, w(undefined, car({ scope: ['/b'], [V('x')]: p(1) })), NOW), undefined);
  const pattern = compiled({ entities: [{ type: 'Car', idPattern: ':7$' }] });
  t.equal(matchChange(pattern, w(undefined, car({ [V('x')]: p(1) })), NOW), undefined);
  t.ok(matchChange(pattern, w(undefined, car({ [V('x')]: p(1) }, 'urn:ngsi-ld:Car:7')), NOW));
  const paused = compiled({ entities: [{ type: 'Car' }], isActive: false });
  t.equal(matchChange(paused, w(undefined, car({ [V('x')]: p(1) })), NOW), undefined);
  const expired = compiled({ entities: [{ type: 'Car' }], expiresAt: '2025-05-31T23:59:59Z' });
  t.equal(matchChange(expired, w(undefined, car({ [V('x')]: p(1) })), NOW), undefined);
  const live = compiled({ entities: [{ type: 'Car' }], expiresAt: '2025-06-01T00:00:01Z' });
  t.ok(matchChange(live, w(undefined, car({ [V('x')]: p(1) })), NOW));
  const periodic = compiled({ entities: [{ type: 'Car' }], timeInterval: 5 });
  t.equal(
    matchChange(periodic, w(undefined, car({ [V('x')]: p(1) })), NOW),
    undefined,
    'a periodic subscription never notifies on a change',
  );
});

t.test('showChanges adds previousValue / previousObject to updated attributes only', async (t) => {
  const s = compiled({ entities: [{ type: 'Car' }], notification: { showChanges: true, endpoint: { uri: 'http://r/n' } } });
  const before = car({ [V('speed')]: p(1), [V('owner')]: [{ type: 'Relationship', object: 'urn:a' }], [V('same')]: p(0) });
  const after = car({ [V('speed')]: p(2), [V('owner')]: [{ type: 'Relationship', object: 'urn:b' }], [V('same')]: p(0) });
  const m = matchChange(s, w(before, after), NOW)!;
  t.same(m.entity[V('speed')], [{ type: 'Property', value: 2, previousValue: 1 }]);
  t.same(m.entity[V('owner')], [{ type: 'Relationship', object: 'urn:b', previousObject: 'urn:a' }]);
  t.same(m.entity[V('same')], [{ type: 'Property', value: 0 }]);
  t.same(after[V('speed')], [{ type: 'Property', value: 2 }], 'the stored entity is not touched');
});

t.test('datasetId limits which instances count as changes', async (t) => {
  const before = car({
    [V('speed')]: [
      { type: 'Property', value: 1 },
      { type: 'Property', value: 1, datasetId: 'urn:ds:1' },
    ],
  });
  const after = car({
    [V('speed')]: [
      { type: 'Property', value: 1 },
      { type: 'Property', value: 9, datasetId: 'urn:ds:1' },
    ],
  });
  t.same(changedAttrs(w(before, after), undefined, new Set(['@none'])).updated, []);
  t.same(changedAttrs(w(before, after), undefined, new Set(['urn:ds:1'])).updated, [V('speed')]);
  t.equal(matchChange(compiled({ entities: [{ type: 'Car' }], datasetId: ['@none'] }), w(before, after), NOW), undefined);
});

t.test('deleting one datasetId instance is attributeDeleted: the kept instances, then the deleted one as NGSI-LD null', async (t) => {
  const fr = { type: 'Property', value: 'Tour Eiffel', datasetId: 'urn:ngsi-ld:Dataset:fr' };
  const de = { type: 'Property', value: 'Eiffelturm', datasetId: 'urn:ngsi-ld:Dataset:de' };
  const before = car({ [V('name')]: [{ type: 'Property', value: 'Eiffel Tower' }, de, fr] });
  const after = car({ [V('name')]: [{ type: 'Property', value: 'Eiffel Tower' }, de] });
  t.same(changedAttrs(w(before, after), undefined), { created: [], updated: [], deleted: [V('name')] });
  const m = matchChange(compiled({ entities: [{ type: 'Car' }], notificationTrigger: ['attributeDeleted'] }), w(before, after), NOW);
  t.equal(m?.trigger, 'attributeDeleted');
  t.same(m?.entity[V('name')], [
    { type: 'Property', value: 'Eiffel Tower' },
    de,
    {
      type: 'Property',
      value: 'urn:ngsi-ld:null',
      datasetId: 'urn:ngsi-ld:Dataset:fr',
      modifiedAt: new Date(NOW).toISOString(),
      deletedAt: new Date(NOW).toISOString(),
    },
  ]);
  t.equal(
    matchChange(compiled({ entities: [{ type: 'Car' }], notificationTrigger: ['attributeUpdated'] }), w(before, after), NOW),
    undefined,
    'no longer an update',
  );
  t.equal(matchChange(compiled({ entities: [{ type: 'Car' }] }), w(before, after), NOW), undefined, 'nor a default trigger');
  const changedToo = car({ [V('name')]: [{ type: 'Property', value: 'Tower' }, de] });
  t.same(
    changedAttrs(w(before, changedToo), undefined),
    { created: [], updated: [V('name')], deleted: [V('name')] },
    'one instance gone, another changed',
  );
  t.same(
    changedAttrs(w(before, after), undefined, new Set(['urn:ngsi-ld:Dataset:de'])).deleted,
    [],
    'a datasetId the subscription does not select',
  );
});

t.test('deleting an entity notifies attributeDeleted of the watched attributes it had, unless entityDeleted is asked', async (t) => {
  const before = car({ [V('name')]: p('Eiffel Tower'), [V('speed')]: p(3) });
  const deletedAt = new Date(NOW).toISOString();
  const both = compiled({ entities: [{ type: 'Car' }], notificationTrigger: ['attributeUpdated', 'attributeDeleted'] });
  const m = matchChange(both, w(before, undefined), NOW);
  t.equal(m?.trigger, 'attributeDeleted');
  t.equal(m?.entity.deletedAt, deletedAt);
  t.same(m?.entity[V('name')], [{ type: 'Property', value: 'urn:ngsi-ld:null', modifiedAt: deletedAt, deletedAt }]);
  t.same(m?.entity[V('speed')], [{ type: 'Property', value: 'urn:ngsi-ld:null', modifiedAt: deletedAt, deletedAt }]);
  const watched = matchChange(
    compiled({ entities: [{ type: 'Car' }], watchedAttributes: ['name'], notificationTrigger: ['attributeDeleted'] }),
    w(before, undefined),
    NOW,
  );
  t.same(
    Object.keys(watched!.entity).filter((k) => k.startsWith(DEFAULT_VOCAB)),
    [V('name')],
    'only the watched attribute',
  );
  t.equal(
    matchChange(
      compiled({ entities: [{ type: 'Car' }], watchedAttributes: ['fuel'], notificationTrigger: ['attributeDeleted'] }),
      w(before, undefined),
      NOW,
    ),
    undefined,
    'an entity without the watched attribute',
  );
  t.equal(
    matchChange(
      compiled({ entities: [{ type: 'Car' }], notificationTrigger: ['attributeDeleted', 'entityDeleted'] }),
      w(before, undefined),
      NOW,
    )?.trigger,
    'entityDeleted',
    'entityDeleted wins: one notification per change',
  );
  t.equal(
    matchChange(compiled({ entities: [{ type: 'Car' }], notificationTrigger: ['attributeDeleted'] }), w(car({}), undefined), NOW),
    undefined,
    'an entity without attributes',
  );
});

t.test('a notification of a tenant subscription carries NGSILD-Tenant; deletions render as the triggers say', async (t) => {
  const header = (h: string[], name: string): string | undefined => {
    const i = h.indexOf(name);
    return i < 0 ? undefined : h[i + 1];
  };
  const before = car({ [V('name')]: p('x') });
  const tenantSub = compiled({ entities: [{ type: 'Car' }], notificationTrigger: ['attributeDeleted'] }, 'city');
  const m = matchChange(tenantSub, w(before, undefined), NOW)!;
  const n = buildNotification(tenantSub, [m.entity], m.trigger);
  t.equal(header(n.headers, 'NGSILD-Tenant'), 'city');
  t.same(JSON.parse(n.body).data, [
    { id: 'urn:ngsi-ld:Car:1', type: 'Car', name: { type: 'Property', value: 'urn:ngsi-ld:null' }, deletedAt: new Date(NOW).toISOString() },
  ]);
  const defaultSub = compiled({
    entities: [{ type: 'Car' }],
    notificationTrigger: ['entityDeleted'],
    notification: { format: 'keyValues', sysAttrs: true, endpoint: { uri: 'http://r/n' } },
  });
  const gone = matchChange(defaultSub, w(before, undefined), NOW)!;
  const d = buildNotification(defaultSub, [gone.entity], gone.trigger);
  t.equal(header(d.headers, 'NGSILD-Tenant'), undefined, 'none for the default tenant');
  t.same(
    JSON.parse(d.body).data,
    [
      {
        id: 'urn:ngsi-ld:Car:1',
        type: 'Car',
        deletedAt: new Date(NOW).toISOString(),
        createdAt: '2025-01-01T00:00:00Z',
        modifiedAt: new Date(NOW).toISOString(),
      },
    ],
    'entityDeleted with sysAttrs has the entity times',
  );
});

t.test('showChanges on a VocabProperty: previousVocab is compacted like vocab', async (t) => {
  const s = compiled({ entities: [{ type: 'Car' }], notification: { showChanges: true, endpoint: { uri: 'http://r/n' } } });
  const vocab = (v: string): unknown[] => [{ type: 'VocabProperty', vocab: V(v) }];
  const m = matchChange(s, w(car({ [V('category')]: vocab('monument') }), car({ [V('category')]: vocab('tower') })), NOW)!;
  t.same(JSON.parse(buildNotification(s, [m.entity], m.trigger).body).data[0].category, {
    type: 'VocabProperty',
    vocab: 'tower',
    previousVocab: 'monument',
  });
});

t.test('pick and omit are compiled as projections: braces project, names as stored before the parser are kept', async (t) => {
  const endpoint = { uri: 'http://127.0.0.1:9/n' };
  const pick = compiled({ notification: { endpoint, pick: ['id', 'locatedAt{name}'] } });
  t.same([...pick.render.pick!], ['id', 'locatedAt']);
  const omit = compiled({ notification: { endpoint, omit: ['a', 'locatedAt{name}'] } });
  t.same([...omit.render.omit!], ['a'], 'omit rel{...} does not omit rel');
  const old = compiled({ notification: { endpoint, pick: ['a!', 'b'] } });
  t.same([...old.render.pick!], ['a!', 'b'], 'a name the parser refuses, stored by an older build, still compiles');
});
