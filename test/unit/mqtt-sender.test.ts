// The MQTT notification sender (seed 001 §2.1): one client per server and protocol version, shared by the
// subscriptions that name it, against the Mosquitto of test/services/mosquitto.sh.
import t from 'tap';
import { pino } from 'pino';
import { MqttSender, metadataOf } from '../../src/notify/mqtt-sender.js';
import type { DueNotification } from '../../src/notify/channel.js';
import { Listener, mosquitto, uniqueTopic } from '../api/helpers/mosquitto.js';

const server = mosquitto();
const log = pino({ level: 'silent' });

function due(uri: string, version: 'mqtt3.1.1' | 'mqtt5.0', qos: 0 | 1 | 2 = 1): DueNotification {
  return {
    tenant: '',
    subscriptionId: 'urn:s',
    uri,
    headers: ['Content-Type', 'application/json', 'NGSILD-Tenant', 't1'],
    body: '{"id":"urn:n","type":"Notification"}',
    orderKey: 'k',
    seq: 0,
    timeoutMs: undefined,
    throttlingMs: 0,
    mqtt: { qos, version },
  };
}

t.test('subscriptions of one server share one client; another protocol version has its own', async (t) => {
  const sender = new MqttSender(log, false);
  t.teardown(() => sender.close());
  const a = uniqueTopic('share-a');
  const b = uniqueTopic('share-b');
  const listener = await Listener.open(server.url, [a, b]);
  t.teardown(() => listener.close());
  const signal = new AbortController().signal;
  t.equal(await sender.send(due(`${server.url}/${a}`, 'mqtt5.0'), '{"n":1}', 5000, signal), undefined);
  t.equal(await sender.send(due(`${server.url}/${b}`, 'mqtt5.0'), '{"n":2}', 5000, signal), undefined);
  t.equal(sender.connections, 1, 'one client for two topics of one server');
  t.equal(await sender.send(due(`${server.url}/${a}`, 'mqtt3.1.1'), '{"n":3}', 5000, signal), undefined);
  t.equal(sender.connections, 2, 'MQTT 3.1.1 is a connection of its own');
  const got = await listener.on(a, 2);
  t.same(
    got.map((m) => JSON.parse(m.payload)),
    [
      { metadata: { 'Content-Type': 'application/json', 'NGSILD-Tenant': 't1' }, body: { n: 1 } },
      { metadata: { 'Content-Type': 'application/json', 'NGSILD-Tenant': 't1' }, body: { n: 3 } },
    ],
  );
  sender.sweep(Date.now() + 61_000);
  t.equal(sender.connections, 0, 'idle clients are closed');
});

t.test('an aborted send (its subscription deleted) ends at once with the reason', async (t) => {
  const sender = new MqttSender(log, false);
  t.teardown(() => sender.close());
  const controller = new AbortController();
  const sending = sender.send(due('mqtt://127.0.0.1:9/x', 'mqtt5.0'), '{}', 60_000, controller.signal);
  controller.abort('subscription deleted');
  t.equal(await sending, 'subscription deleted');
});

t.test('metadata: a later entry of a name replaces an earlier one', async (t) => {
  t.same(metadataOf(['Content-Type', 'a', 'x', '1', 'Content-Type', 'b']), { 'Content-Type': 'b', x: '1' });
});
