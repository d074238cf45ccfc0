// The tsdb history (`--troe tsdb`): the temporal API on QuestDB. Writes (the store's committed writes, `record`, and
// the temporal API's own) are rows handed to the writer thread (writer.ts), never awaited by an entity write; reads
// first sync with the writer (what this thread wrote is in QuestDB and applied) and then ask QuestDB in SQL. The
// tables are append-only (rows.ts): an instance's update or deletion replaces its row through the dedup keys, and a
// purge or an attribute's drop is a row that hides what came before it.
import { historyInstanceOf } from '../../../store/kit/history-of-write.js';
import { planTemporalQuery } from '../../../store/kit/entity-query.js';
import type { MutateOptions, WriteEvent } from '../../../store/contract.js';
import type {
  AggrMethod,
  AggregateSelection,
  AggregatedGroup,
  EntityEvent,
  History,
  HistoryInstance,
  ImportedHistoryRecord,
  InstancePage,
  InstanceSelection,
  HistoryLag,
  InstanceUpdateOutcome,
  TemporalEntityQuery,
  TemporalEntityRecord,
} from '../../../history/contract.js';
import type { AttrInstance, AttrType } from '../../../ngsild/entity/model.js';
import { periodBound } from '../../../ngsild/temporal/aggregate.js';
import { addDuration } from '../../../ngsild/temporal/duration.js';
import { LdError } from '../../../ngsild/problem.js';
import type { PluginLogger } from '../../../plugin/contract.js';
import type { WriterLink } from './link.js';
import { entRow, instRow, newInstanceId, recordOf, type EntRow, type InstRow } from './rows.js';
import { entLine, instLine } from './ilp.js';
import { importBatch } from './import-batch.js';
import { WriteFacts } from './facts.js';
import { MAX_SQL, QueryTooLong, QuestDbRefused, exec, isoOf, lit, literalGroups, rowsOf, tsLit, type SqlResult } from './sql.js';
import { endpointOf, tablesOf, type TenantTables, type TsdbSettings } from './settings.js';

/** Asked attributes up to which instances are read attribute by attribute without first listing the entity's. */
const FEW_ATTRS = 8;

/** Seconds a client is told to wait before it reads the history again while QuestDB is away. */
const RETRY_AFTER_S = 5;

function unavailable(why: string): LdError {
  const e = new LdError('Unavailable', `the temporal history (QuestDB) is not available: ${why.slice(0, 300)}`);
  e.retryAfter = RETRY_AFTER_S;
  return e;
}

/** What hides instances of one entity: its last purge, and the drops of its attributes since. */
interface Hidden {
  purgedAt?: number;
  drops: Array<{ ts: number; attr: string; ds: string }>;
}

const TIME_COLUMN = { observedAt: 'observed_at', createdAt: 'created_at', modifiedAt: 'modified_at', deletedAt: 'deleted_at' } as const;

/** An instance's order time (history/contract.ts): observedAt, else createdAt. ts is the same, but never before 1970 (rows.ts). */
const ORDER_TIME = 'coalesce(observed_at, created_at)';

/**
 * The condition of a time window on one time property. On observedAt the designated timestamp (ts, the same time
 * from 1970 on) bounds it too, so that QuestDB reads only the partitions of the window.
 */
function windowCond(tp: keyof typeof TIME_COLUMN, from: number | undefined, to: number | undefined): string {
  const col = TIME_COLUMN[tp];
  let cond = col === 'created_at' ? '' : ` AND ${col} != null`;
  if (from !== undefined) cond += ` AND ${col} >= ${tsLit(from)}`;
  if (to !== undefined) cond += ` AND ${col} < ${tsLit(to)}`;
  if (col === 'observed_at') {
    if (from !== undefined && from > 0) cond += ` AND ts >= ${tsLit(from)}`;
    if (to !== undefined && to > 0) cond += ` AND ts < ${tsLit(to)}`;
  }
  return cond;
}

/** An instance row read in time order: its body, its time on the order's column (µs) and its instanceId. */
interface OrderedRow {
  body: string;
  ot: number;
  iid: string;
}

const orderedRow = (r: Record<string, unknown>): OrderedRow => ({ body: r.body as string, ot: Number(r.ot), iid: r.iid as string });

/** (time, instanceId), ascending or descending: the order QuestDB's ORDER BY of both gives. */
function rowOrder(reverse: boolean): (a: OrderedRow, b: OrderedRow) => number {
  const sign = reverse ? -1 : 1;
  return (a, b) => sign * (a.ot !== b.ot ? a.ot - b.ot : a.iid < b.iid ? -1 : a.iid > b.iid ? 1 : 0);
}

export class TsdbHistory implements History {
  readonly name = 'tsdb';

  constructor(
    private readonly s: TsdbSettings,
    private readonly link: WriterLink,
    private readonly log: PluginLogger,
  ) {}

  lag(): HistoryLag {
    return this.link.lag;
  }

