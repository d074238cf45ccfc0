// The importer's history into tsdb (seed 001, importer behaviour 4; §7 "a history batch with an instanceId already
// present: refused as a whole"; §8 "500 events, one transaction each"). QuestDB has no transaction over two tables:
// one ILP-over-HTTP request is one commit per table it names. So a batch is written as one request per table (the
// tenant's instances first, then its entity rows), each all or nothing; when a later request fails, the requests
// already committed are undone by writing the same rows again over their dedup keys as retracted (an instance
// `gone`, an entity row `void`), which no read selects. Written directly from the importing thread, not through the
// writer thread: the importer needs each batch's outcome, never a buffer that retries it later.
import type { ImportedHistoryRecord, TemporalEntityRecord } from '../../../history/contract.js';
import { entRow, instRow, recordOf, tableDdl, type EntRow, type InstRow } from './rows.js';
import { exec, literalGroups, rowsOf } from './sql.js';
import { tablesOf, type TsdbSettings } from './settings.js';
import { entLine, instLine } from './ilp.js';
import { newTransport, waitApplied } from './writer.js';

/** How long the client retries one request of a batch before the batch fails. */
const RETRY_MS = 5_000;

/** Tables this process made sure of (their DDL is idempotent, but one request fewer per batch). */
const ensured = new Set<string>();

interface TenantPart {
  inst: InstRow[];
  ent: EntRow[];
}

type Part = { table: string; inst: InstRow[] } | { table: string; ent: EntRow[] };

/** Why the batch is refused (nothing of it written), or undefined when it may be written. */
async function conflict(s: TsdbSettings, tenant: string, records: readonly ImportedHistoryRecord[]): Promise<string | undefined> {
  const { inst, ent } = tablesOf(s.name, tenant);
  const inBatch = new Set<string>();
  const iids = new Set<string>();
  const ids = new Set<string>();
  for (const r of records) {
    ids.add(r.id);
    if (r.kind !== 'instance') continue;
    const key = `${r.id}\n${r.instance.instanceId}`;
    if (inBatch.has(key)) return `instanceId ${r.instance.instanceId} of ${r.id} is twice in the batch`;
    inBatch.add(key);
    iids.add(r.instance.instanceId);
  }
  // The entity column is indexed: the instanceIds are looked up among the batch's entities' rows only.
  for (const idGroup of literalGroups([...ids], 4_000)) {
    for (const iidGroup of literalGroups([...iids], 4_000)) {
      const found = rowsOf(
        await exec(
          s,
          `SELECT entity, iid FROM ${inst} WHERE entity IN (${idGroup.join(',')}) AND iid IN (${iidGroup.join(',')}) AND gone = false LIMIT 1`,
        ),
      );
      if (found.length > 0) return `instanceId ${String(found[0]!.iid)} of ${String(found[0]!.entity)} is present already`;
    }
    const events = rowsOf(
      await exec(
        s,
        `SELECT entity, kind, ts FROM ${ent} WHERE entity IN (${idGroup.join(',')}) AND kind IN ('created', 'replaced', 'deleted')`,
      ),
    );
    const have = new Set(events.map((e) => `${String(e.entity)}\n${String(e.kind)}\n${Date.parse(e.ts as string)}`));
    for (const r of records)
      if (r.kind === 'entity' && have.has(`${r.id}\n${r.event.kind}\n${Date.parse(r.event.at)}`))
        return `entity ${r.id} has a ${r.event.kind} event at ${r.event.at} already`;
  }
  return undefined;
}

/** The temporal entities of the batch as the history holds them now. */
async function records(s: TsdbSettings, tenant: string, ids: readonly string[]): Promise<Map<string, TemporalEntityRecord>> {
  const { ent } = tablesOf(s.name, tenant);
  const out = new Map<string, TemporalEntityRecord>();
  for (const g of literalGroups(ids, 8_000)) {
    const rows = rowsOf(
      await exec(
        s,
        `SELECT entity, kind, types, scope, created_at, modified_at, deleted_at FROM ${ent} ` +
          `WHERE has_rec = true AND entity IN (${g.join(',')}) LATEST ON ts PARTITION BY entity`,
      ),
    );
    for (const r of rows) {
      const rec = recordOf(r);
      if (rec !== undefined) out.set(rec.id, rec);
    }
  }
  return out;
}

