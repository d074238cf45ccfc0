// embdb: an exception inside a write transaction undoes all of it (issue 13, item 4), with either lock preference:
// an error while writing an entity of a batch leaves neither it nor the batch's other entries, nor any index entry,
// count, tenant or history; a mutation's own error stays its entry's outcome. Single writes without a history run in
// groups (issue 24, embdb-store.ts mutateEntity, embdb-write-group.test.ts), where a write that throws before its first
// put fails alone and one that throws after it undoes the group: the cases below run with and without the history.
import t, { type Test } from 'tap';
import { tempEmbdb } from './helpers/embdb.js';
import { EmbdbStore } from '../../src/plugins/store/embdb/embdb-store.js';
import type { StoredEntity } from '../../src/ngsild/entity/model.js';
import { inBox, ofTypes } from './helpers/store-query.js';

const NS = 'https://example.org/ns/';
const T0 = '2026-01-01T00:00:00Z';
const BOOM = 'urn:ngsi-ld:Vehicle:boom';

function vehicle(id: string): StoredEntity {
  return {
    id,
    type: [NS + 'Vehicle'],
    createdAt: T0,
    modifiedAt: T0,
    [NS + 'speed']: [{ type: 'Property', value: 50 }],
    [NS + 'location']: [{ type: 'GeoProperty', value: { type: 'Point', coordinates: [2.35, 48.85] } }],
  };
}

interface PutDb {
  putSync: (key: unknown, value: unknown) => boolean;
}

/**
 * A store whose entities database throws when it is asked to write BOOM: by then the entries of a batch before it are
 * written in the same transaction. A write puts its entity first (everything else that can throw on its data is done
 * before it, embdb-store.ts planOutcome); in a group, the writes before it are.
 */
function faultyStore(
  t: { teardown: (fn: () => void | Promise<void>) => void },
  lockPrefer: 'reads' | 'writes',
  troe: 'embdb' | 'none' = 'embdb',
): EmbdbStore {
  const store = tempEmbdb(t, { lockPrefer, troe });
  const entities = (store as unknown as { entities: PutDb }).entities;
  const putSync = entities.putSync.bind(entities);
  entities.putSync = (key, value) => {
    if ((value as StoredEntity).id === BOOM) throw new Error('injected: the write of BOOM fails');
    return putSync(key, value);
  };
  return store;
}

async function nothingWritten(t: Test, store: EmbdbStore, tenant: string, ids: string[]): Promise<void> {
  for (const id of ids) t.equal(await store.getEntity(tenant, id), undefined, `${id} is not stored`);
  t.same(
    await store.queryEntities(tenant, { type: ofTypes(NS + 'Vehicle'), limit: 10, offset: 0, count: true }),
    { entities: [], count: 0 },
    'no type index entry, no count',
  );
  t.same(
    (await store.queryEntities(tenant, { geo: inBox(NS + 'location', [2.3, 48.8, 2.4, 48.9]), limit: 10, offset: 0, count: true })).count,
    0,
    'no spatial index entry',
  );
  t.same(await store.typeStats(tenant), [], 'no type count');
  t.same(await store.attributeStats(tenant), [], 'no attribute count');
  t.same(await store.listTenants(), [], 'no tenant registered');
  // Read raw: an index entry of an entity that is not stored would be skipped by the queries above.
  const dbs = store.indexedDbs();
  t.same(
    [...dbs.typeMembers.getRange()].map((e) => e.value),
    [],
    'the type index database is empty',
  );
  t.same(
    [...dbs.geoCells.getRange()].map((e) => e.value[0]),
    [],
    'the spatial index database is empty',
  );
  if (store.history !== undefined)
    for (const id of ids) t.equal(await store.history.getTemporalEntity(tenant, id), undefined, `no history of ${id}`);
}

/** A vehicle whose location's coordinates throw when read: its spatial index entries cannot be computed. */
function unreadableVehicle(id: string): StoredEntity {
  const e = vehicle(id);
  const value = { type: 'Point' };
  Object.defineProperty(value, 'coordinates', {
    enumerable: true,
    get: () => {
      throw new Error('injected: the coordinates cannot be read');
    },
  });
  e[NS + 'location'] = [{ type: 'GeoProperty', value }];
  return e;
}

