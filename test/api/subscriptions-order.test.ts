// Order of notifications (issue 4: "notifications for one entity and subscription keep their order"): PATCHes of
// one entity sent one after the other reach the receiver in that order, however many pipeline workers handle them
// and whichever way the store commits (batched async writer or synchronous commit in the worker).
import t from 'tap';
import { createServer, type Server } from 'node:http';
import { startBroker, call, NGSI } from './helpers/broker.js';

// Two brokers started one after the other: room beyond the 120 s default on a loaded machine.
t.setTimeout(300_000);

const PATCHES = 40;

let server: Server;
let base = '';
const received = new Map<string, number[]>();

t.before(async () => {
  server = createServer((req, res) => {
    let text = '';
    req.on('data', (d) => {
      text += String(d);
    });
    req.on('end', () => {
      const list = received.get(req.url ?? '') ?? [];
      list.push(JSON.parse(text).data[0].n.value as number);
      received.set(req.url ?? '', list);
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
});
t.teardown(() => {
  server.close();
});

for (const lockPrefer of ['reads', 'writes']) {
  t.test(`sequential PATCHes of one entity are notified in order (--connectionPoolSize 8, --dbLockPrefer ${lockPrefer})`, async (t) => {
    const broker = await startBroker(['--connectionPoolSize', '8', '--dbLockPrefer', lockPrefer]);
    t.teardown(() => broker.stop());
    const path = `/order-${lockPrefer}`;
    const sub = await call(broker, 'POST', `${NGSI}/subscriptions`, {
      body: {
        type: 'Subscription',
        entities: [{ type: 'Counter' }],
        watchedAttributes: ['n'],
        notification: { endpoint: { uri: base + path } },
      },
    });
    t.equal(sub.status, 201, sub.text);
    const id = 'urn:ngsi-ld:Counter:1';
    t.equal(
      (await call(broker, 'POST', `${NGSI}/entities`, { body: { id, type: 'Counter', n: { type: 'Property', value: 0 } } })).status,
      201,
    );
    for (let i = 1; i <= PATCHES; i++) {
      const r = await call(broker, 'PATCH', `${NGSI}/entities/${encodeURIComponent(id)}/attrs`, {
        body: { n: { type: 'Property', value: i } },
      });
      if (r.status !== 204) {
        t.fail(`PATCH ${i}: ${r.status} ${r.text}`);
        break;
      }
    }
    const deadline = Date.now() + 30_000;
    while ((received.get(path)?.length ?? 0) < PATCHES + 1 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    t.same(
      received.get(path),
      Array.from({ length: PATCHES + 1 }, (_, i) => i),
      'create then every PATCH, in the order written',
    );
  });
}
