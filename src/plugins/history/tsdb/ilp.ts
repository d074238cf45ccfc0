// The history rows as ILP text (InfluxDB line protocol, QuestDB's protocol version 1). A committed entity write's
// lines are made on the writer thread from the facts the writing thread handed it (facts.ts), its instance lines
// straight from its history instances (historyLine), with no row object between; the temporal API's own writes make
// theirs of rows (instLine, entLine) on their thread. The writer sends the lines as they are through
// @questdb/nodejs-client's transport (writer.ts). The lines are byte for byte what the client's row API (writer.ts
// writeInst, writeEnt) writes for the same row but for the designated timestamp, in µs with its unit (`t`) where the
// client writes ns, which QuestDB reads as the same time and which holds times past 2262-04-11 (ns overflowed there
// and QuestDB refused the row): test/unit/tsdb-ilp.test.ts holds them to that, and the same rows read back from
// QuestDB.
import type { HistoryInstance } from '../../../history/contract.js';
import { ATTR_TYPES, VALUE_MEMBER } from '../../../ngsild/entity/model.js';
import { distinctKey, msOf, type EntRow, type InstRow } from './rows.js';

/** Characters ILP escapes in symbol values (unquoted), and in string column values (quoted): with a backslash. */
const UNQUOTED_SPECIAL = /[ ,=\n\r\\]/;
const UNQUOTED_ALL = /[ ,=\n\r\\]/g;
const QUOTED_SPECIAL = /["\n\r\\]/;
const QUOTED_ALL = /["\n\r\\]/g;

/** A symbol value (tag) as ILP writes it. */
export const sym = (v: string): string => (UNQUOTED_SPECIAL.test(v) ? v.replace(UNQUOTED_ALL, '\\$&') : v);

const LINE_BREAK = /[\n\r]/;

/**
 * A string column's value, quoted. Every body is JSON, quoted throughout but never with a raw line break: two
 * replaceAll of a plain string cost half the regular expression's replace (0.6 of 1.1 µs per PATCH, issue 18).
 */
export function str(v: string): string {
  if (!QUOTED_SPECIAL.test(v)) return `"${v}"`;
  if (LINE_BREAK.test(v)) return `"${v.replace(QUOTED_ALL, '\\$&')}"`;
  return `"${(v.includes('\\') ? v.replaceAll('\\', '\\\\') : v).replaceAll('"', '\\"')}"`;
}

/** A timestamp column of ms since the epoch: µs and the `t` suffix. */
const tsCol = (ms: number): string => (ms === 0 ? '0t' : `${ms}000t`);

/**
 * The last designated timestamp QuestDB 9.3 takes: past it, it answers the request 500 (as if it were down, and the
 * writer would send it again for ever). A DateTime with an offset can pass it (`9999-12-31T23:00:00-14:00`).
 */
const LAST_DESIGNATED_MS = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

/**
 * The designated timestamp of ms since the epoch: µs with the `t` suffix, which QuestDB takes with protocol version
 * 1 as the client's ns (the same row) and which holds every time to 9999. Past LAST_DESIGNATED_MS, ns: QuestDB
 * refuses that line (400), which the writer drops with a warn line (refusals.ts), rather than a 500.
 */
const designated = (ms: number): string => (ms > LAST_DESIGNATED_MS ? `${ms}000000` : ms === 0 ? '0t' : `${ms}000t`);

/** Integer ms: what the client's timestampColumn and at accept (they refuse any other number). */
function checkMs(ms: number, what: string): number {
  if (!Number.isInteger(ms)) throw new Error(`tsdb: ${what} is not a time in whole ms: ${ms}`);
  return ms;
}

/** One instance row's line on `table` (the table name is the broker's own, tablesOf: nothing to escape). */
export function instLine(table: string, r: InstRow): string {
  let line = `${table},entity=${sym(r.entity)},attr=${sym(r.attr)},ds=${sym(r.ds)},vtype=${sym(r.vtype)} iid=${str(r.iid)},body=${str(r.body)},val=${str(r.val)},gone=${r.gone ? 't' : 'f'}`;
  if (r.num !== undefined) line += `,num=${r.num}`;
  if (r.str !== undefined) line += `,str=${str(r.str)}`;
  if (r.obs !== undefined) line += `,observed_at=${tsCol(checkMs(r.obs, 'observedAt'))}`;
  line += `,created_at=${tsCol(checkMs(r.crt, 'createdAt'))},modified_at=${tsCol(checkMs(r.mod, 'modifiedAt'))}`;
  if (r.del !== undefined) line += `,deleted_at=${tsCol(checkMs(r.del, 'deletedAt'))}`;
  return `${line} ${designated(checkMs(r.ts, 'the order time'))}\n`;
}

/**
 * The body column: the instance's JSON, quoted as str quotes it. JSON.stringify of that JSON is the same text in one
 * pass where str tested and replaced (0.5 against 0.7 µs a PATCH): the JSON holds no raw control character and no
 * lone surrogate (JSON.stringify escapes them), so the second stringify escapes just what str does, `"` and `\\`.
 */
const bodyCol = (h: HistoryInstance): string => JSON.stringify(JSON.stringify(h));

/** The value types ILP needs no escape for (sym would test each): NGSI-LD's attribute types, plain names all. */
const PLAIN_VTYPE = ATTR_TYPES;

/**
 * The line of a new history instance of a committed write, created and modified at `crt` (ms), without its row
 * object: what instLine(table, instRow(entity, attr, h)) writes (rows.ts instRow says what each column holds).
 * `json`: JSON.stringify(h), when the caller has it (facts.ts: the writer reads h from it).
 */
export function historyLine(table: string, entity: string, attr: string, h: HistoryInstance, crt: number, json?: string): string {
  const vtype = h.type;
  let line = `${table},entity=${sym(entity)},attr=${sym(attr)},ds=${h.datasetId === undefined ? '@none' : sym(h.datasetId)},vtype=${
    PLAIN_VTYPE.has(vtype) ? vtype : sym(vtype)
  } iid=${str(h.instanceId)},body=${json === undefined ? bodyCol(h) : JSON.stringify(json)}`;
  const v = h[VALUE_MEMBER[vtype]];
  line += `,val=${str(distinctKey(v))},gone=f`;
  if (typeof v === 'number') {
    if (Number.isFinite(v)) line += `,num=${v}`;
  } else if (typeof v === 'string') line += `,str=${str(v)}`;
  let ts = checkMs(crt, 'createdAt');
  const obs = msOf(h.observedAt);
  if (obs !== undefined) {
    line += `,observed_at=${tsCol(checkMs(obs, 'observedAt'))}`;
    ts = obs > 0 ? obs : 0;
  }
  const mod = h.modifiedAt === h.createdAt ? crt : Date.parse(h.modifiedAt);
  line += `,created_at=${tsCol(crt)},modified_at=${tsCol(checkMs(mod, 'modifiedAt'))}`;
  const del = msOf(h.deletedAt);
  if (del !== undefined) line += `,deleted_at=${tsCol(checkMs(del, 'deletedAt'))}`;
  return `${line} ${designated(ts)}\n`;
}

/** One entity row's line on `table`. */
export function entLine(table: string, r: EntRow): string {
  let line = `${table},entity=${sym(r.entity)},kind=${sym(r.kind)}`;
  if (r.attr !== undefined) line += `,attr=${sym(r.attr)}`;
  const rec = r.rec;
  line += ` rid=${str(r.rid)},has_rec=${rec !== undefined ? 't' : 'f'}`;
  if (r.ds !== undefined) line += `,ds=${str(r.ds)}`;
  if (rec !== undefined) {
    line += `,types=${str(JSON.stringify(rec.type))}`;
    if (rec.scope !== undefined) line += `,scope=${str(JSON.stringify(rec.scope))}`;
    line += `,created_at=${tsCol(checkMs(Date.parse(rec.createdAt), 'createdAt'))},modified_at=${tsCol(checkMs(Date.parse(rec.modifiedAt), 'modifiedAt'))}`;
    if (rec.deletedAt !== undefined) line += `,deleted_at=${tsCol(checkMs(Date.parse(rec.deletedAt), 'deletedAt'))}`;
  }
  return `${line} ${designated(checkMs(r.ts, 'the row time'))}\n`;
}