  // ---- plumbing -------------------------------------------------------------------------------------------

  /** Waits until what this thread wrote is readable; QuestDB away is 503. */
  private async synced(): Promise<void> {
    try {
      await this.link.sync();
    } catch (e) {
      throw unavailable((e as Error).message);
    }
  }

  /** SQL on a tenant's tables: a table not created yet (no write of the tenant so far) reads as empty. */
  private async sql(query: string): Promise<Array<Record<string, unknown>>> {
    let r: SqlResult;
    try {
      r = await exec(this.s, query);
    } catch (e) {
      if (e instanceof QuestDbRefused && /does not exist/i.test(e.message)) return [];
      if (e instanceof QueryTooLong)
        throw new LdError('TooComplexQuery', 'the temporal query names too many ids, attributes or datasetIds for the history: split it');
      if (e instanceof QuestDbRefused) {
        this.log.error({ err: e.message, endpoint: endpointOf(this.s) }, 'tsdb: QuestDB refused a read');
        throw new LdError('InternalError', 'the temporal history could not be read');
      }
      throw unavailable((e as Error).message);
    }
    return rowsOf(r);
  }

  private async write(tenant: string, inst: InstRow[], ent: EntRow[]): Promise<void> {
    const t = this.tables(tenant);
    let lines = '';
    for (const r of inst) lines += instLine(t.inst, r);
    for (const r of ent) lines += entLine(t.ent, r);
    if (lines === '') return;
    const f = this.facts;
    f.reset(t);
    f.addLines(lines, inst.length, ent.length);
    await this.link.send(tenant, f);
  }

  /** The tables of the tenants this thread wrote, kept: tablesOf may hash the tenant, and PATCH writes one row each. */
  private readonly tableCache = new Map<string, TenantTables>();
  /** The facts record and write hand the link (which copies them), reused write after write. */
  private readonly facts = new WriteFacts();

  private tables(tenant: string): TenantTables {
    let t = this.tableCache.get(tenant);
    if (t === undefined) {
      if (this.tableCache.size >= 10_000) this.tableCache.clear();
      t = tablesOf(this.s.name, tenant);
      this.tableCache.set(tenant, t);
    }
    return t;
  }

  /** The purge and drops of one entity (rows of the entity table), read once per request. */
  private async hidden(tenant: string, id: string): Promise<Hidden> {
    const { ent } = tablesOf(this.s.name, tenant);
    const rows = await this.sql(`SELECT ts, kind, attr, ds FROM ${ent} WHERE entity = ${lit(id)} AND kind IN ('purged', 'dropped')`);
    const h: Hidden = { drops: [] };
    for (const r of rows) {
      const ts = Date.parse(r.ts as string);
      if (r.kind === 'purged') h.purgedAt = Math.max(h.purgedAt ?? ts, ts);
    }
    // Only the latest drop of an attribute and datasetId matters: it hides every instance the earlier ones did.
    const latest = new Map<string, { ts: number; attr: string; ds: string }>();
    for (const r of rows) {
      const ts = Date.parse(r.ts as string);
      if (r.kind !== 'dropped' || (h.purgedAt !== undefined && ts <= h.purgedAt)) continue;
      const key = JSON.stringify([r.attr, r.ds]);
      const seen = latest.get(key);
      if (seen === undefined || seen.ts < ts) latest.set(key, { ts, attr: r.attr as string, ds: r.ds as string });
    }
    h.drops = [...latest.values()];
    return h;
  }

  /** The WHERE clause of an entity's visible instances. */
  private visible(id: string, h: Hidden): string {
    let w = `entity = ${lit(id)} AND gone = false`;
    if (h.purgedAt !== undefined) w += ` AND created_at > ${tsLit(h.purgedAt)}`;
    for (const d of h.drops) {
      const ds = d.ds === '*' ? '' : ` AND ds = ${lit(d.ds)}`;
      w += ` AND NOT (attr = ${lit(d.attr)}${ds} AND created_at <= ${tsLit(d.ts)})`;
    }
    return w;
  }

  // ---- reads ----------------------------------------------------------------------------------------------

  async getTemporalEntity(tenant: string, id: string): Promise<TemporalEntityRecord | undefined> {
    await this.synced();
    return this.latestRecord(tenant, id);
  }

  private async latestRecord(tenant: string, id: string): Promise<TemporalEntityRecord | undefined> {
    const { ent } = tablesOf(this.s.name, tenant);
    const rows = await this.sql(
      `SELECT entity, kind, types, scope, created_at, modified_at, deleted_at FROM ${ent} ` +
        `WHERE entity = ${lit(id)} AND has_rec = true LATEST ON ts PARTITION BY entity`,
    );
    return rows.length === 0 ? undefined : recordOf(rows[0]!);
  }

