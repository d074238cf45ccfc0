// The Modbus Bridge in the test process (src/plugins/bridge/modbus/bridge.ts with a host of the test) against a pymodbus
// device of this file: the write queue is bounded (a full queue drops the write with a log line, never blocks), and
// a device value read while a write waited does not leave broker and device apart (seed 001 §6.3, §8).
import t from 'tap';
import type { BridgeHost, SampleMeta } from '../../src/bridge/contract.js';
import { bridgeOpen } from '../../src/plugins/bridge/modbus/index.js';
import { WRITE_QUEUE_MAX } from '../../src/plugins/bridge/modbus/bridge.js';
import { OwnModbusDevice } from './helpers/modbus-device.js';

interface Logged {
  level: string;
  obj: unknown;
  msg: string | undefined;
}

function testHost(): { host: BridgeHost; samples: Array<[string, unknown, SampleMeta | undefined]>; logs: Logged[] } {
  const samples: Array<[string, unknown, SampleMeta | undefined]> = [];
  const logs: Logged[] = [];
  const at =
    (level: string) =>
    (obj: object | string, msg?: string): void => {
      logs.push({ level, obj, msg });
    };
  const host: BridgeHost = {
    log: { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') },
    sample: (endpoint, value, meta) => samples.push([endpoint, value, meta]),
    channelState: () => undefined,
  };
  return { host, samples, logs };
}

async function until(cond: () => boolean | Promise<boolean>, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await cond()) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
}

let device: OwnModbusDevice;
t.before(async () => {
  device = await OwnModbusDevice.start();
});
t.teardown(() => device.stop());

t.test('a full write queue drops the write with a log line; publish never waits for the device', async (t) => {
  await device.delay(2000);
  t.teardown(() => device.delay(0));
  const { host, logs } = testHost();
  const bridge = bridgeOpen({ server: { host: '127.0.0.1', port: device.port, pollMs: 10_000, timeoutMs: 5000 } }, host);
  t.same(bridge.channelAdd('holding/0', { entityId: 'urn:x', entityType: 'T', attribute: 'a', channelInfo: [] }), { state: 'active' });
  await bridge.start();
  const answers = new Set<unknown>();
  for (let i = 0; i < WRITE_QUEUE_MAX + 10; i++) answers.add(bridge.publish('holding/0', i % 100));
  t.same([...answers], [undefined], 'every publish returned at once, none refused');
  const full = logs.filter((l) => l.msg?.includes('write queue full'));
  t.equal(full.length, 1, 'said once (then one in 1000)');
  t.match(full[0]?.obj, { endpoint: 'holding/0', queued: WRITE_QUEUE_MAX, dropped: 1 });
  await bridge.stop();
  t.pass('stopped with writes and a request under way');
});

t.test('a value read while a write waited goes to the broker first; the written value is reported after it', async (t) => {
  await device.set('holding', 1, [1]);
  const { host, samples } = testHost();
  const bridge = bridgeOpen({ server: { host: '127.0.0.1', port: device.port, pollMs: 20, timeoutMs: 2000 } }, host);
  bridge.channelAdd('holding/1', { entityId: 'urn:x', entityType: 'T', attribute: 'a', channelInfo: [] });
  await bridge.start();
  t.teardown(() => bridge.stop());
  await until(() => samples.length >= 1);
  t.same(
    samples.map((s) => s[1]),
    [1],
  );
  // Every answer now takes 300 ms: a poll is under way when the device's own value changes and the broker writes.
  await device.delay(300);
  await new Promise((r) => setTimeout(r, 100));
  await device.set('holding', 1, [5]);
  bridge.publish('holding/1', 9);
  await until(async () => (await device.get('holding', 1))[0] === 9 && samples.length >= 3);
  await device.delay(0);
  t.same((await device.get('holding', 1))[0], 9, 'the write reached the device');
  t.same(
    samples.map((s) => s[1]),
    [1, 5, 9],
    "the poll under way reported 5 after the broker's write of 9: 9 is reported again, broker and device agree",
  );
  t.match(samples[2]?.[2], { subProperties: { modbusStatus: 'ok' } });
  t.ok((samples[2]?.[2]?.publishTime ?? 0) >= (samples[1]?.[2]?.publishTime ?? Infinity), 'publishTime: when each read completed');
});

t.test('writes faster than the device do not stop the polls: a due poll goes between two writes', async (t) => {
  const own = await OwnModbusDevice.start();
  t.teardown(() => own.stop());
  const { host, samples } = testHost();
  const bridge = bridgeOpen({ server: { host: '127.0.0.1', port: own.port, pollMs: 20, timeoutMs: 2000 } }, host);
  bridge.channelAdd('holding/0', { entityId: 'urn:x', entityType: 'T', attribute: 'a', channelInfo: [] });
  bridge.channelAdd('holding/1', { entityId: 'urn:x', entityType: 'T', attribute: 'b', channelInfo: [] });
  await bridge.start();
  t.teardown(() => bridge.stop());
  await until(() => samples.length >= 2);
  await own.delay(20);
  for (let i = 1; i <= 100; i++) bridge.publish('holding/0', i);
  await own.set('holding', 1, [7]);
  await until(() => samples.some((s) => s[0] === 'holding/1' && s[1] === 7));
  const written = (await own.writes()).length;
  t.ok(
    samples.some((s) => s[0] === 'holding/1' && s[1] === 7),
    'the other Channel was polled',
  );
  t.ok(written < 100, `while the writes went on (${written} of 100 done when its sample came)`);
  await until(async () => (await own.writes()).length === 100, 20_000);
  t.same(
    (await own.writes()).map((w) => w[3][0]),
    Array.from({ length: 100 }, (_, i) => i + 1),
    'every write done, in order',
  );
});
