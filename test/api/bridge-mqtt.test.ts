// The MQTT bridge (seed 001 §2.2, §2.3, §3, §4, §6.2, §7): Channels from --bridgeConfig, listed by GET /channels
// (active, dormant with the reason; refused ones not created); a message on a Channel's topic is a write of its
// attribute; a write of the attribute is published on the topic, and neither comes back as an echo; the client
// reconnects and subscribes again when the server restarts. Against a Mosquitto of this file (OwnMosquitto).
import t, { type Test } from 'tap';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import mqtt, { type MqttClient } from 'mqtt';
import { startBroker, call, NGSI, type Broker } from './helpers/broker.js';
import { Listener, OwnMosquitto, mosquitto } from './helpers/mosquitto.js';
import { repoPath } from '../helpers/repo.js';

const dir = mkdtempSync(join(tmpdir(), 'ldbroker-bridge-'));
let n = 0;
function configFile(doc: unknown): string {
  const file = join(dir, `bridges-${++n}.json`);
  writeFileSync(file, typeof doc === 'string' ? doc : JSON.stringify(doc));
  return file;
}

let server: OwnMosquitto;
let device: MqttClient;

t.before(async () => {
  server = await OwnMosquitto.start();
  device = await mqtt.connectAsync(server.url, { protocolVersion: 5, reconnectPeriod: 200 });
});
t.teardown(async () => {
  await device.endAsync(true);
  await server.stop();
});

const channel = (entityId: string, attribute: string, channelInfo?: unknown): Record<string, unknown> => ({
  entityId,
  entityType: 'Sensor',
  attribute,
  ...(channelInfo === undefined ? {} : { channelInfo }),
});

/** The attribute's value as keyValues show it, waiting (bounded) until `ready` holds. */
async function valueOf(broker: Broker, id: string, attr: string, ready: (v: unknown) => boolean, ms = 8000): Promise<unknown> {
  const deadline = Date.now() + ms;
  for (;;) {
    const r = await call(broker, 'GET', `${NGSI}/entities/${encodeURIComponent(id)}?options=keyValues`);
    const v = r.status === 200 ? (JSON.parse(r.text) as Record<string, unknown>)[attr] : undefined;
    if (ready(v) || Date.now() > deadline) return v;
    await new Promise((r) => setTimeout(r, 30));
  }
}

// The pipeline's threads only where a test is about the order of samples (the pool once reordered them, seed 001
// §6.2): a pool's start is most of a broker's start here, and the other tests hold on the inline runner too.
async function bridgeBroker(t: Test, doc: unknown, extra: string[] = [], pool = false): Promise<Broker> {
  const broker = await startBroker(['--bridges', 'mqtt', '--bridgeConfig', configFile(doc), ...extra], {}, { pool });
  t.teardown(() => broker.stop());
  return broker;
}

t.test(
  'GET /channels: active Channels with their channelInfo, a wildcard topic dormant with the reason, refused ones absent',
  async (t) => {
    const broker = await bridgeBroker(t, {
      mqtt: {
        server: { uri: server.url },
        ngsild: {
          topics: {
            'plant/line1/temp': channel('urn:ngsi-ld:Sensor:c1', 'temperature', [{ key: 'MQTT-QoS', value: '1' }]),
            'plant/+/temp': channel('urn:ngsi-ld:Sensor:c2', 'temperature'),
            'plant/#': channel('urn:ngsi-ld:Sensor:c3', 'temperature'),
            'plant/unknown-key': channel('urn:ngsi-ld:Sensor:c4', 'temperature', [{ key: 'retain', value: 'true' }]),
            'plant/bad-qos': channel('urn:ngsi-ld:Sensor:c5', 'temperature', [{ key: 'MQTT-QoS', value: '3' }]),
          },
        },
      },
    });
    const r = await call(broker, 'GET', `${NGSI}/channels`);
    t.equal(r.status, 200);
    const list = JSON.parse(r.text) as Array<Record<string, unknown>>;
    const byTopic = new Map(list.map((c) => [c.endpoint, c]));
    t.same([...byTopic.keys()].sort(), ['plant/#', 'plant/+/temp', 'plant/line1/temp'], 'refused Channels are not created');
    t.same(byTopic.get('plant/line1/temp'), {
      bridge: 'mqtt',
      endpoint: 'plant/line1/temp',
      entityId: 'urn:ngsi-ld:Sensor:c1',
      entityType: 'Sensor',
      attribute: 'temperature',
      channelInfo: [{ key: 'MQTT-QoS', value: '1' }],
      state: 'active',
    });
    t.match(byTopic.get('plant/+/temp'), { state: 'dormant', reason: /wildcard/ });
    t.match(byTopic.get('plant/#'), { state: 'dormant', reason: /wildcard/ });
    const logs = broker.logs.join('\n');
    t.match(logs, /unknown channelInfo key 'retain'/, 'the refusal is logged with its reason');
    t.match(logs, /MQTT-QoS must be 0, 1 or 2/);
  },
);