  async queryTemporalEntities(tenant: string, query: TemporalEntityQuery): Promise<{ entities: TemporalEntityRecord[]; count?: number }> {
    await this.synced();
    const plan = planTemporalQuery(query);
    const { ent } = tablesOf(this.s.name, tenant);
    if (plan.ids !== undefined && plan.ids.length === 0) return query.count ? { entities: [], count: 0 } : { entities: [] };
    const select = (idList: string): Promise<Array<Record<string, unknown>>> =>
      this.sql(
        `SELECT entity, kind, types, scope, created_at, modified_at, deleted_at FROM ${ent} ` +
          `WHERE has_rec = true${idList} LATEST ON ts PARTITION BY entity`,
      );
    // A long id list goes in several queries, each within what QuestDB takes in one request. Without ids, a type
    // selects in QuestDB on the latest record's types (the JSON text holds each type quoted; '%' and '_' of an IRI
    // only widen the match, which the exact test below narrows again).
    let rows: Array<Record<string, unknown>>;
    if (plan.ids !== undefined) {
      rows = (await Promise.all(literalGroups(plan.ids).map((g) => select(` AND entity IN (${g.join(',')})`)))).flat();
    } else if (plan.typeIris !== undefined && plan.typeIris.length <= 50) {
      const likes = plan.typeIris.map((iri) => `types LIKE ${lit(`%${JSON.stringify(iri)}%`)}`).join(' OR ');
      rows = await this.sql(
        `SELECT * FROM (SELECT entity, kind, types, scope, created_at, modified_at, deleted_at FROM ${ent} ` +
          `WHERE has_rec = true LATEST ON ts PARTITION BY entity) WHERE ${likes}`,
      );
    } else {
      rows = await select('');
    }
    const byId = new Map<string, TemporalEntityRecord>();
    for (const r of rows) {
      const rec = recordOf(r);
      if (rec !== undefined) byId.set(rec.id, rec);
    }
    let candidates: TemporalEntityRecord[];
    if (plan.ids !== undefined) {
      candidates = [];
      for (const id of plan.ids) {
        const rec = byId.get(id);
        if (rec !== undefined) candidates.push(rec);
      }
    } else {
      candidates = [...byId.values()].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
      if (query.afterId !== undefined) candidates = candidates.filter((r) => r.id > query.afterId!);
    }
    const types = plan.typeIris;
    if (plan.ids !== undefined && types !== undefined) candidates = candidates.filter((r) => r.type.some((t) => types.includes(t)));
    if (plan.ids === undefined && types !== undefined) candidates = candidates.filter((r) => r.type.some((t) => types.includes(t)));
    if (plan.filter !== undefined) candidates = candidates.filter(plan.filter);
    if (query.attrs !== undefined) {
      const holding = await this.entitiesHolding(tenant, query.attrs);
      candidates = candidates.filter((r) => holding.has(r.id));
    }
    const page = candidates.slice(query.offset, query.offset + query.limit);
    return query.count ? { entities: page, count: candidates.length } : { entities: page };
  }

  /** Entities with a visible instance of any of the attributes (after their purge and their attribute's drops). */
  private async entitiesHolding(tenant: string, attrs: readonly string[]): Promise<Set<string>> {
    const { inst, ent } = tablesOf(this.s.name, tenant);
    const latest = (
      await Promise.all(
        literalGroups(attrs).map((g) =>
          this.sql(`SELECT entity, attr, ds, max(created_at) last FROM ${inst} WHERE attr IN (${g.join(',')}) AND gone = false`),
        ),
      )
    ).flat();
    const hiding = await this.sql(`SELECT entity, ts, kind, attr, ds FROM ${ent} WHERE kind IN ('purged', 'dropped')`);
    const out = new Set<string>();
    for (const r of latest) {
      const last = Date.parse(r.last as string);
      const hidden = hiding.some(
        (h) =>
          h.entity === r.entity &&
          Date.parse(h.ts as string) >= last &&
          (h.kind === 'purged' || (h.attr === r.attr && (h.ds === '*' || h.ds === r.ds))),
      );
      if (!hidden) out.add(r.entity as string);
    }
    return out;
  }

  async entityEvents(tenant: string, id: string): Promise<EntityEvent[]> {
    await this.synced();
    const { ent } = tablesOf(this.s.name, tenant);
    const h = await this.hidden(tenant, id);
    const after = h.purgedAt === undefined ? '' : ` AND ts > ${tsLit(h.purgedAt)}`;
    const rows = await this.sql(
      `SELECT kind, ts FROM ${ent} WHERE entity = ${lit(id)} AND kind IN ('created', 'replaced', 'deleted')${after} ORDER BY ts`,
    );
    return rows.map((r) => ({ kind: r.kind as EntityEvent['kind'], at: isoOf(r.ts)! }));
  }

