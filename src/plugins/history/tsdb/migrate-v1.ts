// Carries the instances of the tables of the layout before (`<name>_inst_<tenant>`, designated timestamp createdAt,
// no created_at column) into the order-time tables (`<name>_inst_v2_<tenant>`, rows.ts), inside QuestDB: one
// INSERT … SELECT per tenant, then the old table is dropped. Run by the writer thread before it sends any row
// (writer.ts): a copy made after new rows landed could put an old version of an updated instance back in place of
// the new one (same dedup keys), and a read after a restart must see the history before the tenant's next write.
//
// Dropped rather than renamed: the v2 row holds every column of the old one (created_at is the old ts), so once the
// copy is in QuestDB and counted the old table holds nothing the new one lacks, and a kept copy would double the
// disk of every history silently. Nothing is dropped unless the copy answered and every old row is counted in the
// new table; a copy that fails is tried again (QuestDB away: the writer's back-off; refused: at the next start),
// and dedup on (ts, iid) makes a repeated copy land once.
import { tableDdl } from './rows.js';
import { QuestDbRefused, exec, lit, rowsOf } from './sql.js';
import { tablesOf, type TenantTables, type TsdbSettings } from './settings.js';

/** How long the copy of one tenant may take (bench/temporal-tsdb.ts seeds 1,000,000 rows by INSERT … SELECT in about 10 s). */
const COPY_MS = 30 * 60_000;

/** The tenant part of a table name (settings.ts tenantKey, or the digest tablesOf names a long one by). */
const KEY = /^(d|t_[a-z0-9_]+|x_(?:[0-9a-f]{2})+|h_[0-9a-f]{40})$/;

export interface OldTable {
  /** The old instances table. */
  old: string;
  /** The tenant's tables of this layout. */
  to: TenantTables;
}

/** The tenant's tables of the current layout for the tenant key of an old table name. */
function tablesOfKey(name: string, key: string): TenantTables {
  if (key === 'd') return tablesOf(name, '');
  if (key.startsWith('t_')) return tablesOf(name, key.slice(2));
  if (key.startsWith('x_')) return tablesOf(name, Buffer.from(key.slice(2), 'hex').toString('utf8'));
  // h_<digest>: the name was already too long for its tenant, so the v2 one is too, and is named by the same digest.
  return { inst: `${name}_inst_v2_${key}`, ent: `${name}_ent_${key}` };
}

/** The old-layout instances tables of this prefix: named `<name>_inst_<tenant key>`, with no created_at column. */
export async function oldTables(s: TsdbSettings): Promise<OldTable[]> {
  const head = `${s.name}_inst_`;
  const out: OldTable[] = [];
  for (const r of rowsOf(await exec(s, 'SELECT table_name FROM tables()'))) {
    const table = String(r.table_name).toLowerCase();
    if (!table.startsWith(head)) continue;
    const key = table.slice(head.length);
    // `v2_d` and the like are the current layout's: a tenant key never starts with v.
    if (!KEY.test(key)) continue;
    const cols = new Set(rowsOf(await exec(s, `SELECT "column" FROM table_columns(${lit(table)})`)).map((c) => String(c.column)));
    // Another prefix's table that happens to share the head, or one not of the old layout: not ours to move.
    if (!cols.has('iid') || !cols.has('observed_at') || !cols.has('body') || cols.has('created_at')) continue;
    out.push({ old: table, to: tablesOfKey(s.name, key) });
  }
  return out;
}

const COLS = 'entity, attr, ds, vtype, iid, num, str, val, body, observed_at, modified_at, deleted_at, gone';

/**
 * The copy of one old table (rows.ts instRow's order time: observedAt, at least 1970, else createdAt); the rows
 * counted in both tables once QuestDB applied it (`waitApplied`), for the caller to decide the drop.
 */
export async function copyOld(
  s: TsdbSettings,
  t: OldTable,
  waitApplied: (names: string[]) => Promise<void>,
): Promise<{ old: number; copied: number }> {
  for (const ddl of tableDdl(t.to.inst, t.to.ent)) await exec(s, ddl);
  const ts = 'CASE WHEN observed_at IS NULL THEN ts WHEN observed_at < 0::timestamp THEN 0::timestamp ELSE observed_at END';
  await exec(s, `INSERT INTO ${t.to.inst} (ts, created_at, ${COLS}) SELECT ${ts}, ts, ${COLS} FROM ${t.old}`, COPY_MS);
  await waitApplied([t.to.inst]);
  const [o] = rowsOf(await exec(s, `SELECT count() n, max(ts) last FROM ${t.old}`, COPY_MS));
  const old = Number(o?.n ?? 0);
  if (old === 0) return { old, copied: 0 };
  // The old rows as the new table holds them: a row written since the upgrade was created after the last of them
  // (and none is written before the copy: writer.ts), and dedup keeps one row per order time and instanceId as the
  // old table kept one per createdAt and instanceId.
  const [c] = rowsOf(await exec(s, `SELECT count() n FROM ${t.to.inst} WHERE created_at <= ${lit(String(o!.last))}`, COPY_MS));
  const copied = Number(c?.n ?? 0);
  return { old, copied };
}

export type Logger = (level: 'info' | 'warn' | 'error', obj: Record<string, unknown>, msg: string) => void;

/**
 * Every old table of the prefix carried over and dropped. QuestDB away throws (the writer retries); a table QuestDB
 * refuses to copy, or whose rows are not all in the new table, is kept and logged, and the others go on.
 */
export async function migrateOld(s: TsdbSettings, waitApplied: (names: string[]) => Promise<void>, log: Logger): Promise<void> {
  let found: OldTable[];
  try {
    found = await oldTables(s);
  } catch (e) {
    if (!(e instanceof QuestDbRefused)) throw e;
    // Not a passing failure: held until it passed, every tenant's history would wait behind it.
    log('error', { err: e.message }, 'tsdb: the tables of the old layout could not be listed: none is carried over');
    return;
  }
  for (const t of found) {
    let n: { old: number; copied: number };
    try {
      n = await copyOld(s, t, waitApplied);
    } catch (e) {
      if (!(e instanceof QuestDbRefused)) throw e;
      // Another broker on the same prefix moved it meanwhile: nothing is left to do.
      if (/does not exist/i.test(e.message)) continue;
      log('error', { err: e.message, from: t.old, to: t.to.inst }, 'tsdb: the old history table could not be carried over: it is kept');
      continue;
    }
    if (n.copied < n.old) {
      log(
        'error',
        { from: t.old, to: t.to.inst, rows: n.old, found: n.copied },
        'tsdb: not every row of the old history table is in the new one: the old table is kept',
      );
      continue;
    }
    try {
      await exec(s, `DROP TABLE IF EXISTS ${t.old}`);
    } catch (e) {
      if (!(e instanceof QuestDbRefused)) throw e;
      log('error', { err: e.message, from: t.old }, 'tsdb: the old history table was carried over but could not be dropped');
      continue;
    }
    log('info', { from: t.old, to: t.to.inst, rows: n.old }, 'tsdb: history of the old table layout carried over; old table dropped');
  }
}
