// embdb remembers a document collection it found empty by the collection's generation (one read, not a range): a
// document added or removed by this store, another thread's or another process's moves the generation, so the next
// list sees it; a page with limit 0 or past the end says nothing of emptiness.
import t from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EmbdbStore } from '../../src/plugins/store/embdb/embdb-store.js';

function twoStores(t: { teardown: (fn: () => void | Promise<void>) => void }): [EmbdbStore, EmbdbStore] {
  const dir = mkdtempSync(join(tmpdir(), 'ldbroker-embdb-'));
  const settings = { path: join(dir, 'embdb'), sync: 'interval' as const, compress: false, lockPrefer: 'reads' as const, ram: true };
  // Two stores on one path: each keeps its own memory of empty collections, as each pipeline thread does.
  const a = new EmbdbStore(settings);
  const b = new EmbdbStore(settings);
  t.teardown(async () => {
    await b.close();
    await a.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return [a, b];
}

const ids = async (s: EmbdbStore, tenant = '') => (await s.collection(tenant, 'registrations').list()).map((d) => d.id);

t.test('a document inserted or deleted through another store shows in the next list', async (t) => {
  const [a, b] = twoStores(t);
  t.same(await ids(a), []);
  t.same(await ids(a), [], 'empty again: remembered');
  await b.collection('', 'registrations').insert('urn:r:1', { n: 1 });
  a.freshen();
  t.same(await ids(a), ['urn:r:1'], 'the other store insert is seen');
  await b.collection('', 'registrations').delete('urn:r:1');
  a.freshen();
  t.same(await ids(a), [], 'and its delete');
  await a.collection('', 'registrations').insert('urn:r:2', { n: 2 });
  t.same(await ids(a), ['urn:r:2'], 'its own insert');
  b.freshen();
  t.same(await ids(b), ['urn:r:2']);
});

t.test('per tenant and per collection', async (t) => {
  const [a] = twoStores(t);
  t.same(await ids(a, 'x'), []);
  t.same(await ids(a, 'y'), []);
  await a.collection('x', 'registrations').insert('urn:r:x', {});
  t.same(await ids(a, 'x'), ['urn:r:x']);
  t.same(await ids(a, 'y'), [], 'the other tenant is still empty');
  t.same((await a.collection('x', 'subscriptions').list()).length, 0, 'another collection of the tenant too');
  await a.collection('x', 'subscriptions').insert('urn:s:1', {});
  t.same((await a.collection('x', 'subscriptions').list()).length, 1);
});

t.test('limit 0 and a page past the end do not make a collection empty', async (t) => {
  const [a] = twoStores(t);
  const c = a.collection('', 'registrations');
  await c.insert('urn:r:1', {});
  t.same(await c.list(0, 0), []);
  t.same(await c.list(5), []);
  t.same(
    (await c.list()).map((d) => d.id),
    ['urn:r:1'],
  );
});

t.test('a put of an existing document and a bump leave the list whole', async (t) => {
  const [a, b] = twoStores(t);
  await a.collection('', 'registrations').insert('urn:r:1', { v: 1 });
  t.same((await b.collection('', 'registrations').list())[0]?.doc, { v: 1 });
  await a.collection('', 'registrations').put('urn:r:1', { v: 2 });
  b.freshen();
  t.same((await b.collection('', 'registrations').list())[0]?.doc, { v: 2 });
});