  async instances(tenant: string, id: string, sel: InstanceSelection): Promise<InstancePage> {
    await this.synced();
    const { inst } = tablesOf(this.s.name, tenant);
    const where = this.visible(id, await this.hidden(tenant, id));
    const attrIris = await this.attributesOf(inst, where, sel.attrs);
    const page: InstancePage = { attrs: {}, truncated: [] };
    const found = await Promise.all(attrIris.map((a) => this.attrInstances(inst, where, a, sel)));
    for (let i = 0; i < attrIris.length; i++) {
      const f = found[i]!;
      if (f.list.length > 0) page.attrs[attrIris[i]!] = f.list;
      if (f.truncated) page.truncated.push(attrIris[i]!);
    }
    return page;
  }

  /**
   * The attributes of the entity's visible instances (in name order), narrowed to `asked` when given: one query per
   * attribute follows, so only for attributes that are there, however many a request names.
   */
  private async attributesOf(inst: string, where: string, asked: readonly string[] | undefined): Promise<string[]> {
    // A few asked attributes cost fewer queries asked directly (an absent one answers no row) than looked up first.
    if (asked !== undefined && asked.length <= FEW_ATTRS) return [...asked];
    // LATEST ON reads the entity's rows backwards and stops once it found each attribute QuestDB holds; DISTINCT read
    // every row of the entity (33 ms of lastN=100's 35 on 1,000,000 instances of one attribute).
    const held = (await this.sql(`SELECT attr FROM ${inst} WHERE ${where} LATEST ON ts PARTITION BY attr`)).map((r) => r.attr as string);
    if (asked === undefined) return held.sort();
    const there = new Set(held);
    return asked.filter((a) => there.has(a));
  }

  /** One attribute's instances in time order on the selection's time property; the newest `lastN` with lastN. */
  private async attrInstances(
    inst: string,
    where: string,
    attrIri: string,
    sel: InstanceSelection,
  ): Promise<{ list: HistoryInstance[]; truncated: boolean }> {
    const w = sel.window;
    let cond = `${where} AND attr = ${lit(attrIri)}`;
    if (sel.datasetIds !== undefined) cond += ` AND ds IN (${[...sel.datasetIds].map(lit).join(',')})`;
    const reverse = sel.lastN !== undefined;
    const want = Math.min(sel.lastN ?? Number.MAX_SAFE_INTEGER, sel.limit);
    const take = Math.min(want + 1, 2_000_000_000);
    let rows: OrderedRow[];
    if (w !== undefined) {
      cond += windowCond(w.timeproperty, w.from, w.to);
      // On observedAt (those rows have one: the window's condition), the designated timestamp's order.
      rows = await this.ordered(inst, cond, w.timeproperty === 'observedAt' ? 'ts' : TIME_COLUMN[w.timeproperty], reverse, take);
    } else if (sel.order === 'observedAt') {
      // Without a window, observedAt orders those without one at their createdAt (history/contract.ts order): the
      // designated timestamp (rows.ts).
      rows = await this.ordered(inst, cond, 'ts', reverse, take);
    } else {
      rows = await this.ordered(inst, cond, 'created_at', reverse, take);
    }
    const list = rows.map((r) => JSON.parse(r.body) as HistoryInstance);
    let truncated = false;
    if (list.length > want) {
      list.length = want;
      truncated = sel.lastN === undefined || sel.lastN > sel.limit;
    }
    if (reverse) list.reverse();
    return { list, truncated };
  }

  /**
   * The first `take` rows of `cond` in (`col`, iid) order (descending when `reverse`); `ts` is the order time
   * (ORDER_TIME). On ts, the designated timestamp, QuestDB reads only the rows it returns when ts is the one sort key
   * (a second key sorts them all: 2.5 s on 10,000,000 rows against 0.03 s), so the order among rows of one ts is made
   * here: the rows of the last ts taken are read again whole, as the limit may have cut among them (and the rows
   * observed before 1970, all at ts 0, are ordered by their own time).
   */
  private async ordered(inst: string, cond: string, col: string, reverse: boolean, take: number): Promise<OrderedRow[]> {
    const dir = reverse ? ' DESC' : '';
    if (col !== 'ts') {
      const select = `SELECT body, cast(${col} AS long) ot, iid FROM ${inst} WHERE ${cond}`;
      return (await this.sql(`${select} ORDER BY ${col}${dir}, iid${dir} LIMIT ${take}`)).map(orderedRow);
    }
    const select = `SELECT body, cast(${ORDER_TIME} AS long) ot, iid, cast(ts AS long) dt FROM ${inst} WHERE ${cond}`;
    const got = await this.sql(`${select} ORDER BY ts${dir} LIMIT ${take}`);
    let rows = got.map(orderedRow);
    if (got.length === take) {
      const edge = Number(got[take - 1]!.dt);
      const tied = (await this.sql(`${select} AND ts = ${edge}::timestamp`)).map(orderedRow);
      rows = [...got.filter((r) => Number(r.dt) !== edge).map(orderedRow), ...tied];
    }
    return rows.sort(rowOrder(reverse)).slice(0, take);
  }

  // ---- aggregation by QuestDB (§4.5.19) ----------------------------------------------------------------------

