// The rows the tsdb history writes to QuestDB, as plain data (they cross from the pipeline threads to the writer
// thread), and the tables they go to. Two tables per tenant (settings.ts tablesOf):
// - instances: one row per attribute instance version. The designated timestamp is the instance's order time: its
//   observedAt, else its createdAt (history/contract.ts: what lastN and the default time property order by), so that
//   lastN reads the newest rows of the entity backwards and stops, where ordering by a column sorted every row of
//   the entity (159 ms for lastN=100 of 1,000,000, linear in the history). QuestDB refuses a designated timestamp
//   before 1970: such an observedAt is kept at 1970-01-01 (ts) and ordered by its own column among those rows
//   (tsdb-history.ts ordered). An update of an instance (§6.22) or its deletion writes a row with the same order
//   time and instanceId, which QuestDB's dedup (UPSERT KEYS) puts in place of the old one (an update that moves the
//   observedAt also retracts the row at the old time), and a batch sent twice after a failure lands once.
//   Partitioned by day: a time window on observedAt prunes partitions, and old days can be dropped whole.
// - entity rows: entity events (created, replaced, deleted), the temporal entity's record when a write changes it,
//   and the retractions an append-only table needs (a purge of the temporal entity, an attribute's drop), each
//   visible from its time. Partitioned by month (far fewer rows).
import { randomBytes } from 'node:crypto';
import type { EntityEvent, HistoryInstance, TemporalEntityRecord } from '../../../history/contract.js';
import { VALUE_MEMBER } from '../../../ngsild/entity/model.js';
import { isoOf } from './sql.js';

/** One instance version. Times are ms since the epoch. */
export interface InstRow {
  /** The order time (observedAt, else createdAt), at least 0: the designated timestamp. */
  ts: number;
  /** createdAt. */
  crt: number;
  entity: string;
  attr: string;
  iid: string;
  /** The datasetId, `@none` for the default instance. */
  ds: string;
  vtype: string;
  /** The value when it is a number: what QuestDB sums, averages and orders (§4.5.19). */
  num?: number;
  /** The value when it is a string: what min and max order when a period has no number. */
  str?: string;
  /** The value as distinctCount tells values apart (ngsild/temporal/aggregate.ts). */
  val: string;
  /** The instance as the history keeps it (JSON of HistoryInstance): what reads render. */
  body: string;
  obs?: number;
  mod: number;
  del?: number;
  /** Retracted (deleteInstance): reads skip it. */
  gone: boolean;
}

/** `void`: an imported row undone (import-batch.ts): no read selects it. */
export type EntKind = EntityEvent['kind'] | 'record' | 'purged' | 'dropped' | 'void';

export interface EntRow {
  ts: number;
  /** Unique per row (dedup key with ts). */
  rid: string;
  entity: string;
  kind: EntKind;
  /** The temporal entity as of this row (created, record, deleted rows that change it). */
  rec?: TemporalEntityRecord;
  /** dropped: the attribute, and the datasetId (`@none`, or `*` for all of them). */
  attr?: string;
  ds?: string;
}

/**
 * What one thread hands the writer: the facts of rows of one tenant (facts.ts), in the order written, and how many
 * rows of each table they hold (the writer's buffer is bounded in rows).
 */
export interface FactBatch {
  tenant: string;
  facts: Uint8Array;
  inst: number;
  ent: number;
}

/**
 * What the writer keeps of a FactBatch until QuestDB took it: the rows as ILP lines (ilp.ts), and how many of each
 * table (a table written waits to be applied before a read).
 */
export interface LineBatch {
  tenant: string;
  lines: string;
  inst: number;
  ent: number;
}

/** The key distinctCount counts a value by: the one aggregate.ts uses. */
export const distinctKey = (v: unknown): string => (typeof v === 'object' ? JSON.stringify(v) : `${typeof v}:${String(v)}`);

export const msOf = (iso: unknown): number | undefined => {
  if (typeof iso !== 'string') return undefined;
  const t = Date.parse(iso);
  return Number.isFinite(t) ? t : undefined;
};

