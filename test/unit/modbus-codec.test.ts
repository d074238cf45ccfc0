// Modbus values (seed 001 §2.4): channelInfo type, order, scale, offset, poll, deadband with their defaults, what does
// not fit a table or a type (the Channel is dormant with the reason), and registers decoded and encoded for every type
// and order, scale and offset inverted on write, BRIDGE_BAD_INPUT values refused.
import t from 'tap';
import {
  ChannelInfoError,
  parseChannelInfo,
  type ChannelSettings,
  type ModbusType,
  type WordOrder,
} from '../../src/plugins/bridge/modbus/channel-info.js';
import { ModbusEncodeError, decodeRegisters, encodeCoil, encodeRegisters } from '../../src/plugins/bridge/modbus/codec.js';
import type { ChannelInfoEntry } from '../../src/bridge/contract.js';

const info = (o: Record<string, string>): ChannelInfoEntry[] => Object.entries(o).map(([key, value]) => ({ key, value }));
const settings = (o: Partial<ChannelSettings>): ChannelSettings => ({
  type: 'uint16',
  order: 'ABCD',
  scale: 1,
  offset: 0,
  pollMs: 1000,
  deadband: 0,
  ...o,
});

t.test('defaults: bool for bits, uint16 for registers, ABCD, scale 1, offset 0, the Bridge pollMs, deadband 0', async (t) => {
  t.same(parseChannelInfo('coil', [], 500), { type: 'bool', order: 'ABCD', scale: 1, offset: 0, pollMs: 500, deadband: 0 });
  t.same(parseChannelInfo('discrete', [], 500).type, 'bool');
  t.same(parseChannelInfo('holding', [], 500), { type: 'uint16', order: 'ABCD', scale: 1, offset: 0, pollMs: 500, deadband: 0 });
  t.same(parseChannelInfo('input', [], 500).type, 'uint16');
  t.same(
    parseChannelInfo('holding', info({ type: 'float32', order: 'CDAB', scale: '0.1', offset: '-40', poll: '250', deadband: '0.5' }), 1000),
    { type: 'float32', order: 'CDAB', scale: 0.1, offset: -40, pollMs: 250, deadband: 0.5 },
  );
  t.same(parseChannelInfo('holding', info({ type: 'bool' }), 1000).type, 'bool', 'bool on a register: 0 is false');
  t.same(parseChannelInfo('holding', info({ scale: '1e-3', offset: '+2.' }), 1000), settings({ scale: 0.001, offset: 2 }));
});

t.test('an unknown key or a value that does not fit is a reason', async (t) => {
  const bad: Array<[string, Record<string, string> | ChannelInfoEntry[], RegExp]> = [
    ['coil', { type: 'float32' }, /float32 does not fit a coil/],
    ['discrete', { type: 'uint16' }, /does not fit a discrete/],
    ['holding', { type: 'float16' }, /type 'float16'/],
    ['holding', { type: 'Float32' }, /type 'Float32'/],
    ['holding', { type: '' }, /type ''/],
    ['holding', { order: 'ABCD' }, /order does not fit type uint16/],
    ['holding', { type: 'int16', order: 'CDAB' }, /order does not fit type int16/],
    ['coil', { order: 'ABCD' }, /order does not fit type bool/],
    ['holding', { type: 'int32', order: 'ACBD' }, /ABCD, CDAB, BADC or DCBA/],
    ['holding', { type: 'int32', order: 'abcd' }, /ABCD, CDAB, BADC or DCBA/],
    ['holding', { scale: 'ten' }, /scale 'ten': a number is needed/],
    ['holding', { scale: '' }, /a number is needed/],
    ['holding', { scale: '0x10' }, /a number is needed/],
    ['holding', { scale: 'Infinity' }, /a number is needed/],
    ['holding', { scale: 'NaN' }, /a number is needed/],
    ['holding', { scale: '1e400' }, /a number is needed/],
    ['holding', { scale: '0' }, /cannot be inverted/],
    ['holding', { offset: '1,5' }, /offset '1,5': a number is needed/],
    ['holding', { deadband: '-1' }, /deadband '-1'/],
    ['holding', { deadband: 'x' }, /a number is needed/],
    ['coil', { scale: '2' }, /scale does not fit type bool/],
    ['coil', { deadband: '1' }, /deadband does not fit type bool/],
    ['holding', { type: 'bool', offset: '1' }, /offset does not fit type bool/],
    ['holding', { poll: '0' }, /poll '0'/],
    ['holding', { poll: '9' }, /poll '9'/],
    ['holding', { poll: '1.5' }, /poll '1.5'/],
    ['holding', { poll: '-100' }, /poll '-100'/],
    ['holding', { poll: '86400001' }, /poll '86400001'/],
    ['holding', { poll: '1000000000000' }, /poll/],
    ['holding', { MQTT_QoS: '1' }, /unknown channelInfo key 'MQTT_QoS'/],
    ['holding', { Type: 'int16' }, /unknown channelInfo key 'Type'/],
    [
      'holding',
      [
        { key: 'type', value: 'int16' },
        { key: 'type', value: 'int32' },
      ],
      /given twice/,
    ],
  ];
  for (const [table, given, reason] of bad) {
    const entries = Array.isArray(given) ? given : info(given);
    t.throws(
      () => parseChannelInfo(table as 'holding', entries, 1000),
      { constructor: ChannelInfoError, message: reason },
      `${table} ${JSON.stringify(given)}`,
    );
  }
});

