// docdb's faults (issue 17): the database down at start, the broker starts all the same, /ready says it is not
// ready, requests answer 503 with Retry-After, and all recover by themselves once the database is back; the database
// lost under a running broker: 503s, no crash, and back again. The broker reaches FerretDB through a TCP relay of
// this test, which it opens and closes.
import t from 'tap';
import { createServer, connect, type Server, type Socket } from 'node:net';
import { startBroker, call, NGSI, type Broker } from './helpers/broker.js';
import { dropDatabases, freshDbName, mongoUrl } from './helpers/docdb.js';
import { freePort } from './helpers/ports.js';

const target = new URL(mongoUrl());
const dbName = freshDbName();
let relay: Server | undefined;
const sockets = new Set<Socket>();

async function relayUp(port: number): Promise<void> {
  relay = createServer((client) => {
    const server = connect(Number(target.port), target.hostname);
    for (const s of [client, server]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => s.destroy());
    }
    client.pipe(server).pipe(client);
  });
  await new Promise<void>((r) => relay!.listen(port, '127.0.0.1', r));
}

async function relayDown(): Promise<void> {
  const r = relay;
  relay = undefined;
  for (const s of sockets) s.destroy();
  if (r !== undefined) await new Promise((done) => r.close(done));
}

async function ready(b: Broker): Promise<number> {
  return (await fetch(`http://127.0.0.1:${b.healthPort}/ready`)).status;
}

async function until(what: () => Promise<boolean>, ms = 20_000): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (await what()) return true;
    await new Promise((r) => setTimeout(r, 100));
  }
  return false;
}

t.teardown(async () => {
  await relayDown();
  await dropDatabases(dbName);
});

t.test('down at start: the broker starts, not ready, 503s; back: ready and serving, without a restart', async (t) => {
  const port = await freePort();
  const broker = await startBroker(
    ['--database', 'docdb', '--dbURI', `mongodb://127.0.0.1:${port}/`, '--dbName', dbName, '--dbTimeout', '300'],
    {},
    { pool: true },
  );
  t.teardown(() => broker.stop());
  t.equal(await ready(broker), 503, '/ready: not ready without the database');
  const entity = { id: 'urn:ngsi-ld:Car:f1', type: 'Car', speed: { type: 'Property', value: 1 } };
  const down = await call(broker, 'POST', `${NGSI}/entities`, { body: entity });
  t.equal(down.status, 503, 'a write answers 503');
  t.equal(down.json?.type, 'https://uri.etsi.org/ngsi-ld/errors/Unavailable', 'as a ProblemDetails');
  t.ok(Number(down.headers.get('retry-after')) > 0, 'with Retry-After');
  t.notMatch(down.text, /127\.0\.0\.1|mongodb/, 'the driver message (hosts) is not shown');
  t.equal((await call(broker, 'GET', `${NGSI}/entities?type=Car`)).status, 503, 'a query answers 503');

  await relayUp(port);
  t.ok(await until(async () => (await ready(broker)) === 200), '/ready once the database is back');
  const again = await call(broker, 'POST', `${NGSI}/entities`, { body: entity });
  t.equal(again.status, 201, 'writes again', { text: again.text });
  t.equal((await call(broker, 'GET', `${NGSI}/entities/${entity.id}`)).status, 200, 'reads again');

  await relayDown();
  const lost = await Promise.all([
    call(broker, 'GET', `${NGSI}/entities/${entity.id}`),
    call(broker, 'PATCH', `${NGSI}/entities/${entity.id}/attrs`, { body: { speed: { type: 'Property', value: 2 } } }),
  ]);
  t.same(
    lost.map((r) => r.status),
    [503, 503],
    'the database lost under load: 503s, no crash',
    { logs: broker.logs.filter((l) => l.includes('"level":50')).slice(-3) },
  );
  t.ok(await until(async () => (await ready(broker)) === 503), '/ready says so');
  await relayUp(port);
  t.ok(await until(async () => (await call(broker, 'GET', `${NGSI}/entities/${entity.id}`)).status === 200), 'back by itself');
  const r = await call(broker, 'GET', `${NGSI}/entities/${entity.id}?options=keyValues`);
  t.equal(r.json.speed, 1, 'the refused PATCH wrote nothing; the acknowledged create is there');
});
