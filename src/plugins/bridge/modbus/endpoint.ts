// A Modbus Channel's endpoint (seed 001 §2.4): `[unit/<n>/]coil|discrete|holding|input/<address>`, the address
// 0-based, or the 1-based 1xxxx / 3xxxx / 4xxxx (and 6-digit 1xxxxx / 3xxxxx / 4xxxxx) form of device manuals,
// recognised by its range. Pure: no I/O.

export type ModbusTable = 'coil' | 'discrete' | 'holding' | 'input';

export interface ModbusEndpoint {
  unit: number;
  table: ModbusTable;
  /** 0-based protocol address. */
  address: number;
}

export class ModbusEndpointError extends Error {}

const TABLES: ReadonlySet<string> = new Set(['coil', 'discrete', 'holding', 'input']);

/**
 * The 1-based ranges per table: 5 digits (10001-19999) and 6 digits (100001-165536). Coils' 0xxxx form cannot be told
 * from a 0-based address by its range: a coil address is always 0-based.
 */
const ONE_BASED: Readonly<Record<ModbusTable, number | undefined>> = { coil: undefined, discrete: 1, input: 3, holding: 4 };

/** Parses an endpoint; throws ModbusEndpointError with the reason (the Channel becomes dormant with it). */
export function parseModbusEndpoint(endpoint: string, defaultUnit: number): ModbusEndpoint {
  const shown = endpoint.slice(0, 100);
  const parts = endpoint.split('/');
  let unit = defaultUnit;
  if (parts[0] === 'unit') {
    if (parts.length !== 4)
      throw new ModbusEndpointError(`endpoint '${shown}': [unit/<n>/]coil|discrete|holding|input/<address> is needed`);
    unit = decimal(parts[1]!, 255, `endpoint '${shown}': the unit must be an integer 0-255`);
    parts.splice(0, 2);
  }
  if (parts.length !== 2 || !TABLES.has(parts[0]!))
    throw new ModbusEndpointError(`endpoint '${shown}': [unit/<n>/]coil|discrete|holding|input/<address> is needed`);
  const table = parts[0] as ModbusTable;
  const written = decimal(
    parts[1]!,
    465536,
    `endpoint '${shown}': the address must be an integer 0-65535 or a 1-based 1xxxx/3xxxx/4xxxx form`,
  );
  return { unit, table, address: zeroBased(table, written, shown) };
}

function zeroBased(table: ModbusTable, written: number, shown: string): number {
  const lead = ONE_BASED[table];
  if (lead !== undefined) {
    // 5 digits: 40001-49999 is holding register 0-9998; 6 digits: 400001-465536 is 0-65535.
    if (written >= lead * 10000 + 1 && written <= lead * 10000 + 9999) return written - (lead * 10000 + 1);
    if (written >= lead * 100000 + 1 && written <= lead * 100000 + 65536) return written - (lead * 100000 + 1);
  }
  if (written > 65535) throw new ModbusEndpointError(`endpoint '${shown}': address ${written} is out of the ${table} table (0-65535)`);
  return written;
}

function decimal(s: string, max: number, message: string): number {
  if (!/^[0-9]{1,6}$/.test(s)) throw new ModbusEndpointError(message);
  const n = Number(s);
  if (n > max) throw new ModbusEndpointError(message);
  return n;
}
