// Notifications as real clients and the ETSI suite expect them (issue 15 item 2): NGSILD-Tenant on a tenant's
// notifications, counters absent before the first notification and current right after one, periodic subscriptions
// that select by id, attributeDeleted for a deleted datasetId instance and for the attributes of a deleted entity.
import t from 'tap';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { startBroker, call, NGSI, type Broker } from './helpers/broker.js';

interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  body: any;
}

let broker: Broker;
let receiver: Server;
let base = '';
const received: Received[] = [];
/** Called with each notification before it is answered; what it resolves is kept with it. */
const holds = new Map<string, (n: Received) => Promise<unknown>>();
const heldSaw = new Map<string, unknown[]>();

t.before(async () => {
  receiver = createServer((req, res) => {
    let text = '';
    req.on('data', (d) => {
      text += String(d);
    });
    req.on('end', () => {
      const n: Received = { path: req.url ?? '', headers: req.headers, body: JSON.parse(text) };
      const hold = holds.get(n.path);
      const answer = (): void => {
        received.push(n);
        res.writeHead(200).end();
      };
      if (hold === undefined) answer();
      else
        void hold(n).then((saw) => {
          (heldSaw.get(n.path) ?? heldSaw.set(n.path, []).get(n.path)!).push(saw);
          answer();
        });
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(receiver.address() as { port: number }).port}`;
  broker = await startBroker();
});
t.teardown(async () => {
  await broker.stop();
  receiver.close();
});

async function notificationsAt(path: string, n: number, ms = 8000): Promise<Received[]> {
  const deadline = Date.now() + ms;
  for (;;) {
    const got = received.filter((r) => r.path === path);
    if (got.length >= n || Date.now() > deadline) return got;
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function subscribe(path: string, extra: Record<string, unknown>, headers: Record<string, string> = {}): Promise<string> {
  const id = `urn:ngsi-ld:Subscription:${path.slice(1)}`;
  const r = await call(broker, 'POST', `${NGSI}/subscriptions`, {
    body: { id, type: 'Subscription', ...extra, notification: { endpoint: { uri: base + path } } },
    headers,
  });
  if (r.status !== 201) throw new Error(r.text);
  return id;
}

const prop = (value: unknown, extra: Record<string, unknown> = {}): Record<string, unknown> => ({ type: 'Property', value, ...extra });

t.test("a tenant's notifications carry NGSILD-Tenant; the default tenant's none", async (t) => {
  const tenant = { 'NGSILD-Tenant': 'city' };
  await subscribe('/tenant', { entities: [{ type: 'Lamp' }] }, tenant);
  await subscribe('/default', { entities: [{ type: 'Lamp' }] });
  t.equal(
    (await call(broker, 'POST', `${NGSI}/entities`, { body: { id: 'urn:ngsi-ld:Lamp:t', type: 'Lamp', on: prop(true) }, headers: tenant }))
      .status,
    201,
  );
  t.equal(
    (await call(broker, 'POST', `${NGSI}/entities`, { body: { id: 'urn:ngsi-ld:Lamp:d', type: 'Lamp', on: prop(true) } })).status,
    201,
  );
  const [inTenant] = await notificationsAt('/tenant', 1);
  t.equal(inTenant?.headers['ngsild-tenant'], 'city');
  t.equal(inTenant?.body.data[0].id, 'urn:ngsi-ld:Lamp:t');
  const [inDefault] = await notificationsAt('/default', 1);
  t.equal(inDefault?.body.data[0].id, 'urn:ngsi-ld:Lamp:d');
  t.notOk(inDefault?.headers['ngsild-tenant'], 'no tenant header for the default tenant');
});

t.test('counters: absent before the first notification, counted while the receiver holds it, current once it answered', async (t) => {
  const sid = await subscribe('/counted', { entities: [{ type: 'Meter' }] });
  const before = (await call(broker, 'GET', `${NGSI}/subscriptions/${sid}`)).json;
  for (const member of ['timesSent', 'timesFailed', 'status', 'lastNotification', 'lastSuccess'])
    t.notOk(member in before.notification, `no ${member} yet`);
  t.same(before.notificationTrigger, ['attributeCreated', 'attributeUpdated'], 'the default triggers are shown');
  t.equal(before.isActive, true);
  // The receiver reads the subscription while it holds the notification, then answers.
  holds.set('/counted', async () => (await call(broker, 'GET', `${NGSI}/subscriptions/${sid}`)).json.notification);
  t.equal(
    (await call(broker, 'POST', `${NGSI}/entities`, { body: { id: 'urn:ngsi-ld:Meter:c', type: 'Meter', power: prop(1) } })).status,
    201,
  );
  const [n] = await notificationsAt('/counted', 1);
  t.ok(n, 'notified');
  const during = heldSaw.get('/counted')?.[0] as Record<string, unknown> | undefined;
  t.equal(during?.timesSent, 1, 'counted as sent before the receiver answered');
  t.type(during?.lastNotification, 'string');
  const after = (await call(broker, 'GET', `${NGSI}/subscriptions/${sid}`)).json.notification;
  t.equal(after.timesSent, 1, 'a GET right after the answer');
  t.equal(after.timesFailed, 0);
  t.equal(after.status, 'ok');
  t.equal(after.lastNotification, during?.lastNotification);
  t.type(after.lastSuccess, 'string');
  const listed = (await call(broker, 'GET', `${NGSI}/subscriptions?limit=100`)).json.find((s: { id: string }) => s.id === sid);
  t.equal(listed?.notification.timesSent, 1, 'the list shows the same counters');
});

t.test('a periodic subscription whose entities selector names an id notifies that entity every timeInterval', async (t) => {
  const id = 'urn:ngsi-ld:Building:p1';
  t.equal(
    (
      await call(broker, 'POST', `${NGSI}/entityOperations/create`, {
        body: [
          { id, type: 'Building', height: prop(10) },
          { id: 'urn:ngsi-ld:Building:p2', type: 'Building', height: prop(20) },
        ],
      })
    ).status,
    201,
  );
  await subscribe('/periodic-id', { entities: [{ type: 'Building', id }], timeInterval: 1 });
  await subscribe('/periodic-mixed', { entities: [{ type: 'Building', id }, { type: 'Tower' }], timeInterval: 1 });
  const got = await notificationsAt('/periodic-id', 2);
  t.ok(got.length >= 2, 'notified again and again');
  t.same(
    got.slice(0, 2).map((n) => n.body.data.map((e: { id: string }) => e.id)),
    [[id], [id]],
    'that entity only',
  );
  const mixed = await notificationsAt('/periodic-mixed', 1);
  t.same(
    mixed[0]?.body.data.map((e: { id: string }) => e.id),
    [id],
    'an id selector beside a type selector',
  );
  await call(broker, 'DELETE', `${NGSI}/subscriptions/urn:ngsi-ld:Subscription:periodic-id`);
  await call(broker, 'DELETE', `${NGSI}/subscriptions/urn:ngsi-ld:Subscription:periodic-mixed`);
});

t.test('deleting one datasetId instance notifies attributeDeleted with that instance as NGSI-LD null', async (t) => {
  await subscribe('/instance-deleted', {
    entities: [{ type: 'Monument' }],
    watchedAttributes: ['name'],
    notificationTrigger: ['attributeDeleted'],
  });
  await subscribe('/instance-updated', {
    entities: [{ type: 'Monument' }],
    watchedAttributes: ['name'],
    notificationTrigger: ['attributeUpdated'],
  });
  const id = 'urn:ngsi-ld:Monument:m1';
  const fr = 'urn:ngsi-ld:Dataset:fr';
  t.equal(
    (
      await call(broker, 'POST', `${NGSI}/entities`, {
        body: { id, type: 'Monument', name: [prop('Eiffel Tower'), prop('Tour Eiffel', { datasetId: fr })] },
      })
    ).status,
    201,
  );
  t.equal((await call(broker, 'DELETE', `${NGSI}/entities/${id}/attrs/name?datasetId=${fr}`)).status, 204);
  const [n] = await notificationsAt('/instance-deleted', 1);
  t.equal(n?.body.triggerReason, 'attributeDeleted');
  t.same(n?.body.data[0].name, [prop('Eiffel Tower'), prop('urn:ngsi-ld:null', { datasetId: fr })]);
  // A later write both subscriptions see, so that nothing earlier is still on its way to /instance-updated.
  t.equal((await call(broker, 'PATCH', `${NGSI}/entities/${id}/attrs/name`, { body: { value: 'La Tour' } })).status, 204);
  const updated = await notificationsAt('/instance-updated', 1);
  t.same(
    updated.map((u) => u.body.data[0].name.value),
    ['La Tour'],
    'the instance deletion was no attributeUpdated',
  );
});

t.test('deleting an entity notifies attributeDeleted to a subscription that asks for it without entityDeleted', async (t) => {
  await subscribe('/entity-gone', {
    entities: [{ type: 'Kiosk' }],
    watchedAttributes: ['name'],
    notificationTrigger: ['attributeUpdated', 'attributeDeleted'],
  });
  const id = 'urn:ngsi-ld:Kiosk:k1';
  t.equal(
    (await call(broker, 'POST', `${NGSI}/entities`, { body: { id, type: 'Kiosk', name: prop('North'), open: prop(true) } })).status,
    201,
  );
  t.equal((await call(broker, 'DELETE', `${NGSI}/entities/${id}`)).status, 204);
  const [n] = await notificationsAt('/entity-gone', 1);
  t.equal(n?.body.triggerReason, 'attributeDeleted');
  t.equal(n?.body.data[0].id, id);
  t.type(n?.body.data[0].deletedAt, 'string');
  t.same(n?.body.data[0].name, prop('urn:ngsi-ld:null'));
  t.notOk('open' in (n?.body.data[0] ?? {}), 'only the watched attribute');
});
