// Several brokers on one docdb (issue 17, README "Deployment on docdb"): three brokers on one database of the tests'
// FerretDB, writes spread over them, one notification receiver. A write on one is read on the others at once; a
// subscription created, changed or deleted on one is matched by writes on the others within --subCacheIval; every
// due notification is delivered exactly once (each broker notifies for the writes it handled), and the counters of a
// subscription add up across the brokers that sent.
import t from 'tap';
import { createServer, type Server } from 'node:http';
import { startBroker, call, NGSI, type Broker } from './helpers/broker.js';
import { docdbArgs, dropDatabases, freshDbName } from './helpers/docdb.js';

const IVAL_S = 1;
let brokers: Broker[] = [];
let receiver: Server;
let base = '';
const received: Array<{ path: string; body: any }> = [];
const dbName = freshDbName();

t.before(async () => {
  receiver = createServer((req, res) => {
    let text = '';
    req.on('data', (d) => (text += String(d)));
    req.on('end', () => {
      received.push({ path: req.url ?? '', body: JSON.parse(text) });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(receiver.address() as { port: number }).port}`;
  for (let i = 0; i < 3; i++) brokers.push(await startBroker([...docdbArgs(dbName), '--subCacheIval', String(IVAL_S)], {}, { pool: true }));
});
t.teardown(async () => {
  for (const b of brokers) await b.stop();
  brokers = [];
  receiver.close();
  await dropDatabases(dbName);
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** Long enough for every thread of every broker to have read the subscriptions again. */
const cacheRound = () => sleep(IVAL_S * 1000 * 2 + 300);

async function notificationsAt(path: string, n: number): Promise<any[]> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const got = received.filter((r) => r.path === path).map((r) => r.body);
    if (got.length >= n || Date.now() > deadline) {
      await sleep(500); // time for a duplicate to arrive, if there were one
      return received.filter((r) => r.path === path).map((r) => r.body);
    }
    await sleep(20);
  }
}

const prop = (value: unknown) => ({ type: 'Property', value });

t.test('a write on one broker is read on the others at once; a create race across brokers is one 201 and 409s', async (t) => {
  const [a, b, c] = brokers as [Broker, Broker, Broker];
  t.equal((await call(a, 'POST', `${NGSI}/entities`, { body: { id: 'urn:ngsi-ld:Car:r1', type: 'Car', speed: prop(1) } })).status, 201);
  t.same((await call(b, 'GET', `${NGSI}/entities/urn:ngsi-ld:Car:r1?options=keyValues`)).json, {
    id: 'urn:ngsi-ld:Car:r1',
    type: 'Car',
    speed: 1,
  });
  t.equal((await call(c, 'PATCH', `${NGSI}/entities/urn:ngsi-ld:Car:r1/attrs`, { body: { speed: prop(2) } })).status, 204);
  t.equal((await call(a, 'GET', `${NGSI}/entities/urn:ngsi-ld:Car:r1?options=keyValues`)).json.speed, 2);
  const race = await Promise.all(
    brokers.map((br) => call(br, 'POST', `${NGSI}/entities`, { body: { id: 'urn:ngsi-ld:Car:race', type: 'Car', speed: prop(0) } })),
  );
  t.same(race.map((r) => r.status).sort(), [201, 409, 409], 'one create wins, the others are 409 AlreadyExists, never 500');
  const counts = await Promise.all(brokers.map((br) => call(br, 'GET', `${NGSI}/entities?type=Car&count=true&limit=0`)));
  t.same(
    counts.map((r) => r.headers.get('ngsild-results-count')),
    ['2', '2', '2'],
    'every broker counts the same entities',
  );
});

t.test('three brokers, writes spread over them, one receiver: each due notification exactly once', async (t) => {
  const [a, b, c] = brokers as [Broker, Broker, Broker];
  const sub = {
    id: 'urn:ngsi-ld:Subscription:set',
    type: 'Subscription',
    entities: [{ type: 'Bus' }],
    watchedAttributes: ['speed'],
    notification: { endpoint: { uri: base + '/set' }, attributes: ['speed'] },
  };
  t.equal((await call(b, 'POST', `${NGSI}/subscriptions`, { body: sub })).status, 201, 'created on one broker');
  await cacheRound();
  const N = 12;
  const expected = new Set<string>();
  const writes: Promise<unknown>[] = [];
  for (let i = 0; i < N; i++) {
    const id = `urn:ngsi-ld:Bus:${i}`;
    writes.push(call(brokers[i % 3]!, 'POST', `${NGSI}/entities`, { body: { id, type: 'Bus', speed: prop(i * 100) } }));
    expected.add(`${id} ${i * 100}`);
  }
  t.same(
    (await Promise.all(writes)).map((r: any) => r.status),
    Array(N).fill(201),
  );
  // Each entity then updated on another broker than the one that created it.
  for (let i = 0; i < N; i++) {
    const id = `urn:ngsi-ld:Bus:${i}`;
    const r = await call(brokers[(i + 1) % 3]!, 'PATCH', `${NGSI}/entities/${id}/attrs`, { body: { speed: prop(i * 100 + 1) } });
    t.equal(r.status, 204);
    expected.add(`${id} ${i * 100 + 1}`);
  }
  const got = await notificationsAt('/set', expected.size);
  const seen = got.flatMap((n) => n.data.map((e: any) => `${e.id} ${e.speed.value}`));
  t.equal(seen.length, expected.size, 'as many notifications as writes');
  t.same(new Set(seen), expected, 'each write notified, none twice');
  // Each broker counted what it sent, and writes its counters within about a second of a change (under load, later):
  // every broker answers the sum once they are written.
  for (const [name, br] of [
    ['a', a],
    ['b', b],
    ['c', c],
  ] as const) {
    const timesSent = async () => (await call(br, 'GET', `${NGSI}/subscriptions/${sub.id}`)).json.notification?.timesSent;
    const deadline = Date.now() + 30_000;
    let n = await timesSent();
    while (n !== got.length && Date.now() < deadline) {
      await sleep(200);
      n = await timesSent();
    }
    t.equal(n, got.length, `broker ${name}: timesSent adds up across brokers`);
  }
});

t.test('a periodic subscription is notified by one broker of the set: once per timeInterval, not once per broker', async (t) => {
  const [a, b] = brokers as [Broker, Broker, Broker];
  t.equal((await call(a, 'POST', `${NGSI}/entities`, { body: { id: 'urn:ngsi-ld:Tram:p1', type: 'Tram', speed: prop(5) } })).status, 201);
  const sub = {
    id: 'urn:ngsi-ld:Subscription:periodic-set',
    type: 'Subscription',
    entities: [{ type: 'Tram' }],
    timeInterval: 1,
    notification: { endpoint: { uri: base + '/periodic-set' } },
  };
  t.equal((await call(b, 'POST', `${NGSI}/subscriptions`, { body: sub })).status, 201);
  await cacheRound(); // every broker has the subscription, so each keeps its timer
  await notificationsAt('/periodic-set', 1);
  const count = () => received.filter((r) => r.path === '/periodic-set').length;
  const before = count();
  await sleep(4000);
  const sent = count() - before;
  // 4 intervals of 1 s: 4 notifications, one more or less at the window's edges (timers under load); each of the three
  // brokers sending would give about 12.
  t.ok(sent >= 3 && sent <= 5, `${sent} notifications in 4 s of a 1 s timeInterval on three brokers`);
  t.ok(
    received
      .filter((r) => r.path === '/periodic-set')
      .every((r) => r.body.data.length === 1 && r.body.data[0].id === 'urn:ngsi-ld:Tram:p1'),
    'each with the one entity',
  );
  t.equal((await call(a, 'DELETE', `${NGSI}/subscriptions/${sub.id}`)).status, 204);
});

t.test(
  'a periodic csource subscription: one broker of the set sends, a broker started later too; a delete on another stops it',
  async (t) => {
    const [a, b, c] = brokers as [Broker, Broker, Broker];
    const reg = {
      id: 'urn:ngsi-ld:ContextSourceRegistration:csp',
      type: 'ContextSourceRegistration',
      endpoint: 'http://127.0.0.1:9/source',
      information: [{ entities: [{ type: 'Ferry' }] }],
    };
    t.equal((await call(a, 'POST', `${NGSI}/csourceRegistrations`, { body: reg })).status, 201);
    const sub = {
      id: 'urn:ngsi-ld:Subscription:csp',
      type: 'Subscription',
      entities: [{ type: 'Ferry' }],
      timeInterval: 1,
      notification: { endpoint: { uri: base + '/csp' } },
    };
    t.equal((await call(b, 'POST', `${NGSI}/csourceSubscriptions`, { body: sub })).status, 201);
    // A broker that joins the set now reads the subscription from the store at its start, and keeps a timer too.
    const late = await startBroker([...docdbArgs(dbName), '--subCacheIval', String(IVAL_S)], {}, { pool: true });
    t.teardown(() => late.stop());
    await cacheRound();
    const count = () => received.filter((r) => r.path === '/csp').length;
    const before = count();
    await sleep(4000);
    const sent = count() - before;
    t.ok(sent >= 3 && sent <= 5, `${sent} notifications in 4 s of a 1 s timeInterval on four brokers (each sending: about 8)`);
    t.equal((await call(c, 'DELETE', `${NGSI}/csourceSubscriptions/${sub.id}`)).status, 204, 'deleted through a third broker');
    await cacheRound();
    const atDelete = count();
    await sleep(3000);
    t.ok(count() - atDelete <= 1, `${count() - atDelete} notifications in the 3 s after every broker read the delete`);
    await call(a, 'DELETE', `${NGSI}/csourceRegistrations/${reg.id}`);
  },
);

t.test('a subscription changed on one broker, deleted on another: the third follows within --subCacheIval', async (t) => {
  const [a, b, c] = brokers as [Broker, Broker, Broker];
  const id = 'urn:ngsi-ld:Subscription:changed';
  const sub = {
    id,
    type: 'Subscription',
    entities: [{ type: 'Tram' }],
    q: 'speed>100',
    notification: { endpoint: { uri: base + '/changed' } },
  };
  t.equal((await call(a, 'POST', `${NGSI}/subscriptions`, { body: sub })).status, 201);
  await cacheRound();
  await call(c, 'POST', `${NGSI}/entities`, { body: { id: 'urn:ngsi-ld:Tram:1', type: 'Tram', speed: prop(50) } });
  await call(c, 'POST', `${NGSI}/entities`, { body: { id: 'urn:ngsi-ld:Tram:2', type: 'Tram', speed: prop(150) } });
  t.same(
    (await notificationsAt('/changed', 1)).map((n) => n.data[0].id),
    ['urn:ngsi-ld:Tram:2'],
    'created on a, matched on c with its q',
  );
  t.equal((await call(b, 'PATCH', `${NGSI}/subscriptions/${id}`, { body: { q: 'speed<100' } })).status, 204, 'changed on b');
  await cacheRound();
  await call(c, 'PATCH', `${NGSI}/entities/urn:ngsi-ld:Tram:1/attrs`, { body: { speed: prop(60) } });
  await call(c, 'PATCH', `${NGSI}/entities/urn:ngsi-ld:Tram:2/attrs`, { body: { speed: prop(160) } });
  t.same(
    (await notificationsAt('/changed', 2)).map((n) => n.data[0].id),
    ['urn:ngsi-ld:Tram:2', 'urn:ngsi-ld:Tram:1'],
    "c matches with b's new q",
  );
  const sentAsB = async () => (await call(b, 'GET', `${NGSI}/subscriptions/${id}`)).json.notification?.timesSent;
  for (let i = 0; i < 75 && (await sentAsB()) !== 2; i++) await sleep(200);
  t.equal(await sentAsB(), 2, 'b, which sent none, shows what c sent');
  t.equal((await call(b, 'DELETE', `${NGSI}/subscriptions/${id}`)).status, 204, 'deleted on b');
  await cacheRound();
  await call(c, 'PATCH', `${NGSI}/entities/urn:ngsi-ld:Tram:1/attrs`, { body: { speed: prop(70) } });
  await call(a, 'PATCH', `${NGSI}/entities/urn:ngsi-ld:Tram:1/attrs`, { body: { speed: prop(80) } });
  await sleep(1000);
  t.equal(received.filter((r) => r.path === '/changed').length, 2, 'no broker notifies for the deleted subscription');
  t.equal((await call(a, 'GET', `${NGSI}/subscriptions/${id}`)).status, 404, 'gone on every broker');
});

t.test('a hosted @context kept through one broker is served and used by the others, and gone from all once deleted', async (t) => {
  const [a, b, c] = brokers as [Broker, Broker, Broker];
  const made = await call(a, 'POST', `${NGSI}/jsonldContexts`, { body: { '@context': { Lorry: 'https://example.org/ns/Lorry' } } });
  t.equal(made.status, 201);
  const path = made.headers.get('location')!;
  t.equal((await call(b, 'GET', path)).status, 200, 'served by another broker');
  const link = `<${b.url}${path}>; rel="http://www.w3.org/ns/json-ld#context"; type="application/ld+json"`;
  t.equal(
    (await call(b, 'POST', `${NGSI}/entities`, { body: { id: 'urn:ngsi-ld:Lorry:1', type: 'Lorry' }, headers: { link } })).status,
    201,
    'used by another broker',
  );
  const kv = await call(c, 'GET', `${NGSI}/entities/urn:ngsi-ld:Lorry:1?options=keyValues`);
  t.equal(kv.json.type, 'https://example.org/ns/Lorry', 'the term expanded with it');
  t.equal((await call(c, 'DELETE', path)).status, 204, 'deleted through a third');
  t.equal((await call(a, 'GET', path)).status, 404, 'gone from the first');
  t.equal((await call(b, 'GET', path)).status, 404, 'gone from the second');
});