  /**
   * aggregatedValues computed by QuestDB: per attribute and datasetId, one GROUP BY on the period each sample falls
   * in, counted from the group's origin (`from`, else its first sample) as ngsild/temporal/aggregate.ts does. Not
   * SAMPLE BY: its periods start at one origin per query (the first row of every group together, or a calendar),
   * and SAMPLE BY … FROM on a subquery, which a time property other than createdAt needs, fails in QuestDB 9.3.
   * Calendar periods (months, years) are left to the worker (undefined).
   */
  async aggregate(tenant: string, id: string, sel: AggregateSelection): Promise<Record<string, AggregatedGroup[]> | undefined> {
    const p = sel.period;
    if (p !== undefined && (p.years !== 0 || p.months !== 0)) return undefined;
    const periodMs = p === undefined ? undefined : addDuration(0, p);
    if (periodMs !== undefined && (!Number.isSafeInteger(periodMs * 1000) || periodMs < 1)) return undefined;
    await this.synced();
    const { inst } = tablesOf(this.s.name, tenant);
    const where = this.visible(id, await this.hidden(tenant, id));
    const attrIris = await this.attributesOf(inst, where, sel.attrs);
    const found = await Promise.all(attrIris.map((a) => this.aggregateAttr(inst, where, a, sel, periodMs)));
    const out: Record<string, AggregatedGroup[]> = {};
    for (let i = 0; i < attrIris.length; i++) if (found[i]!.length > 0) out[attrIris[i]!] = found[i]!;
    return out;
  }

  private async aggregateAttr(
    inst: string,
    where: string,
    attrIri: string,
    sel: AggregateSelection,
    periodMs: number | undefined,
  ): Promise<AggregatedGroup[]> {
    let cond = `${where} AND attr = ${lit(attrIri)}`;
    if (sel.datasetIds !== undefined) cond += ` AND ds IN (${[...sel.datasetIds].map(lit).join(',')})`;
    let t: string;
    const w = sel.window;
    if (w !== undefined) {
      t = TIME_COLUMN[w.timeproperty];
      cond += windowCond(w.timeproperty, w.from, w.to);
    } else {
      // A sample's time is its time property, its createdAt when it has none (temporal-render.ts instanceTime).
      const col = TIME_COLUMN[sel.timeproperty];
      t = col === 'created_at' ? col : `coalesce(${col}, created_at)`;
    }
    // The groups in time order, with their type (the last live instance's, else the last one's: typeOf in
    // temporal-render.ts) and the span of their live samples (tombstones take no part in aggregation): per datasetId
    // and type, its first and last time; the group's type is the one of its latest time.
    const onTs = w !== undefined ? w.timeproperty === 'observedAt' : sel.timeproperty === 'observedAt';
    let all: Map<string, GroupSpan>;
    let live: Map<string, GroupSpan>;
    if (onTs) {
      // The sample time is the order time (rows.ts): the ends of each group are read from the designated timestamp.
      [all, live] = await this.spansOnTs(inst, cond, t);
    } else {
      // One pass for both (a pass over 10,000,000 rows is most of the request).
      const rows = await this.sql(
        `SELECT ds, vtype, gone, min(t) ft, max(t) lt FROM (SELECT ds, vtype, deleted_at != null gone, cast(${t} AS long) t ` +
          `FROM ${inst} WHERE ${cond}) GROUP BY ds, vtype, gone`,
      );
      all = groupSpans(rows);
      live = groupSpans(rows.filter((r) => r.gone === false));
    }
    const groups: AggregatedGroup[] = [];
    const queries: Array<Promise<void>> = [];
    for (const [ds, g] of [...all].sort((a, b) => a[1].ft - b[1].ft)) {
      const group: AggregatedGroup = { type: g.vt as AttrType, results: {} };
      for (const m of sel.methods) group.results[m] = [];
      if (ds !== '@none') group.datasetId = ds;
      groups.push(group);
      const l = live.get(ds);
      if (l === undefined) continue;
      group.type = l.vt as AttrType;
      const of = { inst, cond: `${cond} AND deleted_at = null AND ds = ${lit(ds)}`, t, onTs };
      queries.push(this.aggregateGroup(of, l, sel, periodMs, group));
    }
    await Promise.all(queries);
    return groups;
  }

