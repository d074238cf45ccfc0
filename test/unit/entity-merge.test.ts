import t from 'tap';
import { expandEntity, expandFragment, expandAttributes, expandAttributeFragment } from '../../src/ngsild/entity/expand.js';
import {
  appendAttributes,
  updateAttributes,
  partialAttributeUpdate,
  deleteAttribute,
  replaceEntity,
  replaceAttribute,
  mergeEntity,
} from '../../src/ngsild/entity/merge.js';
import { renderEntity } from '../../src/ngsild/entity/render.js';
import type { AttrInstance, StoredEntity } from '../../src/ngsild/entity/model.js';
import { mapContext, DEFAULT_VOCAB, NGSI_LD } from './helpers/map-context.js';
import { fixture, ldErrorOf } from './helpers/entity-fixtures.js';

const ctx = mapContext();
const t0 = '2024-01-01T00:00:00Z';
const t1 = '2024-06-01T00:00:00Z';
const dc = (term: string): string => DEFAULT_VOCAB + term;

const base = (): StoredEntity =>
  expandEntity(
    {
      id: 'urn:x:1',
      type: 'T',
      temp: { type: 'Property', value: 20, unitCode: 'CEL', accuracy: { type: 'Property', value: 0.5 } },
      speed: [
        { type: 'Property', value: 1 },
        { type: 'Property', value: 2, datasetId: 'urn:d:a' },
      ],
      owner: { type: 'Relationship', object: 'urn:p:1' },
    },
    ctx,
    { now: t0 },
  );

const attrs = (body: unknown): Record<string, AttrInstance[]> => expandAttributes(body, ctx, { now: t1 });
const normalized = (e: StoredEntity): Record<string, unknown> => renderEntity(e, ctx, { format: 'normalized' });
const inst = (e: StoredEntity, name: string): AttrInstance[] | undefined => e[dc(name)] as AttrInstance[] | undefined;
const snapshot = (e: StoredEntity): string => JSON.stringify(e);

t.test('append adds new attributes and reports them as updated and created', async (t) => {
  const e = base();
  const before = snapshot(e);
  const r = appendAttributes(e, attrs({ humidity: 40 }), { noOverwrite: false, now: t1 });
  t.strictSame(r.updated, [dc('humidity')]);
  t.strictSame(r.created, [dc('humidity')]);
  t.strictSame(r.notUpdated, []);
  t.equal(inst(r.entity, 'humidity')![0]!.value, 40);
  t.equal(r.entity.modifiedAt, t1);
  t.equal(r.entity.createdAt, t0);
  t.equal(snapshot(e), before, 'the input entity is unchanged');
});

t.test('append overwrites an existing instance, keeps its createdAt, and reports the previous instances', async (t) => {
  const e = base();
  const r = appendAttributes(e, attrs({ temp: { value: 25 } }), { noOverwrite: false, now: t1 });
  t.strictSame(r.updated, [dc('temp')]);
  t.strictSame(r.modified, [dc('temp')]);
  const temp = inst(r.entity, 'temp')![0]!;
  t.equal(temp.value, 25);
  t.equal(temp.unitCode, undefined, 'append replaces the instance whole');
  t.equal(temp.createdAt, t0);
  t.equal(temp.modifiedAt, t1);
  t.equal(r.previous[dc('temp')]![0]!.value, 20);
});

t.test('append with noOverwrite keeps the existing instance and reports it as notUpdated', async (t) => {
  const e = base();
  const r = appendAttributes(e, attrs({ temp: 99, fresh: 1 }), { noOverwrite: true, now: t1 });
  t.strictSame(r.updated, [dc('fresh')]);
  t.equal(r.notUpdated.length, 1);
  t.equal(r.notUpdated[0]!.attrName, dc('temp'));
  t.match(r.notUpdated[0]!.reason, 'noOverwrite');
  t.equal(inst(r.entity, 'temp')![0]!.value, 20);
});

t.test('append with noOverwrite still adds an instance of a new datasetId', async (t) => {
  const r = appendAttributes(base(), attrs({ speed: { value: 3, datasetId: 'urn:d:b' } }), { noOverwrite: true, now: t1 });
  t.strictSame(r.updated, [dc('speed')]);
  t.strictSame(
    inst(r.entity, 'speed')!.map((i) => i.value),
    [1, 2, 3],
  );
});

