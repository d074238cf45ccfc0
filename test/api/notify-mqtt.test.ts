// MQTT notifications (seed 001 §2.1, §5, §6.1, §7, §8): an mqtt:// or mqtts:// endpoint is 400 without the MQTT
// bridge; with it, each notification is one message {metadata, body} published on the endpoint's topic at its QoS
// and protocol version, to a real Mosquitto (plain, user/password and TLS listeners); counters follow as for HTTP.
import t from 'tap';
import { readFileSync } from 'node:fs';
import { createServer as createHttpsServer } from 'node:https';
import { dirname, join } from 'node:path';
import { startBroker, call, NGSI, type Broker } from './helpers/broker.js';
import { Listener, OwnMosquitto, mosquitto, uniqueTopic, type Mosquitto } from './helpers/mosquitto.js';

let server: Mosquitto;
let broker: Broker;
let listener: Listener;
let topics: string[];
const port = (url: string): string => url.slice(url.lastIndexOf(':') + 1);

t.before(async () => {
  server = mosquitto();
  broker = await startBroker(['--bridges', 'mqtt']);
  topics = [];
  listener = await Listener.open(server.url, ['ldbroker-test/#']);
});
t.teardown(async () => {
  await listener.close();
  await broker.stop();
});

const prop = (value: unknown): Record<string, unknown> => ({ type: 'Property', value });
let n = 0;

async function subscribe(
  on: Broker,
  type: string,
  endpoint: Record<string, unknown>,
): Promise<{ status: number; id: string; text: string }> {
  const id = `urn:ngsi-ld:Subscription:mqtt-${++n}`;
  const r = await call(on, 'POST', `${NGSI}/subscriptions`, {
    body: { id, type: 'Subscription', entities: [{ type }], notification: { endpoint } },
  });
  return { status: r.status, id, text: r.text };
}

async function create(type: string, id: string, value: unknown): Promise<void> {
  const r = await call(broker, 'POST', `${NGSI}/entities`, { body: { id, type, speed: prop(value) } });
  if (r.status !== 201) throw new Error(r.text);
}

/** The subscription's counters, waiting (bounded) until `ready` holds. */
async function counters(on: Broker, id: string, ready: (n: any) => boolean): Promise<any> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const r = await call(on, 'GET', `${NGSI}/subscriptions/${encodeURIComponent(id)}`);
    const notification = JSON.parse(r.text).notification;
    if (ready(notification) || Date.now() > deadline) return notification;
    await new Promise((r) => setTimeout(r, 50));
  }
}

t.test('without the MQTT bridge an mqtt:// or mqtts:// endpoint is 400 at create and at update', async (t) => {
  const bare = await startBroker([]);
  t.teardown(() => bare.stop());
  for (const uri of ['mqtt://127.0.0.1/x', 'mqtts://127.0.0.1/x']) {
    const r = await subscribe(bare, 'Car', { uri });
    t.equal(r.status, 400, uri);
    t.match(JSON.parse(r.text), {
      type: 'https://uri.etsi.org/ngsi-ld/errors/BadRequestData',
      detail: /need the MQTT bridge, which is not loaded/,
    });
  }
  const ok = await subscribe(bare, 'Car', { uri: 'http://127.0.0.1:9/n' });
  t.equal(ok.status, 201);
  const r = await call(bare, 'PATCH', `${NGSI}/subscriptions/${encodeURIComponent(ok.id)}`, {
    body: { notification: { endpoint: { uri: 'mqtt://127.0.0.1/x' } } },
  });
  t.equal(r.status, 400);
  t.match(r.text, /need the MQTT bridge/);
});

