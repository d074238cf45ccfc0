// embdb remembers, per thread, the collections it listed empty until a document is created in them (their generation in meta):
// a document created by another thread's store, in the same tenant or another, or by this one, is listed at once.
import t from 'tap';
import { EMPTY_COLLECTIONS_MAX, type EmbdbStore } from '../../src/plugins/store/embdb/embdb-store.js';
import { twoStores } from '../helpers/embdb-two.js';

const ids = async (s: EmbdbStore, tenant: string, name = 'registrations'): Promise<string[]> => {
  s.freshen();
  return (await s.collection(tenant, name).list()).map((d) => d.id);
};

t.test('a document another store creates after this one listed the collection empty is listed', async (t) => {
  const [a, b] = await twoStores(t, 'embdb-empty-');
  t.same(await ids(a, ''), []);
  t.same(await ids(a, ''), [], 'empty twice (the second from what the store kept)');
  await b.collection('', 'registrations').insert('urn:ngsi-ld:ContextSourceRegistration:1', { body: { n: 1 } });
  t.same(await ids(a, ''), ['urn:ngsi-ld:ContextSourceRegistration:1']);
  t.same(await ids(b, ''), ['urn:ngsi-ld:ContextSourceRegistration:1']);
});

t.test('per tenant and per collection: a document elsewhere leaves an empty one empty, then its own is listed', async (t) => {
  const [a, b] = await twoStores(t, 'embdb-empty-');
  t.same(await ids(a, 'x'), []);
  t.same(await ids(a, 'y'), []);
  await b.collection('x', 'subscriptions').insert('urn:ngsi-ld:Subscription:1', { n: 1 });
  await b.collection('y', 'registrations').insert('urn:ngsi-ld:ContextSourceRegistration:y', { n: 1 });
  t.same(await ids(a, 'x'), [], 'another collection of the tenant');
  t.same(await ids(a, 'y'), ['urn:ngsi-ld:ContextSourceRegistration:y']);
  t.same(await ids(a, 'x', 'subscriptions'), ['urn:ngsi-ld:Subscription:1']);
  await b.collection('x', 'registrations').put('urn:ngsi-ld:ContextSourceRegistration:x', { n: 2 });
  t.same(await ids(a, 'x'), ['urn:ngsi-ld:ContextSourceRegistration:x'], 'a put that creates counts as a creation');
});

t.test('its own creations, deletions down to empty, and creations again', async (t) => {
  const [a] = await twoStores(t, 'embdb-empty-');
  const c = a.collection('', 'registrations');
  t.same(await ids(a, ''), []);
  await c.insert('urn:a', { n: 1 });
  t.same(await ids(a, ''), ['urn:a']);
  await c.delete('urn:a');
  t.same(await ids(a, ''), []);
  t.same(await ids(a, ''), []);
  await c.insert('urn:b', { n: 1 });
  t.same(await ids(a, ''), ['urn:b']);
  t.same(
    (await c.list(1)).map((d) => d.id),
    [],
    'a page past the end is empty',
  );
  t.same(await ids(a, ''), ['urn:b'], 'which is not taken for an empty collection');
});

t.test('what it remembers is bounded: one entry per tenant a client names, at most EMPTY_COLLECTIONS_MAX', async (t) => {
  const [a, b] = await twoStores(t, 'embdb-empty-');
  const n = EMPTY_COLLECTIONS_MAX + 10;
  const listed: string[] = [];
  for (let i = 0; i < n; i++) listed.push(...(await ids(a, `t${i}`)));
  t.same(listed, [], 'every tenant empty');
  t.ok(a.emptyCollections.size <= EMPTY_COLLECTIONS_MAX, `${a.emptyCollections.size} entries after ${n} tenants`);
  t.ok(a.emptyCollections.size > 0, 'the latest are remembered');
  // Forgetting never lies: a document created in a forgotten tenant and in a remembered one is listed.
  await b.collection('t0', 'registrations').insert('urn:ngsi-ld:ContextSourceRegistration:0', { n: 1 });
  await b.collection(`t${n - 1}`, 'registrations').insert('urn:ngsi-ld:ContextSourceRegistration:last', { n: 1 });
  t.same(await ids(a, 't0'), ['urn:ngsi-ld:ContextSourceRegistration:0']);
  t.same(await ids(a, `t${n - 1}`), ['urn:ngsi-ld:ContextSourceRegistration:last']);
});
