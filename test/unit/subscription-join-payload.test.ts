// The notification of a subscription with join (CIM 009 v1.8.1 §5.2.14, §4.5.23) as a pure function of the
// compiled subscription, the notified entities and a reader of linked entities: flat and inline data, the
// @context of each entity of application/ld+json data, a deleted entity that links nothing, and without join the
// notification buildNotification makes.
import t from 'tap';
import { compileSubscription, type CompiledSubscription } from '../../src/ngsild/subscription/compile.js';
import { buildJoinedNotification, buildNotification } from '../../src/ngsild/subscription/payload.js';
import type { NotificationParamsBody } from '../../src/ngsild/subscription/model.js';
import type { StoredEntity } from '../../src/ngsild/entity/model.js';
import type { ReadEntities } from '../../src/ngsild/entity/linked-join.js';
import { mapContext, DEFAULT_VOCAB } from './helpers/map-context.js';

const ctx = mapContext();
const T0 = '2025-01-01T00:00:00Z';
const CITY = 'urn:ngsi-ld:City:1';
const tower: StoredEntity = {
  id: 'urn:ngsi-ld:Tower:1',
  type: [DEFAULT_VOCAB + 'Tower'],
  createdAt: T0,
  modifiedAt: T0,
  [DEFAULT_VOCAB + 'locatedAt']: [{ type: 'Relationship', object: CITY }],
};
const city: StoredEntity = {
  id: CITY,
  type: [DEFAULT_VOCAB + 'City'],
  createdAt: T0,
  modifiedAt: T0,
  [DEFAULT_VOCAB + 'name']: [{ type: 'Property', value: 'Paris' }],
};

function sub(notification: Partial<NotificationParamsBody>, tenant = ''): CompiledSubscription {
  const body = {
    id: 'urn:ngsi-ld:Subscription:j',
    type: 'Subscription' as const,
    entities: [{ type: 'Tower' }],
    notification: { endpoint: { uri: 'http://r/n' }, ...notification },
  };
  return compileSubscription(tenant, { body, context: null, createdAt: T0, modifiedAt: T0 }, ctx, ctx);
}

function reader(): { read: ReadEntities; asked: string[][] } {
  const asked: string[][] = [];
  return {
    asked,
    read: async (_tenant, ids) => {
      asked.push([...ids]);
      return ids.includes(CITY) ? [city] : [];
    },
  };
}

const body = (text: string): any => JSON.parse(text);

t.test('compile: join flat or inline with joinLevel (1 by default); @none or none is no join; pick keeps its braces', async (t) => {
  t.same(sub({ join: 'flat' }).join, { mode: 'flat', level: 1, containedBy: new Set() });
  t.same(sub({ join: 'inline', joinLevel: 3 }).join, { mode: 'inline', level: 3, containedBy: new Set() });
  t.equal(sub({ join: '@none' }).join, undefined);
  t.equal(sub({}).join, undefined);
  const picked = sub({ join: 'inline', pick: ['id', 'locatedAt{name}'] }).render;
  t.same([...picked.pick!], ['id', 'locatedAt']);
  t.same([...picked.projection!.pick!.linked.get('locatedAt')!.names], ['name']);
});

t.test('flat: the linked entity is an element of data after the notified one; inline: under `entity`', async (t) => {
  const flat = await buildJoinedNotification(sub({ join: 'flat' }), [tower], 'attributeUpdated', reader().read);
  t.same(
    body(flat.body).data.map((e: any) => e.id),
    [tower.id, CITY],
  );
  t.equal(body(flat.body).triggerReason, 'attributeUpdated');
  const inline = await buildJoinedNotification(sub({ join: 'inline' }), [tower], undefined, reader().read);
  t.same(body(inline.body).data, [
    {
      id: tower.id,
      type: 'Tower',
      locatedAt: { type: 'Relationship', object: CITY, entity: { id: CITY, type: 'City', name: { type: 'Property', value: 'Paris' } } },
    },
  ]);
});

t.test('application/ld+json: each entity of data carries the @context, the inline ones do not', async (t) => {
  const flat = body(
    (
      await buildJoinedNotification(
        sub({ join: 'flat', endpoint: { uri: 'http://r/n', accept: 'application/ld+json' } }),
        [tower],
        undefined,
        reader().read,
      )
    ).body,
  );
  t.ok(flat.data.every((e: any) => '@context' in e));
  const inline = body(
    (
      await buildJoinedNotification(
        sub({ join: 'inline', endpoint: { uri: 'http://r/n', accept: 'application/ld+json' } }),
        [tower],
        undefined,
        reader().read,
      )
    ).body,
  );
  t.ok('@context' in inline.data[0]);
  t.notOk('@context' in inline.data[0].locatedAt.entity);
});

t.test('GeoJSON with join=flat: the linked entity is a Feature of the collection', async (t) => {
  const n = body(
    (
      await buildJoinedNotification(
        sub({ join: 'flat', endpoint: { uri: 'http://r/n', accept: 'application/geo+json' } }),
        [tower],
        undefined,
        reader().read,
      )
    ).body,
  );
  t.same(
    n.data.features.map((f: any) => f.id),
    [tower.id, CITY],
  );
});

t.test('a deleted entity links nothing: nothing is read, it is notified as without join', async (t) => {
  const gone: StoredEntity = { id: tower.id, type: tower.type, createdAt: T0, modifiedAt: T0, deletedAt: T0 };
  const r = reader();
  const n = body((await buildJoinedNotification(sub({ join: 'flat' }), [gone], 'entityDeleted', r.read)).body);
  t.same(n.data, [{ id: tower.id, type: 'Tower', deletedAt: T0 }]);
  t.same(r.asked, []);
});

t.test("without join, the joined build is buildNotification's", async (t) => {
  const s = sub({});
  const strip = (text: string): string => text.replace(/"id":"urn:ngsi-ld:Notification:[^"]*",/, '');
  const r = reader();
  t.equal(
    strip((await buildJoinedNotification(s, [tower], 'attributeUpdated', r.read)).body),
    strip(buildNotification(s, [tower], 'attributeUpdated').body),
  );
  t.same(r.asked, []);
});