t.test('an MQTT endpoint that cannot be used is 400 BadRequestData naming what is wrong', async (t) => {
  const bad: Array<[Record<string, unknown>, RegExp]> = [
    [{ uri: 'mqtt://127.0.0.1:1883' }, /topic is empty/],
    [{ uri: 'mqtt://127.0.0.1/' }, /topic is empty/],
    [{ uri: 'mqtt://127.0.0.1/a/+/b' }, /wildcard/],
    [{ uri: 'mqtt://127.0.0.1/a/#' }, /wildcard/],
    [{ uri: 'mqtt://127.0.0.1/a/%23' }, /wildcard/],
    [{ uri: 'mqtt://127.0.0.1/a?x=1' }, /is not mqtt/],
    [{ uri: 'mqtt://127.0.0.1:99999/a' }, /out of range/],
    [{ uri: 'mqtt:///a' }, /is not mqtt\[s\]:\/\//],
    [{ uri: 'mqtt://u%zz@127.0.0.1/a' }, /percent-encoding/],
    [{ uri: 'mqtt://127.0.0.1/a', notifierInfo: [{ key: 'MQTT-QoS', value: '3' }] }, /MQTT-QoS must be 0, 1 or 2, not '3'/],
    [{ uri: 'mqtt://127.0.0.1/a', notifierInfo: [{ key: 'MQTT-QoS', value: '' }] }, /MQTT-QoS must be 0, 1 or 2/],
    [{ uri: 'mqtt://127.0.0.1/a', notifierInfo: [{ key: 'MQTT-Version', value: 'mqtt4' }] }, /MQTT-Version must be mqtt3.1.1 or mqtt5.0/],
    [{ uri: 'mqtt://127.0.0.1/a', notifierInfo: [{ key: 'MQTT-QoS', value: 1 }] }, /each entry must be \{key: string, value: string\}/],
  ];
  for (const [endpoint, detail] of bad) {
    const r = await subscribe(broker, 'Car', endpoint);
    t.equal(r.status, 400, JSON.stringify(endpoint));
    t.match(JSON.parse(r.text), { type: 'https://uri.etsi.org/ngsi-ld/errors/BadRequestData', detail }, JSON.stringify(endpoint));
  }
  const ok = await subscribe(broker, 'Car', { uri: `${server.url}/ldbroker-test/patched` });
  t.equal(ok.status, 201);
  const r = await call(broker, 'PATCH', `${NGSI}/subscriptions/${encodeURIComponent(ok.id)}`, {
    body: { notification: { endpoint: { uri: `${server.url}/x`, notifierInfo: [{ key: 'MQTT-Version', value: '5' }] } } },
  });
  t.equal(r.status, 400, 'an update is checked as a create');
  t.match(r.text, /MQTT-Version must be/);
});

for (const version of ['mqtt3.1.1', 'mqtt5.0'] as const) {
  for (const qos of [0, 1, 2] as const) {
    t.test(`${version} QoS ${qos}: one message {metadata, body} per notification, at that QoS; counters follow`, async (t) => {
      const topic = uniqueTopic(`v${version}-q${qos}`);
      topics.push(topic);
      const type = `Car${qos}${version.replace(/\W/g, '')}`;
      const sub = await subscribe(broker, type, {
        uri: `${server.url}/${topic}`,
        notifierInfo: [
          { key: 'MQTT-QoS', value: String(qos) },
          { key: 'MQTT-Version', value: version },
        ],
        receiverInfo: [{ key: 'fiware-service', value: 'openiot' }],
      });
      t.equal(sub.status, 201, sub.text);
      await create(type, `urn:ngsi-ld:${type}:1`, 1);
      await create(type, `urn:ngsi-ld:${type}:2`, 2);
      const got = await listener.on(topic, 2);
      t.equal(got.length, 2);
      for (const m of got) t.equal(m.qos, qos, 'published at the QoS of notifierInfo');
      const first = JSON.parse(got[0]!.payload);
      t.same(Object.keys(first).sort(), ['body', 'metadata']);
      t.equal(first.metadata['Content-Type'], 'application/json');
      t.match(first.metadata.Link, /ngsi-ld-core-context.*rel="http:\/\/www.w3.org\/ns\/json-ld#context"/);
      t.equal(first.metadata['fiware-service'], 'openiot', 'receiverInfo is in the metadata');
      t.equal(first.body.type, 'Notification');
      t.equal(first.body.subscriptionId, sub.id);
      t.ok(!Number.isNaN(Date.parse(first.body.notifiedAt)), 'notifiedAt is a date-time');
      const ids = got.map((m) => JSON.parse(m.payload).body.data[0].id).sort();
      t.same(ids, [`urn:ngsi-ld:${type}:1`, `urn:ngsi-ld:${type}:2`]);
      const c = await counters(broker, sub.id, (x) => x.timesSent === 2);
      t.equal(c.timesSent, 2);
      t.equal(c.timesFailed ?? 0, 0);
      t.equal(c.status, 'ok');
      t.ok(c.lastSuccess, 'lastSuccess is set');
    });
  }
}

t.test('mqtt://user:password@ reaches the listener that wants them; a wrong password is a failure of the subscription', async (t) => {
  const host = `127.0.0.1:${port(server.authUrl)}`;
  const topic = uniqueTopic('auth');
  const good = await subscribe(broker, 'AuthCar', {
    uri: `mqtt://${server.user}:${encodeURIComponent(server.password)}@${host}/${topic}`,
    notifierInfo: [{ key: 'MQTT-QoS', value: '1' }],
  });
  t.equal(good.status, 201, good.text);
  const bad = await subscribe(broker, 'AuthCar', { uri: `mqtt://${server.user}:wrong@${host}/${topic}`, timeout: 1000 });
  t.equal(bad.status, 201, bad.text);
  const authListener = await Listener.open(server.authUrl, [topic], { username: server.user, password: server.password });
  t.teardown(() => authListener.close());
  await create('AuthCar', 'urn:ngsi-ld:AuthCar:1', 1);
  const got = await authListener.on(topic, 1);
  t.equal(got.length, 1, 'delivered with the right password');
  t.equal(JSON.parse(got[0]!.payload).body.subscriptionId, good.id);
  const c = await counters(broker, bad.id, (x) => (x.timesFailed ?? 0) >= 1);
  t.equal(c.timesFailed, 1, 'the wrong password fails');
  t.equal(c.status, 'failed');
  const logged = broker.logs.join('\n');
  t.notMatch(logged, /wrong/, 'the password is not logged');
  t.notMatch(logged, new RegExp(server.password), 'the password is not logged');
});

t.test('mqtts:// with a self-signed certificate: delivered with --insecureNotif, a failure without it', async (t) => {
  const insecure = await startBroker(['--bridges', 'mqtt', '--insecureNotif']);
  t.teardown(() => insecure.stop());
  const topic = uniqueTopic('tls');
  const a = await subscribe(insecure, 'TlsCar', { uri: `${server.tlsUrl}/${topic}`, notifierInfo: [{ key: 'MQTT-QoS', value: '2' }] });
  t.equal(a.status, 201, a.text);
  const b = await subscribe(broker, 'TlsCar', { uri: `${server.tlsUrl}/${topic}`, timeout: 1000 });
  t.equal(b.status, 201, b.text);
  const tlsListener = await Listener.open(server.tlsUrl, [topic], { rejectUnauthorized: false });
  t.teardown(() => tlsListener.close());
  const r = await call(insecure, 'POST', `${NGSI}/entities`, { body: { id: 'urn:ngsi-ld:TlsCar:1', type: 'TlsCar', speed: prop(3) } });
  t.equal(r.status, 201);
  const got = await tlsListener.on(topic, 1);
  t.equal(got.length, 1);
  t.equal(got[0]!.qos, 2);
  t.equal(JSON.parse(got[0]!.payload).body.data[0].id, 'urn:ngsi-ld:TlsCar:1');
  await create('TlsCar', 'urn:ngsi-ld:TlsCar:2', 4);
  const c = await counters(broker, b.id, (x) => (x.timesFailed ?? 0) >= 1);
  t.equal(c.timesFailed, 1, 'the self-signed certificate is refused without --insecureNotif');
  t.match(c.lastFailure, /\d{4}-/);
  t.equal((await tlsListener.on(topic, 2, 500)).length, 1, 'nothing else was published');
});

t.test('a server that does not answer fails the notification within the endpoint timeout', async (t) => {
  const sub = await subscribe(broker, 'DeadCar', { uri: 'mqtt://127.0.0.1:9/dead', timeout: 500 });
  t.equal(sub.status, 201);
  await create('DeadCar', 'urn:ngsi-ld:DeadCar:1', 1);
  const c = await counters(broker, sub.id, (x) => (x.timesFailed ?? 0) >= 1);
  t.equal(c.timesFailed, 1);
  t.equal(c.timesSent, 1, 'counted as sent, as an HTTP request that got no answer');
});

t.test('--insecureNotif also trusts the self-signed certificate of an https:// endpoint', async (t) => {
  const dir = dirname(server.ca);
  let received = 0;
  const receiver = createHttpsServer({ cert: readFileSync(server.ca), key: readFileSync(join(dir, 'server.key')) }, (req, res) => {
    req.resume();
    req.on('end', () => {
      received++;
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  t.teardown(() => receiver.close());
  const uri = `https://127.0.0.1:${(receiver.address() as { port: number }).port}/n`;
  const insecure = await startBroker(['--insecureNotif']);
  t.teardown(() => insecure.stop());
  const a = await subscribe(insecure, 'HttpsCar', { uri });
  const b = await subscribe(broker, 'HttpsCar', { uri, timeout: 2000 });
  t.equal(a.status, 201);
  t.equal(b.status, 201);
  t.equal(
    (await call(insecure, 'POST', `${NGSI}/entities`, { body: { id: 'urn:ngsi-ld:HttpsCar:1', type: 'HttpsCar', speed: prop(1) } })).status,
    201,
  );
  const ca = await counters(insecure, a.id, (x) => x.timesSent === 1 && x.lastSuccess !== undefined);
  t.equal(ca.status, 'ok', 'delivered with --insecureNotif');
  await create('HttpsCar', 'urn:ngsi-ld:HttpsCar:2', 2);
  const cb = await counters(broker, b.id, (x) => (x.timesFailed ?? 0) >= 1);
  t.equal(cb.timesFailed, 1, 'refused without it');
  t.equal(received, 1);
});

t.test('a server that refused the user is asked again by the next notification', async (t) => {
  const own = await OwnMosquitto.start({});
  t.teardown(() => own.stop());
  const topic = uniqueTopic('refused-then-ok');
  const sub = await subscribe(broker, 'LaterCar', { uri: `mqtt://dev:pw@127.0.0.1:${own.port}/${topic}`, timeout: 1000 });
  t.equal(sub.status, 201);
  await create('LaterCar', 'urn:ngsi-ld:LaterCar:1', 1);
  const first = await counters(broker, sub.id, (x) => (x.timesFailed ?? 0) >= 1);
  t.equal(first.timesFailed, 1, 'refused');
  own.setUsers({ dev: 'pw' });
  await own.stop();
  await own.restart();
  const ownListener = await Listener.open(own.url, [topic], { username: 'dev', password: 'pw' });
  t.teardown(() => ownListener.close());
  let got: unknown[] = [];
  for (let k = 2; k < 12 && got.length === 0; k++) {
    await create('LaterCar', `urn:ngsi-ld:LaterCar:${k}`, k);
    got = await ownListener.on(topic, 1, 1500);
  }
  t.equal(got.length, 1, 'delivered once the user exists');
});
