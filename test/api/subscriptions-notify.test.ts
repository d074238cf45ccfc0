// Notifications (CIM 009 v1.8 §5.8.6, §5.3): matched on every kind of entity write, delivered to a real HTTP
// receiver with the subscription's format, attributes, projections, @context and receiverInfo; counters follow.
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
const DEFAULT_VOCAB = 'https://uri.etsi.org/ngsi-ld/default-context/';
/** Served by the receiver: the @context a subscription's jsonldContext names. */
const NOTIFY_CONTEXT = { '@context': { Beehive: `${DEFAULT_VOCAB}Hive`, kilograms: `${DEFAULT_VOCAB}weight` } };

t.before(async () => {
  receiver = createServer((req, res) => {
    if (req.method === 'GET' && req.url === '/ctx.jsonld') {
      res.writeHead(200, { 'content-type': 'application/ld+json' }).end(JSON.stringify(NOTIFY_CONTEXT));
      return;
    }
    let text = '';
    req.on('data', (d) => {
      text += String(d);
    });
    req.on('end', () => {
      received.push({ path: req.url ?? '', headers: req.headers, body: JSON.parse(text) });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(receiver.address() as { port: number }).port}`;
  broker = await startBroker([], {}, { pool: true });
});
t.teardown(async () => {
  await broker.stop();
  receiver.close();
});

/** Notifications received on a path, waiting (bounded) until there are at least n. */
async function notificationsAt(path: string, n: number): Promise<Received[]> {
  const deadline = Date.now() + 8000;
  for (;;) {
    const got = received.filter((r) => r.path === path);
    if (got.length >= n || Date.now() > deadline) return got;
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function subscribe(path: string, extra: Record<string, unknown>, headers: Record<string, string> = {}): Promise<string> {
  const id = `urn:ngsi-ld:Subscription:${path.slice(1)}`;
  const notification = {
    ...(extra.notification as Record<string, unknown> | undefined),
    endpoint: { uri: base + path, ...(extra.notification as { endpoint?: object } | undefined)?.endpoint },
  };
  const r = await call(broker, 'POST', `${NGSI}/subscriptions`, { body: { id, type: 'Subscription', ...extra, notification }, headers });
  if (r.status !== 201) throw new Error(r.text);
  return id;
}

const entity = (id: string, type: string, attrs: Record<string, unknown>): Record<string, unknown> => ({ id, type, ...attrs });
const prop = (value: unknown): Record<string, unknown> => ({ type: 'Property', value });

t.test('a notification carries id, type, subscriptionId, notifiedAt and the entity; application/json has a Link header', async (t) => {
  const sid = await subscribe('/basic', { entities: [{ type: 'Car' }] });
  t.equal((await call(broker, 'POST', `${NGSI}/entities`, { body: entity('urn:ngsi-ld:Car:b1', 'Car', { speed: prop(10) }) })).status, 201);
  const [n] = await notificationsAt('/basic', 1);
  t.ok(n, 'notified on create (attributeCreated is a default trigger)');
  t.match(n!.body.id, /^urn:ngsi-ld:Notification:/);
  t.equal(n!.body.type, 'Notification');
  t.equal(n!.body.subscriptionId, sid);
  t.ok(!Number.isNaN(Date.parse(n!.body.notifiedAt)), 'notifiedAt is a date-time');
  t.same(n!.body.data, [{ id: 'urn:ngsi-ld:Car:b1', type: 'Car', speed: { type: 'Property', value: 10 } }]);
  t.equal(n!.headers['content-type'], 'application/json');
  t.match(n!.headers.link ?? '', /ngsi-ld-core-context.*rel="http:\/\/www.w3.org\/ns\/json-ld#context"/);
});

t.test('entities select by type, id, idPattern and type *; other entities are not notified', async (t) => {
  await subscribe('/sel-id', { entities: [{ id: 'urn:ngsi-ld:Bus:2', type: 'Bus' }] });
  await subscribe('/sel-pattern', { entities: [{ idPattern: '^urn:ngsi-ld:Bus:1', type: 'Bus' }] });
  await subscribe('/sel-any', { entities: [{ type: '*', idPattern: 'Bus:3$' }] });
  for (const id of ['urn:ngsi-ld:Bus:1', 'urn:ngsi-ld:Bus:2', 'urn:ngsi-ld:Bus:3', 'urn:ngsi-ld:Bus:10'])
    t.equal((await call(broker, 'POST', `${NGSI}/entities`, { body: entity(id, 'Bus', { seats: prop(40) }) })).status, 201);
  // A last write every selector matches: what came before it on each path is all there is (order is kept).
  await call(broker, 'POST', `${NGSI}/entityOperations/upsert`, {
    body: [
      entity('urn:ngsi-ld:Bus:2', 'Bus', { seats: prop(1) }),
      entity('urn:ngsi-ld:Bus:1', 'Bus', { seats: prop(1) }),
      entity('urn:ngsi-ld:Bus:3', 'Bus', { seats: prop(1) }),
    ],
  });
  const byId = (await notificationsAt('/sel-id', 2)).map((n) => n.body.data[0].id);
  t.same(byId, ['urn:ngsi-ld:Bus:2', 'urn:ngsi-ld:Bus:2']);
  const byPattern = (await notificationsAt('/sel-pattern', 3)).map((n) => n.body.data[0].id).sort();
  t.same(byPattern, ['urn:ngsi-ld:Bus:1', 'urn:ngsi-ld:Bus:1', 'urn:ngsi-ld:Bus:10'], 'Bus:1 twice and Bus:10 once');
  const any = (await notificationsAt('/sel-any', 2)).map((n) => n.body.data[0].id);
  t.same(any, ['urn:ngsi-ld:Bus:3', 'urn:ngsi-ld:Bus:3']);
});

t.test('watchedAttributes: a change of another attribute does not notify; q, scopeQ and geoQ filter', async (t) => {
  await subscribe('/watched', { entities: [{ type: 'Room' }], watchedAttributes: ['temperature'] });
  await subscribe('/q', { entities: [{ type: 'Room' }], q: 'temperature>25' });
  await subscribe('/scope', { entities: [{ type: 'Room' }], scopeQ: '/building/a' });
  await subscribe('/geo', {
    entities: [{ type: 'Room' }],
    geoQ: { georel: 'near;maxDistance==1000', geometry: 'Point', coordinates: [2.35, 48.85] },
  });
  const id = 'urn:ngsi-ld:Room:w1';
  t.equal(
    (
      await call(broker, 'POST', `${NGSI}/entities`, {
        body: entity(id, 'Room', {
          temperature: prop(20),
          scope: ['/building/b'],
          location: { type: 'GeoProperty', value: { type: 'Point', coordinates: [10, 10] } },
        }),
      })
    ).status,
    201,
  );
  await call(broker, 'PATCH', `${NGSI}/entities/${id}/attrs`, { body: { humidity: prop(50) } });
  await call(broker, 'PATCH', `${NGSI}/entities/${id}/attrs`, { body: { temperature: prop(30) } });
  await call(broker, 'PATCH', `${NGSI}/entities/${id}`, {
    body: { scope: '/building/a', location: { type: 'GeoProperty', value: { type: 'Point', coordinates: [2.351, 48.851] } } },
  });
  const watched = await notificationsAt('/watched', 2);
  t.same(
    watched.map((n) => n.body.data[0].temperature.value),
    [20, 30],
    'the humidity change was not notified',
  );
  const q = await notificationsAt('/q', 2);
  t.same(
    q.map((n) => n.body.data[0].temperature.value),
    [30, 30],
    'only while temperature>25',
  );
  const scope = await notificationsAt('/scope', 1);
  t.equal(scope.length, 1, 'only once in scope /building/a');
  t.equal(scope[0]?.body.data[0].scope, '/building/a');
  const geo = await notificationsAt('/geo', 1);
  t.equal(geo.length, 1, 'only once near the point');
});

t.test(
  'notificationTrigger: entityCreated, attributeUpdated, attributeDeleted and entityDeleted, through single and batch writes',
  async (t) => {
    await subscribe('/triggers', {
      entities: [{ type: 'Lamp' }],
      notificationTrigger: ['entityCreated', 'attributeDeleted', 'entityDeleted'],
    });
    await subscribe('/updated', { entities: [{ type: 'Lamp' }], notificationTrigger: ['attributeUpdated'] });
    const id = 'urn:ngsi-ld:Lamp:t1';
    t.equal((await call(broker, 'POST', `${NGSI}/entities`, { body: entity(id, 'Lamp', { on: prop(true), level: prop(3) }) })).status, 201);
    t.equal((await call(broker, 'PATCH', `${NGSI}/entities/${id}/attrs/level`, { body: { value: 4 } })).status, 204);
    t.equal(
      (await call(broker, 'POST', `${NGSI}/entityOperations/update`, { body: [entity(id, 'Lamp', { level: prop(5) })] })).status,
      204,
    );
    t.equal((await call(broker, 'POST', `${NGSI}/entityOperations/merge`, { body: [entity(id, 'Lamp', { level: prop(6) })] })).status, 204);
    t.equal((await call(broker, 'DELETE', `${NGSI}/entities/${id}/attrs/on`)).status, 204);
    t.equal((await call(broker, 'POST', `${NGSI}/entityOperations/delete`, { body: [id] })).status, 204);
    const got = await notificationsAt('/triggers', 3);
    t.same(
      got.map((n) => n.body.triggerReason),
      ['entityCreated', 'attributeDeleted', 'entityDeleted'],
    );
    t.same(got[1]!.body.data[0].on, { type: 'Property', value: 'urn:ngsi-ld:null' }, 'a deleted attribute is notified as NGSI-LD null');
    t.equal(got[2]!.body.data[0].id, id);
    t.type(got[2]!.body.data[0].deletedAt, 'string');
    const updated = await notificationsAt('/updated', 3);
    t.same(
      updated.map((n) => n.body.data[0].level.value),
      [4, 5, 6],
      'partial update, batch update and batch merge',
    );
  },
);

t.test('notification content: keyValues with attributes, concise, pick, sysAttrs and showChanges', async (t) => {
  await subscribe('/kv', { entities: [{ type: 'Meter' }], notification: { format: 'keyValues', attributes: ['power'] } });
  await subscribe('/concise', { entities: [{ type: 'Meter' }], notification: { format: 'concise', pick: ['id', 'power'] } });
  await subscribe('/sys', {
    entities: [{ type: 'Meter' }],
    notification: { sysAttrs: true, omit: ['energy'] },
    notificationTrigger: ['entityCreated'],
  });
  await subscribe('/changes', {
    entities: [{ type: 'Meter' }],
    notification: { showChanges: true },
    notificationTrigger: ['attributeUpdated'],
  });
  const id = 'urn:ngsi-ld:Meter:c1';
  await call(broker, 'POST', `${NGSI}/entities`, { body: entity(id, 'Meter', { power: prop(1), energy: prop(7) }) });
  await call(broker, 'PATCH', `${NGSI}/entities/${id}/attrs`, { body: { power: prop(2) } });
  const kv = await notificationsAt('/kv', 2);
  t.same(
    kv.map((n) => n.body.data[0]),
    [
      { id, type: 'Meter', power: 1 },
      { id, type: 'Meter', power: 2 },
    ],
  );
  const concise = await notificationsAt('/concise', 1);
  t.same(concise[0]!.body.data[0], { id, power: 1 });
  const sys = await notificationsAt('/sys', 1);
  t.type(sys[0]!.body.data[0].createdAt, 'string');
  t.type(sys[0]!.body.data[0].power.modifiedAt, 'string');
  t.notOk('energy' in sys[0]!.body.data[0], 'omit left energy out');
  const changes = await notificationsAt('/changes', 1);
  t.same(changes[0]!.body.data[0].power, { type: 'Property', value: 2, previousValue: 1 });
  t.same(changes[0]!.body.data[0].energy, { type: 'Property', value: 7 }, 'an unchanged attribute has no previousValue');
});

t.test(
  'endpoint.accept application/ld+json puts @context in the body; application/geo+json sends a FeatureCollection; receiverInfo become headers',
  async (t) => {
    await subscribe('/ld', {
      entities: [{ type: 'Tree' }],
      notification: {
        endpoint: {
          accept: 'application/ld+json',
          receiverInfo: [
            { key: 'X-Tenant-Key', value: 'k1' },
            { key: 'Authorization', value: 'Bearer abc' },
          ],
        },
      },
    });
    await subscribe('/geojson', { entities: [{ type: 'Tree' }], notification: { endpoint: { accept: 'application/geo+json' } } });
    const id = 'urn:ngsi-ld:Tree:g1';
    await call(broker, 'POST', `${NGSI}/entities`, {
      body: entity(id, 'Tree', { height: prop(9), location: { type: 'GeoProperty', value: { type: 'Point', coordinates: [1, 2] } } }),
    });
    const [ld] = await notificationsAt('/ld', 1);
    t.equal(ld!.headers['content-type'], 'application/ld+json');
    t.notOk(ld!.headers.link, 'no Link header with application/ld+json');
    t.ok(ld!.body['@context'], '@context in the body');
    t.equal(ld!.headers['x-tenant-key'], 'k1');
    t.equal(ld!.headers.authorization, 'Bearer abc');
    const [geo] = await notificationsAt('/geojson', 1);
    t.equal(geo!.headers['content-type'], 'application/geo+json');
    t.equal(geo!.body.data.type, 'FeatureCollection');
    t.same(geo!.body.data.features[0].geometry, { type: 'Point', coordinates: [1, 2] });
    t.equal(geo!.body.data.features[0].id, id);
  },
);

t.test('a user @context: the subscription is matched with its terms and notified with them (or with jsonldContext)', async (t) => {
  const ctx = { Pump: 'https://example.org/ns#Pump', flow: 'https://example.org/ns#flow' };
  const r = await call(broker, 'POST', `${NGSI}/subscriptions`, {
    body: {
      id: 'urn:ngsi-ld:Subscription:ctx',
      type: 'Subscription',
      entities: [{ type: 'Pump' }],
      watchedAttributes: ['flow'],
      notification: { endpoint: { uri: `${base}/ctx`, accept: 'application/ld+json' } },
      '@context': ctx,
    },
    headers: { 'content-type': 'application/ld+json' },
  });
  t.equal(r.status, 201, r.text);
  const e = await call(broker, 'POST', `${NGSI}/entities`, {
    body: { id: 'urn:ngsi-ld:Pump:1', type: 'Pump', flow: prop(3), '@context': ctx },
    headers: { 'content-type': 'application/ld+json' },
  });
  t.equal(e.status, 201, e.text);
  const other = await call(broker, 'POST', `${NGSI}/entities`, { body: entity('urn:ngsi-ld:Pump:2', 'Pump', { flow: prop(3) }) });
  t.equal(other.status, 201, 'a Pump of the default vocabulary is another type');
  await call(broker, 'PATCH', `${NGSI}/entities/urn:ngsi-ld:Pump:1/attrs`, {
    body: { flow: prop(4), '@context': ctx },
    headers: { 'content-type': 'application/ld+json' },
  });
  const got = await notificationsAt('/ctx', 2);
  t.same(
    got.map((n) => [n.body.data[0].id, n.body.data[0].type, n.body.data[0].flow.value]),
    [
      ['urn:ngsi-ld:Pump:1', 'Pump', 3],
      ['urn:ngsi-ld:Pump:1', 'Pump', 4],
    ],
  );
});

t.test('isActive false pauses a subscription and true resumes it; counters count what was sent', async (t) => {
  const sid = await subscribe('/pause', { entities: [{ type: 'Valve' }], notificationTrigger: ['attributeUpdated'] });
  const id = 'urn:ngsi-ld:Valve:p1';
  await call(broker, 'POST', `${NGSI}/entities`, { body: entity(id, 'Valve', { open: prop(0) }) });
  t.equal((await call(broker, 'PATCH', `${NGSI}/subscriptions/${sid}`, { body: { isActive: false } })).status, 204);
  t.equal((await call(broker, 'GET', `${NGSI}/subscriptions/${sid}`)).json.status, 'paused');
  await call(broker, 'PATCH', `${NGSI}/entities/${id}/attrs`, { body: { open: prop(1) } });
  t.equal((await call(broker, 'PATCH', `${NGSI}/subscriptions/${sid}`, { body: { isActive: true } })).status, 204);
  await call(broker, 'PATCH', `${NGSI}/entities/${id}/attrs`, { body: { open: prop(2) } });
  const got = await notificationsAt('/pause', 1);
  t.same(
    got.map((n) => n.body.data[0].open.value),
    [2],
    'the update while paused was not notified',
  );
  let s: any;
  const deadline = Date.now() + 5000;
  do {
    s = (await call(broker, 'GET', `${NGSI}/subscriptions/${sid}`)).json;
    if (s.notification.timesSent >= 1) break;
    await new Promise((r) => setTimeout(r, 25));
  } while (Date.now() < deadline);
  t.equal(s.status, 'active');
  t.equal(s.notification.timesSent, 1);
  t.equal(s.notification.timesFailed, 0);
  t.equal(s.notification.status, 'ok');
  t.type(s.notification.lastNotification, 'string');
  t.equal(s.notification.lastSuccess, s.notification.lastNotification);
  t.notOk('lastFailure' in s.notification);
});

t.test('a deleted subscription notifies no more', async (t) => {
  const sid = await subscribe('/deleted', { entities: [{ type: 'Door' }], notificationTrigger: ['attributeUpdated'] });
  await subscribe('/deleted-control', {
    entities: [{ id: 'urn:ngsi-ld:Door:d1', type: 'Door' }],
    notificationTrigger: ['attributeUpdated'],
  });
  await call(broker, 'POST', `${NGSI}/entities`, { body: entity('urn:ngsi-ld:Door:d1', 'Door', { open: prop(0) }) });
  await call(broker, 'PATCH', `${NGSI}/entities/urn:ngsi-ld:Door:d1/attrs`, { body: { open: prop(1) } });
  t.equal((await notificationsAt('/deleted', 1)).length, 1);
  t.equal((await call(broker, 'DELETE', `${NGSI}/subscriptions/${sid}`)).status, 204);
  await call(broker, 'PATCH', `${NGSI}/entities/urn:ngsi-ld:Door:d1/attrs`, { body: { open: prop(2) } });
  t.equal((await notificationsAt('/deleted-control', 2)).length, 2, 'the write after the delete was matched');
  t.equal(received.filter((r) => r.path === '/deleted').length, 1, 'and not notified to the deleted subscription');
});

t.test('timeInterval sends the selected entities periodically', async (t) => {
  await call(broker, 'POST', `${NGSI}/entities`, { body: entity('urn:ngsi-ld:Sensor:per1', 'Sensor', { v: prop(1) }) });
  await subscribe('/periodic', { entities: [{ type: 'Sensor' }], timeInterval: 1 });
  const got = await notificationsAt('/periodic', 2);
  t.ok(got.length >= 2, 'at least two periodic notifications');
  t.same(
    got[0]!.body.data.map((e: { id: string }) => e.id),
    ['urn:ngsi-ld:Sensor:per1'],
  );
  t.equal(got[0]!.body.triggerReason, undefined, 'a periodic notification has no trigger');
});

t.test('jsonldContext: notifications are compacted with that @context and link to it', async (t) => {
  await subscribe('/jsonld', { entities: [{ type: 'Hive' }], jsonldContext: `${base}/ctx.jsonld` });
  await call(broker, 'POST', `${NGSI}/entities`, { body: entity('urn:ngsi-ld:Hive:1', 'Hive', { weight: prop(31) }) });
  const [n] = await notificationsAt('/jsonld', 1);
  t.same(n?.body.data[0], { id: 'urn:ngsi-ld:Hive:1', type: 'Beehive', kilograms: { type: 'Property', value: 31 } });
  t.match(n?.headers.link ?? '', `<${base}/ctx.jsonld>`);
});

t.test('lang picks the language of a LanguageProperty in notifications', async (t) => {
  await subscribe('/lang', { entities: [{ type: 'Street' }], lang: 'fr', notification: { format: 'keyValues' } });
  await call(broker, 'POST', `${NGSI}/entities`, {
    body: entity('urn:ngsi-ld:Street:1', 'Street', {
      name: { type: 'LanguageProperty', languageMap: { en: 'Main street', fr: 'Grand-rue' } },
    }),
  });
  const [n] = await notificationsAt('/lang', 1);
  t.equal(n?.body.data[0].name, 'Grand-rue');
});