t.test('without a server the bridge only notifies: every Channel is refused', async (t) => {
  const broker = await bridgeBroker(t, { mqtt: { ngsild: { topics: { 'a/b': channel('urn:ngsi-ld:Sensor:n1', 'temperature') } } } });
  const r = await call(broker, 'GET', `${NGSI}/channels`);
  t.same(JSON.parse(r.text), []);
  t.match(broker.logs.join('\n'), /has no server/);
});

t.test('without bridges GET /channels is an empty list', async (t) => {
  const broker = await startBroker([]);
  t.teardown(() => broker.stop());
  const r = await call(broker, 'GET', `${NGSI}/channels`);
  t.equal(r.status, 200);
  t.same(JSON.parse(r.text), []);
});

for (const version of ['mqtt5.0', 'mqtt3.1.1'] as const) {
  t.test(`${version}: samples in, writes out, no echo either way`, async (t) => {
    const tag = version === 'mqtt5.0' ? 'v5' : 'v3';
    const topic = `plant/${tag}/temp`;
    const id = `urn:ngsi-ld:Sensor:${tag}`;
    const broker = await bridgeBroker(
      t,
      {
        mqtt: {
          server: { uri: server.url, 'MQTT-Version': version, clientId: `ldbroker-test-${tag}-${process.pid}` },
          ngsild: { topics: { [topic]: channel(id, 'temperature', [{ key: 'MQTT-QoS', value: '1' }]) } },
        },
      },
      ['--troe', 'embdb'],
      true,
    );
    const watcher = await Listener.open(server.url, [topic]);
    t.teardown(() => watcher.close());
    // Wait for the bridge's subscription: a first sample is retried until it lands.
    let value: unknown;
    for (let i = 0; i < 50 && value !== 21.5; i++) {
      await device.publishAsync(topic, '21.5', { qos: 1 });
      value = await valueOf(broker, id, 'temperature', (v) => v === 21.5, 300);
    }
    t.equal(value, 21.5, 'a JSON number is the value; the entity is created with the Channel type');
    const typed = await call(broker, 'GET', `${NGSI}/entities/${encodeURIComponent(id)}`);
    t.equal(JSON.parse(typed.text).type, 'Sensor');

    await device.publishAsync(topic, 'not json', { qos: 1 });
    t.equal(await valueOf(broker, id, 'temperature', (v) => v === 'not json'), 'not json', 'anything else is a JSON string');
    await device.publishAsync(topic, '{"c": 20, "f": 68}', { qos: 1 });
    t.same(await valueOf(broker, id, 'temperature', (v) => typeof v === 'object'), { c: 20, f: 68 }, 'a JSON object as it is');

    // Out: a write of the attribute, from any route, is published as the value's JSON.
    const before = watcher.received.length;
    const patch = await call(broker, 'PATCH', `${NGSI}/entities/${encodeURIComponent(id)}/attrs/temperature`, {
      body: { type: 'Property', value: 30 },
    });
    t.equal(patch.status, 204);
    const out = await watcher.on(topic, before + 1);
    t.equal(out.at(-1)!.payload, '30', 'PATCH published');
    t.equal(out.at(-1)!.qos, 1, 'at the MQTT-QoS of channelInfo');
    const batch = await call(broker, 'POST', `${NGSI}/entityOperations/update`, {
      body: [{ id, type: 'Sensor', temperature: { type: 'Property', value: { on: true } } }],
    });
    t.equal(batch.status, 204);
    t.equal((await watcher.on(topic, before + 2)).at(-1)!.payload, '{"on":true}', 'a batch update published');

    // A sample is not published back on its topic.
    const seen = watcher.received.length;
    await device.publishAsync(topic, '22', { qos: 1 });
    t.equal(await valueOf(broker, id, 'temperature', (v) => v === 22), 22);
    await new Promise((r) => setTimeout(r, 400));
    t.same(
      watcher.received.slice(seen).map((m) => m.payload),
      ['22'],
      'only the device published: the sample did not come back from the broker',
    );
    // The same value the broker published, sent afterwards by a device, is a sample.
    const patched = await call(broker, 'PATCH', `${NGSI}/entities/${encodeURIComponent(id)}/attrs/temperature`, {
      body: { type: 'Property', value: 40 },
    });
    t.equal(patched.status, 204);
    await watcher.on(topic, seen + 2);
    await new Promise((r) => setTimeout(r, 400));
    await device.publishAsync(topic, '40', { qos: 1 });
    await device.publishAsync(topic, '41', { qos: 1 });
    t.equal(await valueOf(broker, id, 'temperature', (v) => v === 41), 41);
    // Every write of the attribute is in its history: the bridge's own publications never came back as samples.
    const r = await call(broker, 'GET', `${NGSI}/temporal/entities/${encodeURIComponent(id)}?attrs=temperature&options=temporalValues`);
    const values = (JSON.parse(r.text).temperature.values as Array<[unknown, string]>).map((v) => v[0]);
    t.same(
      values.slice(values.indexOf('not json')),
      ['not json', { c: 20, f: 68 }, 30, { on: true }, 22, 40, 40, 41],
      "no echo: 30, {on: true} and the first 40 written once each; the device's 40 is a sample",
    );
  });
}