t.test('append matches instances by datasetId and keeps the default instance first', async (t) => {
  const e = expandEntity({ id: 'urn:x:1', type: 'T', speed: { value: 2, datasetId: 'urn:d:a' } }, ctx, { now: t0 });
  const r = appendAttributes(e, attrs({ speed: [{ value: 5, datasetId: 'urn:d:a' }, { value: 9 }] }), { noOverwrite: false, now: t1 });
  t.strictSame(
    inst(r.entity, 'speed')!.map((i) => [i.datasetId, i.value]),
    [
      [undefined, 9],
      ['urn:d:a', 5],
    ],
  );
});

t.test('append adds the types given', async (t) => {
  const f = expandFragment({ type: ['U', 'T'], x: 1 }, ctx, { now: t1 });
  const r = appendAttributes(base(), f.attrs, { noOverwrite: false, now: t1, types: f.types });
  t.strictSame(r.entity.type, [dc('T'), dc('U')]);
});

t.test('append with noOverwrite and nothing new changes nothing, not even modifiedAt', async (t) => {
  const e = base();
  const r = appendAttributes(e, attrs({ temp: 1 }), { noOverwrite: true, now: t1 });
  t.strictSame(r.updated, []);
  t.equal(r.entity.modifiedAt, t0);
});

t.test('update replaces existing instances only; missing attributes and datasetIds go to notUpdated', async (t) => {
  const e = base();
  const r = updateAttributes(
    e,
    attrs({
      temp: { value: 30 },
      nothere: 1,
      speed: [
        { value: 10, datasetId: 'urn:d:a' },
        { value: 11, datasetId: 'urn:d:zzz' },
      ],
    }),
    { now: t1 },
  );
  t.strictSame(r.updated, [dc('temp'), dc('speed')]);
  t.strictSame(
    r.notUpdated.map((n) => n.attrName),
    [dc('nothere'), dc('speed')],
  );
  t.match(r.notUpdated[0]!.reason, 'does not exist');
  t.match(r.notUpdated[1]!.reason, 'urn:d:zzz');
  t.strictSame(
    inst(r.entity, 'speed')!.map((i) => i.value),
    [1, 10],
  );
  t.equal(inst(r.entity, 'temp')![0]!.createdAt, t0);
  t.equal(r.entity.modifiedAt, t1);
  t.strictSame(r.created, [], 'update never creates');
});

t.test('update with nothing applicable leaves the entity as it was', async (t) => {
  const e = base();
  const r = updateAttributes(e, attrs({ nothere: 1 }), { now: t1 });
  t.strictSame(r.updated, []);
  t.equal(r.entity.modifiedAt, t0);
  t.strictSame(r.entity, e);
});

t.test('update with urn:ngsi-ld:null deletes the attribute', async (t) => {
  const r = updateAttributes(base(), attrs({ owner: 'urn:ngsi-ld:null' }), { now: t1 });
  t.strictSame(r.deleted, [dc('owner')]);
  t.notOk(dc('owner') in r.entity);
});

t.test('partial attribute update replaces the members given and keeps the others', async (t) => {
  const e = base();
  const f = expandAttributeFragment({ value: 21, observedAt: t1 }, ctx, { now: t1, attrIri: dc('temp') });
  const r = partialAttributeUpdate(e, dc('temp'), f, { now: t1 });
  t.equal(r.found, true);
  const temp = inst(r.entity, 'temp')![0]!;
  t.equal(temp.value, 21);
  t.equal(temp.unitCode, 'CEL');
  t.equal(temp.observedAt, t1);
  t.equal((temp[dc('accuracy')] as AttrInstance).value, 0.5);
  t.equal(temp.createdAt, t0);
  t.equal(temp.modifiedAt, t1);
  t.strictSame(r.modified, [dc('temp')]);
});

t.test('partial attribute update merges the sub-attributes given and deletes those set to urn:ngsi-ld:null', async (t) => {
  const f = expandAttributeFragment({ accuracy: { value: 0.1 }, method: 'x' }, ctx, { now: t1, attrIri: dc('temp') });
  const r = partialAttributeUpdate(base(), dc('temp'), f, { now: t1 });
  const temp = inst(r.entity, 'temp')![0]!;
  t.equal((temp[dc('accuracy')] as AttrInstance).value, 0.1);
  t.equal((temp[dc('accuracy')] as AttrInstance).createdAt, t0, 'a merged sub-attribute keeps its createdAt');
  t.equal((temp[dc('method')] as AttrInstance).value, 'x');
  const g = expandAttributeFragment({ accuracy: 'urn:ngsi-ld:null' }, ctx, { now: t1, attrIri: dc('temp') });
  t.notOk(dc('accuracy') in inst(partialAttributeUpdate(base(), dc('temp'), g, { now: t1 }).entity, 'temp')![0]!);
});

