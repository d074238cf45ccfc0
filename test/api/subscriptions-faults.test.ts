// Faulty receivers (issue 4): one that answers 500, one that never answers, one that closes the connection, and
// a port where nothing listens. Their counters and status say so; a healthy subscription on the same entity gets
// every notification meanwhile; the broker keeps serving.
import t from 'tap';
import { createServer, type Server } from 'node:http';
import type { Socket } from 'node:net';
import { startBroker, call, NGSI, type Broker } from './helpers/broker.js';

let broker: Broker;
let server: Server;
let base = '';
const healthy: number[] = [];
let hanging = 0;
const sockets = new Set<Socket>();

t.before(async () => {
  server = createServer((req, res) => {
    let text = '';
    req.on('data', (d) => {
      text += String(d);
    });
    req.on('end', () => {
      if (req.url === '/ok') {
        healthy.push(JSON.parse(text).data[0].n.value);
        res.writeHead(200).end();
      } else if (req.url === '/500') res.writeHead(500).end('boom');
      else if (req.url === '/hang') hanging++;
      else if (req.url === '/close') req.socket.destroy();
    });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  broker = await startBroker();
});
t.teardown(async () => {
  await broker.stop();
  for (const s of sockets) s.destroy();
  server.close();
});

async function subscribe(name: string, endpoint: Record<string, unknown>): Promise<string> {
  const id = `urn:ngsi-ld:Subscription:fault-${name}`;
  const r = await call(broker, 'POST', `${NGSI}/subscriptions`, {
    body: { id, type: 'Subscription', entities: [{ type: 'Probe' }], notification: { endpoint } },
  });
  if (r.status !== 201) throw new Error(r.text);
  return id;
}

async function until<T>(read: () => Promise<T>, done: (v: T) => boolean): Promise<T> {
  const deadline = Date.now() + 10_000;
  let v = await read();
  while (!done(v) && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 25));
    v = await read();
  }
  return v;
}

const getSub = async (id: string): Promise<any> => (await call(broker, 'GET', `${NGSI}/subscriptions/${id}`)).json;

t.test(
  'failing receivers are counted as failures with status failed; the healthy one gets every notification; the broker serves',
  async (t) => {
    const ok = await subscribe('ok', { uri: `${base}/ok` });
    const e500 = await subscribe('500', { uri: `${base}/500` });
    // Never answers: the first request waits for its 300 ms timeout; the ones behind it wait in its own queue.
    const hang = await subscribe('hang', { uri: `${base}/hang`, timeout: 300 });
    const closing = await subscribe('close', { uri: `${base}/close` });
    const dead = await subscribe('dead', { uri: 'http://127.0.0.1:1/nothing-listens' });
    const id = 'urn:ngsi-ld:Probe:1';
    t.equal(
      (await call(broker, 'POST', `${NGSI}/entities`, { body: { id, type: 'Probe', n: { type: 'Property', value: 0 } } })).status,
      201,
    );
    for (let i = 1; i <= 20; i++) {
      const r = await call(broker, 'PATCH', `${NGSI}/entities/${id}/attrs`, { body: { n: { type: 'Property', value: i } } });
      t.equal(r.status, 204, `write ${i} answered while receivers fail`);
    }
    const got = await until(
      async () => healthy.slice(),
      (h) => h.length >= 21,
    );
    t.same(
      got,
      Array.from({ length: 21 }, (_, i) => i),
      'the healthy receiver got all 21, in order',
    );

    for (const [sid, what] of [
      [e500, '500'],
      [closing, 'closed connection'],
      [dead, 'refused connection'],
    ] as const) {
      const s = await until(
        () => getSub(sid),
        (v) => v.notification.timesFailed >= 21,
      );
      t.equal(s.notification.timesFailed, 21, `${what}: every notification failed`);
      t.equal(s.notification.timesSent, 21, `${what}: every notification was sent`);
      t.equal(s.notification.status, 'failed', `${what}: notification status failed`);
      t.type(s.notification.lastFailure, 'string');
      t.notOk('lastSuccess' in s.notification);
      t.equal(s.status, 'active', `${what}: the subscription stays active`);
    }
    const h = await until(
      () => getSub(hang),
      (v) => v.notification.timesFailed >= 1,
    );
    t.ok(h.notification.timesFailed >= 1, 'the receiver that never answers fails on its timeout');
    t.equal(h.notification.status, 'failed');
    t.ok(hanging >= 1, 'its requests were sent');
    const s = await until(
      () => getSub(ok),
      (v) => v.notification.timesSent >= 21,
    );
    t.equal(s.notification.timesSent, 21);
    t.equal(s.notification.timesFailed, 0);
    t.equal(s.notification.status, 'ok');
    t.equal((await call(broker, 'GET', `${NGSI}/entities/${id}`)).json.n.value, 20, 'the broker keeps serving');
    t.equal((await fetch(`http://127.0.0.1:${broker.healthPort}/live`)).status, 200);
  },
);

