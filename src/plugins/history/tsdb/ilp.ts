// The history rows as ILP text (InfluxDB line protocol, QuestDB's protocol version 1), made by the thread that wrote
// the entity: each committed write becomes its lines once, and a thread hands the writer thread one string per turn
// of its loop (link.ts), which crosses threads as one copy where row objects were cloned field by field (9 µs of the
// front per PATCH, issue 18). The writer sends the strings as they are through @questdb/nodejs-client's transport
// (writer.ts). The lines are byte for byte what the client's row API (writer.ts writeInst, writeEnt) writes for the
// same row: test/unit/tsdb-ilp.test.ts holds both to the same bytes, and the same rows read back from QuestDB.
import type { EntRow, InstRow } from './rows.js';

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

/** The designated timestamp of ms since the epoch: ns (protocol version 1). */
const designated = (ms: number): string => (ms === 0 ? '0' : `${ms}000000`);

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
