// Register values to and from NGSI-LD values (seed 001 §2.4): the type, the word/byte order of multi-register values
// and value = raw x scale + offset (inverted on write). Pure: no I/O.
import { REGISTERS, type ChannelSettings, type WordOrder } from './channel-info.js';

/** Why a write cannot be encoded: BRIDGE_BAD_INPUT (seed 001 §7). */
export class ModbusEncodeError extends Error {}

const INT_RANGE: Readonly<Record<string, readonly [number, number]>> = {
  int16: [-32768, 32767],
  uint16: [0, 65535],
  int32: [-2147483648, 2147483647],
  uint32: [0, 4294967295],
};

/**
 * Puts the `n` registers of a value in big-endian byte order (ABCD...), or back: each order is its own inverse. For 4
 * registers: CDAB reverses the word order, BADC swaps the bytes of each word, DCBA reverses every byte.
 */
function reorder(bytes: Buffer, out: Buffer, words: number, order: WordOrder): Buffer {
  if (order === 'ABCD') return bytes;
  const swap = order !== 'CDAB';
  for (let w = 0; w < words; w++) {
    const hi = bytes[2 * w]!;
    const lo = bytes[2 * w + 1]!;
    const to = order === 'BADC' ? w : words - 1 - w;
    out[2 * to] = swap ? lo : hi;
    out[2 * to + 1] = swap ? hi : lo;
  }
  return out;
}

/** Scratch of every poll's decoding (one thread, synchronous use): no buffer per read. */
const WIRE = Buffer.alloc(8);
const ORDERED = Buffer.alloc(8);

/** The value of a read (registers as 16-bit unsigned numbers), scaled; NaN or ±Infinity for such floats. */
export function decodeRegisters(regs: readonly number[], s: ChannelSettings): number | boolean {
  if (s.type === 'bool') return regs[0] !== 0;
  const words = REGISTERS[s.type];
  for (let i = 0; i < words; i++) WIRE.writeUInt16BE(regs[i]! & 0xffff, 2 * i);
  const b = reorder(WIRE, ORDERED, words, s.order);
  let raw: number;
  switch (s.type) {
    case 'int16':
      raw = b.readInt16BE(0);
      break;
    case 'uint16':
      raw = b.readUInt16BE(0);
      break;
    case 'int32':
      raw = b.readInt32BE(0);
      break;
    case 'uint32':
      raw = b.readUInt32BE(0);
      break;
    case 'float32':
      raw = b.readFloatBE(0);
      break;
    case 'float64':
      raw = b.readDoubleBE(0);
      break;
  }
  return s.scale === 1 && s.offset === 0 ? raw : raw * s.scale + s.offset;
}

/** The registers to write for a value of a register Channel; throws ModbusEncodeError (BRIDGE_BAD_INPUT). */
export function encodeRegisters(value: unknown, s: ChannelSettings): number[] {
  if (s.type === 'bool') {
    if (typeof value !== 'boolean') throw new ModbusEncodeError(`a boolean is needed (type bool), not ${describe(value)}`);
    return [value ? 1 : 0];
  }
  if (typeof value !== 'number' || !Number.isFinite(value))
    throw new ModbusEncodeError(`a number is needed (type ${s.type}), not ${describe(value)}`);
  let raw = s.scale === 1 && s.offset === 0 ? value : (value - s.offset) / s.scale;
  const b = Buffer.alloc(REGISTERS[s.type] * 2);
  const range = INT_RANGE[s.type];
  if (range !== undefined) {
    // An integer register holds the nearest integer of the unscaled value.
    raw = Math.round(raw);
    if (raw < range[0] || raw > range[1])
      throw new ModbusEncodeError(`${value} is ${raw} unscaled, out of ${s.type} (${range[0]} to ${range[1]})`);
  }
  switch (s.type) {
    case 'int16':
      b.writeInt16BE(raw, 0);
      break;
    case 'uint16':
      b.writeUInt16BE(raw, 0);
      break;
    case 'int32':
      b.writeInt32BE(raw, 0);
      break;
    case 'uint32':
      b.writeUInt32BE(raw, 0);
      break;
    case 'float32':
      if (Math.abs(raw) > 3.4028234663852886e38) throw new ModbusEncodeError(`${value} is out of float32`);
      b.writeFloatBE(raw, 0);
      break;
    case 'float64':
      b.writeDoubleBE(raw, 0);
      break;
  }
  const wire = reorder(b, Buffer.alloc(b.length), b.length / 2, s.order);
  const regs: number[] = [];
  for (let i = 0; i < wire.length; i += 2) regs.push(wire.readUInt16BE(i));
  return regs;
}

/** A coil's value to write; throws ModbusEncodeError (BRIDGE_BAD_INPUT) for anything but a boolean. */
export function encodeCoil(value: unknown): boolean {
  if (typeof value !== 'boolean') throw new ModbusEncodeError(`a boolean is needed for a coil, not ${describe(value)}`);
  return value;
}

/** A value named for a log line: its kind, never its content (a client's text reaches no log line unchecked). */
function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'number') return String(value);
  return `a ${typeof value}`;
}
