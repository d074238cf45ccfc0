// The tsdb history's options (`--troeHost` …, the names Orion-LD gives its TRoE database) and what they make: the
// QuestDB HTTP endpoint that takes both ILP over HTTP (writes) and SQL on /exec (reads), and the table names.
import { createHash } from 'node:crypto';
import type { OptionSpec } from '../../../plugin/contract.js';

export const options: OptionSpec[] = [
  { name: 'troeHost', type: 'string', default: '127.0.0.1', help: 'tsdb: QuestDB host (its HTTP port takes ILP writes and SQL)' },
  { name: 'troePort', type: 'int', default: 9000, min: 1, help: 'tsdb: QuestDB HTTP port' },
  { name: 'troeName', type: 'string', default: 'ldbroker', help: 'tsdb: prefix of the history tables (one set per tenant)' },
  { name: 'troeUser', type: 'string', help: 'tsdb: QuestDB user (HTTP basic authentication)' },
  { name: 'troePwd', type: 'string', help: 'tsdb: QuestDB password (never logged)' },
  {
    name: 'troeBuffer',
    type: 'int',
    default: 200_000,
    min: 100,
    help: 'tsdb: history rows held for QuestDB; past it, entity writes wait (back-pressure)',
  },
];

export interface TsdbSettings {
  host: string;
  port: number;
  /** Table name prefix, lower case. */
  name: string;
  user?: string;
  pwd?: string;
  buffer: number;
}

const HOST = /^(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*|\[[0-9A-Fa-f:.]+\])$/;
/** QuestDB table names are case-insensitive; ours are the prefix, a kind and the tenant's key. */
const NAME = /^[a-z][a-z0-9_]{0,39}$/;

function setting<T>(o: Record<string, unknown>, name: string): T {
  return (o[name] ?? options.find((s) => s.name === name)!.default) as T;
}

/** The settings of parsed options; a value QuestDB could not take is a start-up error (its message names the option). */
export function settingsOf(o: Record<string, unknown>): TsdbSettings {
  const host = setting<string>(o, 'troeHost');
  if (!HOST.test(host)) throw new Error(`--troeHost: '${host.slice(0, 80)}' is not a host name or address`);
  const port = setting<number>(o, 'troePort');
  if (port > 65535) throw new Error(`--troePort: ${port} is not a port`);
  const name = setting<string>(o, 'troeName').toLowerCase();
  if (!NAME.test(name)) throw new Error(`--troeName: '${name.slice(0, 80)}' is not 1 to 40 letters, digits or '_' starting with a letter`);
  const s: TsdbSettings = { host, port, name, buffer: setting<number>(o, 'troeBuffer') };
  const user = setting<string | undefined>(o, 'troeUser');
  const pwd = setting<string | undefined>(o, 'troePwd');
  if (pwd !== undefined && user === undefined) throw new Error('--troePwd needs --troeUser');
  if (user !== undefined) s.user = user;
  if (pwd !== undefined) s.pwd = pwd;
  return s;
}

/** Where QuestDB answers, for log lines: never the credentials. */
export const endpointOf = (s: TsdbSettings): string => `http://${s.host}:${s.port}`;

/**
 * A tenant's part of its table names. Tenants are '' (the default) or 1 to 50 of [a-z0-9_-] (ngsild/tenant.ts):
 * '-' cannot be in a QuestDB name unquoted, so such a tenant is written in hex; the prefixes keep the kinds apart.
 */
export function tenantKey(tenant: string): string {
  if (tenant === '') return 'd';
  if (/^[a-z0-9_]+$/.test(tenant)) return `t_${tenant}`;
  return `x_${Buffer.from(tenant, 'utf8').toString('hex')}`;
}

export interface TenantTables {
  /**
   * Attribute instances, one row per instance version (dedup on the order time and instanceId: rows.ts). `_v2`: the
   * designated timestamp is the observation time since this layout (the tables of the one before, `_inst_<tenant>`,
   * held createdAt there, and are not read).
   */
  inst: string;
  /** Entity rows: events, the temporal entity's record, purges and attribute drops. */
  ent: string;
}

/** QuestDB's longest table name (cairo.max.file.name.length). */
const MAX_TABLE_NAME = 127;

export function tablesOf(name: string, tenant: string): TenantTables {
  let k = tenantKey(tenant);
  // A long prefix with a long hex tenant would pass QuestDB's limit: such a tenant is named by a digest instead.
  if (name.length + '_inst_v2_'.length + k.length > MAX_TABLE_NAME)
    k = `h_${createHash('sha256').update(tenant).digest('hex').slice(0, 40)}`;
  return { inst: `${name}_inst_v2_${k}`, ent: `${name}_ent_${k}` };
}