  /**
   * Per datasetId of `cond`'s rows, the type and time of the latest and the time of the first, of all its rows and of
   * its live ones (not deleted), where the sample time `t` is the order time (the designated timestamp from 1970 on):
   * LATEST ON and a LIMIT 1 each way read a few rows where min and max read them all (2.2 to 3.3 s of an hourly avg
   * over 10,000,000 instances). The four ends of a datasetId are one request (UNION ALL): QuestDB spends about 10 ms
   * of CPU on any request however small, and an aggregation made twelve of them. From 1970 on, an end's ts is its
   * sample time; the rows at ts 0 (observed before 1970, or at its first instant) are ordered by their own time.
   */
  private async spansOnTs(inst: string, cond: string, t: string): Promise<[Map<string, GroupSpan>, Map<string, GroupSpan>]> {
    const dss = (await this.sql(`SELECT ds FROM ${inst} WHERE ${cond} LATEST ON ts PARTITION BY ds`)).map((r) => r.ds as string);
    const all = new Map<string, GroupSpan>();
    const live = new Map<string, GroupSpan>();
    await Promise.all(
      dss.map(async (ds) => {
        const conds = [`${cond} AND ds = ${lit(ds)}`, `${cond} AND ds = ${lit(ds)} AND deleted_at = null`];
        // End k: conds[k >> 1], the first (k even) or the last (k odd) by ts.
        const ends = [0, 1, 2, 3].map(
          (k) =>
            `SELECT ${k} k, vtype, cast(ts AS long) dt FROM ${inst} WHERE ${conds[k >> 1]} ORDER BY ts${k % 2 === 1 ? ' DESC' : ''} LIMIT 1`,
        );
        const union = `SELECT * FROM (${ends.map((e) => `(${e})`).join(' UNION ALL ')})`;
        const rows = union.length <= MAX_SQL ? await this.sql(union) : (await Promise.all(ends.map((e) => this.sql(e)))).flat();
        const found: Array<{ vt: string; t: number } | undefined> = [undefined, undefined, undefined, undefined];
        await Promise.all(
          rows.map(async (r) => {
            const k = Number(r.k);
            const dt = Number(r.dt);
            if (dt > 0) {
              found[k] = { vt: r.vtype as string, t: dt };
              return;
            }
            // Among the rows at ts 0, the one with the least (most) sample time.
            const dir = k % 2 === 1 ? ' DESC' : '';
            const [e] = await this.sql(
              `SELECT vtype, cast(${t} AS long) t FROM ${inst} WHERE ${conds[k >> 1]} AND ts = 0::timestamp ORDER BY t${dir} LIMIT 1`,
            );
            if (e !== undefined) found[k] = { vt: e.vtype as string, t: Number(e.t) };
          }),
        );
        // Gone between the queries (an instance deleted meanwhile): the group is left out as if read after it.
        const [first, last, firstLive, lastLive] = found;
        if (first !== undefined && last !== undefined) all.set(ds, { vt: last.vt, ft: first.t, lt: last.t });
        if (firstLive !== undefined && lastLive !== undefined) live.set(ds, { vt: lastLive.vt, ft: firstLive.t, lt: lastLive.t });
      }),
    );
    return [all, live];
  }

  /**
   * One datasetId group's periods: rows of QuestDB's aggregates turned into the methods' triples. When the sample
   * time is the order time (`onTs`) and the periods start after 1970, the designated timestamp is the sample time
   * (rows.ts): SAMPLE BY … FROM the group's origin reads the rows in ts order within the partitions from the origin
   * on, where a GROUP BY on a period number computed per row from a subquery's time (the other time properties)
   * hashed every row: an hourly avg over 10,000,000 instances 1.2 to 1.4 s of QuestDB CPU against 0.3 s.
   */
  private async aggregateGroup(
    of: { inst: string; cond: string; t: string; onTs: boolean },
    span: GroupSpan,
    sel: AggregateSelection,
    periodMs: number | undefined,
    group: AggregatedGroup,
  ): Promise<void> {
    // Microseconds, as QuestDB keeps time.
    const first = sel.from !== undefined ? sel.from * 1000 : span.ft;
    const aggs = aggregatesOf(sel.methods);
    let rows: Array<Record<string, unknown>>;
    const every = periodMs === undefined ? undefined : sampleUnit(periodMs);
    if (of.onTs && first > 0 && every !== null) {
      // From 1970 on, ts is the sample time; the rows kept at ts 0 (observed before) are before any origin here.
      const from = `${of.inst} WHERE ${of.cond} AND ts >= ${first}::timestamp`;
      rows =
        periodMs === undefined
          ? (await this.sql(`SELECT ${aggs} FROM ${from}`)).map((r) => ({ ...r, b: first }))
          : (await this.sql(`SELECT ts, ${aggs} FROM ${from} SAMPLE BY ${every} FROM ${first}::timestamp`)).map((r) => ({
              ...r,
              b: Date.parse(r.ts as string) * 1000,
            }));
    } else {
      // No ORDER BY in the subquery: every aggregate is of a set, and sorting 10,000,000 rows cost more than aggregating them.
      const sub = `(SELECT ds, vtype, num, str, val, cast(${of.t} AS long) t FROM ${of.inst} WHERE ${of.cond})`;
      rows =
        periodMs === undefined
          ? (await this.sql(`SELECT ${aggs} FROM ${sub} WHERE t >= ${first}L`)).map((r) => ({ ...r, b: first }))
          : await this.sql(
              `SELECT (t - ${first}L) / ${periodMs * 1000}L * ${periodMs * 1000}L + ${first}L b, ${aggs} FROM ${sub} ` +
                `WHERE t >= ${first}L GROUP BY b ORDER BY b`,
            );
    }
    const lastMs = Math.floor(span.lt / 1000);
    for (const r of rows) {
      if (Number(r.n) === 0) continue;
      const startMs = Math.floor(Number(r.b) / 1000);
      let stopMs = periodMs === undefined ? (sel.to ?? lastMs + 1) : startMs + periodMs;
      if (sel.to !== undefined && stopMs > sel.to) stopMs = sel.to;
      const start = periodBound(startMs);
      const stop = periodBound(stopMs);
      for (const m of sel.methods) {
        const v = methodResult(m, r);
        if (v !== undefined) group.results[m]!.push([v, start, stop]);
      }
    }
  }

