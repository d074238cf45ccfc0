// embdb registers a tenant in one place, with the write that creates it: an entity create, a document insert (a
// subscription or registration) and a temporal create (--troe embdb) alike; a write without createTenant registers none.
import t from 'tap';
import { tempEmbdb } from './helpers/embdb.js';
import { EmbdbStore } from '../../src/plugins/store/embdb/embdb-store.js';

const NS = 'https://example.org/ns/';
const T0 = '2026-01-01T00:00:00Z';

function open(t: { teardown: (fn: () => void | Promise<void>) => void }): EmbdbStore {
  const store = tempEmbdb(t, { troe: 'embdb' });
  return store;
}

const entity = { id: 'urn:ngsi-ld:V:1', type: [NS + 'V'] };
const instances = { [NS + 'speed']: [{ type: 'Property' as const, value: 1, observedAt: T0 }] };

t.test('a temporal create registers its tenant like an entity create and a document insert', async (t) => {
  const store = open(t);
  await store.history!.addInstances('temporal', entity, instances, T0, { createTenant: true });
  await store.mutateEntity('entities', entity.id, () => ({ next: { ...entity, createdAt: T0, modifiedAt: T0 }, result: undefined }), {
    createTenant: true,
  });
  await store.collection('docs', 'subscriptions').insert('urn:x:s', { a: 1 }, { createTenant: true });
  t.same((await store.listTenants()).sort(), ['docs', 'entities', 'temporal'], 'each registered once');
  t.ok(await store.hasTenant('temporal'), 'the temporal one exists');
});

t.test('a write without createTenant registers no tenant', async (t) => {
  const store = open(t);
  await store.history!.addInstances('quiet', entity, instances, T0);
  await store.collection('quiet', 'subscriptions').insert('urn:x:s', { a: 1 });
  t.same(await store.listTenants(), [], 'none');
  t.notOk(await store.hasTenant('quiet'));
});