t.test('a receiver that recovers turns the notification status back to ok', async (t) => {
  let fail = true;
  const flaky = createServer((req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(fail ? 503 : 200).end());
  });
  await new Promise<void>((r) => flaky.listen(0, '127.0.0.1', r));
  t.teardown(() => flaky.close());
  const sid = `urn:ngsi-ld:Subscription:flaky`;
  const r = await call(broker, 'POST', `${NGSI}/subscriptions`, {
    body: {
      id: sid,
      type: 'Subscription',
      entities: [{ id: 'urn:ngsi-ld:Probe:f', type: 'Probe' }],
      notification: { endpoint: { uri: `http://127.0.0.1:${(flaky.address() as { port: number }).port}/n` } },
    },
  });
  t.equal(r.status, 201);
  await call(broker, 'POST', `${NGSI}/entities`, { body: { id: 'urn:ngsi-ld:Probe:f', type: 'Probe', n: { type: 'Property', value: 0 } } });
  t.equal(
    (
      await until(
        () => getSub(sid),
        (v) => v.notification.timesFailed >= 1,
      )
    ).notification.status,
    'failed',
  );
  fail = false;
  await call(broker, 'PATCH', `${NGSI}/entities/urn:ngsi-ld:Probe:f/attrs`, { body: { n: { type: 'Property', value: 1 } } });
  // timesSent counts a notification when it goes out; its answer (status, lastSuccess) follows.
  const s = await until(
    () => getSub(sid),
    (v) => v.notification.timesSent >= 2 && v.notification.lastSuccess !== undefined,
  );
  t.equal(s.notification.status, 'ok');
  t.equal(s.notification.timesFailed, 1);
  t.type(s.notification.lastSuccess, 'string');
  t.type(s.notification.lastFailure, 'string');
});

t.test('throttling drops notifications closer than its period to the last one sent', async (t) => {
  const seen: number[] = [];
  const recv = createServer((req, res) => {
    let b = '';
    req.on('data', (d) => {
      b += String(d);
    });
    req.on('end', () => {
      seen.push(JSON.parse(b).data[0].n.value);
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((r) => recv.listen(0, '127.0.0.1', r));
  t.teardown(() => recv.close());
  const uri = `http://127.0.0.1:${(recv.address() as { port: number }).port}`;
  const mk = async (id: string, extra: Record<string, unknown>): Promise<void> => {
    const r = await call(broker, 'POST', `${NGSI}/subscriptions`, {
      body: {
        id,
        type: 'Subscription',
        entities: [{ id: 'urn:ngsi-ld:Probe:th', type: 'Probe' }],
        notification: { endpoint: { uri: `${uri}/${id}` } },
        ...extra,
      },
    });
    t.equal(r.status, 201, r.text);
  };
  await mk('urn:ngsi-ld:Subscription:throttled', { throttling: 3600 });
  await mk('urn:ngsi-ld:Subscription:unthrottled', {});
  await call(broker, 'POST', `${NGSI}/entities`, {
    body: { id: 'urn:ngsi-ld:Probe:th', type: 'Probe', n: { type: 'Property', value: 0 } },
  });
  for (let i = 1; i <= 3; i++)
    await call(broker, 'PATCH', `${NGSI}/entities/urn:ngsi-ld:Probe:th/attrs`, { body: { n: { type: 'Property', value: i } } });
  const control = await until(
    () => getSub('urn:ngsi-ld:Subscription:unthrottled'),
    (v) => v.notification.timesSent >= 4,
  );
  t.equal(control.notification.timesSent, 4, 'the unthrottled subscription sent all four');
  const throttled = await getSub('urn:ngsi-ld:Subscription:throttled');
  t.equal(throttled.notification.timesSent, 1, 'the throttled one sent only the first');
  t.equal(throttled.notification.timesFailed, 0, 'a throttled notification is no failure');
});