t.test(
  'the broker starts while the server is down; the bridge connects, subscribes and keeps its samples over a server restart',
  async (t) => {
    const own = await OwnMosquitto.start();
    t.teardown(() => own.stop());
    await own.stop();
    const topic = 'plant/restart/temp';
    const id = 'urn:ngsi-ld:Sensor:restart';
    const broker = await bridgeBroker(
      t,
      {
        mqtt: { server: { uri: own.url }, ngsild: { topics: { [topic]: channel(id, 'temperature', [{ key: 'MQTT-QoS', value: '1' }]) } } },
      },
      ['--troe', 'embdb'],
      true,
    );
    t.equal((await call(broker, 'GET', `${NGSI}/channels`)).status, 200, 'the broker answers with the server down');
    await own.restart();
    const dev = await mqtt.connectAsync(own.url, { reconnectPeriod: 100 });
    t.teardown(() => dev.endAsync(true));
    let value: unknown;
    for (let i = 0; i < 50 && value !== 1; i++) {
      await dev.publishAsync(topic, '1', { qos: 1 });
      value = await valueOf(broker, id, 'temperature', (v) => v === 1, 300);
    }
    t.equal(value, 1, 'connected once the server came up');
    await own.stop();
    await own.restart();
    const dev2 = await mqtt.connectAsync(own.url, { reconnectPeriod: 100 });
    t.teardown(() => dev2.endAsync(true));
    // Subscribed again after the reconnect: from then on every QoS 1 sample arrives, in order.
    for (let i = 0; i < 100 && value !== 2; i++) {
      await dev2.publishAsync(topic, '2', { qos: 1 });
      value = await valueOf(broker, id, 'temperature', (v) => v === 2, 300);
    }
    t.equal(value, 2, 'subscribed again after the restart');
    for (let k = 3; k <= 20; k++) await dev2.publishAsync(topic, String(k), { qos: 1 });
    t.equal(await valueOf(broker, id, 'temperature', (v) => v === 20), 20, 'the last of the samples after the reconnect');
    // Samples are history like any write: every one published after the reconnect is there, in order.
    const r = await call(broker, 'GET', `${NGSI}/temporal/entities/${encodeURIComponent(id)}?attrs=temperature&options=temporalValues`);
    t.equal(r.status, 200, r.text);
    const values = (JSON.parse(r.text).temperature.values as Array<[unknown, string]>).map((v) => v[0]);
    const after = values.slice(values.lastIndexOf(2) + 1);
    t.same(after, [3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20], 'no QoS 1 sample lost after the reconnect');
  },
);