for (const lockPrefer of ['reads', 'writes'] as const) {
  t.test(`dbLockPrefer ${lockPrefer}: a batch whose second entity fails to be written rejects, and nothing of it is left`, async (t) => {
    const store = faultyStore(t, lockPrefer);
    const items = ['urn:ngsi-ld:Vehicle:ok', BOOM, 'urn:ngsi-ld:Vehicle:after'].map((id) => ({
      id,
      mutation: () => ({ next: vehicle(id), result: 'created' }),
    }));
    await t.rejects(store.mutateEntities('openiot', items, { createTenant: true }), /injected/);
    await nothingWritten(
      t,
      store,
      'openiot',
      items.map((i) => i.id),
    );
    // The store goes on: the next batch of the same valid entities is written whole.
    const outcomes = await store.mutateEntities(
      'openiot',
      items.filter((i) => i.id !== BOOM),
      { createTenant: true },
    );
    t.same(outcomes, [
      { ok: true, result: 'created' },
      { ok: true, result: 'created' },
    ]);
    t.equal((await store.queryEntities('openiot', { limit: 10, offset: 0, count: true })).count, 2);
  });

  for (const troe of ['embdb', 'none'] as const) {
    t.test(`dbLockPrefer ${lockPrefer}, troe ${troe}: one entity whose write fails leaves no index entry behind`, async (t) => {
      const store = faultyStore(t, lockPrefer, troe);
      await t.rejects(
        store.mutateEntity('openiot', BOOM, () => ({ next: vehicle(BOOM), result: undefined }), { createTenant: true }),
        /injected/,
      );
      await nothingWritten(t, store, 'openiot', [BOOM]);
    });

    t.test(
      `dbLockPrefer ${lockPrefer}, troe ${troe}: several writers in one lmdb batch: the one that throws is undone alone`,
      async (t) => {
        const store = faultyStore(t, lockPrefer, troe);
        const ids = ['urn:ngsi-ld:Vehicle:1', BOOM, 'urn:ngsi-ld:Vehicle:2'];
        const settled = await Promise.allSettled(ids.map((id) => store.mutateEntity('', id, () => ({ next: vehicle(id), result: id }))));
        t.same(
          settled.map((s) => s.status),
          ['fulfilled', 'rejected', 'fulfilled'],
        );
        t.same(
          (await store.queryEntities('', { type: ofTypes(NS + 'Vehicle'), limit: 10, offset: 0, count: true })).entities.map((e) => e.id),
          ['urn:ngsi-ld:Vehicle:1', 'urn:ngsi-ld:Vehicle:2'],
          'the type index holds the two written',
        );
        t.equal((await store.typeStats(''))[0]?.count, 2);
        if (troe === 'embdb') t.equal(await store.history!.getTemporalEntity('', BOOM), undefined);
        const dbs = store.indexedDbs();
        t.same(
          [...dbs.typeMembers.getRange()].map((e) => e.value),
          ['urn:ngsi-ld:Vehicle:1', 'urn:ngsi-ld:Vehicle:2'],
          'no type index entry of the one undone',
        );
        t.same(
          [...dbs.geoCells.getRange()].map((e) => e.value[0]),
          ['urn:ngsi-ld:Vehicle:1', 'urn:ngsi-ld:Vehicle:2'],
          'no spatial index entry of it',
        );
      },
    );

    t.test(
      `dbLockPrefer ${lockPrefer}, troe ${troe}: a write whose index entries cannot be computed leaves nothing, the others beside it stay`,
      async (t) => {
        const store = faultyStore(t, lockPrefer, troe);
        const bad = 'urn:ngsi-ld:Vehicle:unreadable';
        await t.rejects(
          store.mutateEntity('openiot', bad, () => ({ next: unreadableVehicle(bad), result: undefined }), { createTenant: true }),
          /injected/,
        );
        await nothingWritten(t, store, 'openiot', [bad]);
        // In one lmdb batch (lockPrefer reads) with writes before and after it: those are written whole.
        const ids = ['urn:ngsi-ld:Vehicle:1', bad, 'urn:ngsi-ld:Vehicle:2'];
        const settled = await Promise.allSettled(
          ids.map((id) => store.mutateEntity('', id, () => ({ next: id === bad ? unreadableVehicle(id) : vehicle(id), result: id }))),
        );
        t.same(
          settled.map((s) => s.status),
          ['fulfilled', 'rejected', 'fulfilled'],
        );
        t.equal(await store.getEntity('', bad), undefined, 'the unreadable one is not stored');
        t.same(
          (await store.queryEntities('', { type: ofTypes(NS + 'Vehicle'), limit: 10, offset: 0, count: true })).entities.map((e) => e.id),
          ['urn:ngsi-ld:Vehicle:1', 'urn:ngsi-ld:Vehicle:2'],
        );
        t.same(
          (await store.typeStats('')).map((s) => s.count),
          [2],
          'the type counts the two written',
        );
        const dbs = store.indexedDbs();
        t.same(
          [...dbs.typeMembers.getRange()].map((e) => e.value),
          ['urn:ngsi-ld:Vehicle:1', 'urn:ngsi-ld:Vehicle:2'],
          'no type index entry of the one refused',
        );
        t.same(
          [...dbs.geoCells.getRange()].map((e) => e.value[0]),
          ['urn:ngsi-ld:Vehicle:1', 'urn:ngsi-ld:Vehicle:2'],
          'no spatial index entry of it',
        );
        // A write after it in the same tenant counts from the records as they are (none carried from the failed one).
        await store.mutateEntity('', 'urn:ngsi-ld:Vehicle:3', () => ({ next: vehicle('urn:ngsi-ld:Vehicle:3'), result: undefined }));
        t.same(
          (await store.typeStats('')).map((s) => s.count),
          [3],
        );
        t.same(
          (await store.attributeStats('')).map((s) => s.count),
          [3, 3],
          'each attribute counts the three written',
        );
      },
    );
  }

  t.test(`dbLockPrefer ${lockPrefer}: a mutation's own error is its entry's outcome, the others are written`, async (t) => {
    const store = faultyStore(t, lockPrefer);
    const outcomes = await store.mutateEntities('', [
      { id: 'urn:a:1', mutation: () => ({ next: vehicle('urn:a:1'), result: 1 }) },
      {
        id: 'urn:a:2',
        mutation: () => {
          throw new Error('refused');
        },
      },
      { id: 'urn:a:3', mutation: () => ({ next: vehicle('urn:a:3'), result: 3 }) },
    ]);
    t.same(
      outcomes.map((o) => o.ok),
      [true, false, true],
    );
    t.equal((await store.queryEntities('', { limit: 10, offset: 0, count: true })).count, 2);
    t.equal((await store.typeStats(''))[0]?.count, 2);
  });

  t.test(`dbLockPrefer ${lockPrefer}: a history write that throws after its first instance leaves nothing`, async (t) => {
    const store = faultyStore(t, lockPrefer);
    const history = store.history!;
    const inst = (store as unknown as { history: { inst: PutDb } }).history.inst;
    const putSync = inst.putSync.bind(inst);
    let n = 0;
    inst.putSync = (key, value) => {
      if (++n === 2) throw new Error('injected: the second instance fails');
      return putSync(key, value);
    };
    const at = '2026-02-01T00:00:00.000Z';
    await t.rejects(
      history.addInstances(
        '',
        { id: 'urn:h:1', type: [NS + 'Vehicle'] },
        {
          [NS + 'speed']: [
            { type: 'Property', value: 1 },
            { type: 'Property', value: 2 },
          ],
        },
        at,
      ),
      /injected/,
    );
    t.equal(await history.getTemporalEntity('', 'urn:h:1'), undefined, 'no temporal entity');
    t.same(await history.entityEvents('', 'urn:h:1'), [], 'no event');
    t.same((await history.instances('', 'urn:h:1', { limit: 10 })).attrs, {}, 'no instance');
  });
}
