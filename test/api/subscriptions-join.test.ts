// Linked entities in notifications (CIM 009 v1.8.1 §5.2.14 NotificationParams join and joinLevel, §4.5.23): a
// subscription with join=flat sends the entities its notified entities link to as further elements of `data`, with
// join=inline under each Relationship's `entity`, read from the store when the notification is sent, rendered with the
// subscription's format, attributes and pick; joinLevel bounds the hops, a missing target and a cycle end the join, and
// a subscription without join sends what it always sent. The writes that trigger them never add an attribute with
// PATCH …/attrs (that answer is another issue's to decide): they update one the entity has, or POST it.
import t from 'tap';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { startBroker, call, NGSI, type Broker } from './helpers/broker.js';

interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  text: string;
  body: any;
}

let broker: Broker;
let receiver: Server;
let base = '';
const received: Received[] = [];

t.before(async () => {
  receiver = createServer((req, res) => {
    let text = '';
    req.on('data', (d) => {
      text += String(d);
    });
    req.on('end', () => {
      received.push({ path: req.url ?? '', headers: req.headers, text, body: JSON.parse(text) });
      res.writeHead(204).end();
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

/** Notifications received on a path, waiting (bounded) until there are at least n. */
async function notificationsAt(path: string, n: number): Promise<Received[]> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const got = received.filter((r) => r.path === path);
    if (got.length >= n || Date.now() > deadline) return got;
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function subscribe(
  path: string,
  type: string,
  notification: Record<string, unknown>,
  headers: Record<string, string> = {},
  extra: Record<string, unknown> = {},
): Promise<string> {
  const id = `urn:ngsi-ld:Subscription:join${path.replace(/\//g, '-')}`;
  const body = {
    id,
    type: 'Subscription',
    entities: [{ type }],
    ...extra,
    notification: { ...notification, endpoint: { uri: base + path, ...(notification.endpoint as object | undefined) } },
  };
  const r = await call(broker, 'POST', `${NGSI}/subscriptions`, { body, headers });
  if (r.status !== 201) throw new Error(r.text);
  return id;
}

const prop = (value: unknown) => ({ type: 'Property', value });
const rel = (object: string) => ({ type: 'Relationship', object });

async function create(body: Record<string, unknown>, headers: Record<string, string> = {}): Promise<void> {
  const r = await call(broker, 'POST', `${NGSI}/entities`, { body, headers });
  if (r.status !== 201) throw new Error(`${r.status} ${r.text}`);
}

/** Updates an attribute the entity has (a notification's trigger). */
async function update(id: string, attrs: Record<string, unknown>, headers: Record<string, string> = {}): Promise<void> {
  const r = await call(broker, 'PATCH', `${NGSI}/entities/${encodeURIComponent(id)}/attrs`, { body: attrs, headers });
  if (r.status !== 204) throw new Error(`${r.status} ${r.text}`);
}

const FRANCE = 'urn:ngsi-ld:Country:France';
const PARIS = 'urn:ngsi-ld:City:Paris';

t.before(async () => {
  await create({ id: FRANCE, type: 'Country', name: prop('France') });
  await create({ id: PARIS, type: 'City', name: prop('Paris'), description: prop('capital'), isInCountry: rel(FRANCE) });
});

t.test('join=flat: the linked entity follows the notified one in data, one hop by default', async (t) => {
  await subscribe('/flat', 'Tower', { join: 'flat' });
  const id = 'urn:ngsi-ld:Tower:flat';
  await create({ id, type: 'Tower', name: prop('Eiffel'), locatedAt: rel(PARIS) });
  const [n] = await notificationsAt('/flat', 1);
  t.ok(n, 'notified');
  t.same(
    n!.body.data,
    [
      { id, type: 'Tower', name: prop('Eiffel'), locatedAt: rel(PARIS) },
      { id: PARIS, type: 'City', name: prop('Paris'), description: prop('capital'), isInCountry: rel(FRANCE) },
    ],
    'the City, not the Country two hops away',
  );
});

t.test('join=inline: the linked entity is the `entity` member of the Relationship', async (t) => {
  await subscribe('/inline', 'Arch', { join: 'inline', joinLevel: 1 });
  const id = 'urn:ngsi-ld:Arch:inline';
  await create({ id, type: 'Arch', name: prop('Triomphe'), locatedAt: rel(PARIS) });
  const [n] = await notificationsAt('/inline', 1);
  t.ok(n, 'notified');
  t.same(n!.body.data, [
    {
      id,
      type: 'Arch',
      name: prop('Triomphe'),
      locatedAt: {
        ...rel(PARIS),
        entity: { id: PARIS, type: 'City', name: prop('Paris'), description: prop('capital'), isInCountry: rel(FRANCE) },
      },
    },
  ]);
});

t.test('joinLevel=2 follows two hops, flat and inline', async (t) => {
  await subscribe('/flat2', 'Museum', { join: 'flat', joinLevel: 2 });
  await subscribe('/inline2', 'Museum', { join: 'inline', joinLevel: 2 });
  const id = 'urn:ngsi-ld:Museum:louvre';
  await create({ id, type: 'Museum', locatedAt: rel(PARIS) });
  const [flat] = await notificationsAt('/flat2', 1);
  t.same(
    flat?.body.data.map((e: any) => e.id),
    [id, PARIS, FRANCE],
    'breadth first: the City, then its Country',
  );
  const [inline] = await notificationsAt('/inline2', 1);
  const city = inline?.body.data[0].locatedAt.entity;
  t.equal(city?.id, PARIS);
  t.same(city?.isInCountry, { ...rel(FRANCE), entity: { id: FRANCE, type: 'Country', name: prop('France') } });
});

t.test('a missing linked entity stays a plain reference', async (t) => {
  await subscribe('/missing-flat', 'Ruin', { join: 'flat' });
  await subscribe('/missing-inline', 'Ruin', { join: 'inline' });
  const id = 'urn:ngsi-ld:Ruin:1';
  await create({ id, type: 'Ruin', locatedAt: rel('urn:ngsi-ld:City:Atlantis'), near: rel(PARIS) });
  const [flat] = await notificationsAt('/missing-flat', 1);
  t.same(
    flat?.body.data.map((e: any) => e.id),
    [id, PARIS],
    'the missing City is left out, the other joined',
  );
  const [inline] = await notificationsAt('/missing-inline', 1);
  t.same(inline?.body.data[0].locatedAt, rel('urn:ngsi-ld:City:Atlantis'));
  t.equal(inline?.body.data[0].near.entity?.id, PARIS);
});

t.test('a cycle A→B→A ends: each entity once (flat), never back up the chain (inline)', async (t) => {
  const a = 'urn:ngsi-ld:Twin:A';
  const b = 'urn:ngsi-ld:Twin:B';
  await create({ id: b, type: 'Twin', n: prop(0), sibling: rel(a) });
  await create({ id: a, type: 'Twin', n: prop(0), sibling: rel(b) });
  await subscribe('/cycle-flat', 'Twin', { join: 'flat', joinLevel: 5 });
  await subscribe('/cycle-inline', 'Twin', { join: 'inline', joinLevel: 5 });
  await update(a, { n: prop(1) });
  const [flat] = await notificationsAt('/cycle-flat', 1);
  t.same(
    flat?.body.data.map((e: any) => e.id),
    [a, b],
  );
  const [inline] = await notificationsAt('/cycle-inline', 1);
  const twin = inline?.body.data[0];
  t.equal(twin?.sibling.entity.id, b);
  t.same(twin?.sibling.entity.sibling, rel(a), 'B links back to A: no entity under it');
});

t.test('keyValues inline, attributes and pick with braces: rendered as a retrieval with them would be', async (t) => {
  await subscribe('/kv', 'Bridge', { join: 'inline', format: 'simplified' });
  await subscribe('/attrs', 'Bridge', { join: 'flat', attributes: ['locatedAt'] });
  await subscribe('/pick', 'Bridge', { join: 'inline', pick: ['id', 'locatedAt{name}'] });
  const id = 'urn:ngsi-ld:Bridge:neuf';
  await create({ id, type: 'Bridge', name: prop('Neuf'), locatedAt: rel(PARIS) });
  const [kv] = await notificationsAt('/kv', 1);
  t.same(kv?.body.data, [
    {
      id,
      type: 'Bridge',
      name: 'Neuf',
      locatedAt: { id: PARIS, type: 'City', name: 'Paris', description: 'capital', isInCountry: FRANCE },
    },
  ]);
  const [attrs] = await notificationsAt('/attrs', 1);
  t.same(
    attrs?.body.data,
    [
      { id, type: 'Bridge', locatedAt: rel(PARIS) },
      { id: PARIS, type: 'City', name: prop('Paris'), description: prop('capital'), isInCountry: rel(FRANCE) },
    ],
    "attributes select the notified entity's attributes, not the linked one's",
  );
  const [pick] = await notificationsAt('/pick', 1);
  t.same(pick?.body.data, [{ id, locatedAt: { ...rel(PARIS), entity: { name: prop('Paris') } } }]);
});

t.test('application/ld+json with join=flat: every entity of data carries the @context', async (t) => {
  await subscribe('/ld', 'Gate', { join: 'flat', endpoint: { accept: 'application/ld+json' } });
  await create({ id: 'urn:ngsi-ld:Gate:1', type: 'Gate', locatedAt: rel(PARIS) });
  const [n] = await notificationsAt('/ld', 1);
  t.equal(n?.body.data.length, 2);
  for (const e of n?.body.data ?? []) t.ok('@context' in e, `${e.id} has its @context`);
});

t.test('the linked entities are read when the notification is sent: a change of the linked entity shows', async (t) => {
  const city = 'urn:ngsi-ld:City:Lyon';
  await create({ id: city, type: 'City', name: prop('Lyon') });
  await subscribe('/fresh', 'Station', { join: 'flat' }, {}, { watchedAttributes: ['n'] });
  const id = 'urn:ngsi-ld:Station:part-dieu';
  await create({ id, type: 'Station', n: prop(0), locatedAt: rel(city) });
  await notificationsAt('/fresh', 1);
  await update(city, { name: prop('Lugdunum') });
  await update(id, { n: prop(1) });
  const got = await notificationsAt('/fresh', 2);
  t.equal(got[1]?.body.data[1]?.name.value, 'Lugdunum');
});

t.test("a tenant's subscription joins the tenant's entities", async (t) => {
  const tenant = { 'NGSILD-Tenant': 'joined' };
  await create({ id: PARIS, type: 'City', name: prop('Paris of the tenant') }, tenant);
  await subscribe('/tenant', 'Tower', { join: 'flat' }, tenant);
  await create({ id: 'urn:ngsi-ld:Tower:t', type: 'Tower', locatedAt: rel(PARIS) }, tenant);
  const [n] = await notificationsAt('/tenant', 1);
  t.equal(n?.body.data[1]?.name.value, 'Paris of the tenant');
});

t.test('successive changes of a joined entity are notified in the order written', async (t) => {
  await subscribe('/order', 'Counter', { join: 'inline' }, {}, { watchedAttributes: ['n'] });
  const id = 'urn:ngsi-ld:Counter:join';
  await create({ id, type: 'Counter', n: prop(0), locatedAt: rel(PARIS) });
  for (let i = 1; i <= 20; i++) await update(id, { n: prop(i) });
  const got = await notificationsAt('/order', 21);
  t.same(
    got.map((r) => r.body.data[0].n.value),
    Array.from({ length: 21 }, (_, i) => i),
  );
  t.ok(
    got.every((r) => r.body.data[0].locatedAt.entity?.id === PARIS),
    'each with its linked entity',
  );
});

t.test('a periodic subscription with join sends the linked entities too', async (t) => {
  await subscribe('/periodic', 'Beacon', { join: 'flat' }, {}, { timeInterval: 1 });
  await create({ id: 'urn:ngsi-ld:Beacon:1', type: 'Beacon', locatedAt: rel(PARIS) });
  const [n] = await notificationsAt('/periodic', 1);
  t.same(
    n?.body.data.map((e: any) => e.id),
    ['urn:ngsi-ld:Beacon:1', PARIS],
  );
});

t.test('GET shows the join and joinLevel a subscription was given', async (t) => {
  const sid = await subscribe('/shown', 'Nothing', { join: 'inline', joinLevel: 2 });
  const r = await call(broker, 'GET', `${NGSI}/subscriptions/${encodeURIComponent(sid)}`);
  t.equal(r.status, 200);
  t.equal(r.json.notification.join, 'inline');
  t.equal(r.json.notification.joinLevel, 2);
});

t.test('join and joinLevel out of their range are 400 BadRequestData, and nothing is created', async (t) => {
  const bad: Array<Record<string, unknown>> = [
    { join: 'deep' },
    { join: 1 },
    { join: 'flat', joinLevel: 0 },
    { join: 'flat', joinLevel: 6 },
    { join: 'flat', joinLevel: 1.5 },
    { join: 'flat', joinLevel: '2' },
    { joinLevel: 1 },
    { join: '@none', joinLevel: 1 },
  ];
  for (const [i, n] of bad.entries()) {
    const id = `urn:ngsi-ld:Subscription:badjoin${i}`;
    const r = await call(broker, 'POST', `${NGSI}/subscriptions`, {
      body: { id, type: 'Subscription', entities: [{ type: 'X' }], notification: { ...n, endpoint: { uri: `${base}/bad` } } },
    });
    t.equal(r.status, 400, JSON.stringify(n));
    t.equal(r.json.type, 'https://uri.etsi.org/ngsi-ld/errors/BadRequestData');
    t.equal((await call(broker, 'GET', `${NGSI}/subscriptions/${id}`)).status, 404);
  }
});

t.test('without join (or with @none) the notification is what it was: no linked entity, the same bytes', async (t) => {
  await subscribe('/plain', 'Kiosk', {});
  await subscribe('/none', 'Kiosk', { join: '@none' });
  const id = 'urn:ngsi-ld:Kiosk:1';
  await create({ id, type: 'Kiosk', name: prop('K'), locatedAt: rel(PARIS) });
  const [plain] = await notificationsAt('/plain', 1);
  const [none] = await notificationsAt('/none', 1);
  t.same(plain?.body.data, [{ id, type: 'Kiosk', name: prop('K'), locatedAt: rel(PARIS) }]);
  const strip = (r: Received | undefined): string => (r?.text ?? '').replace(/"(notifiedAt|id|subscriptionId)":"[^"]*",/g, '');
  t.equal(strip(none), strip(plain), 'byte for byte, but for the ids and time');
  t.equal(
    strip(plain),
    `{"type":"Notification","data":[{"type":"Kiosk","name":{"type":"Property","value":"K"},"locatedAt":{"type":"Relationship","object":"${PARIS}"}}],"triggerReason":"attributeCreated"}`,
  );
});
