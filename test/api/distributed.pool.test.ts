// Forwarding from the pipeline's worker threads (the default runner, not the inline one the other distributed
// tests use): the undici pools live in each thread, and a request waiting on a slow source does not hold up one that
// touches no source.
import t from 'tap';
import { startBroker, call, NGSI, type Broker } from './helpers/broker.js';
import { startMockSource } from './helpers/mock-source.js';

let a: Broker;
let b: Broker;
t.before(async () => {
  [a, b] = await Promise.all([startBroker(['--connectionPoolSize', '2', '--contextSourceAlias', 'pa'], {}, { pool: true }), startBroker()]);
});
t.teardown(async () => {
  await Promise.all([a.stop(), b.stop()]);
});

t.test('a retrieve on a pooled broker merges a source; a hanging source does not stop other requests', async (t) => {
  const id = 'urn:ngsi-ld:Pool:1';
  t.equal((await call(b, 'POST', `${NGSI}/entities`, { body: { id, type: 'Pooled', p: { type: 'Property', value: 1 } } })).status, 201);
  const reg = {
    id: 'urn:ngsi-ld:ContextSourceRegistration:pool',
    type: 'ContextSourceRegistration',
    endpoint: b.url,
    information: [{ entities: [{ type: 'Pooled' }] }],
  };
  t.equal((await call(a, 'POST', `${NGSI}/csourceRegistrations`, { body: reg })).status, 201);
  const r = await call(a, 'GET', `${NGSI}/entities/${id}`);
  t.equal(r.status, 200, r.text);
  t.equal(r.json.p.value, 1);

  const mock = await startMockSource(() => ({ status: 200, hang: true }));
  t.teardown(() => mock.stop());
  const slow = {
    id: 'urn:ngsi-ld:ContextSourceRegistration:slow',
    type: 'ContextSourceRegistration',
    endpoint: mock.url,
    management: { timeout: 3000 },
    information: [{ entities: [{ type: 'Slow' }] }],
  };
  t.equal((await call(a, 'POST', `${NGSI}/csourceRegistrations`, { body: slow })).status, 201);
  // Four requests waiting on the slow source, more than the pool's two threads, and then one that touches no source:
  // it is answered while they still wait (their answers come only after the source's timeout).
  let slowDone = 0;
  const waiting = [1, 2, 3, 4].map((i) =>
    call(a, 'GET', `${NGSI}/entities/urn:ngsi-ld:Slow:${i}`).then((x) => {
      slowDone++;
      return x;
    }),
  );
  while (mock.received.length < 4) await new Promise((res) => setTimeout(res, 10));
  const other = await call(a, 'GET', `${NGSI}/entities?type=Unrelated&local=true`);
  t.equal(other.status, 200);
  t.equal(slowDone, 0, 'answered while the requests forwarded to the slow source still wait');
  for (const w of await Promise.all(waiting)) {
    t.equal(w.status, 404);
    t.match(w.headers.get('ngsild-warning') ?? '', /timeout/);
  }
});

t.test('a subordinate subscription made from a pooled broker: the source notifies a worker thread, which relays', async (t) => {
  const receiver = await startMockSource(() => ({ status: 204 }));
  t.teardown(() => receiver.stop());
  const reg = {
    id: 'urn:ngsi-ld:ContextSourceRegistration:pool-subs',
    type: 'ContextSourceRegistration',
    endpoint: b.url,
    information: [{ entities: [{ type: 'PooledSub' }] }],
  };
  t.equal((await call(a, 'POST', `${NGSI}/csourceRegistrations`, { body: reg })).status, 201);
  const sub = {
    id: 'urn:ngsi-ld:Subscription:pool-subs',
    type: 'Subscription',
    entities: [{ type: 'PooledSub' }],
    notification: { format: 'concise', endpoint: { uri: `${receiver.url}/notify` } },
  };
  t.equal((await call(a, 'POST', `${NGSI}/subscriptions`, { body: sub })).status, 201);
  const made = async (): Promise<boolean> =>
    ((await call(b, 'GET', `${NGSI}/subscriptions`)).json as Array<{ entities?: Array<{ type: string }> }>).some(
      (s) => s.entities?.[0]?.type === 'PooledSub',
    );
  for (let i = 0; i < 160 && !(await made()); i++) await new Promise((r) => setTimeout(r, 50));
  t.ok(await made(), 'made on the source');
  const id = 'urn:ngsi-ld:PooledSub:1';
  t.equal((await call(b, 'POST', `${NGSI}/entities`, { body: { id, type: 'PooledSub', p: { type: 'Property', value: 7 } } })).status, 201);
  for (let i = 0; i < 160 && receiver.received.length === 0; i++) await new Promise((r) => setTimeout(r, 50));
  const body = JSON.parse(receiver.received[0]?.body ?? '{}') as { subscriptionId?: string; data?: unknown[] };
  t.equal(body.subscriptionId, sub.id);
  t.same(body.data, [{ id, type: 'PooledSub', p: 7 }], 'in the concise format the original asks');
});