/** Every type with a value and its big-endian (ABCD) registers. */
const VECTORS: Array<[ModbusType, number, number[]]> = [
  ['int16', -2, [0xfffe]],
  ['int16', 32767, [0x7fff]],
  ['uint16', 65535, [0xffff]],
  ['uint16', 4660, [0x1234]],
  ['int32', -123456789, [0xf8a4, 0x32eb]],
  ['int32', 0x01020304, [0x0102, 0x0304]],
  ['uint32', 4294967295, [0xffff, 0xffff]],
  ['uint32', 0x0a0b0c0d, [0x0a0b, 0x0c0d]],
  ['float32', 1.5, [0x3fc0, 0x0000]],
  ['float32', -21.25, [0xc1aa, 0x0000]],
  ['float64', 1.5, [0x3ff8, 0x0000, 0x0000, 0x0000]],
  ['float64', 0x0102030405 + 0.5, [0x41f0, 0x2030, 0x4058, 0x0000]],
];

/** The registers of ABCD registers in another order, by the bytes: A B C D ... as the wire carries them. */
function inOrder(regs: number[], order: WordOrder): number[] {
  const bytes = regs.flatMap((r) => [r >> 8, r & 0xff]);
  let out: number[];
  if (order === 'ABCD') out = bytes;
  else if (order === 'DCBA') out = [...bytes].reverse();
  else if (order === 'BADC') out = bytes.map((_, i) => bytes[i ^ 1]!);
  else
    out = regs
      .slice()
      .reverse()
      .flatMap((r) => [r >> 8, r & 0xff]);
  const words: number[] = [];
  for (let i = 0; i < out.length; i += 2) words.push((out[i]! << 8) | out[i + 1]!);
  return words;
}

t.test('every type and order: registers decoded to the value and the value encoded to the same registers', async (t) => {
  t.same(inOrder([0x0102, 0x0304], 'CDAB'), [0x0304, 0x0102], 'the reference: CDAB swaps words');
  t.same(inOrder([0x0102, 0x0304], 'BADC'), [0x0201, 0x0403], 'BADC swaps the bytes of each word');
  t.same(inOrder([0x0102, 0x0304], 'DCBA'), [0x0403, 0x0201], 'DCBA reverses the bytes');
  for (const [type, value, abcd] of VECTORS) {
    const orders: WordOrder[] = abcd.length > 1 ? ['ABCD', 'CDAB', 'BADC', 'DCBA'] : ['ABCD'];
    for (const order of orders) {
      const s = settings({ type, order });
      const regs = inOrder(abcd, order);
      t.equal(decodeRegisters(regs, s), value, `${type} ${order} decoded`);
      t.same(encodeRegisters(value, s), regs, `${type} ${order} encoded`);
    }
  }
  t.equal(decodeRegisters([0], settings({ type: 'bool' })), false);
  t.equal(decodeRegisters([7], settings({ type: 'bool' })), true, 'any non-zero register is true');
  t.same(encodeRegisters(true, settings({ type: 'bool' })), [1]);
  t.same(encodeRegisters(false, settings({ type: 'bool' })), [0]);
  t.ok(Number.isNaN(decodeRegisters([0x7fc0, 0], settings({ type: 'float32' }))), 'a NaN register is NaN (the bridge refuses it)');
});

t.test('scale and offset: value = raw x scale + offset, inverted on write', async (t) => {
  const s = settings({ type: 'int16', scale: 0.1, offset: -40 });
  t.equal(decodeRegisters([615], s), 615 * 0.1 - 40);
  t.same(encodeRegisters(21.5, s), [615], '(21.5 + 40) / 0.1 = 615');
  t.same(encodeRegisters(21.54, s), [615], 'an integer register holds the nearest integer');
  t.same(encodeRegisters(-50, s), [0xff9c], '-100 as int16');
  const f = settings({ type: 'float32', scale: 2, offset: 1 });
  t.same(encodeRegisters(4, f), [0x3fc0, 0], '(4 - 1) / 2 = 1.5');
  t.equal(decodeRegisters([0x3fc0, 0], f), 4);
});

t.test('a value the register cannot take is BRIDGE_BAD_INPUT', async (t) => {
  const bad: Array<[unknown, ChannelSettings, RegExp]> = [
    ['12', settings({}), /a number is needed \(type uint16\), not a string/],
    [true, settings({}), /a number is needed/],
    [null, settings({}), /not null/],
    [[1], settings({}), /not an array/],
    [{ value: 1 }, settings({}), /not a object/],
    [Number.NaN, settings({}), /a number is needed/],
    [-1, settings({}), /out of uint16/],
    [65536, settings({}), /out of uint16/],
    [32768, settings({ type: 'int16' }), /out of int16/],
    [2 ** 32, settings({ type: 'uint32' }), /out of uint32/],
    [-(2 ** 31) - 1, settings({ type: 'int32' }), /out of int32/],
    [1000, settings({ type: 'int16', scale: 0.01 }), /100000 unscaled, out of int16/],
    [1e39, settings({ type: 'float32' }), /out of float32/],
    [1, settings({ type: 'bool' }), /a boolean is needed/],
  ];
  for (const [value, s, reason] of bad)
    t.throws(() => encodeRegisters(value, s), { constructor: ModbusEncodeError, message: reason }, `${JSON.stringify(value)} as ${s.type}`);
  t.equal(encodeCoil(true), true);
  t.equal(encodeCoil(false), false);
  for (const v of [1, 0, 'true', null, undefined, {}])
    t.throws(() => encodeCoil(v), { constructor: ModbusEncodeError, message: /a boolean is needed for a coil/ }, `coil ${String(v)}`);
});