t.test('GET /channels is subject to the auth plugin; samples are written without asking it', async (t) => {
  const plugin = repoPath('test/fixtures/auth/contract-plugin.js');
  const trace = join(dir, 'auth-trace.txt');
  const topic = 'plant/auth/temp';
  const id = 'urn:ngsi-ld:Sensor:auth';
  const broker = await bridgeBroker(
    t,
    { mqtt: { server: { uri: server.url }, ngsild: { topics: { [topic]: channel(id, 'temperature') } } } },
    ['--auth', plugin, '--testTrace', trace],
  );
  t.equal((await call(broker, 'GET', `${NGSI}/channels`)).status, 401, 'no user: 401 from authenticate');
  t.equal((await call(broker, 'GET', `${NGSI}/channels`, { headers: { 'x-user': 'a', 'x-deny-authorize': '1' } })).status, 403);
  const ok = await call(broker, 'GET', `${NGSI}/channels`, { headers: { 'x-user': 'a' } });
  t.equal(ok.status, 200);
  t.equal(JSON.parse(ok.text).length, 1);
  t.match(readFileSync(trace, 'utf8'), /authorize ListChannels .* ldOp=59 path=\/ngsi-ld\/v1\/channels/, 'the plugin sees LdOp 59');
  let value: unknown;
  for (let i = 0; i < 50 && value !== 7; i++) {
    await device.publishAsync(topic, '7', { qos: 1 });
    const r = await call(broker, 'GET', `${NGSI}/entities/${encodeURIComponent(id)}?options=keyValues`, { headers: { 'x-user': 'a' } });
    if (r.status === 200) value = JSON.parse(r.text).temperature;
    else await new Promise((r) => setTimeout(r, 200));
  }
  t.equal(value, 7, 'the sample was written');
  t.notMatch(readFileSync(trace, 'utf8'), /entityOperations\/upsert/, 'the auth plugin was not asked about the sample');
});

t.test('a sample is a write like any other: it notifies a subscription (to MQTT here)', async (t) => {
  const topic = 'plant/notify/temp';
  const id = 'urn:ngsi-ld:Sensor:notify';
  const broker = await bridgeBroker(t, {
    mqtt: { server: { uri: server.url }, ngsild: { topics: { [topic]: channel(id, 'temperature') } } },
  });
  const notified = 'notifications/sensor';
  const watcher = await Listener.open(server.url, [notified]);
  t.teardown(() => watcher.close());
  const sub = await call(broker, 'POST', `${NGSI}/subscriptions`, {
    body: {
      type: 'Subscription',
      entities: [{ type: 'Sensor' }],
      watchedAttributes: ['temperature'],
      notification: { endpoint: { uri: `${server.url}/${notified}` } },
    },
  });
  t.equal(sub.status, 201, sub.text);
  let got: Array<{ payload: string }> = [];
  for (let i = 0; i < 50 && got.length === 0; i++) {
    await device.publishAsync(topic, '12.5', { qos: 1 });
    got = await watcher.on(notified, 1, 300);
  }
  t.ok(got.length >= 1, 'notified');
  t.match(JSON.parse(got[0]!.payload).body.data[0], { id, type: 'Sensor', temperature: { type: 'Property', value: 12.5 } });
});

