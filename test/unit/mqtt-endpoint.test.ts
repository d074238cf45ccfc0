// MQTT endpoint URIs and notifierInfo (seed 001 §2.1, §8): default ports, userinfo, topics, QoS and version.
import t from 'tap';
import { mqttNotifierInfo, parseMqttUri } from '../../src/ngsild/subscription/mqtt-endpoint.js';

t.test('ports default to 1883 (mqtt) and 8883 (mqtts); a given port wins', async (t) => {
  t.match(parseMqttUri('mqtt://example.org/a/b', true), { secure: false, host: 'example.org', port: 1883, topic: 'a/b' });
  t.match(parseMqttUri('MQTTS://example.org/a', true), { secure: true, port: 8883, topic: 'a' });
  t.match(parseMqttUri('mqtt://example.org:51883/a', true), { port: 51883 });
  t.match(parseMqttUri('mqtt://[::1]:1884/t', true), { host: '::1', port: 1884 });
});

t.test('user and password are percent-decoded; a user alone has no password', async (t) => {
  t.match(parseMqttUri('mqtt://us%40er:p%3Ass@h/t', true), { username: 'us@er', password: 'p:ss' });
  const alone = parseMqttUri('mqtt://user@h/t', true);
  t.equal(alone.username, 'user');
  t.equal(alone.password, undefined);
  t.equal(parseMqttUri('mqtt://h/t', true).username, undefined);
});

t.test('a topic is exact: empty, wildcards and NUL are refused; a percent-encoded topic is decoded', async (t) => {
  t.equal(parseMqttUri('mqtt://h/room%201/temp', true).topic, 'room 1/temp');
  for (const uri of [
    'mqtt://h',
    'mqtt://h/',
    'mqtt://h/a/+',
    'mqtt://h/#',
    'mqtt://h/a%2B',
    'mqtt://h/a%00b',
    'http://h/a',
    'mqtt://h:0/a',
  ])
    t.throws(() => parseMqttUri(uri, true), { name: 'MqttEndpointError' }, uri);
});

t.test('a server URI has no topic', async (t) => {
  t.match(parseMqttUri('mqtt://u:p@h:1', false), { host: 'h', port: 1, username: 'u', password: 'p' });
  t.match(parseMqttUri('mqtt://h/', false), { port: 1883 });
  t.throws(() => parseMqttUri('mqtt://h/t', false), /has no topic/);
});

t.test('notifierInfo: QoS 0 and mqtt5.0 by default; other keys are left alone; bad values throw', async (t) => {
  t.same(mqttNotifierInfo(undefined), { qos: 0, version: 'mqtt5.0' });
  t.same(
    mqttNotifierInfo([
      { key: 'MQTT-QoS', value: '2' },
      { key: 'MQTT-Version', value: 'mqtt3.1.1' },
      { key: 'other', value: 'x' },
    ]),
    { qos: 2, version: 'mqtt3.1.1' },
  );
  for (const value of ['-1', '3', '1.0', ' 1', 'one']) t.throws(() => mqttNotifierInfo([{ key: 'MQTT-QoS', value }]), /MQTT-QoS/);
  for (const value of ['mqtt3', 'MQTT5.0', '5']) t.throws(() => mqttNotifierInfo([{ key: 'MQTT-Version', value }]), /MQTT-Version/);
});
