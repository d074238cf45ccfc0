// The `modbusStatus` values (seed 001 §2.4, §3, §7: the full list is ours, README "Modbus bridge"): `ok`, `timeout`
// (no answer in timeoutMs, or no connection to the device), one per Modbus exception code (Modbus Application
// Protocol V1.1b3 §7), `badResponse` (an answer that does not parse), `invalidValue` (a float register that holds NaN
// or an infinity: no JSON number). Pure: no I/O.

export type ModbusStatus =
  | 'ok'
  | 'timeout'
  | 'illegalFunction'
  | 'illegalAddress'
  | 'illegalValue'
  | 'deviceFailure'
  | 'acknowledge'
  | 'deviceBusy'
  | 'negativeAcknowledge'
  | 'memoryParityError'
  | 'gatewayPathUnavailable'
  | 'gatewayTargetFailed'
  | 'exception'
  | 'badResponse'
  | 'invalidValue';

/** Modbus exception codes (MODBUS Application Protocol V1.1b3 §7) by value. */
const EXCEPTIONS: Readonly<Record<number, ModbusStatus>> = {
  1: 'illegalFunction',
  2: 'illegalAddress',
  3: 'illegalValue',
  4: 'deviceFailure',
  5: 'acknowledge',
  6: 'deviceBusy',
  7: 'negativeAcknowledge',
  8: 'memoryParityError',
  10: 'gatewayPathUnavailable',
  11: 'gatewayTargetFailed',
};

/** The status of a failed request, from modbus-serial's error (an exception carries modbusCode; a timeout ETIMEDOUT). */
export function statusOfError(err: unknown): ModbusStatus {
  const e = err as { modbusCode?: unknown; errno?: unknown; message?: unknown } | null;
  if (typeof e?.modbusCode === 'number') return EXCEPTIONS[e.modbusCode] ?? 'exception';
  // "Timed out" (ETIMEDOUT), or "Port Not Open" (ECONNREFUSED): the device did not answer.
  if (e?.errno === 'ETIMEDOUT' || e?.errno === 'ECONNREFUSED') return 'timeout';
  return 'badResponse';
}