t.test('partial attribute update reports a missing attribute or datasetId as not found and changes nothing', async (t) => {
  const e = base();
  const f = expandAttributeFragment({ value: 1 }, ctx, { now: t1 });
  const a = partialAttributeUpdate(e, dc('nothere'), f, { now: t1 });
  t.equal(a.found, false);
  t.equal(a.entity, e);
  const b = partialAttributeUpdate(e, dc('speed'), f, { datasetId: 'urn:d:zzz', now: t1 });
  t.equal(b.found, false);
  const c = partialAttributeUpdate(e, dc('speed'), f, { datasetId: 'urn:d:a', now: t1 });
  t.equal(c.found, true);
  t.strictSame(
    inst(c.entity, 'speed')!.map((i) => i.value),
    [1, 1],
  );
});

t.test('partial attribute update refuses to change the kind of the attribute (§5.6.4), with or without the new value member', async (t) => {
  for (const fragment of [
    { type: 'Relationship' },
    { type: 'Relationship', object: 'urn:x:2' },
    { type: 'JsonProperty', json: { a: 1 } },
  ]) {
    const f = expandAttributeFragment(fragment, ctx, { now: t1 });
    const err = ldErrorOf(() => partialAttributeUpdate(base(), dc('temp'), f, { now: t1 }));
    t.equal(err.status, 400, JSON.stringify(fragment));
    t.match(err.detail, `cannot make a Property a ${fragment.type}`, JSON.stringify(fragment));
  }
});

t.test('partial attribute update with a value urn:ngsi-ld:null deletes the instance', async (t) => {
  const f = expandAttributeFragment({ value: 'urn:ngsi-ld:null' }, ctx, { now: t1 });
  const r = partialAttributeUpdate(base(), dc('owner'), f, { now: t1 });
  t.equal(r.found, true);
  t.notOk(dc('owner') in r.entity);
  t.strictSame(r.deleted, [dc('owner')]);
});

t.test('partial attribute update cannot turn location into something else than a GeoProperty', async (t) => {
  const e = expandEntity({ id: 'urn:x:1', type: 'T', location: { type: 'Point', coordinates: [0, 0] } }, ctx, { now: t0 });
  const f = expandAttributeFragment({ type: 'Property', value: 'x' }, ctx, { now: t1 });
  t.match(ldErrorOf(() => partialAttributeUpdate(e, NGSI_LD + 'location', f, { now: t1 })).detail, 'cannot make a GeoProperty a Property');
});

t.test('delete attribute removes the default instance, a datasetId instance, or all with deleteAll', async (t) => {
  const e = base();
  const d = deleteAttribute(e, dc('speed'), { now: t1 });
  t.strictSame(
    inst(d.entity, 'speed')!.map((i) => i.datasetId),
    ['urn:d:a'],
  );
  t.strictSame(d.modified, [dc('speed')]);
  const a = deleteAttribute(e, dc('speed'), { datasetId: 'urn:d:a', now: t1 });
  t.strictSame(
    inst(a.entity, 'speed')!.map((i) => i.value),
    [1],
  );
  const all = deleteAttribute(e, dc('speed'), { deleteAll: true, now: t1 });
  t.notOk(dc('speed') in all.entity);
  t.strictSame(all.deleted, [dc('speed')]);
  t.equal(all.previous[dc('speed')]!.length, 2);
  t.equal(all.entity.modifiedAt, t1);
});

t.test('delete attribute reports missing attributes and instances as not found', async (t) => {
  const e = base();
  t.equal(deleteAttribute(e, dc('nothere'), { now: t1 }).found, false);
  t.equal(deleteAttribute(e, dc('speed'), { datasetId: 'urn:d:zzz', now: t1 }).found, false);
  t.equal(deleteAttribute(e, dc('owner'), { datasetId: 'urn:d:a', now: t1 }).found, false);
  const noDefault = expandEntity({ id: 'urn:x:1', type: 'T', s: { value: 1, datasetId: 'urn:d:a' } }, ctx, { now: t0 });
  t.equal(deleteAttribute(noDefault, dc('s'), { now: t1 }).found, false, 'no default instance to delete');
  t.equal(deleteAttribute(e, 'createdAt', { now: t1 }).found, false, 'core members are not attributes');
});

t.test('replace entity keeps id and createdAt and reports deleted, modified and created attributes', async (t) => {
  const old = base();
  const next = expandEntity({ id: 'urn:x:1', type: 'U', temp: 5, fresh: 1 }, ctx, { now: t1 });
  const r = replaceEntity(old, next, t1);
  t.equal(r.entity.createdAt, t0);
  t.equal(r.entity.modifiedAt, t1);
  t.strictSame(r.entity.type, [dc('U')]);
  t.strictSame(r.deleted.sort(), [dc('owner'), dc('speed')].sort());
  t.strictSame(r.modified, [dc('temp')]);
  t.strictSame(r.created, [dc('fresh')]);
  t.strictSame(normalized(r.entity), {
    id: 'urn:x:1',
    type: 'U',
    temp: { type: 'Property', value: 5 },
    fresh: { type: 'Property', value: 1 },
  });
});