export function instRow(entity: string, attr: string, h: HistoryInstance, gone = false): InstRow {
  const crt = Date.parse(h.createdAt);
  const row: InstRow = {
    ts: crt,
    crt,
    entity,
    attr,
    iid: h.instanceId,
    ds: h.datasetId ?? '@none',
    vtype: h.type,
    body: JSON.stringify(h),
    val: '',
    mod: h.modifiedAt === h.createdAt ? crt : Date.parse(h.modifiedAt),
    gone,
  };
  const v = h[VALUE_MEMBER[h.type]];
  row.val = distinctKey(v);
  if (typeof v === 'number' && Number.isFinite(v)) row.num = v;
  else if (typeof v === 'string') row.str = v;
  const obs = msOf(h.observedAt);
  if (obs !== undefined) {
    row.obs = obs;
    row.ts = Math.max(0, obs);
  }
  const del = msOf(h.deletedAt);
  if (del !== undefined) row.del = del;
  return row;
}

// Row ids and instanceIds: the time in ms, a per-thread counter and a random per-thread tag.
let counter = 0;
const threadTag = randomBytes(8).toString('hex');
const ID_PREFIX = 'urn:ngsi-ld:attribute:instance:';

/** The last ms an instanceId was made for, and its part of the id: writes under load come many to the same ms. */
let lastMs = -1;
let lastMsPart = '';

export function newInstanceId(ms: number): string {
  counter = (counter + 1) & 0xffffff;
  if (ms !== lastMs) {
    lastMs = ms;
    lastMsPart = `${ID_PREFIX}${ms.toString(16).padStart(12, '0')}-`;
  }
  return `${lastMsPart}${counter.toString(16).padStart(6, '0')}-${threadTag}`;
}

export function newRowId(ms: number): string {
  counter = (counter + 1) & 0xffffff;
  return `${ms.toString(16)}-${counter.toString(16)}-${threadTag}`;
}

export function entRow(entity: string, kind: EntKind, at: string, rec?: TemporalEntityRecord): EntRow {
  const ts = Date.parse(at);
  const row: EntRow = { ts, rid: newRowId(ts), entity, kind };
  if (rec !== undefined) row.rec = rec;
  return row;
}

/** The DDL of a tenant's tables (idempotent). */
export function tableDdl(inst: string, ent: string): string[] {
  return [
    `CREATE TABLE IF NOT EXISTS ${inst} (ts TIMESTAMP, entity SYMBOL INDEX, attr SYMBOL, ds SYMBOL, vtype SYMBOL, iid VARCHAR, ` +
      `num DOUBLE, str VARCHAR, val VARCHAR, body VARCHAR, observed_at TIMESTAMP, created_at TIMESTAMP, modified_at TIMESTAMP, ` +
      `deleted_at TIMESTAMP, gone BOOLEAN) ` +
      `TIMESTAMP(ts) PARTITION BY DAY WAL DEDUP UPSERT KEYS(ts, iid)`,
    `CREATE TABLE IF NOT EXISTS ${ent} (ts TIMESTAMP, entity SYMBOL INDEX, kind SYMBOL, rid VARCHAR, has_rec BOOLEAN, types VARCHAR, ` +
      `scope VARCHAR, created_at TIMESTAMP, modified_at TIMESTAMP, deleted_at TIMESTAMP, attr SYMBOL, ds VARCHAR) ` +
      `TIMESTAMP(ts) PARTITION BY MONTH WAL DEDUP UPSERT KEYS(ts, rid)`,
  ];
}

function parseList(v: unknown): string[] | undefined {
  if (typeof v !== 'string') return undefined;
  return JSON.parse(v) as string[];
}

/** The temporal entity of its latest record row (read back by SQL); undefined when that row is a purge. */
export function recordOf(r: Record<string, unknown>): TemporalEntityRecord | undefined {
  if (r.kind === 'purged') return undefined;
  const rec: TemporalEntityRecord = {
    id: r.entity as string,
    type: parseList(r.types) ?? [],
    createdAt: isoOf(r.created_at)!,
    modifiedAt: isoOf(r.modified_at)!,
  };
  const scope = parseList(r.scope);
  if (scope !== undefined) rec.scope = scope;
  const deletedAt = isoOf(r.deleted_at);
  if (deletedAt !== undefined) rec.deletedAt = deletedAt;
  return rec;
}