t.test('a sample larger than --maxBodySize is dropped and logged; the next one is written', async (t) => {
  const topic = 'plant/size/temp';
  const id = 'urn:ngsi-ld:Sensor:size';
  const broker = await bridgeBroker(
    t,
    { mqtt: { server: { uri: server.url }, ngsild: { topics: { [topic]: channel(id, 'temperature') } } } },
    ['--maxBodySize', '300', '--troe', 'embdb'],
  );
  let value: unknown;
  for (let i = 0; i < 50 && value !== 1; i++) {
    await device.publishAsync(topic, '1', { qos: 1 });
    value = await valueOf(broker, id, 'temperature', (v) => v === 1, 300);
  }
  t.equal(value, 1);
  await device.publishAsync(topic, JSON.stringify('x'.repeat(400)), { qos: 1 });
  await device.publishAsync(topic, '2', { qos: 1 });
  t.equal(await valueOf(broker, id, 'temperature', (v) => v === 2), 2);
  t.match(broker.logs.join('\n'), /sample larger than --maxBodySize dropped/);
  const r = await call(broker, 'GET', `${NGSI}/temporal/entities/${encodeURIComponent(id)}?attrs=temperature&options=temporalValues`);
  const values = (JSON.parse(r.text).temperature.values as Array<[unknown, string]>).map((v) => v[0]);
  t.same(values.slice(-2), [1, 2], 'the large sample was never written');
});

t.test('the server URI carries a user and password; a wrong one is retried and never logged', async (t) => {
  const shared = mosquitto();
  const port = shared.authUrl.slice(shared.authUrl.lastIndexOf(':') + 1);
  const topic = `plant/auth-${process.pid}/temp`;
  const id = `urn:ngsi-ld:Sensor:userpass-${process.pid}`;
  const broker = await bridgeBroker(t, {
    mqtt: {
      server: { uri: `mqtt://${shared.user}:${encodeURIComponent(shared.password)}@127.0.0.1:${port}` },
      ngsild: { topics: { [topic]: channel(id, 'temperature') } },
    },
  });
  const wrong = await bridgeBroker(t, {
    mqtt: {
      server: { uri: `mqtt://${shared.user}:not-the-password@127.0.0.1:${port}` },
      ngsild: { topics: { [topic]: channel(id, 'other') } },
    },
  });
  const dev = await mqtt.connectAsync(shared.authUrl, { username: shared.user, password: shared.password });
  t.teardown(() => dev.endAsync(true));
  let value: unknown;
  for (let i = 0; i < 50 && value !== 3; i++) {
    await dev.publishAsync(topic, '3', { qos: 1 });
    value = await valueOf(broker, id, 'temperature', (v) => v === 3, 300);
  }
  t.equal(value, 3, 'connected with the user and password');
  const deadline = Date.now() + 5000;
  while (!wrong.logs.some((l) => l.includes('MQTT bridge connection failed')) && Date.now() < deadline)
    await new Promise((r) => setTimeout(r, 50));
  const logs = wrong.logs.join('\n');
  t.match(logs, /MQTT bridge connection failed/, 'the refusal is logged');
  t.notMatch(logs, /not-the-password/, 'the password is not');
  t.equal((await call(wrong, 'GET', `${NGSI}/channels`)).status, 200, 'the broker serves meanwhile');
  // Retried every second; said once while the reason stays the same.
  await new Promise((r) => setTimeout(r, 2500));
  t.equal(wrong.logs.filter((l) => l.includes('MQTT bridge connection failed')).length, 1, 'one line, not one per retry');
});

t.test('a server that refused the user is tried again: the bridge joins it once the user exists', async (t) => {
  const own = await OwnMosquitto.start({});
  t.teardown(() => own.stop());
  const topic = 'plant/later/temp';
  const id = 'urn:ngsi-ld:Sensor:later';
  const broker = await bridgeBroker(t, {
    mqtt: { server: { uri: `mqtt://dev:pw@127.0.0.1:${own.port}` }, ngsild: { topics: { [topic]: channel(id, 'temperature') } } },
  });
  const deadline = Date.now() + 5000;
  while (!broker.logs.some((l) => l.includes('Not authorized')) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  t.match(broker.logs.join('\n'), /Not authorized/, 'refused first');
  own.setUsers({ dev: 'pw' });
  await own.stop();
  await own.restart();
  const dev = await mqtt.connectAsync(own.url, { username: 'dev', password: 'pw', reconnectPeriod: 100 });
  t.teardown(() => dev.endAsync(true));
  let value: unknown;
  for (let i = 0; i < 60 && value !== 8; i++) {
    await dev.publishAsync(topic, '8', { qos: 1 });
    value = await valueOf(broker, id, 'temperature', (v) => v === 8, 300);
  }
  t.equal(value, 8, 'connected and subscribed once the user exists');
});
