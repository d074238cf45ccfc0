// The notification queue's total byte budget (issue 13 item 5): however many endpoints are dead, the waiting
// notifications of all of them never exceed it; over it, the oldest notification of the slowest endpoint goes first,
// so a healthy receiver keeps getting everything; every drop is a failure of its subscription; a deleted
// subscription's queue is freed.
import t from 'tap';
import { createServer, type Server } from 'node:http';
import type { Socket } from 'node:net';
import { pino } from 'pino';
import { Delivery, notificationBytes, type DeliveryOutcome } from '../../src/notify/delivery.js';
import { CounterBook } from '../../src/notify/counters.js';
import { notificationStatus, type SubscriptionCounters } from '../../src/ngsild/subscription/model.js';
import type { Store } from '../../src/store/contract.js';
import type { DueNotification } from '../../src/notify/channel.js';

const log = pino({ level: 'silent' });
const sockets = new Set<Socket>();

/** A receiver: answers 204 (healthy) or reads the request and never answers (dead). */
async function receiver(healthy: boolean, got: number[] = []): Promise<{ server: Server; url: string; got: number[] }> {
  const server = createServer((req, res) => {
    let b = '';
    req.on('data', (d) => {
      b += String(d);
    });
    req.on('end', () => {
      if (!healthy) return;
      got.push(JSON.parse(b).n as number);
      res.writeHead(204).end();
    });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, url: `http://127.0.0.1:${(server.address() as { port: number }).port}`, got };
}

const closeAll = (...servers: Server[]): void => {
  for (const s of sockets) s.destroy();
  for (const s of servers) s.close();
};

// n has five digits in every test, so every notification counts the same bytes against the budget.
const due = (uri: string, n: number, extra: Partial<DueNotification> = {}): DueNotification => ({
  tenant: '',
  subscriptionId: `urn:s:${uri}`,
  uri,
  headers: ['Content-Type', 'application/json'],
  body: `{"n":${n}}`,
  orderKey: `k ${uri}`,
  seq: n,
  timeoutMs: 60_000,
  throttlingMs: 0,
  ...extra,
});
const SIZE = notificationBytes(due('http://127.0.0.1:1/x', 10_000));

async function until(cond: () => boolean, ms = 30_000): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (!cond() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
  return cond();
}
const nextTurn = (): Promise<void> => new Promise((r) => setImmediate(r));
const numberOf = (o: DeliveryOutcome): number => JSON.parse(o.due.body).n as number;

t.test('with 100 dead endpoints the waiting notifications never exceed the budget; each drop is an unsent failure', async (t) => {
  const dead = await receiver(false);
  t.teardown(() => closeAll(dead.server));
  const outcomes: DeliveryOutcome[] = [];
  const budget = 40 * SIZE;
  const d = new Delivery((o) => outcomes.push(o), log, { budgetBytes: budget });
  let most = 0;
  let n = 10_000;
  for (let round = 0; round < 20; round++) {
    for (let i = 0; i < 100; i++) {
      d.enqueue(due(`${dead.url}/dead/${i}`, n++));
      most = Math.max(most, d.stats().bytes);
    }
    await nextTurn();
  }
  const s = d.stats();
  t.ok(most <= budget, `at most ${budget} bytes waiting at any time (the most: ${most})`);
  t.equal(s.budgetBytes, budget);
  t.equal(s.bytes, s.items * SIZE, 'the bytes are those of the notifications waiting');
  t.ok(s.dropped > 0, `drops happened (${s.dropped})`);
  t.equal(outcomes.length, s.dropped, 'every drop was reported, and nothing else (no dead endpoint answered)');
  t.ok(
    outcomes.every((o) => !o.ok && !o.sent && /over its .* bytes/.test(o.reason ?? '')),
    'each one a failure that was not sent',
  );
  t.equal(s.items + s.inFlight + s.dropped, 2000, 'every notification is waiting, in flight or dropped');
  t.ok(s.inFlight > 0 && s.inFlight <= 100, `at most one request in flight per dead endpoint, one order key each (${s.inFlight})`);
  t.ok(s.endpointsQueued > 0 && s.endpointsQueued <= 100);
  t.equal(s.endpoints, 100);
  await d.close();
});

t.test(
  'over the budget the oldest of the slowest endpoint goes: one that never answered before one that does, the oldest first among equals',
  async (t) => {
    const ok = await receiver(true);
    const dead = await receiver(false);
    t.teardown(() => closeAll(ok.server, dead.server));
    const outcomes: DeliveryOutcome[] = [];
    const d = new Delivery((o) => outcomes.push(o), log, { budgetBytes: 6 * SIZE });
    const [H, E, D] = [`${ok.url}/h`, `${dead.url}/e`, `${dead.url}/d`];
    d.enqueue(due(H, 10_000));
    t.ok(await until(() => outcomes.length === 1), 'the healthy endpoint answered once');
    t.ok(outcomes[0]!.ok);
    outcomes.length = 0;
    // All in one turn: nothing is sent before the next, so every one of these waits.
    d.enqueue(due(H, 10_001));
    d.enqueue(due(H, 10_002));
    d.enqueue(due(E, 20_001));
    d.enqueue(due(D, 30_001));
    d.enqueue(due(E, 20_002));
    d.enqueue(due(D, 30_002));
    t.equal(d.stats().bytes, 6 * SIZE, 'the budget is full, nothing dropped yet');
    t.equal(outcomes.length, 0);
    d.enqueue(due(E, 20_003));
    d.enqueue(due(D, 30_003));
    d.enqueue(due(H, 10_003));
    d.enqueue(due(H, 10_004));
    d.enqueue(due(H, 10_005));
    d.enqueue(due(H, 10_006));
    d.enqueue(due(H, 10_007));
    t.same(
      outcomes.map(numberOf),
      [20_001, 30_001, 20_002, 30_002, 20_003, 30_003, 10_001],
      'the two that never answered lose their oldest first, in turn; the healthy one loses its oldest only when nothing else waits',
    );
    t.ok(await until(() => ok.got.length === 7), 'the healthy receiver got the rest');
    t.same(ok.got, [10_000, 10_002, 10_003, 10_004, 10_005, 10_006, 10_007]);
    await d.close();
  },
);

t.test('a healthy endpoint gets every notification through a flood towards 50 dead ones', async (t) => {
  const ok = await receiver(true);
  const dead = await receiver(false);
  t.teardown(() => closeAll(ok.server, dead.server));
  const outcomes: DeliveryOutcome[] = [];
  const d = new Delivery((o) => outcomes.push(o), log, { budgetBytes: 30 * SIZE });
  const H = `${ok.url}/h`;
  d.enqueue(due(H, 10_000));
  t.ok(await until(() => ok.got.length === 1), 'the healthy receiver answered once');
  let n = 20_000;
  for (let round = 1; round <= 40; round++) {
    d.enqueue(due(H, 10_000 + round));
    for (let i = 0; i < 50; i++) d.enqueue(due(`${dead.url}/dead/${i}`, n++));
    await nextTurn();
  }
  t.ok(await until(() => ok.got.length === 41), `all 41 reached the healthy receiver (${ok.got.length})`);
  t.same(
    ok.got,
    Array.from({ length: 41 }, (_, i) => 10_000 + i),
    'in order',
  );
  const drops = outcomes.filter((o) => !o.sent);
  t.ok(drops.length > 1000, `the dead endpoints' notifications were dropped (${drops.length})`);
  t.notOk(
    drops.some((o) => o.due.uri === H),
    "none of the healthy one's",
  );
  t.ok(d.stats().bytes <= 30 * SIZE);
  await d.close();
});

t.test('a notification larger than the whole budget is dropped itself and the others stay', async (t) => {
  const dead = await receiver(false);
  t.teardown(() => closeAll(dead.server));
  const outcomes: DeliveryOutcome[] = [];
  const d = new Delivery((o) => outcomes.push(o), log, { budgetBytes: 3 * SIZE });
  d.enqueue(due(`${dead.url}/a`, 10_001));
  d.enqueue(due(`${dead.url}/a`, 10_002));
  d.enqueue(due(`${dead.url}/b`, 10_003, { body: `{"n":10003,"pad":"${'x'.repeat(3 * SIZE)}"}` }));
  t.equal(outcomes.length, 1);
  t.match(outcomes[0], { ok: false, sent: false, reason: /larger than the notification queue/ });
  t.equal(numberOf(outcomes[0]!), 10_003);
  t.match(d.stats(), { items: 2, bytes: 2 * SIZE, dropped: 1 });
  await d.close();
});

t.test('drops are counted as failures of their subscription: timesFailed, lastFailure, status failed', async (t) => {
  const dead = await receiver(false);
  t.teardown(() => closeAll(dead.server));
  const written = new Map<string, SubscriptionCounters>();
  const store = {
    collection: () => ({
      put: async (id: string, doc: unknown) => {
        written.set(id, doc as SubscriptionCounters);
      },
    }),
  } as unknown as Store;
  const counters = new CounterBook(store, log);
  // As the notifier thread wires them (notifier-thread.ts).
  const d = new Delivery((o) => counters.record(o.due.tenant, o.due.subscriptionId, o.ok, o.at, o.reason), log, {
    budgetBytes: 4 * SIZE,
    sending: (o, at) => counters.sending(o.tenant, o.subscriptionId, at),
  });
  for (let i = 0; i < 10; i++) d.enqueue(due(`${dead.url}/x`, 10_000 + i, { subscriptionId: 'urn:ngsi-ld:Subscription:dead' }));
  await counters.close();
  const c = written.get('urn:ngsi-ld:Subscription:dead');
  t.equal(c?.timesFailed, 6, 'six of ten did not fit');
  t.equal(c?.timesSent, 0, 'none of them was sent');
  t.type(c?.lastFailure, 'string');
  t.equal(notificationStatus(c), 'failed');
  t.equal(d.stats().dropped, 6);
  await d.close();
});

t.test("a deleted subscription's notifications are freed at once, its requests in flight aborted, its endpoints removed", async (t) => {
  const dead = await receiver(false);
  t.teardown(() => closeAll(dead.server));
  const outcomes: DeliveryOutcome[] = [];
  const d = new Delivery((o) => outcomes.push(o), log, { sweepMs: 50 });
  for (let i = 0; i < 20; i++) {
    for (let k = 0; k < 10; k++) d.enqueue(due(`${dead.url}/gone/${i}`, 10_000 + k, { subscriptionId: 'urn:gone' }));
  }
  for (let k = 0; k < 5; k++) d.enqueue(due(`${dead.url}/kept`, 10_000 + k, { subscriptionId: 'urn:kept' }));
  await nextTurn();
  t.match(
    d.stats(),
    { items: 200 + 5 - 21, inFlight: 21, endpoints: 21, endpointsQueued: 21 },
    'one in flight per endpoint, the rest waiting',
  );
  d.forget('', 'urn:gone');
  d.forget('other tenant', 'urn:kept');
  await nextTurn();
  t.match(d.stats(), { items: 4, bytes: 4 * SIZE, endpointsQueued: 1 }, "only the kept subscription's notifications wait");
  t.ok(await until(() => d.stats().endpoints === 1, 10_000), "the deleted one's endpoints are gone at the next sweep");
  t.match(d.stats(), { items: 4, inFlight: 1 }, "the kept one's request is still waiting for its answer");
  t.equal(outcomes.length, 20, 'only the aborted requests were reported');
  t.ok(outcomes.every((o) => o.due.subscriptionId === 'urn:gone' && o.sent && o.reason === 'subscription deleted'));
  await d.close();
});
