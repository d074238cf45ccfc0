// The Modbus TCP bridge (seed 001 §2.2, §2.4, §3, §6.3, §6.4, §7, §8) against a pymodbus device of each test
// (test/api/helpers/modbus-device.ts): Channels listed (active, dormant with the reason), every type and order read
// and written, scale and offset both ways, the deadband, publishTime as observedAt, modbusStatus once per change
// (device stopped and started, an exception, a device slower than timeoutMs), the 1-based forms and units, writes
// applied in order, BRIDGE_BAD_INPUT logged and nothing sent.
import t, { type Test } from 'tap';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startBroker, call, NGSI, type Broker } from './helpers/broker.js';
import { OwnModbusDevice } from './helpers/modbus-device.js';

const dir = mkdtempSync(join(tmpdir(), 'ldbroker-modbus-'));
let n = 0;
function configFile(doc: unknown): string {
  const file = join(dir, `bridges-${++n}.json`);
  writeFileSync(file, JSON.stringify(doc));
  return file;
}

type Info = Record<string, string>;
const channel = (entityId: string, attribute: string, info?: Info): Record<string, unknown> => ({
  entityId,
  entityType: 'Device',
  attribute,
  ...(info === undefined ? {} : { channelInfo: Object.entries(info).map(([key, value]) => ({ key, value })) }),
});

// The pipeline's threads only where the order of writes is tested: a pool's start is most of a broker's start here.
async function modbusBroker(
  t: Test,
  device: OwnModbusDevice,
  topics: Record<string, unknown>,
  server: Record<string, unknown> = {},
  extra: string[] = [],
  pool = false,
): Promise<Broker> {
  const doc = { modbus: { server: { host: '127.0.0.1', port: device.port, pollMs: 50, timeoutMs: 300, ...server }, ngsild: { topics } } };
  const broker = await startBroker(['--bridges', 'modbus', '--bridgeConfig', configFile(doc), ...extra], {}, { pool });
  t.teardown(() => broker.stop());
  return broker;
}

async function entity(broker: Broker, id: string): Promise<Record<string, Record<string, unknown>> | undefined> {
  const r = await call(broker, 'GET', `${NGSI}/entities/${encodeURIComponent(id)}`);
  return r.status === 200 ? (JSON.parse(r.text) as Record<string, Record<string, unknown>>) : undefined;
}

/** The entity, waiting (bounded) until `ready` holds. */
async function until(
  broker: Broker,
  id: string,
  ready: (e: Record<string, Record<string, unknown>>) => boolean,
  ms = 10_000,
): Promise<Record<string, Record<string, unknown>>> {
  const deadline = Date.now() + ms;
  for (;;) {
    const e = await entity(broker, id);
    if ((e !== undefined && ready(e)) || Date.now() > deadline) return e ?? {};
    await new Promise((r) => setTimeout(r, 30));
  }
}

const valueIs =
  (attr: string, v: unknown) =>
  (e: Record<string, Record<string, unknown>>): boolean =>
    JSON.stringify(e[attr]?.value) === JSON.stringify(v);
const statusIs =
  (attr: string, s: string) =>
  (e: Record<string, Record<string, unknown>>): boolean =>
    (e[attr]?.modbusStatus as { value?: unknown } | undefined)?.value === s;

async function patch(broker: Broker, id: string, attr: string, value: unknown): Promise<number> {
  const r = await call(broker, 'PATCH', `${NGSI}/entities/${encodeURIComponent(id)}/attrs/${attr}`, { body: { type: 'Property', value } });
  return r.status;
}

let device: OwnModbusDevice;
t.before(async () => {
  device = await OwnModbusDevice.start();
});
t.teardown(() => device.stop());