  // ---- writes ---------------------------------------------------------------------------------------------

  record(tenant: string, events: readonly WriteEvent[]): Promise<void> | undefined {
    // The facts of each row (facts.ts), as bytes: the writer thread makes their ILP lines.
    const f = this.facts;
    f.reset(this.tables(tenant));
    for (const ev of events) f.add(ev);
    return f.inst + f.ent > 0 ? this.link.send(tenant, f) : undefined;
  }

  async addInstances(
    tenant: string,
    entity: { id: string; type: string[]; scope?: string[] },
    attrs: Record<string, AttrInstance[]>,
    at: string,
    _opts?: MutateOptions,
  ): Promise<boolean> {
    const rec = await this.getTemporalEntity(tenant, entity.id);
    const ent: EntRow[] = [];
    if (rec === undefined) {
      const created: TemporalEntityRecord = { id: entity.id, type: entity.type, createdAt: at, modifiedAt: at };
      if (entity.scope !== undefined) created.scope = entity.scope;
      ent.push(entRow(entity.id, 'created', at, created));
    } else {
      const type = rec.type.slice();
      for (const t of entity.type) if (!type.includes(t)) type.push(t);
      const { deletedAt: _gone, ...kept } = rec;
      ent.push(
        entRow(entity.id, 'record', at, { ...kept, type, modifiedAt: at, ...(entity.scope !== undefined ? { scope: entity.scope } : {}) }),
      );
    }
    const inst: InstRow[] = [];
    const ms = Date.parse(at);
    for (const attrIri in attrs)
      for (const i of attrs[attrIri]!) inst.push(instRow(entity.id, attrIri, historyInstanceOf(i, at, newInstanceId(ms))));
    await this.write(tenant, inst, ent);
    await this.synced();
    return rec === undefined;
  }

  async deleteTemporalEntity(tenant: string, id: string): Promise<boolean> {
    const rec = await this.getTemporalEntity(tenant, id);
    if (rec === undefined) return false;
    await this.write(tenant, [], [entRow(id, 'purged', new Date().toISOString(), rec)]);
    await this.synced();
    return true;
  }

  async deleteAttribute(tenant: string, id: string, attrIri: string, opts: { datasetId?: string; deleteAll: boolean }): Promise<boolean> {
    await this.synced();
    const { inst } = tablesOf(this.s.name, tenant);
    const ds = opts.deleteAll ? '*' : (opts.datasetId ?? '@none');
    const where = this.visible(id, await this.hidden(tenant, id));
    const dsCond = ds === '*' ? '' : ` AND ds = ${lit(ds)}`;
    const any = await this.sql(`SELECT iid FROM ${inst} WHERE ${where} AND attr = ${lit(attrIri)}${dsCond} LIMIT 1`);
    if (any.length === 0) return false;
    const row = entRow(id, 'dropped', new Date().toISOString());
    row.attr = attrIri;
    row.ds = ds;
    await this.write(tenant, [], [row]);
    await this.synced();
    return true;
  }

  /** One visible instance by id. */
  private async findInstance(tenant: string, id: string, attrIri: string, instanceId: string): Promise<HistoryInstance | undefined> {
    const { inst } = tablesOf(this.s.name, tenant);
    const where = this.visible(id, await this.hidden(tenant, id));
    const rows = await this.sql(`SELECT body FROM ${inst} WHERE ${where} AND attr = ${lit(attrIri)} AND iid = ${lit(instanceId)} LIMIT 1`);
    return rows.length === 0 ? undefined : (JSON.parse(rows[0]!.body as string) as HistoryInstance);
  }

  async updateInstance(
    tenant: string,
    id: string,
    attrIri: string,
    instanceId: string,
    instance: AttrInstance,
    at: string,
  ): Promise<InstanceUpdateOutcome> {
    await this.synced();
    const old = await this.findInstance(tenant, id, attrIri, instanceId);
    if (old === undefined) return 'notFound';
    if (instance.type !== old.type) return 'typeMismatch';
    const next: HistoryInstance = { ...old, ...instance, instanceId, createdAt: old.createdAt, modifiedAt: at };
    if (old.datasetId !== undefined && instance.datasetId === undefined) next.datasetId = old.datasetId;
    const row = instRow(id, attrIri, next);
    const was = instRow(id, attrIri, old, true);
    // A new observedAt moves the row (its order time is the designated timestamp): the old one is retracted.
    await this.write(tenant, was.ts === row.ts ? [row] : [was, row], []);
    await this.synced();
    return 'updated';
  }