/** The rows of one tenant's records, as embdb's importBatch keeps them (events, records, instances at their times). */
function rowsOfRecords(recs: readonly ImportedHistoryRecord[], held: Map<string, TemporalEntityRecord>): TenantPart {
  const part: TenantPart = { inst: [], ent: [] };
  for (const r of recs) {
    const rec = held.get(r.id);
    if (r.kind === 'entity') {
      const { kind, at } = r.event;
      let next: TemporalEntityRecord;
      if (kind === 'created' || rec === undefined) next = { id: r.id, type: r.type, createdAt: at, modifiedAt: at };
      else if (kind === 'replaced') {
        const { deletedAt: _gone, ...kept } = rec;
        next = { ...kept, type: r.type, modifiedAt: at };
      } else next = { ...rec, modifiedAt: at, deletedAt: at };
      held.set(r.id, next);
      part.ent.push(entRow(r.id, kind, at, next));
      continue;
    }
    if (rec === undefined) {
      const at = r.instance.createdAt;
      const next: TemporalEntityRecord = { id: r.id, type: r.type, createdAt: at, modifiedAt: at };
      held.set(r.id, next);
      part.ent.push(entRow(r.id, 'record', at, next));
    }
    part.inst.push(instRow(r.id, r.attrIri, r.instance));
  }
  return part;
}

async function send(s: TsdbSettings, p: Part, undo: boolean): Promise<void> {
  // The writer's lines (ilp.ts), whose designated timestamps hold times past 2262 (the client's row API writes ns).
  let lines = '';
  if ('inst' in p) for (const r of p.inst) lines += instLine(p.table, undo ? { ...r, gone: true } : r);
  else for (const r of p.ent) lines += entLine(p.table, undo ? { ...r, kind: 'void', rec: undefined } : r);
  if (lines === '') return;
  const transport = await newTransport(s, RETRY_MS);
  try {
    // One request: one QuestDB transaction on this table.
    await transport.send(Buffer.from(lines, 'utf8'));
  } finally {
    await transport.close().catch(() => {});
  }
}

export async function importBatch(s: TsdbSettings, batch: readonly ImportedHistoryRecord[]): Promise<{ refused?: string }> {
  const byTenant = new Map<string, ImportedHistoryRecord[]>();
  for (const r of batch) {
    let list = byTenant.get(r.tenant);
    if (list === undefined) byTenant.set(r.tenant, (list = []));
    list.push(r);
  }
  const parts: Part[] = [];
  const entParts: Part[] = [];
  for (const [tenant, recs] of byTenant) {
    const t = tablesOf(s.name, tenant);
    const key = `${s.host}:${s.port}/${t.inst}`;
    if (!ensured.has(key)) {
      for (const ddl of tableDdl(t.inst, t.ent)) await exec(s, ddl);
      ensured.add(key);
    }
    const why = await conflict(s, tenant, recs);
    if (why !== undefined) return { refused: why };
    const part = rowsOfRecords(recs, await records(s, tenant, [...new Set(recs.map((r) => r.id))]));
    if (part.inst.length > 0) parts.push({ table: t.inst, inst: part.inst });
    if (part.ent.length > 0) entParts.push({ table: t.ent, ent: part.ent });
  }
  // Instances before the entity rows: a batch seen half written shows no temporal entity without its instances.
  parts.push(...entParts);
  const done: Part[] = [];
  try {
    for (const p of parts) {
      await send(s, p, false);
      done.push(p);
    }
    await waitApplied(
      s,
      parts.map((p) => p.table),
    );
  } catch (e) {
    const why = (e as Error).message;
    try {
      for (const p of done.reverse()) await send(s, p, true);
      await waitApplied(
        s,
        done.map((p) => p.table),
      );
    } catch (e2) {
      return { refused: `QuestDB failed (${why}) and what it took of the batch could not be undone (${(e2 as Error).message})` };
    }
    return { refused: `QuestDB failed: ${why}` };
  }
  return {};
}