t.test('GET /channels: active Channels with channelInfo; what does not fit is dormant with the reason', async (t) => {
  const id = 'urn:ngsi-ld:Device:list';
  const broker = await modbusBroker(t, device, {
    'holding/0': channel(id, 'a', { type: 'int16' }),
    'holding/1': channel(id, 'b', { type: 'float32', order: 'CDAB', scale: '0.5', offset: '1', poll: '100', deadband: '0.1' }),
    'register/1': channel(id, 'c'),
    'holding/70000': channel(id, 'd'),
    'unit/300/holding/1': channel(id, 'e'),
    'coil/3': channel(id, 'f', { type: 'float32' }),
    'holding/4': channel(id, 'g', { type: 'int16', order: 'CDAB' }),
    'holding/5': channel(id, 'h', { scale: 'ten' }),
    'holding/6': channel(id, 'i', { 'MQTT-QoS': '1' }),
    'holding/65535': channel(id, 'j', { type: 'uint32' }),
    'input/7': channel(id, 'k', { poll: '5' }),
  });
  const r = await call(broker, 'GET', `${NGSI}/channels`);
  t.equal(r.status, 200);
  const list = JSON.parse(r.text) as Array<Record<string, unknown>>;
  const by = new Map(list.map((c) => [c.endpoint, c]));
  t.equal(list.length, 11, 'every Channel is listed: a Modbus Channel is never refused');
  t.same(by.get('holding/0'), {
    bridge: 'modbus',
    endpoint: 'holding/0',
    entityId: id,
    entityType: 'Device',
    attribute: 'a',
    channelInfo: [{ key: 'type', value: 'int16' }],
    state: 'active',
  });
  t.match(by.get('holding/1'), {
    state: 'active',
    channelInfo: [
      { key: 'type', value: 'float32' },
      { key: 'order', value: 'CDAB' },
    ],
  });
  t.match(by.get('register/1'), { state: 'dormant', reason: /coil\|discrete\|holding\|input/ });
  t.match(by.get('holding/70000'), { state: 'dormant', reason: /out of the holding table/ });
  t.match(by.get('unit/300/holding/1'), { state: 'dormant', reason: /unit must be an integer 0-255/ });
  t.match(by.get('coil/3'), { state: 'dormant', reason: /float32 does not fit a coil/ });
  t.match(by.get('holding/4'), { state: 'dormant', reason: /order does not fit type int16/ });
  t.match(by.get('holding/5'), { state: 'dormant', reason: /scale 'ten': a number is needed/ });
  t.match(by.get('holding/6'), { state: 'dormant', reason: /unknown channelInfo key 'MQTT-QoS'/ });
  t.match(by.get('holding/65535'), { state: 'dormant', reason: /runs past the table's end/ });
  t.match(by.get('input/7'), { state: 'dormant', reason: /poll '5'/ });
  t.match(broker.logs.join('\n'), /Channel dormant/, 'said in the log too');
});

/** Types with a value and its registers in ABCD order; the other orders are made from them by bytes. */
const VECTORS: Array<[string, number, number[]]> = [
  ['int16', -1234, [0xfb2e]],
  ['uint16', 54321, [0xd431]],
  ['int32', -100000, [0xfffe, 0x7960]],
  ['uint32', 3000000000, [0xb2d0, 0x5e00]],
  ['float32', 21.5, [0x41ac, 0x0000]],
  ['float64', -1.25, [0xbff4, 0x0000, 0x0000, 0x0000]],
];
const ORDERS = ['ABCD', 'CDAB', 'BADC', 'DCBA'] as const;
function wire(abcd: number[], order: (typeof ORDERS)[number]): number[] {
  const bytes = abcd.flatMap((r) => [r >> 8, r & 0xff]);
  const out =
    order === 'ABCD'
      ? bytes
      : order === 'DCBA'
        ? [...bytes].reverse()
        : order === 'BADC'
          ? bytes.map((_, i) => bytes[i ^ 1]!)
          : abcd
              .slice()
              .reverse()
              .flatMap((r) => [r >> 8, r & 0xff]);
  const words: number[] = [];
  for (let i = 0; i < out.length; i += 2) words.push((out[i]! << 8) | out[i + 1]!);
  return words;
}

t.test('every type and order: read from the device, written back to it', async (t) => {
  const id = 'urn:ngsi-ld:Device:types';
  const topics: Record<string, unknown> = {};
  const cases: Array<{ attr: string; address: number; regs: number[]; value: number; type: string; order: string }> = [];
  let address = 100;
  for (const [type, value, abcd] of VECTORS) {
    for (const order of abcd.length > 1 ? ORDERS : (['ABCD'] as const)) {
      const attr = `${type}_${order}`;
      const info: Info = { type };
      if (abcd.length > 1) info.order = order;
      topics[`holding/${address}`] = channel(id, attr, info);
      cases.push({ attr, address, regs: wire(abcd, order), value, type, order });
      address += 4;
    }
  }
  topics['coil/10'] = channel(id, 'coil');
  topics['discrete/11'] = channel(id, 'discrete');
  topics['input/12'] = channel(id, 'input', { type: 'int16' });
  topics['holding/13'] = channel(id, 'flag', { type: 'bool' });
  for (const c of cases) await device.set('holding', c.address, c.regs);
  await device.set('coil', 10, [1]);
  await device.set('discrete', 11, [1]);
  await device.set('input', 12, [0xffff]);
  await device.set('holding', 13, [5]);
  const broker = await modbusBroker(t, device, topics);
  const e = await until(broker, id, (e) => cases.every((c) => e[c.attr]?.value === c.value) && e.flag?.value === true);
  for (const c of cases) t.equal(e[c.attr]?.value, c.value, `${c.type} ${c.order} read`);
  t.equal(e.coil?.value, true, 'a coil (function code 1)');
  t.equal(e.discrete?.value, true, 'a discrete input (function code 2)');
  t.equal(e.input?.value, -1, 'an input register (function code 4)');
  t.equal(e.flag?.value, true, 'bool on a register: non-zero is true');
  t.equal(e.coil?.type, 'Property');
  t.match(e.coil?.modbusStatus, { type: 'Property', value: 'ok' }, 'modbusStatus ok with the first value');
  t.match(e.coil?.observedAt, /^\d{4}-\d\d-\d\dT/, 'publishTime: observedAt');

  // Written back: the negated value of each, whose registers the device then holds.
  for (const c of cases) t.equal(await patch(broker, id, c.attr, -c.value), 204);
  t.equal(await patch(broker, id, 'coil', false), 204);
  t.equal(await patch(broker, id, 'flag', false), 204);
  const deadline = Date.now() + 10_000;
  while ((await device.writes()).length < cases.length + 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  for (const [type, value, abcd] of VECTORS) {
    // An unsigned type takes no negative value (BRIDGE_BAD_INPUT): written below.
    if (type.startsWith('uint')) continue;
    for (const c of cases.filter((c) => c.type === type)) {
      const regs = await device.get('holding', c.address, abcd.length);
      t.same(regs, wire(negated(type, value), c.order as (typeof ORDERS)[number]), `${c.type} ${c.order} written`);
    }
  }
  t.same(await device.get('coil', 10), [0], 'a coil written (function code 5)');
  t.same(await device.get('holding', 13), [0], 'bool on a register written as 0');
  const writes = await device.writes();
  t.ok(
    writes.some((w) => w[1] === 'holding' && w[3].length === 2),
    'two registers in one request (function code 16)',
  );
  t.ok(
    writes.some((w) => w[1] === 'holding' && w[3].length === 1),
    'one register (function code 6)',
  );
  // A uint written: 1234 of uint16, 4000000000 of uint32 in CDAB.
  const u16 = cases.find((c) => c.type === 'uint16')!;
  t.equal(await patch(broker, id, u16.attr, 1234), 204);
  const u32 = cases.find((c) => c.type === 'uint32' && c.order === 'CDAB')!;
  t.equal(await patch(broker, id, u32.attr, 4000000000), 204);
  await untilDevice(() => device.get('holding', u32.address, 2), [0x2800, 0xee6b]);
  t.same(await device.get('holding', u16.address), [1234]);
  t.same(await device.get('holding', u32.address, 2), [0x2800, 0xee6b], '4000000000 = 0xEE6B2800, words swapped');
  // The written values are the attribute's: the polls reading them back report nothing new.
  const after = await until(broker, id, valueIs(u16.attr, 1234));
  t.equal(after[u16.attr]?.value, 1234);
});

/** The big-endian registers of -value. */
function negated(type: string, value: number): number[] {
  const b = Buffer.alloc(type === 'float64' ? 8 : type.endsWith('16') ? 2 : 4);
  if (type === 'int16') b.writeInt16BE(-value);
  else if (type === 'int32') b.writeInt32BE(-value);
  else if (type === 'float32') b.writeFloatBE(-value);
  else b.writeDoubleBE(-value);
  const regs: number[] = [];
  for (let i = 0; i < b.length; i += 2) regs.push(b.readUInt16BE(i));
  return regs;
}

async function untilDevice(read: () => Promise<number[]>, want: number[], ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (JSON.stringify(await read()) !== JSON.stringify(want) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 30));
}

t.test('scale and offset: raw x scale + offset read, inverted on write', async (t) => {
  const id = 'urn:ngsi-ld:Device:scale';
  await device.set('holding', 300, [615]);
  const broker = await modbusBroker(t, device, {
    'holding/300': channel(id, 'temperature', { type: 'int16', scale: '0.1', offset: '-40' }),
  });
  const e = await until(broker, id, (e) => typeof e.temperature?.value === 'number');
  t.ok(Math.abs((e.temperature?.value as number) - 21.5) < 1e-9, 'raw 615 x 0.1 - 40 = 21.5');
  t.equal(await patch(broker, id, 'temperature', -12.3), 204);
  await untilDevice(() => device.get('holding', 300), [277]);
  t.same(await device.get('holding', 300), [277], '(-12.3 + 40) / 0.1 = 277');
});

t.test('deadband: a sample only when the value moved by more than it from the last reported one', async (t) => {
  const id = 'urn:ngsi-ld:Device:deadband';
  await device.set('holding', 400, [100]);
  const broker = await modbusBroker(t, device, { 'holding/400': channel(id, 'level', { deadband: '5' }) }, {}, ['--troe', 'embdb']);
  await until(broker, id, valueIs('level', 100));
  // Each value is held until the device answered several polls: each is read, whatever the machine's load.
  for (const v of [103, 105, 99, 106, 108, 111, 112]) {
    await device.set('holding', 400, [v]);
    const seen = await device.requests();
    while ((await device.requests()) < seen + 3) await new Promise((r) => setTimeout(r, 20));
  }
  await device.set('holding', 400, [120]);
  await until(broker, id, valueIs('level', 120));
  const r = await call(broker, 'GET', `${NGSI}/temporal/entities/${encodeURIComponent(id)}?attrs=level&options=temporalValues`);
  const values = (JSON.parse(r.text).level.values as Array<[unknown, string]>).map((v) => v[0]);
  t.same(values, [100, 106, 112, 120], '103, 105, 99 within 5 of 100; 108, 111 within 5 of 106; 112 is 6 from 106');
});

for (const signal of ['SIGTERM', 'SIGKILL'] as const)
  t.test(`device stopped (${signal}) and started: timeout, the last value kept, then ok and the new value`, async (t) => {
    const own = await OwnModbusDevice.start();
    t.teardown(() => own.stop());
    const id = `urn:ngsi-ld:Device:restart-${signal}`;
    await own.set('holding', 5, [42]);
    // timeoutMs well above a loaded machine's stalls: the stopped device is seen by its connection closing, not by a
    // timeout, and a poll of the running device that timed out under load (as with 200 ms and tap --jobs 3) would
    // be a real change, written as one, that this test does not make.
    const broker = await modbusBroker(t, own, { 'holding/5': channel(id, 'speed') }, { timeoutMs: 5000, pollMs: 10 }, ['--troe', 'embdb']);
    const first = await until(broker, id, valueIs('speed', 42));
    t.equal(first.speed?.value, 42);
    const readAt = first.speed?.observedAt;
    const refused = (): number =>
      broker.logs.filter((l) => l.includes('Modbus bridge connection failed') && l.includes('ECONNREFUSED')).length;
    t.equal(refused(), 0);
    await own.stop(signal);
    const down = await until(broker, id, statusIs('speed', 'timeout'));
    t.match(down.speed, { value: 42, modbusStatus: { value: 'timeout' }, observedAt: readAt }, 'the last value and its read time kept');
    // Down until the bridge's next connection was refused too (it tries again a second after a loss): a failure more
    // while the status is timeout, written no second time.
    for (const deadline = Date.now() + 15_000; refused() === 0 && Date.now() < deadline;) await new Promise((r) => setTimeout(r, 30));
    t.equal(refused(), 1, 'the connection tried again and refused while down');
    await own.restart();
    await own.set('holding', 5, [43]);
    const up = await until(broker, id, (e) => valueIs('speed', 43)(e) && statusIs('speed', 'ok')(e), 15_000);
    t.match(up.speed, { value: 43, modbusStatus: { value: 'ok' } }, 'reconnected: ok and the new value');
    t.not(up.speed?.observedAt, readAt);
    const r = await call(broker, 'GET', `${NGSI}/temporal/entities/${encodeURIComponent(id)}?attrs=speed`);
    const statuses = (JSON.parse(r.text).speed as Array<Record<string, { value: string }>>).map((i) => i.modbusStatus?.value);
    t.same(statuses, ['ok', 'timeout', 'ok'], 'modbusStatus written once per change, however many polls failed');
    t.match(broker.logs.join('\n'), /Modbus bridge connection failed/);
  });

t.test('a Modbus exception: illegalAddress, deviceFailure, then ok; the value kept meanwhile', async (t) => {
  const id = 'urn:ngsi-ld:Device:exception';
  await device.set('input', 20, [7]);
  const broker = await modbusBroker(t, device, {
    'input/20': channel(id, 'count'),
    'holding/5000': channel(id, 'beyond'),
  });
  await until(broker, id, valueIs('count', 7));
  await device.fault('input', 20, 2);
  t.match((await until(broker, id, statusIs('count', 'illegalAddress'))).count, { value: 7, modbusStatus: { value: 'illegalAddress' } });
  await device.fault('input', 20, 4);
  t.match((await until(broker, id, statusIs('count', 'deviceFailure'))).count, { value: 7, modbusStatus: { value: 'deviceFailure' } });
  await device.fault('input', 20, 0);
  await device.set('input', 20, [7]);
  t.match((await until(broker, id, statusIs('count', 'ok'))).count, { value: 7, modbusStatus: { value: 'ok' } }, 'ok with the same value');
  t.match(broker.logs.join('\n'), /"endpoint":"input\/20","modbusStatus":"ok","was":"deviceFailure"/, 'the way back said too');
  // An address the device does not have, never read: no attribute to hold the status; it is logged.
  t.equal((await entity(broker, id))?.beyond, undefined);
  t.match(broker.logs.join('\n'), /"endpoint":"holding\/5000","modbusStatus":"illegalAddress"/);
});

t.test('the 1-based forms and units', async (t) => {
  const id = 'urn:ngsi-ld:Device:forms';
  await device.set('holding', 10, [4010]);
  await device.set('input', 4, [3004]);
  await device.set('discrete', 2, [1]);
  await device.set('holding', 10, [2010], 2);
  const broker = await modbusBroker(t, device, {
    'holding/40011': channel(id, 'h'),
    'input/30005': channel(id, 'i'),
    'discrete/10003': channel(id, 'd'),
    'unit/2/holding/400011': channel(id, 'u2'),
    'unit/9/holding/0': channel(id, 'u9'),
  });
  const e = await until(broker, id, (e) => e.h?.value === 4010 && e.i?.value === 3004 && e.d?.value === true && e.u2?.value === 2010);
  t.equal(e.h?.value, 4010, 'holding/40011 is holding register 10');
  t.equal(e.i?.value, 3004, 'input/30005 is input register 4');
  t.equal(e.d?.value, true, 'discrete/10003 is discrete input 2');
  t.equal(e.u2?.value, 2010, 'unit/2/: the request goes to unit 2');
  t.match(broker.logs.join('\n'), /"endpoint":"unit\/9\/holding\/0","modbusStatus":"gatewayTargetFailed"/, 'a unit the gateway lacks');
  t.equal(await patch(broker, id, 'u2', 7), 204);
  await untilDevice(() => device.get('holding', 10, 1, 2), [7]);
  t.same(await device.get('holding', 10, 1, 2), [7], 'written to unit 2');
  t.same(await device.get('holding', 10, 1, 1), [4010], 'unit 1 untouched');
});

t.test('writes are applied in the order they were made, between polls', async (t) => {
  const id = 'urn:ngsi-ld:Device:order';
  const own = await OwnModbusDevice.start();
  t.teardown(() => own.stop());
  const topics: Record<string, unknown> = {};
  for (let i = 0; i < 20; i++) topics[`holding/${i}`] = channel(id, `r${i}`);
  // The pipeline's threads here: writes made one after the other keep their order through the pool too.
  const broker = await modbusBroker(t, own, topics, { pollMs: 20 }, [], true);
  await until(broker, id, (e) => e.r19?.value === 0);
  // A slow device: the writes wait in the queue while polls go on.
  await own.delay(10);
  const made: Array<[number, number]> = [];
  for (let k = 0; k < 40; k++) {
    const reg = (k * 7) % 20;
    made.push([reg, k + 1]);
    t.equal(await patch(broker, id, `r${reg}`, k + 1), 204);
  }
  // And concurrently, to other registers: each holds its last write.
  const statuses = await Promise.all([1, 2, 3, 4, 5].map((v) => patch(broker, id, 'r0', 100 + v)));
  t.same(statuses, [204, 204, 204, 204, 204]);
  // The 40 sequential writes, then at least one of the concurrent ones (a write arriving after a later-committed one
  // is not sent: bridge/write-order.ts).
  const deadline = Date.now() + 15_000;
  while ((await own.writes()).length < 41 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  const writes = await own.writes();
  t.same(
    writes.slice(0, 40).map((w) => [w[2], w[3][0]]),
    made,
    'the device received the sequential writes in their order',
  );
  // Broker and device end with the same value (a read under way may report an older one in between; the next poll
  // then reports the device's value again).
  await own.delay(0);
  let agreed: [unknown, number | undefined] = [undefined, undefined];
  const until2 = Date.now() + 15_000;
  while (Date.now() < until2) {
    agreed = [(await entity(broker, id))?.r0?.value, (await own.get('holding', 0))[0]];
    if (agreed[0] === agreed[1] && typeof agreed[0] === 'number' && agreed[0] > 100) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  t.equal(agreed[0], agreed[1], "the device holds the broker's value of r0");
  t.ok((agreed[1] ?? 0) > 100, 'one of the concurrent writes');
});

t.test('a device slower than timeoutMs: timeout, then ok when it is fast again', async (t) => {
  const own = await OwnModbusDevice.start();
  t.teardown(() => own.stop());
  const id = 'urn:ngsi-ld:Device:slow';
  await own.set('holding', 1, [11]);
  const broker = await modbusBroker(t, own, { 'holding/1': channel(id, 'v') }, { timeoutMs: 150, pollMs: 50 });
  await until(broker, id, valueIs('v', 11));
  await own.delay(400);
  t.match((await until(broker, id, statusIs('v', 'timeout'))).v, { value: 11, modbusStatus: { value: 'timeout' } });
  await own.set('holding', 1, [12]);
  await own.delay(0);
  t.match((await until(broker, id, valueIs('v', 12))).v, { value: 12, modbusStatus: { value: 'ok' } }, 'late answers were not taken');
});

t.test('BRIDGE_BAD_INPUT: a non-boolean coil write, a non-number register write, a read-only table; logged, nothing sent', async (t) => {
  const own = await OwnModbusDevice.start();
  t.teardown(() => own.stop());
  const id = 'urn:ngsi-ld:Device:bad';
  const broker = await modbusBroker(t, own, {
    'coil/1': channel(id, 'switch'),
    'holding/2': channel(id, 'setpoint', { type: 'int16' }),
    'input/3': channel(id, 'reading'),
    'discrete/4': channel(id, 'door'),
  });
  await until(broker, id, (e) => e.switch?.value === false && e.setpoint?.value === 0 && e.reading?.value === 0 && e.door?.value === false);
  t.equal(await patch(broker, id, 'switch', 1), 204, 'the write stands in the broker (seed 001 §7: at publish time)');
  t.equal(await patch(broker, id, 'setpoint', 'high'), 204);
  t.equal(await patch(broker, id, 'setpoint', 40000), 204);
  t.equal(await patch(broker, id, 'setpoint', { v: 1 }), 204);
  t.equal(await patch(broker, id, 'reading', 5), 204);
  t.equal(await patch(broker, id, 'door', true), 204);
  t.equal(await patch(broker, id, 'switch', true), 204, 'and a good write after them');
  await untilDevice(() => own.get('coil', 1), [1]);
  t.same(
    (await own.writes()).map((w) => [w[1], w[2], w[3]]),
    [['coil', 1, [1]]],
    'only the good write reached the device',
  );
  const logs = broker.logs.filter((l) => l.includes('BRIDGE_BAD_INPUT'));
  t.equal(logs.length, 6, 'each refusal logged');
  t.match(logs.join('\n'), /a boolean is needed for a coil, not 1/);
  t.match(logs.join('\n'), /a number is needed \(type int16\), not a string/);
  t.match(logs.join('\n'), /out of int16/);
  t.match(logs.join('\n'), /input registers are read only/);
  t.match(logs.join('\n'), /discrete inputs are read only/);
  t.notMatch(logs.join('\n'), /high/, "the client's text is not in the log");
});

t.test('a device down when the broker starts: the broker starts, one connection line, no poll until it is up', async (t) => {
  const own = await OwnModbusDevice.start();
  t.teardown(() => own.stop());
  await own.stop();
  const id = 'urn:ngsi-ld:Device:late';
  const topics: Record<string, unknown> = {};
  for (let i = 0; i < 50; i++) topics[`holding/${i}`] = channel(id, `r${i}`);
  const broker = await modbusBroker(t, own, topics, { pollMs: 10 });
  await new Promise((r) => setTimeout(r, 1500));
  t.equal(await entity(broker, id), undefined, 'nothing read, nothing written');
  const logs = broker.logs.join('\n');
  t.match(logs, /Modbus bridge connection failed/);
  t.notMatch(logs, /Modbus Channel status changed/, 'no line per Channel: the connection line says it');
  await own.restart();
  await own.set('holding', 49, [49]);
  const e = await until(broker, id, (e) => e.r49?.value === 49 && e.r0?.value === 0, 15_000);
  t.match(e.r49, { value: 49, modbusStatus: { value: 'ok' } }, 'connected: every Channel read');
  t.equal(e.r0?.value, 0);
});