  async deleteInstance(tenant: string, id: string, attrIri: string, instanceId: string): Promise<boolean> {
    await this.synced();
    const old = await this.findInstance(tenant, id, attrIri, instanceId);
    if (old === undefined) return false;
    await this.write(tenant, [instRow(id, attrIri, old, true)], []);
    await this.synced();
    return true;
  }

  /** The importer's batch (import-batch.ts): one QuestDB commit per table, undone when a later one fails. */
  async importBatch(records: readonly ImportedHistoryRecord[]): Promise<{ refused?: string }> {
    try {
      // After the writer carried the old table layout over (migrate-v1.ts): the copy would put an imported version
      // of an instance it also holds back to the old one.
      await this.link.sync();
      return await importBatch(this.s, records);
    } catch (e) {
      return { refused: `QuestDB: ${(e as Error).message}` };
    }
  }

  async close(): Promise<void> {
    await this.link.close();
  }
}

/** The largest count of units QuestDB 9.3 takes in SAMPLE BY (an int: 'invalid sample value' past it). */
const MAX_SAMPLE_COUNT = 2 ** 31 - 1;

/**
 * A period of `ms` in SAMPLE BY's units, the largest that divides it (a day is 86,400 s: no calendar, as periodMs is
 * computed), or null when its count is past MAX_SAMPLE_COUNT even so (then GROUP BY).
 */
export function sampleUnit(ms: number): string | null {
  for (const [unit, size] of [
    ['d', 86_400_000],
    ['h', 3_600_000],
    ['m', 60_000],
    ['s', 1000],
    ['T', 1],
  ] as const)
    if (ms % size === 0) return ms / size <= MAX_SAMPLE_COUNT ? `${ms / size}${unit}` : null;
  return null;
}

/** A datasetId group's span: its type (that of its latest sample) and its first and last time (µs). */
interface GroupSpan {
  vt: string;
  ft: number;
  lt: number;
}

/** Rows of (ds, vtype, ft, lt) folded per datasetId: the first time of all, the type and last time of the latest. */
function groupSpans(rows: ReadonlyArray<Record<string, unknown>>): Map<string, GroupSpan> {
  const out = new Map<string, GroupSpan>();
  for (const r of rows) {
    const ds = r.ds as string;
    const ft = Number(r.ft);
    const lt = Number(r.lt);
    const g = out.get(ds);
    if (g === undefined) out.set(ds, { vt: r.vtype as string, ft, lt });
    else {
      if (ft < g.ft) g.ft = ft;
      if (lt > g.lt) Object.assign(g, { vt: r.vtype as string, lt });
    }
  }
  return out;
}

/**
 * The QuestDB aggregates the methods asked need (methodResult reads them), and the two counts every period needs:
 * a distinct count or the bounds of strings cost ten times an average over 10,000,000 rows, so only what is asked.
 */
function aggregatesOf(methods: readonly AggrMethod[]): string {
  const cols = new Set(['count() n', 'count(num) nn']);
  for (const m of methods) for (const c of AGGREGATES[m]) cols.add(c);
  return [...cols].join(', ');
}

const AGGREGATES: Record<AggrMethod, readonly string[]> = {
  totalCount: [],
  distinctCount: ['count_distinct(val) dc'],
  min: ['min(num) mi', 'min(str) smin'],
  max: ['max(num) ma', 'max(str) smax'],
  stddev: ['stddev_samp(num) sd'],
  sum: ['sum(num) s'],
  avg: ['avg(num) a'],
  sumsq: ['sum(num * num) sq'],
};

/** A method's result from one row of aggregates, as aggregate.ts computes it from the same values. */
function methodResult(m: AggrMethod, r: Record<string, unknown>): unknown {
  const numbers = Number(r.nn);
  switch (m) {
    case 'totalCount':
      return Number(r.n);
    case 'distinctCount':
      return Number(r.dc);
    case 'min':
      return numbers > 0 ? r.mi : (r.smin ?? undefined);
    case 'max':
      return numbers > 0 ? r.ma : (r.smax ?? undefined);
    case 'stddev':
      // Sample standard deviation, 0 for a single value (QuestDB's is null there).
      return numbers === 0 ? undefined : numbers < 2 ? 0 : r.sd;
    case 'sum':
      return numbers > 0 ? r.s : undefined;
    case 'avg':
      return numbers > 0 ? r.a : undefined;
    case 'sumsq':
      return numbers > 0 ? r.sq : undefined;
  }
}
