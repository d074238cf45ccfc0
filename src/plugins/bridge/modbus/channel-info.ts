// A Modbus Channel's channelInfo (seed 001 §2.4): type, order, scale, offset, poll, deadband, with their defaults. An
// unknown key or a value that does not fit the table or the type refuses it: the Channel is dormant with the reason
// (seed 001 §3, §7). Pure: no I/O.
import type { ChannelInfoEntry } from '../../../bridge/contract.js';
import type { ModbusTable } from './endpoint.js';

export type ModbusType = 'bool' | 'int16' | 'uint16' | 'int32' | 'uint32' | 'float32' | 'float64';
export type WordOrder = 'ABCD' | 'CDAB' | 'BADC' | 'DCBA';

export interface ChannelSettings {
  type: ModbusType;
  order: WordOrder;
  scale: number;
  offset: number;
  pollMs: number;
  deadband: number;
}

export class ChannelInfoError extends Error {}

/** Registers a value of each type takes (bool on a register: one register, 0 is false). */
export const REGISTERS: Readonly<Record<ModbusType, number>> = {
  bool: 1,
  int16: 1,
  uint16: 1,
  int32: 2,
  uint32: 2,
  float32: 2,
  float64: 4,
};

const ORDERS: ReadonlySet<string> = new Set(['ABCD', 'CDAB', 'BADC', 'DCBA']);
/** A poll period below this would hold the one request at a time of the Bridge for one Channel (a bound of ours). */
export const POLL_MIN_MS = 10;
export const POLL_MAX_MS = 86_400_000;

/** Parses channelInfo for a Channel of `table`; throws ChannelInfoError with the reason. */
export function parseChannelInfo(table: ModbusTable, info: readonly ChannelInfoEntry[], bridgePollMs: number): ChannelSettings {
  const bit = table === 'coil' || table === 'discrete';
  const given = new Map<string, string>();
  for (const { key, value } of info) {
    if (!['type', 'order', 'scale', 'offset', 'poll', 'deadband'].includes(key))
      throw new ChannelInfoError(`unknown channelInfo key '${key.slice(0, 64)}' (type, order, scale, offset, poll, deadband)`);
    if (given.has(key)) throw new ChannelInfoError(`channelInfo key '${key}' is given twice`);
    given.set(key, value);
  }
  const shown = (k: string): string => `'${given.get(k)!.slice(0, 64)}'`;

  const typeText = given.get('type') ?? (bit ? 'bool' : 'uint16');
  if (!(typeText in REGISTERS))
    throw new ChannelInfoError(`channelInfo type ${shown('type')}: bool, int16, uint16, int32, uint32, float32 or float64 is needed`);
  const type = typeText as ModbusType;
  if (bit && type !== 'bool') throw new ChannelInfoError(`channelInfo type ${type} does not fit a ${table}: a 1-bit table holds bool only`);

  let order: WordOrder = 'ABCD';
  if (given.has('order')) {
    const o = given.get('order')!;
    if (!ORDERS.has(o)) throw new ChannelInfoError(`channelInfo order ${shown('order')}: ABCD, CDAB, BADC or DCBA is needed`);
    if (REGISTERS[type] < 2)
      throw new ChannelInfoError(`channelInfo order does not fit type ${type}: an order is for multi-register values`);
    order = o as WordOrder;
  }

  const scale = numberOf(given, 'scale', 1);
  const offset = numberOf(given, 'offset', 0);
  const deadband = numberOf(given, 'deadband', 0);
  if (type === 'bool')
    for (const k of ['scale', 'offset', 'deadband'])
      if (given.has(k)) throw new ChannelInfoError(`channelInfo ${k} does not fit type bool: it is for numbers`);
  // Inverted on write (seed 001 §2.4): a zero scale cannot be.
  if (scale === 0) throw new ChannelInfoError('channelInfo scale 0 cannot be inverted on write: a non-zero number is needed');
  if (deadband < 0) throw new ChannelInfoError(`channelInfo deadband ${shown('deadband')}: a number 0 or more is needed`);

  let pollMs = bridgePollMs;
  if (given.has('poll')) {
    const p = given.get('poll')!;
    if (!/^[0-9]{1,9}$/.test(p) || Number(p) < POLL_MIN_MS || Number(p) > POLL_MAX_MS)
      throw new ChannelInfoError(`channelInfo poll ${shown('poll')}: an integer number of ms ${POLL_MIN_MS}-${POLL_MAX_MS} is needed`);
    pollMs = Number(p);
  }
  return { type, order, scale, offset, pollMs, deadband };
}

/** A decimal number as a string ("1.5", "-2", "1e-3"); not hex, not empty, not Infinity. */
function numberOf(given: Map<string, string>, key: string, fallback: number): number {
  const s = given.get(key);
  if (s === undefined) return fallback;
  const n = /^[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?$/.test(s.trim()) ? Number(s) : NaN;
  if (!Number.isFinite(n)) throw new ChannelInfoError(`channelInfo ${key} '${s.slice(0, 64)}': a number is needed`);
  return n;
}
