// The notification queue's total byte budget in a real broker (issue 13 item 5: 100 dead endpoints took the broker
// from 200 to 390 MB). 100 subscriptions to 100 receivers that accept the connection and never answer, one healthy
// receiver, a stream of writes: /health shows the queue within --notificationQueueBytes and the drops, the healthy
// receiver gets every notification, and the dead subscriptions' timesFailed count exactly the drops; deleting
// them frees the queue.
import t from 'tap';
import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { createServer as createTcpServer, type Server as TcpServer, type Socket } from 'node:net';
import { startBroker, runBroker, runBrokerHere, call, NGSI, type Broker } from './helpers/broker.js';

const DEAD = 100;
const WRITES = 60;
const BUDGET = 256 * 1024;
const ENTITY = 'urn:ngsi-ld:Probe:budget';

let broker: Broker;
let healthyServer: HttpServer;
const deadServers: TcpServer[] = [];
const sockets = new Set<Socket>();
const healthy: number[] = [];

t.before(async () => {
  healthyServer = createHttpServer((req, res) => {
    let text = '';
    req.on('data', (d) => {
      text += String(d);
    });
    req.on('end', () => {
      healthy.push(JSON.parse(text).data[0].n.value);
      res.writeHead(204).end();
    });
  });
  healthyServer.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => healthyServer.listen(0, '127.0.0.1', r));
  for (let i = 0; i < DEAD; i++) {
    // Accepts and reads, never answers: each request waits for its timeout.
    const server = createTcpServer((s) => {
      sockets.add(s);
      s.resume();
      s.on('close', () => sockets.delete(s));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    deadServers.push(server);
  }
  broker = await startBroker(['--notificationQueueBytes', String(BUDGET)]);
});
t.teardown(async () => {
  await broker.stop();
  for (const s of sockets) s.destroy();
  healthyServer.close();
  for (const s of deadServers) s.close();
});

async function subscribe(id: string, uri: string): Promise<void> {
  // A timeout longer than the test: no dead request ends within it, so every failure counted is a drop.
  const r = await call(broker, 'POST', `${NGSI}/subscriptions`, {
    body: { id, type: 'Subscription', entities: [{ type: 'Probe' }], notification: { endpoint: { uri, timeout: 600_000 } } },
  });
  if (r.status !== 201) throw new Error(r.text);
}

async function until<T>(read: () => Promise<T>, done: (v: T) => boolean, ms = 30_000): Promise<T> {
  const deadline = Date.now() + ms;
  let v = await read();
  while (!done(v) && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 50));
    v = await read();
  }
  return v;
}

const queue = async (): Promise<any> => (await call(`http://127.0.0.1:${broker.healthPort}`, 'GET', '/health')).json.notifications;
const subscriptions = async (): Promise<any[]> => (await call(broker, 'GET', `${NGSI}/subscriptions?limit=1000`)).json;

