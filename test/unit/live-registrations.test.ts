// ops/forward/sources.ts keeps, per thread and tenant, the registrations it last listed while the collection's
// generation stays (issue 24: every entity request asks for them). A registration created, replaced or deleted by
// another thread's store is seen at the next request, expiry is judged at each request, and bumps leave the number.
import t from 'tap';
import type { EmbdbStore } from '../../src/plugins/store/embdb/embdb-store.js';
import { twoStores } from '../helpers/embdb-two.js';
import { REGISTRATIONS } from '../../src/ngsild/subscription/registration.js';
import { liveRegistrations } from '../../src/ops/forward/sources.js';
import type { LdRequest } from '../../src/pipeline/ld-request.js';
import type { WorkerContext } from '../../src/pipeline/worker-context.js';

/** The ids of the tenant's live registrations as a request on store `s` sees them. */
async function live(s: EmbdbStore, tenant: string): Promise<string[]> {
  s.freshen();
  const regs = await liveRegistrations({ tenant } as LdRequest, { store: s } as unknown as WorkerContext);
  return regs.map((r) => r.id);
}

const reg = (id: string, extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  body: { id, type: 'ContextSourceRegistration', endpoint: 'http://127.0.0.1:1', information: [], ...extra },
});

t.test('created, replaced and deleted by another store: each seen at the next request', async (t) => {
  const [a, b] = await twoStores(t, 'live-regs-');
  const regs = b.collection('', REGISTRATIONS);
  t.same(await live(a, ''), []);
  t.same(await live(a, ''), [], 'empty twice (the second from what the thread kept)');
  await regs.insert('urn:r1', reg('urn:r1'));
  t.same(await live(a, ''), ['urn:r1']);
  t.same(await live(a, ''), ['urn:r1'], 'unchanged: the same');
  // A replacement that changes no count of documents: it moves the generation all the same.
  await regs.put('urn:r1', reg('urn:r1', { expiresAt: '2000-01-01T00:00:00Z' }));
  t.same(await live(a, ''), [], 'replaced by an expired one');
  await regs.put('urn:r1', reg('urn:r1'));
  await regs.insert('urn:r2', reg('urn:r2'));
  t.same(await live(a, ''), ['urn:r1', 'urn:r2']);
  await regs.delete('urn:r1');
  t.same(await live(a, ''), ['urn:r2']);
  await regs.delete('urn:r2');
  t.same(await live(a, ''), []);
});

t.test('per tenant: a registration of one tenant is not another one', async (t) => {
  const [a, b] = await twoStores(t, 'live-regs-');
  t.same(await live(a, 'x'), []);
  t.same(await live(a, 'y'), []);
  await b.collection('y', REGISTRATIONS).insert('urn:y', reg('urn:y'));
  t.same(await live(a, 'x'), []);
  t.same(await live(a, 'y'), ['urn:y']);
});

t.test('expiry is judged at each request, not when listed', async (t) => {
  const [a] = await twoStores(t, 'live-regs-');
  const soon = new Date(Date.now() + 150).toISOString();
  await a.collection('', REGISTRATIONS).insert('urn:soon', reg('urn:soon', { expiresAt: soon }));
  t.same(await live(a, ''), ['urn:soon']);
  await new Promise((r) => setTimeout(r, 300));
  t.same(await live(a, ''), [], 'expired since, the collection unchanged');
});

t.test('the generation: moved by insert, replace and delete, not by a refused insert nor a bump', async (t) => {
  const [a, b] = await twoStores(t, 'live-regs-');
  const c = a.collection('', 'csourceSubscriptions');
  const gen = (): number => {
    a.freshen();
    return c.generation!();
  };
  const g0 = gen();
  await c.insert('urn:s', { n: 1 });
  const g1 = gen();
  t.not(g1, g0, 'insert');
  t.equal(await c.insert('urn:s', { n: 2 }), false);
  t.equal(gen(), g1, 'a refused insert');
  await b.collection('', 'csourceSubscriptions').put('urn:s', { n: 3 });
  const g2 = gen();
  t.not(g2, g1, 'replace, by another store');
  t.equal(await c.bump('urn:s', 'counters', { inc: { timesSent: 1 } }), true);
  t.equal(gen(), g2, 'bump');
  await c.delete('urn:s');
  t.not(gen(), g2, 'delete');
});

t.test('many tenants: past the kept number, answers stay right', async (t) => {
  const [a, b] = await twoStores(t, 'live-regs-');
  await b.collection('t7', REGISTRATIONS).insert('urn:t7', reg('urn:t7'));
  for (let i = 0; i < 1100; i++) t.same(await live(a, `t${i}`), i === 7 ? ['urn:t7'] : [], `t${i}`, { diagnostic: false });
  await b.collection('t1099', REGISTRATIONS).insert('urn:t1099', reg('urn:t1099'));
  t.same(await live(a, 't1099'), ['urn:t1099']);
  t.same(await live(a, 't7'), ['urn:t7']);
});
