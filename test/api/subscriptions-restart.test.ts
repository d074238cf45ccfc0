// Subscriptions and their counters survive a restart of the broker on the disk store (issue 4), in the default
// tenant and in another one, and notify again after it.
import t from 'tap';
import { createServer, type Server } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnBroker, startBroker, call, NGSI } from './helpers/broker.js';

const dir = mkdtempSync(join(tmpdir(), 'ldbroker-subs-'));
const values: Array<[string, number]> = [];
let receiver: Server;
let uri = '';

t.before(async () => {
  receiver = createServer((req, res) => {
    let b = '';
    req.on('data', (d) => {
      b += String(d);
    });
    req.on('end', () => {
      values.push([req.url ?? '', JSON.parse(b).data[0].n.value]);
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  uri = `http://127.0.0.1:${(receiver.address() as { port: number }).port}`;
});
t.teardown(() => {
  receiver.close();
  rmSync(dir, { recursive: true, force: true });
});

async function until<T>(read: () => Promise<T>, done: (v: T) => boolean): Promise<T> {
  const deadline = Date.now() + 10_000;
  let v = await read();
  while (!done(v) && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 25));
    v = await read();
  }
  return v;
}

t.test('a subscription keeps its members and counters across a restart and notifies after it', async (t) => {
  const tenants: Array<Record<string, string>> = [{}, { 'NGSILD-Tenant': 'restarted' }];
  let broker = await spawnBroker(['--dbDir', dir]);
  for (const [i, headers] of tenants.entries()) {
    const r = await call(broker, 'POST', `${NGSI}/subscriptions`, {
      headers,
      body: {
        id: 'urn:ngsi-ld:Subscription:r1',
        type: 'Subscription',
        subscriptionName: `kept ${i}`,
        entities: [{ type: 'Gauge' }],
        notification: { format: 'normalized', endpoint: { uri: `${uri}/t${i}` } },
      },
    });
    t.equal(r.status, 201, r.text);
    t.equal(
      (
        await call(broker, 'POST', `${NGSI}/entities`, {
          headers,
          body: { id: 'urn:ngsi-ld:Gauge:1', type: 'Gauge', n: { type: 'Property', value: 1 } },
        })
      ).status,
      201,
    );
    // timesSent counts a notification as it goes out, lastSuccess once it is answered: the answer is waited for.
    const s = await until(
      async () => (await call(broker, 'GET', `${NGSI}/subscriptions/urn:ngsi-ld:Subscription:r1`, { headers })).json,
      (v) => v.notification.timesSent >= 1 && v.notification.lastSuccess !== undefined,
    );
    t.equal(s.notification.timesSent, 1);
  }
  t.equal(await broker.stop(), 0);

  // Restarted in this process on the files the stopped process left.
  broker = await startBroker(['--dbDir', dir]);
  try {
    for (const [i, headers] of tenants.entries()) {
      const before = (await call(broker, 'GET', `${NGSI}/subscriptions/urn:ngsi-ld:Subscription:r1`, { headers })).json;
      t.equal(before.subscriptionName, `kept ${i}`);
      t.equal(before.notification.timesSent, 1, 'timesSent survived');
      t.type(before.notification.lastSuccess, 'string', 'lastSuccess survived');
      await call(broker, 'PATCH', `${NGSI}/entities/urn:ngsi-ld:Gauge:1/attrs`, { headers, body: { n: { type: 'Property', value: 2 } } });
      const received = (): number => values.filter(([p]) => p === `/t${i}`).length;
      const after = await until(
        async () => (await call(broker, 'GET', `${NGSI}/subscriptions/urn:ngsi-ld:Subscription:r1`, { headers })).json,
        (v) => v.notification.timesSent >= 2 && received() >= 2,
      );
      t.equal(after.notification.timesSent, 2, 'the count goes on from the kept one');
      // Counted as sent when its request goes out: the receiver may not have read it yet.
      const got = await until(
        async () => values.filter(([p]) => p === `/t${i}`).map(([, v]) => v),
        (v) => v.length >= 2,
      );
      t.same(got, [1, 2], 'notified before and after the restart');
    }
  } finally {
    await broker.stop();
  }
});
