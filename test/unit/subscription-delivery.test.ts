// Delivery on the notifier thread (issue 4): a receiver that never answers only fills its own bounded queue,
// whose overflow is reported as failures that were not sent; other endpoints are served meanwhile, in order per
// order key; a timeout ends a request that gets no answer.
import t from 'tap';
import { createServer, type Server } from 'node:http';
import type { Socket } from 'node:net';
import { pino } from 'pino';
import { Delivery, notificationBytes, requestHeaders, type DeliveryOutcome } from '../../src/notify/delivery.js';
import { Lane, type Waiting } from '../../src/notify/lane.js';
import type { DueNotification } from '../../src/notify/channel.js';

const log = pino({ level: 'silent' });
const sockets = new Set<Socket>();
const received: number[] = [];

async function listen(handler: (n: number, res: import('node:http').ServerResponse) => void): Promise<{ server: Server; url: string }> {
  const server = createServer((req, res) => {
    let b = '';
    req.on('data', (d) => {
      b += String(d);
    });
    req.on('end', () => handler(JSON.parse(b).n as number, res));
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, url: `http://127.0.0.1:${(server.address() as { port: number }).port}` };
}

const due = (uri: string, n: number, extra: Partial<DueNotification> = {}): DueNotification => ({
  tenant: '',
  subscriptionId: 'urn:s',
  uri,
  headers: ['Content-Type', 'application/json'],
  body: `{"n":${n}}`,
  orderKey: 'k',
  seq: n,
  timeoutMs: undefined,
  throttlingMs: 0,
  ...extra,
});

/** Waits for cond; false when the deadline passed (the caller asserts it, so a stall fails loudly, not slowly). */
async function until(cond: () => boolean, ms = 30_000): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (!cond() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
  return cond();
}

// The healthy endpoint's queue is bounded too (queueMax 3), so the test sends the next pair only once Delivery has
// reported the previous one: a receiver having read a request does not mean the sender has its answer yet, and
// waiting on the receiver alone overflowed the healthy queue under CPU load (the "stall" once seen in the suite).
t.test('a dead receiver fills only its own bounded queue; the overflow fails unsent; others are delivered in order', async (t) => {
  const hang = await listen(() => {
    /* never answers */
  });
  const ok = await listen((n, res) => {
    received.push(n);
    res.writeHead(204).end();
  });
  t.teardown(() => {
    for (const s of sockets) s.destroy();
    hang.server.close();
    ok.server.close();
  });
  received.length = 0;
  const outcomes: DeliveryOutcome[] = [];
  const d = new Delivery((o) => outcomes.push(o), log, { queueMax: 3 });
  for (let i = 0; i < 5; i++) d.enqueue(due(`${hang.url}/n`, i, { timeoutMs: 60_000 }));
  const overflow = outcomes.filter((o) => !o.sent);
  t.equal(overflow.length, 2, 'two did not fit');
  t.ok(
    overflow.every((o) => !o.ok && /queue full/.test(o.reason ?? '')),
    'reported as failures: queue full',
  );
  const healthy = (): DeliveryOutcome[] => outcomes.filter((o) => o.due.uri.startsWith(ok.url));
  for (let i = 0; i < 50; i++) {
    d.enqueue(due(`${ok.url}/n`, i, { orderKey: `k${i % 2}` }));
    if (i % 2 === 1 && !(await until(() => healthy().length > i))) {
      t.fail(`notification ${i} to the healthy endpoint not reported within 30 s (${healthy().length} reported)`);
      break;
    }
  }
  t.ok(
    healthy().every((o) => o.ok),
    'every notification to the healthy endpoint succeeded',
  );
  for (const key of [0, 1]) {
    const sent = received.filter((n) => n % 2 === key);
    t.same(
      sent,
      [...sent].sort((a, b) => a - b),
      `order key k${key} received in order`,
    );
  }
  t.same(
    [...received].sort((a, b) => a - b),
    Array.from({ length: 50 }, (_, i) => i),
    'the healthy endpoint got all 50 meanwhile',
  );
  t.equal(d.pending(), 3, 'the dead endpoint still holds its three, no more');
  await d.close();
});

t.test('a report that throws, or a notification that cannot be sent, does not stop its lane', async (t) => {
  const ok = await listen((n, res) => {
    received.push(n);
    res.writeHead(204).end();
  });
  t.teardown(() => {
    for (const s of sockets) s.destroy();
    ok.server.close();
  });
  received.length = 0;
  const outcomes: DeliveryOutcome[] = [];
  let throws = 2;
  const d = new Delivery((o) => {
    outcomes.push(o);
    if (throws-- > 0) throw new Error('report failed');
  }, log);
  d.enqueue(due(`${ok.url}/n`, 1));
  d.enqueue({ ...due(`${ok.url}/n`, 2), headers: undefined as unknown as string[] });
  d.enqueue(due(`${ok.url}/n`, 3));
  t.ok(await until(() => outcomes.length >= 3), 'all three reported');
  t.same(received, [1, 3], 'the lane went on after both throwing reports and the broken notification');
  t.match(outcomes[1], { ok: false, sent: true, reason: /TypeError/ }, 'the broken one is a failure');
  t.equal(d.pending(), 0, 'nothing left in the queue');
  await d.close();
});

t.test('a request without an answer fails at its timeout; a 4xx/5xx answer and a refused connection are failures', async (t) => {
  const hang = await listen(() => {
    /* never answers */
  });
  const bad = await listen((_n, res) => res.writeHead(404).end());
  t.teardown(() => {
    for (const s of sockets) s.destroy();
    hang.server.close();
    bad.server.close();
  });
  const outcomes: DeliveryOutcome[] = [];
  const d = new Delivery((o) => outcomes.push(o), log);
  d.enqueue(due(`${hang.url}/n`, 1, { timeoutMs: 100 }));
  d.enqueue(due(`${bad.url}/n`, 2));
  d.enqueue(due('http://127.0.0.1:1/n', 3));
  t.ok(await until(() => outcomes.length >= 3), 'three outcomes');
  const by = (n: number) => outcomes.find((o) => o.due.body === `{"n":${n}}`)!;
  t.match(by(1), { ok: false, sent: true, reason: /no answer within 100 ms/ });
  t.match(by(2), { ok: false, sent: true, reason: 'HTTP 404' });
  t.match(by(3), { ok: false, sent: true });
  await d.close();
});

t.test('notifications of one order key that arrive out of seq order in one turn are sent in seq order', async (t) => {
  const ok = await listen((n, res) => {
    received.push(n);
    res.writeHead(204).end();
  });
  t.teardown(() => {
    for (const s of sockets) s.destroy();
    ok.server.close();
  });
  received.length = 0;
  const outcomes: DeliveryOutcome[] = [];
  const d = new Delivery((o) => outcomes.push(o), log);
  // As from two pipeline workers whose messages Node handed over in the other order.
  for (const n of [3, 1, 4, 2, 6, 5]) d.enqueue(due(`${ok.url}/n`, n, { orderKey: 'sub entity' }));
  t.ok(await until(() => outcomes.length >= 6), 'all six reported');
  t.same(received, [1, 2, 3, 4, 5, 6], 'sent in the order of their write sequence');
  await d.close();
});

t.test('a lane keeps each order key sorted by seq and leaves the other keys in their order', async (t) => {
  const lane = new Lane(undefined);
  let tag = 0;
  const item = (orderKey: string, seq: number): Waiting => ({ due: { ...due('http://x/', seq), orderKey }, bytes: 1, tag: tag++ });
  for (const [k, s] of [
    ['a', 5],
    ['b', 9],
    ['a', 2],
    ['c', 1],
    ['b', 3],
    ['a', 7],
    ['a', 6],
  ] as const)
    lane.push(item(k, s));
  const out: string[] = [];
  const tags: number[] = [];
  for (let w = lane.shift(); w !== undefined; w = lane.shift()) {
    out.push(`${w.due.orderKey}${w.due.seq}`);
    tags.push(w.tag);
  }
  t.same(out, ['a2', 'a5', 'b3', 'b9', 'c1', 'a6', 'a7'], 'a late item goes before the first of its key with a greater seq');
  t.same(tags, [0, 0, 1, 1, 3, 5, 5], 'an item sorted in ahead takes the age of the one it precedes: the head is always the oldest');
  t.equal(lane.waiting, 0);
  t.equal(lane.headTag, Infinity, 'an empty lane has no head');
  lane.push(item('a', 1));
  t.same(lane.shift()?.due.seq, 1, 'a key whose items all went out starts afresh');
});

t.test('a lane gives up the items of a deleted subscription and keeps the others in order', async (t) => {
  const lane = new Lane(undefined);
  let tag = 0;
  const item = (sub: string, seq: number): Waiting => ({
    due: { ...due('http://x/', seq), subscriptionId: sub, orderKey: `${sub} e` },
    bytes: 1,
    tag: tag++,
  });
  for (const [sub, seq] of [
    ['gone', 1],
    ['kept', 1],
    ['gone', 2],
    ['kept', 2],
    ['gone', 3],
  ] as const)
    lane.push(item(sub, seq));
  const removed = lane.removeWhere((w) => w.due.subscriptionId === 'gone');
  t.same(
    removed.map((w) => w.due.seq),
    [1, 2, 3],
    "the deleted subscription's three",
  );
  t.equal(lane.waiting, 2);
  t.equal(lane.headTag, 1, 'the head is the oldest left');
  lane.push(item('gone', 1));
  t.same(
    [lane.shift(), lane.shift(), lane.shift()].map((w) => `${w?.due.subscriptionId}${w?.due.seq}`),
    ['kept1', 'kept2', 'gone1'],
    'the removed key starts afresh after the others',
  );
});

t.test('a notification is counted sent before its receiver can see it, and its outcome once answered', async (t) => {
  const { CounterBook } = await import('../../src/notify/counters.js');
  const store = { collection: () => ({ put: async () => undefined }) } as unknown as import('../../src/store/contract.js').Store;
  const counters = new CounterBook(store, log);
  const seenByReceiver: Array<number | undefined> = [];
  const rx = await listen((_n, res) => {
    // What a GET of the subscription would show while the receiver holds the notification.
    seenByReceiver.push(counters.get('', 'urn:s')?.timesSent);
    res.writeHead(204).end();
  });
  t.teardown(() => {
    for (const s of sockets) s.destroy();
    rx.server.close();
  });
  t.equal(counters.get('', 'urn:s'), undefined, 'no counters before the first notification');
  const outcomes: DeliveryOutcome[] = [];
  const d = new Delivery(
    (o) => {
      counters.record(o.due.tenant, o.due.subscriptionId, o.ok, o.at, o.reason);
      outcomes.push(o);
    },
    log,
    {
      sending: (o, at) => counters.sending(o.tenant, o.subscriptionId, at),
    },
  );
  d.enqueue(due(`${rx.url}/n`, 1));
  t.ok(await until(() => outcomes.length === 1), 'answered');
  t.same(seenByReceiver, [1], 'timesSent was 1 while the receiver had it');
  const c = counters.get('', 'urn:s')!;
  t.match(c, { timesSent: 1, timesFailed: 0 });
  t.equal(c.lastNotification, outcomes[0]!.at, 'lastNotification is when it was sent');
  t.equal(c.lastSuccess, outcomes[0]!.at);
  await d.close();
  await counters.close();
});

t.test('request headers keep the names as given; a later one replaces an earlier one of its name in any case', async (t) => {
  t.same(requestHeaders(['Content-Type', 'application/json', 'Link', '<x>', 'NGSILD-Tenant', 'city', 'X-Additional-Key', 'v']), {
    'Content-Type': 'application/json',
    Link: '<x>',
    'NGSILD-Tenant': 'city',
    'X-Additional-Key': 'v',
  });
  t.same(requestHeaders(['NGSILD-Tenant', 'city', 'ngsild-tenant', 'other', 'X-A', '1', 'X-A', '2']), {
    'ngsild-tenant': 'other',
    'X-A': '2',
  });
  t.same(requestHeaders([]), {});
});

t.test(
  'a notification left unbuilt (join, owner) is built in its turn: the later ones of its order key wait; a failed build fails unsent, an empty one is dropped',
  async (t) => {
    const ok = await listen((n, res) => {
      received.push(n);
      res.writeHead(204).end();
    });
    t.teardown(() => {
      for (const s of sockets) s.destroy();
      ok.server.close();
    });
    received.length = 0;
    const outcomes: DeliveryOutcome[] = [];
    const built: number[] = [];
    const d = new Delivery((o) => outcomes.push(o), log, {
      complete: async (unbuilt) => {
        const n = unbuilt.seq;
        // The first build is slow: the already built notification behind it must not overtake it.
        if (n === 1) await new Promise((r) => setTimeout(r, 200));
        if (n === 3) throw new Error('store closed');
        if (n === 4) return 'gone';
        if (n === 6) return 'empty';
        built.push(n);
        unbuilt.body = `{"n":${n}}`;
        unbuilt.headers = ['Content-Type', 'application/json'];
        unbuilt.join = undefined;
        return 'ready';
      },
    });
    const unbuilt = (n: number): DueNotification => ({
      ...due(`${ok.url}/n`, n),
      body: '',
      headers: [],
      join: { entities: [{ id: `urn:e:${n}`, type: ['T'] } as never], trigger: undefined },
    });
    d.enqueue(unbuilt(1));
    d.enqueue(due(`${ok.url}/n`, 2));
    d.enqueue(unbuilt(3));
    d.enqueue(unbuilt(4));
    d.enqueue(unbuilt(6));
    d.enqueue(unbuilt(5));
    t.ok(await until(() => outcomes.length === 5), 'every notification but the empty one has its outcome');
    t.same(received, [1, 2, 5], 'the slow build went first; the failed and the empty ones were not sent');
    t.same(built, [1, 5]);
    t.notOk(
      outcomes.some((o) => o.due.seq === 6),
      'one left with nothing the owner may read (seed 000 §5.3) has no outcome: no counter moves',
    );
    const byN = (n: number): DeliveryOutcome | undefined => outcomes.find((o) => o.due.seq === n);
    t.match(byN(3), { ok: false, sent: false, reason: /cannot be built: store closed/ });
    t.match(byN(4), { ok: false, sent: false, reason: 'subscription deleted' });
    t.equal(d.pending(), 0);
    await d.close();
  },
);

t.test('an unbuilt notification waits counted as its notified entities', async (t) => {
  const base = { ...due('http://127.0.0.1:9/n', 1), body: '', headers: [] };
  const small = notificationBytes({ ...base, join: { entities: [{ id: 'urn:e:1', type: ['T'] } as never], trigger: undefined } });
  const big = notificationBytes({
    ...base,
    join: { entities: [{ id: 'urn:e:1', type: ['T'], text: 'x'.repeat(10_000) } as never], trigger: undefined },
  });
  t.ok(big - small >= 10_000, 'the entities count');
});