t.test('replace attribute replaces the instance of the same datasetId and keeps its createdAt', async (t) => {
  const e = base();
  const r = replaceAttribute(e, dc('temp'), attrs({ temp: { value: 7 } })[dc('temp')]!, t1);
  t.equal(r.found, true);
  t.strictSame(normalized(r.entity).temp, { type: 'Property', value: 7 });
  t.equal(inst(r.entity, 'temp')![0]!.createdAt, t0);
  t.equal(replaceAttribute(e, dc('nothere'), attrs({ x: 1 })[dc('x')]!, t1).found, false);
});

interface MergeCase {
  name: string;
  entity: unknown;
  patch: Record<string, unknown>;
  expected: unknown;
}

function patchOf(body: Record<string, unknown>): StoredEntity {
  return expandEntity({ ...body, id: 'urn:x:1' }, ctx, { now: t1, allowNull: true });
}

t.test('merge-patch cases of CIM 009 §5.6.17', async (t) => {
  for (const c of fixture<MergeCase[]>('merge-patch.json')) {
    const e = expandEntity(c.entity, ctx, { now: t0 });
    const before = snapshot(e);
    const r = mergeEntity(e, patchOf(c.patch), t1);
    t.strictSame(normalized(r.entity), c.expected, c.name);
    t.equal(snapshot(e), before, `${c.name}: input unchanged`);
  }
});

t.test('merge-patch reports created, modified and deleted attributes and keeps createdAt of merged instances', async (t) => {
  const r = mergeEntity(base(), patchOf({ temp: { value: 1 }, owner: 'urn:ngsi-ld:null', fresh: 2 }), t1);
  t.strictSame(r.modified, [dc('temp')]);
  t.strictSame(r.deleted, [dc('owner')]);
  t.strictSame(r.created, [dc('fresh')]);
  t.equal(inst(r.entity, 'temp')![0]!.createdAt, t0);
  t.equal(inst(r.entity, 'temp')![0]!.modifiedAt, t1);
  t.equal(r.entity.modifiedAt, t1);
});

t.test('merge-patch with JSON null deletes like urn:ngsi-ld:null', async (t) => {
  const r = mergeEntity(base(), patchOf({ owner: null, temp: { value: 3, accuracy: null } }), t1);
  t.notOk(dc('owner') in r.entity);
  t.notOk(dc('accuracy') in inst(r.entity, 'temp')![0]!);
});

t.test('merge-patch deleting an attribute that does not exist changes nothing', async (t) => {
  const e = base();
  const r = mergeEntity(e, patchOf({ nothere: 'urn:ngsi-ld:null' }), t1);
  t.strictSame(r.deleted, []);
  t.equal(r.entity.modifiedAt, t0);
});

t.test('merge-patch replaces the scope when given', async (t) => {
  const r = mergeEntity(base(), patchOf({ scope: ['/a', '/b'] }), t1);
  t.strictSame(r.entity.scope, ['/a', '/b']);
});

t.test('merge-patch of a typed instance without value member keeps the value and merges the sub-attributes', async (t) => {
  const r = mergeEntity(base(), patchOf({ temp: { type: 'Property', accuracy: { type: 'Property', value: 0.2 } } }), t1);
  t.strictSame(normalized(r.entity).temp, { type: 'Property', value: 20, unitCode: 'CEL', accuracy: { type: 'Property', value: 0.2 } });
});

t.test('merge-patch refuses a new attribute or sub-attribute without its value member', async (t) => {
  const a = ldErrorOf(() => mergeEntity(base(), patchOf({ fresh: { type: 'Property', unitCode: 'CEL' } }), t1));
  t.equal(a.status, 400);
  t.match(a.detail, 'a new Property needs a value member');
  const b = ldErrorOf(() => mergeEntity(base(), patchOf({ temp: { type: 'Property', sensor: { type: 'Relationship' } } }), t1));
  t.match(b.detail, 'a new Relationship needs a object member');
});

t.test('create still requires the value member', async (t) => {
  t.match(
    ldErrorOf(() => expandEntity({ id: 'urn:x:1', type: 'T', a: { type: 'Property' } }, ctx, { now: t0 })).detail,
    'a: a Property needs a value member',
  );
});