t.test('100 dead endpoints: the queue stays within its budget, the healthy receiver gets everything, drops are failures', async (t) => {
  for (let i = 0; i < DEAD; i++) {
    const port = (deadServers[i]!.address() as { port: number }).port;
    await subscribe(`urn:ngsi-ld:Subscription:dead-${i}`, `http://127.0.0.1:${port}/never-answers`);
  }
  await subscribe('urn:ngsi-ld:Subscription:healthy', `http://127.0.0.1:${(healthyServer.address() as { port: number }).port}/ok`);
  t.equal(
    (await call(broker, 'POST', `${NGSI}/entities`, { body: { id: ENTITY, type: 'Probe', n: { type: 'Property', value: 0 } } })).status,
    201,
  );
  t.same(
    await until(
      async () => healthy.slice(),
      (h) => h.length >= 1,
    ),
    [0],
    'the healthy receiver answered the first notification',
  );

  let most = 0;
  const statuses = new Set<number>();
  for (let i = 1; i <= WRITES; i++) {
    statuses.add((await call(broker, 'PATCH', `${NGSI}/entities/${ENTITY}/attrs`, { body: { n: { type: 'Property', value: i } } })).status);
    if (i % 10 === 0) most = Math.max(most, (await queue()).bytes);
  }
  t.same([...statuses], [204], 'every write answered 204 meanwhile');
  const got = await until(
    async () => healthy.slice(),
    (h) => h.length >= WRITES + 1,
  );
  t.same(
    got,
    Array.from({ length: WRITES + 1 }, (_, i) => i),
    'the healthy receiver got every notification, in order',
  );

  // The healthy endpoint's last request may still count in flight a moment after its receiver got it (the notifier
  // has not read the answer yet): read once only the dead endpoints' are (one each at most).
  const q = await until(queue, (v) => v.items + v.inFlight + v.dropped >= (WRITES + 1) * DEAD && v.inFlight <= DEAD);
  t.equal(q.budgetBytes, BUDGET, '/health shows the budget');
  t.ok(q.bytes <= BUDGET && most <= BUDGET, `the waiting bytes never went past it (${q.bytes}, at most ${most} seen)`);
  t.ok(
    q.items > 0 && q.endpointsQueued > 0 && q.endpointsQueued <= DEAD,
    `notifications wait at the dead endpoints (${q.items} at ${q.endpointsQueued})`,
  );
  t.ok(q.dropped > 0, `notifications were dropped (${q.dropped})`);
  t.equal(q.items + q.inFlight + q.dropped, (WRITES + 1) * DEAD, 'every dead notification waits, is in flight or was dropped');

  // Counters reach the store at most a second after they change.
  const failed = (subs: any[]): number => subs.filter((s) => s.id.includes(':dead-')).reduce((n, s) => n + s.notification.timesFailed, 0);
  const subs = await until(subscriptions, (v) => failed(v) >= q.dropped);
  t.equal(failed(subs), q.dropped, "the dead subscriptions' timesFailed add up to the drops");
  const dropping = subs.filter((s) => s.id.includes(':dead-') && s.notification.timesFailed > 0);
  t.ok(
    dropping.length > 0 && dropping.every((s) => s.notification.status === 'failed' && typeof s.notification.lastFailure === 'string'),
    `each subscription that lost notifications says failed (${dropping.length})`,
  );
  const h = subs.find((s) => s.id === 'urn:ngsi-ld:Subscription:healthy');
  t.match(h.notification, { timesSent: WRITES + 1, timesFailed: 0, status: 'ok' }, 'the healthy subscription lost nothing');
  t.ok(
    broker.logs.some((l) => l.includes('notifications dropped by the queue limits')),
    'the drops were logged',
  );
  t.ok(broker.logs.filter((l) => l.includes('notifications dropped by the queue limits')).length <= 3, 'in a few lines, not one per drop');
});

t.test('deleting the dead subscriptions frees their queue and ends their requests', async (t) => {
  const statuses = new Set<number>();
  for (let i = 0; i < DEAD; i++)
    statuses.add((await call(broker, 'DELETE', `${NGSI}/subscriptions/urn:ngsi-ld:Subscription:dead-${i}`)).status);
  t.same([...statuses], [204], 'all deleted');
  const q = await until(queue, (v) => v.items === 0 && v.inFlight === 0);
  t.match(q, { bytes: 0, items: 0, inFlight: 0, endpointsQueued: 0 }, 'nothing waits and nothing is in flight any more');
  const before = healthy.length;
  t.equal((await call(broker, 'PATCH', `${NGSI}/entities/${ENTITY}/attrs`, { body: { n: { type: 'Property', value: -1 } } })).status, 204);
  t.same(
    await until(
      async () => healthy.slice(before),
      (h) => h.length >= 1,
    ),
    [-1],
    'the healthy subscription notifies as before',
  );
  t.equal((await queue()).dropped, q.dropped, 'and nothing more is dropped');
});

t.test('--notificationQueueBytes must be a positive integer: otherwise one line and exit status 1; -u lists it', async (t) => {
  for (const value of ['0', '-5', 'lots', '1.5', '']) {
    // The first from the spawned command, the others as main.ts runs them, in this process (no process start each).
    const r = await (value === '0' ? runBroker : runBrokerHere)(['--notificationQueueBytes', value]);
    t.equal(r.code, 1, `'${value}' is refused`);
    t.equal(r.stderr.trim().split('\n').length, 1, `in one line for '${value}'`);
    t.match(r.stderr, /--notificationQueueBytes/);
  }
  const u = await runBrokerHere(['-u']);
  t.match(u.stdout, /--notificationQueueBytes .*\(default: 67108864\)/);
});
