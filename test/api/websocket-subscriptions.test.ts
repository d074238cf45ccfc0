// Subscriptions notified on the WebSocket connection that made them (README "WebSocket"): the endpoint
// `urn:ngsi-ld:WebSocket:<uuid>` the broker gives a connection in its first message; notifications pushed on it
// from the notifier thread; the subscriptions deleted by the broker itself when the connection closes.
import t from 'tap';
import { startBroker, call, NGSI, type Broker } from './helpers/broker.js';
import { WsClient } from './helpers/ws-client.js';

let broker: Broker;
t.before(async () => {
  broker = await startBroker([], {}, { http: true });
});
t.teardown(() => broker.stop());

const subscription = (id: string, uri: string, type = 'Room') => ({
  id,
  type: 'Subscription',
  entities: [{ type }],
  notification: { endpoint: { uri } },
});

async function until(check: () => Promise<boolean> | boolean, ms = 5000): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (await check()) return true;
    await new Promise((r) => setTimeout(r, 20));
  }
  return false;
}

t.test("a connection's first message names it; a subscription on it is notified on it", async (t) => {
  const c = await WsClient.open(broker.port);
  t.match(c.connection, /^urn:ngsi-ld:WebSocket:[0-9a-f-]{36}$/);
  const made = await c.request({
    method: 'POST',
    path: `${NGSI}/subscriptions`,
    body: subscription('urn:ngsi-ld:Subscription:ws1', c.connection!),
  });
  t.equal(made.metadata.status, 201, JSON.stringify(made.body));
  const room = { id: 'urn:ngsi-ld:Room:n1', type: 'Room', temperature: { type: 'Property', value: 20 } };
  t.equal((await call(broker, 'POST', `${NGSI}/entities`, { body: room })).status, 201);
  t.ok(await until(() => c.others.length > 0), 'a notification came');
  const n = c.others[0];
  t.equal(n.metadata.subscriptionId, 'urn:ngsi-ld:Subscription:ws1');
  t.equal(n.metadata.correlationId, undefined, 'a notification answers no request');
  t.equal(n.body.type, 'Notification');
  t.equal(n.body.subscriptionId, 'urn:ngsi-ld:Subscription:ws1');
  t.equal(n.body.data[0].id, 'urn:ngsi-ld:Room:n1');
  t.ok(n.body.notifiedAt, 'notifiedAt is set as it is sent');
  // An update over HTTP that leaves the endpoint as it is keeps it.
  const patched = await call(broker, 'PATCH', `${NGSI}/subscriptions/urn:ngsi-ld:Subscription:ws1`, { body: { description: 'd' } });
  t.equal(patched.status, 204, patched.text);
  // The counters say sent.
  t.ok(
    await until(async () => {
      const r = await call(broker, 'GET', `${NGSI}/subscriptions/urn:ngsi-ld:Subscription:ws1`);
      return r.json.notification?.timesSent >= 1;
    }),
    'counted as sent',
  );
  await c.close();
  t.ok(
    await until(async () => (await call(broker, 'GET', `${NGSI}/subscriptions/urn:ngsi-ld:Subscription:ws1`)).status === 404),
    'deleted once the connection closed',
  );
});

t.test('a WebSocket endpoint must be the connection the subscription is sent on', async (t) => {
  const a = await WsClient.open(broker.port);
  const b = await WsClient.open(broker.port);
  const other = await a.request({
    method: 'POST',
    path: `${NGSI}/subscriptions`,
    body: subscription('urn:ngsi-ld:Subscription:x1', b.connection!),
  });
  t.equal(other.metadata.status, 400);
  t.match(other.body.detail, /must be the connection the subscription is sent on/);
  const http = await call(broker, 'POST', `${NGSI}/subscriptions`, { body: subscription('urn:ngsi-ld:Subscription:x2', a.connection!) });
  t.equal(http.status, 400, 'over HTTP there is no connection');
  for (const uri of ['urn:ngsi-ld:WebSocket:', 'urn:ngsi-ld:WebSocket:not-a-uuid', `${a.connection}x`]) {
    const bad = await a.request({ method: 'POST', path: `${NGSI}/subscriptions`, body: subscription('urn:ngsi-ld:Subscription:x3', uri) });
    t.equal(bad.metadata.status, 400, uri);
  }
  // Moving an HTTP subscription onto another connection is refused too.
  t.equal(
    (await call(broker, 'POST', `${NGSI}/subscriptions`, { body: subscription('urn:ngsi-ld:Subscription:h1', 'http://127.0.0.1:9/n') }))
      .status,
    201,
  );
  const moved = await call(broker, 'PATCH', `${NGSI}/subscriptions/urn:ngsi-ld:Subscription:h1`, {
    body: { notification: { endpoint: { uri: a.connection } } },
  });
  t.equal(moved.status, 400);
  await a.close();
  await b.close();
});

t.test('the subscriptions of a closed connection are deleted in every tenant it made them in, and only those', async (t) => {
  const c = await WsClient.open(broker.port);
  const inTenant = await c.request({
    method: 'POST',
    path: `${NGSI}/subscriptions`,
    headers: { 'NGSILD-Tenant': 'wst1' },
    body: subscription('urn:ngsi-ld:Subscription:t1', c.connection!),
  });
  t.equal(inTenant.metadata.status, 201);
  const inDefault = await c.request({
    method: 'POST',
    path: `${NGSI}/subscriptions`,
    body: subscription('urn:ngsi-ld:Subscription:t0', c.connection!),
  });
  t.equal(inDefault.metadata.status, 201);
  const httpOne = await c.request({
    method: 'POST',
    path: `${NGSI}/subscriptions`,
    body: subscription('urn:ngsi-ld:Subscription:keep', 'http://127.0.0.1:9/n'),
  });
  t.equal(httpOne.metadata.status, 201);
  await c.close();
  const gone = async (id: string, tenant?: string): Promise<boolean> =>
    (await call(broker, 'GET', `${NGSI}/subscriptions/${id}`, { headers: tenant === undefined ? {} : { 'NGSILD-Tenant': tenant } }))
      .status === 404;
  t.ok(await until(() => gone('urn:ngsi-ld:Subscription:t1', 'wst1')), 'in its tenant');
  t.ok(await until(() => gone('urn:ngsi-ld:Subscription:t0')), 'in the default tenant');
  t.equal((await call(broker, 'GET', `${NGSI}/subscriptions/urn:ngsi-ld:Subscription:keep`)).status, 200, 'an HTTP endpoint stays');
  t.notOk(
    broker.logs.some((l) => l.includes('not deleted')),
    'no deletion failed',
  );
});

t.test('at shutdown the connections close first, so their subscriptions are not left in a store on disk', async (t) => {
  const { mkdtempSync, rmSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const { join } = await import('node:path');
  const dir = mkdtempSync(join(tmpdir(), 'ldbroker-wssub-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const first = await startBroker(['--dbDir', dir], {}, { http: true });
  const c = await WsClient.open(first.port);
  const made = await c.request({
    method: 'POST',
    path: `${NGSI}/subscriptions`,
    body: subscription('urn:ngsi-ld:Subscription:sd', c.connection!),
  });
  t.equal(made.metadata.status, 201);
  await first.stop();
  t.ok(c.closed !== undefined || (await Promise.race([c.wait().then(() => true), new Promise((r) => setTimeout(() => r(false), 2000))])));
  const second = await startBroker(['--dbDir', dir], {}, { http: true });
  t.teardown(() => second.stop());
  t.equal((await call(second, 'GET', `${NGSI}/subscriptions/urn:ngsi-ld:Subscription:sd`)).status, 404);
});
