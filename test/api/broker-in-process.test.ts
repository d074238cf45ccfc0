// Brokers in one process (src/broker.ts, as the API tests run them): a request injected into the dispatcher is
// answered as the HTTP server answers it, and two brokers never hear each other's threads (channels, logs).
import t from 'tap';
import { createServer, type Server } from 'node:http';
import { startBroker, call, NGSI, type Broker, type Reply } from './helpers/broker.js';

/** What a client sees of an answer, but the headers a server adds on its own (Date, uWebSockets, Connection...). */
function seen(r: Reply): { status: number; headers: string[]; text: string } {
  const own = new Set(['date', 'uwebsockets', 'connection', 'keep-alive']);
  const headers: string[] = [];
  r.headers.forEach((value, name) => {
    if (!own.has(name)) headers.push(`${name}: ${value}`);
  });
  return { status: r.status, headers: headers.sort(), text: r.text };
}

t.test('an injected request is answered as the uWS and node:http servers answer it over HTTP', async (t) => {
  const entity = { id: 'urn:ngsi-ld:Same:1', type: 'Same', a: { type: 'Property', value: 1 } };
  const requests: Array<[string, string, Parameters<typeof call>[3]]> = [
    ['POST', `${NGSI}/entities`, { body: entity }],
    ['GET', `${NGSI}/entities/urn:ngsi-ld:Same:1`, {}],
    ['HEAD', `${NGSI}/entities/urn:ngsi-ld:Same:1`, {}],
    ['GET', `${NGSI}/entities?type=Same&count=true&limit=1`, { headers: { accept: 'application/ld+json' } }],
    ['OPTIONS', `${NGSI}/entities`, {}],
    ['PUT', `${NGSI}/entities`, {}],
    ['GET', '/nothing', {}],
    ['POST', `${NGSI}/entities`, { raw: 'x'.repeat(2000), headers: { 'content-type': 'application/json' } }],
    ['POST', `${NGSI}/entities`, { raw: '{}' }],
    // Inside the value: uWS trims bytes from 0x80 up at its ends before anyone sees them (front/request-head.ts).
    ['GET', `${NGSI}/entities/urn:ngsi-ld:Same:1`, { headers: { 'ngsild-tenant': 'caf\u00e9s' } }],
    ['GET', `${NGSI}/entities?type=Same&q=a%3D%3D1&bad=1`, {}],
    ['DELETE', `${NGSI}/entities/urn:ngsi-ld:Same:1`, {}],
    ['DELETE', `${NGSI}/entities/urn:ngsi-ld:Same:1`, {}],
  ];
  for (const server of ['uws', 'node']) {
    // Two brokers alike, one asked over HTTP and one by injection, so each request finds the same store in both.
    const args = ['--httpServer', server, '--maxBodySize', '1000'];
    const overHttp = await startBroker(args);
    const injected: Broker = { ...(await startBroker(args)), http: false };
    t.teardown(async () => {
      await overHttp.stop();
      await injected.stop();
    });
    for (const [method, path, opts] of requests) {
      t.same(
        seen(await call(injected, method, path, opts)),
        seen(await call(overHttp, method, path, opts)),
        `${server}: ${method} ${path}`,
      );
    }
  }
});

t.test("two brokers in one process: a subscription of one never hears the other's changes, nor do their logs mix", async (t) => {
  const received: string[] = [];
  const receiver: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (d) => {
      body += String(d);
    });
    req.on('end', () => {
      received.push(JSON.parse(body).data[0].origin.value as string);
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  t.teardown(() => receiver.close());
  const uri = `http://127.0.0.1:${(receiver.address() as { port: number }).port}/notify`;
  const a = await startBroker();
  const b = await startBroker();
  t.teardown(async () => {
    await a.stop();
    await b.stop();
  });
  const sub = {
    id: 'urn:ngsi-ld:Subscription:a',
    type: 'Subscription',
    entities: [{ type: 'Heard' }],
    notification: { endpoint: { uri } },
  };
  t.equal((await call(a, 'POST', `${NGSI}/subscriptions`, { body: sub })).status, 201);
  const heard = (origin: string): Record<string, unknown> => ({
    id: 'urn:ngsi-ld:Heard:1',
    type: 'Heard',
    origin: { type: 'Property', value: origin },
  });
  t.equal((await call(b, 'POST', `${NGSI}/entities`, { body: heard('b') })).status, 201, "B's change first");
  t.equal((await call(a, 'POST', `${NGSI}/entities`, { body: heard('a') })).status, 201);
  t.equal(
    (await call(a, 'PATCH', `${NGSI}/entities/urn:ngsi-ld:Heard:1/attrs`, { body: { origin: { type: 'Property', value: 'a' } } })).status,
    204,
  );
  for (let i = 0; i < 500 && received.filter((o) => o === 'a').length < 2; i++) await new Promise((r) => setTimeout(r, 20));
  t.same(received, ['a', 'a'], "A's two changes notify once each; B's change, made before them, not at all");
  const about = (broker: Broker): string[] => broker.logs.filter((l) => l.includes(sub.id));
  t.same(about(b), [], "nothing of A's subscription is in B's log");
});
