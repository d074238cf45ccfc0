// The embdb history (`--troe embdb`): entity events and attribute instances of every write, recorded inside the
// store's write transaction (seed 001, importer behaviour 4), and the temporal API's reads and writes on them.
import { randomBytes } from 'node:crypto';
import type { Database, RootDatabase } from 'lmdb';
import { historyInstanceOf, historyOfWrite } from '../../../store/kit/history-of-write.js';
import type { WriteChange } from '../../../ngsild/entity/write-change.js';
import { type MutateOptions } from '../../../store/contract.js';
import type {
  EntityEvent,
  History,
  ImportedHistoryRecord,
  HistoryInstance,
  InstancePage,
  InstanceSelection,
  InstanceUpdateOutcome,
  TemporalEntityQuery,
  TemporalEntityRecord,
} from '../../../history/contract.js';
import type { AttrInstance, StoredEntity } from '../../../ngsild/entity/model.js';
import type { PluginLogger } from '../../../plugin/contract.js';
import { planTemporalQuery } from '../../../store/kit/entity-query.js';
import { KEY_CODEC } from './keys.js';

type Key = Array<string | number>;

const MIN_T = -Number.MAX_SAFE_INTEGER;
const MAX_T = Number.MAX_SAFE_INTEGER;
/** Sorts after every string an IRI, id or tenant holds: the end of a key prefix's range. */
const LAST = '\u{10FFFF}';
/** histMeta's marker: the index of instances without observedAt is whole (backfillUnobserved). */
const UNOBSERVED_BUILT = 'unobservedIndex';

const keyEquals = (a: Key, b: Key): boolean => a.length === b.length && a.every((v, i) => v === b[i]);

/** Temporal entities (or instances) indexed per transaction by the backfills. */
const BACKFILL_CHUNK = 10_000;

// instanceIds sort by creation within one thread: the createdAt ms (which also locates the instance in the index
// without a lookup table), a per-thread counter, and a random per-thread tag that keeps threads apart.
const ID_PREFIX = 'urn:ngsi-ld:attribute:instance:';
let counter = 0;
const threadTag = randomBytes(8).toString('hex');
export function newInstanceId(ms: number): string {
  counter = (counter + 1) & 0xffffff;
  return `${ID_PREFIX}${ms.toString(16).padStart(12, '0')}-${counter.toString(16).padStart(6, '0')}-${threadTag}`;
}

/** An instanceId of ours for `ms` that sorts after `lastId` (an id of the same ms): its counter goes past the other's. */
function instanceIdAfter(ms: number, lastId: string): string {
  const prefix = `${ID_PREFIX}${ms.toString(16).padStart(12, '0')}-`;
  if (lastId.startsWith(prefix)) {
    const theirs = parseInt(lastId.slice(prefix.length, prefix.length + 6), 16);
    if (Number.isFinite(theirs) && theirs >= counter) counter = Math.min(theirs, 0xfffffe);
  }
  return newInstanceId(ms);
}

export class EmbdbHistory implements History {
  readonly name = 'embdb';
  /** [tenant, id, attrIri, createdAt ms, instanceId] → instance: the index by entity, attribute and time. */
  private readonly inst: Database<HistoryInstance, Key>;
  /** [tenant, id, attrIri, observedAt ms, instanceId] → createdAt ms. */
  private readonly observed: Database<number, Key>;
  /**
   * [tenant, id, attrIri, createdAt ms, instanceId] → null: the instances without observedAt, which the default order
   * places at their createdAt (scanByObservedAt), so that order never reads the instances that have one to find them.
   */
  private readonly unobserved: Database<null, Key>;
  /** Markers of derived data: UNOBSERVED_BUILT once the unobserved index holds every instance it should. */
  private readonly histMeta: Database<number, string>;
  /** [tenant, id, attrIri] → null: the attributes an entity's history holds. */
  private readonly attrs: Database<null, Key>;
  /** [tenant, id] → the temporal entity. */
  private readonly ents: Database<TemporalEntityRecord, Key>;
  /**
   * [tenant, typeIri, id] → null: the history's type index, mirroring each temporal entity's types (deleted
   * entities included), so a query by type reads only that type's keys however many entities other types have.
   */
  private readonly typeIds: Database<null, Key>;
  /** [tenant, id, at ms, instance-like id] → event. */
  private readonly events: Database<EntityEvent, Key>;
  /**
   * [tenant, id, attrIri, instanceId] → createdAt ms: an instance by its id whatever its time, so that the importer's
   * check for an instanceId already present is one lookup per instance, not a scan of the attribute's history.
   */
  private readonly iids: Database<number, Key>;

  /**
   * `registerTenant`: the store's, the one place a tenant is registered (inside the write transaction that runs it);
   * a temporal create registers its tenant there as an entity create does.
   */
  constructor(
    env: RootDatabase,
    private readonly write: <R>(fn: () => R) => Promise<R>,
    private readonly registerTenant: (tenant: string) => void,
  ) {
    this.inst = env.openDB<HistoryInstance, Key>({ ...KEY_CODEC, name: 'histInstances' });
    this.observed = env.openDB<number, Key>({ ...KEY_CODEC, name: 'histObserved' });
    this.unobserved = env.openDB<null, Key>({ ...KEY_CODEC, name: 'histUnobserved' });
    this.histMeta = env.openDB<number, string>({ ...KEY_CODEC, name: 'histMeta' });
    this.attrs = env.openDB<null, Key>({ ...KEY_CODEC, name: 'histAttrs' });
    this.ents = env.openDB<TemporalEntityRecord, Key>({ ...KEY_CODEC, name: 'histEntities' });
    this.typeIds = env.openDB<null, Key>({ ...KEY_CODEC, name: 'histTypeIds' });
    this.events = env.openDB<EntityEvent, Key>({ ...KEY_CODEC, name: 'histEvents' });
    this.iids = env.openDB<number, Key>({ ...KEY_CODEC, name: 'histInstanceIds' });
  }

  /**
   * Derives the instanceId index of a history written before it existed (an empty index beside instances can only be
   * that), as backfillTypeIndex does: by the primary at open, in bounded transactions. Returns the instances indexed.
   */
  async backfillInstanceIdIndex(log: PluginLogger): Promise<number> {
    if (this.iids.getKeysCount({ limit: 1 }) > 0 || this.inst.getKeysCount({ limit: 1 }) === 0) return 0;
    const started = Date.now();
    log.info('embdb history: building the instanceId index of an older history');
    let done = 0;
    let after: Key | undefined;
    for (;;) {
      const chunk: Key[] = [];
      for (const key of this.inst.getKeys(
        after === undefined ? { limit: BACKFILL_CHUNK + 1 } : { start: after, limit: BACKFILL_CHUNK + 1 },
      )) {
        if (after !== undefined && key.every((k, i) => k === after![i])) continue;
        chunk.push(key);
        after = key;
        if (chunk.length === BACKFILL_CHUNK) break;
      }
      if (chunk.length === 0) break;
      await this.write(() => {
        for (const k of chunk) this.iids.putSync([k[0]!, k[1]!, k[2]!, k[4]!], k[3] as number);
      });
      done += chunk.length;
    }
    log.info({ instances: done, ms: Date.now() - started }, 'embdb history: instanceId index built');
    return done;
  }

  /**
   * Derives the type index of a history written before it existed: an empty index beside temporal entities can
   * only be that (every temporal entity has a type), so the primary fills it at open, in bounded transactions.
   * Returns the temporal entities indexed.
   */
  async backfillTypeIndex(log: PluginLogger): Promise<number> {
    if (this.typeIds.getKeysCount({ limit: 1 }) > 0 || this.ents.getKeysCount({ limit: 1 }) === 0) return 0;
    const started = Date.now();
    log.info('embdb history: building the type index of an older history');
    let done = 0;
    let after: Key | undefined;
    for (;;) {
      const chunk: Array<{ tenant: string; rec: TemporalEntityRecord }> = [];
      for (const { key, value } of this.ents.getRange(
        after === undefined ? { limit: BACKFILL_CHUNK + 1 } : { start: after, limit: BACKFILL_CHUNK + 1 },
      )) {
        if (after !== undefined && key[0] === after[0] && key[1] === after[1]) continue;
        chunk.push({ tenant: key[0] as string, rec: value });
        after = key;
        if (chunk.length === BACKFILL_CHUNK) break;
      }
      if (chunk.length === 0) break;
      await this.write(() => {
        for (const { tenant, rec } of chunk) for (const t of rec.type) this.typeIds.putSync([tenant, t, rec.id], null);
      });
      done += chunk.length;
    }
    log.info({ entities: done, ms: Date.now() - started }, 'embdb history: type index built');
    return done;
  }

  /**
   * Derives the index of instances without observedAt of a history written before it existed (the marker says it is
   * whole), in bounded transactions, the marker last: a backfill cut short runs again at the next open. Returns the
   * instances indexed.
   */
  async backfillUnobserved(log: PluginLogger): Promise<number> {
    if (this.histMeta.get(UNOBSERVED_BUILT) === 1) return 0;
    const started = Date.now();
    let done = 0;
    let after: Key | undefined;
    for (;;) {
      const chunk: Key[] = [];
      let last: Key | undefined;
      let seen = 0;
      for (const { key, value } of this.inst.getRange(
        after === undefined ? { limit: BACKFILL_CHUNK } : { start: after, limit: BACKFILL_CHUNK + 1 },
      )) {
        if (after !== undefined && seen === 0 && keyEquals(key, after)) continue;
        seen++;
        last = key;
        if (typeof value.observedAt !== 'string') chunk.push(key);
      }
      if (last === undefined) break;
      if (done === 0 && after === undefined) log.info('embdb history: indexing the instances without observedAt of an older history');
      await this.write(() => {
        for (const key of chunk) this.unobserved.putSync(key, null);
      });
      done += chunk.length;
      after = last;
    }
    await this.write(() => this.histMeta.putSync(UNOBSERVED_BUILT, 1));
    if (done > 0) log.info({ instances: done, ms: Date.now() - started }, 'embdb history: index of instances without observedAt built');
    return done;
  }

  // ---- capture: called by the store inside its write transaction -------------------------------------------

  /**
   * Records the write that turns `current` into `next` (null: deleted), which made `change`. Synchronous: runs inside
   * the store's transaction.
   */
  recordWrite(tenant: string, id: string, current: StoredEntity | undefined, next: StoredEntity | null, change: WriteChange): void {
    const w = historyOfWrite(current, next, change, newInstanceId);
    if (w.event !== undefined) this.putEvent(tenant, id, w.event.kind, w.event.at);
    if (w.entity !== undefined) {
      const rec = this.ents.get([tenant, id]);
      this.putRecord(tenant, rec, w.fresh || rec === undefined ? w.entity : { ...w.entity, createdAt: rec.createdAt });
    }
    for (const { attrIri, instance } of w.instances) this.putInstance(tenant, id, attrIri, instance);
  }

  /** Writes the temporal entity and moves its type index entries from the old record's types to the new one's. */
  private putRecord(tenant: string, old: TemporalEntityRecord | undefined, rec: TemporalEntityRecord): void {
    if (old !== undefined) for (const t of old.type) if (!rec.type.includes(t)) this.typeIds.removeSync([tenant, t, rec.id]);
    for (const t of rec.type) if (old === undefined || !old.type.includes(t)) this.typeIds.putSync([tenant, t, rec.id], null);
    this.ents.putSync([tenant, rec.id], rec);
  }

  private putEvent(tenant: string, id: string, kind: EntityEvent['kind'], at: string): void {
    const ms = Date.parse(at);
    this.events.putSync([tenant, id, ms, newInstanceId(ms)], { kind, at });
  }

  /**
   * Stores an instance in the indexes. A new one (`sequenced`) is placed after the attribute's latest instance: a
   * write's time is taken before its transaction, so two writes of one attribute from two threads may commit in the
   * other order than their times; the later commit is the current value and must be the history's latest too, so its
   * instance takes the latest one's time when that is later (a few ms at most) and an instanceId sorting after it.
   */
  private putInstance(tenant: string, id: string, attrIri: string, h: HistoryInstance, sequenced = true): void {
    // An instance replaced in place (sequenced false) belongs to an attribute the list already holds.
    let listed = !sequenced;
    if (sequenced) {
      const ms = Date.parse(h.createdAt);
      for (const k of this.inst.getKeys({
        start: [tenant, id, attrIri, MAX_T],
        end: [tenant, id, attrIri, MIN_T],
        reverse: true,
        limit: 1,
      })) {
        listed = true;
        const lastMs = k[3] as number;
        if (lastMs < ms) break;
        if (lastMs > ms) {
          const iso = new Date(lastMs).toISOString();
          h.createdAt = iso;
          h.modifiedAt = iso;
          if (h.deletedAt !== undefined) h.deletedAt = iso;
        }
        h.instanceId = instanceIdAfter(lastMs, k[4] as string);
      }
    }
    const ms = Date.parse(h.createdAt);
    this.inst.putSync([tenant, id, attrIri, ms, h.instanceId], h);
    this.iids.putSync([tenant, id, attrIri, h.instanceId], ms);
    if (typeof h.observedAt === 'string') this.observed.putSync([tenant, id, attrIri, Date.parse(h.observedAt), h.instanceId], ms);
    else this.unobserved.putSync([tenant, id, attrIri, ms, h.instanceId], null);
    if (!listed) this.attrs.putSync([tenant, id, attrIri], null);
  }

  private removeInstance(tenant: string, id: string, attrIri: string, h: HistoryInstance): void {
    this.inst.removeSync([tenant, id, attrIri, Date.parse(h.createdAt), h.instanceId]);
    this.iids.removeSync([tenant, id, attrIri, h.instanceId]);
    if (typeof h.observedAt === 'string') this.observed.removeSync([tenant, id, attrIri, Date.parse(h.observedAt), h.instanceId]);
    else this.unobserved.removeSync([tenant, id, attrIri, Date.parse(h.createdAt), h.instanceId]);
  }

  /** Drops the attribute from the entity's list once its last instance is gone. */
  private dropAttrIfEmpty(tenant: string, id: string, attrIri: string): void {
    for (const _k of this.inst.getKeys({ start: [tenant, id, attrIri, MIN_T], end: [tenant, id, attrIri, MAX_T], limit: 1 })) return;
    this.attrs.removeSync([tenant, id, attrIri]);
  }

  /**
   * One instance by id: its creation time from the instanceId index (backfilled at open for a history written
   * before it), then one read; no scan of the attribute's instances, whatever the id looks like (imported ids carry
   * no time).
   */
  private findInstance(tenant: string, id: string, attrIri: string, instanceId: string): HistoryInstance | undefined {
    const ms = this.iids.get([tenant, id, attrIri, instanceId]);
    return ms === undefined ? undefined : this.inst.get([tenant, id, attrIri, ms, instanceId]);
  }

  // ---- reads ----------------------------------------------------------------------------------------------

  async getTemporalEntity(tenant: string, id: string): Promise<TemporalEntityRecord | undefined> {
    return this.ents.get([tenant, id]);
  }

  async queryTemporalEntities(tenant: string, query: TemporalEntityQuery): Promise<{ entities: TemporalEntityRecord[]; count?: number }> {
    const plan = planTemporalQuery(query);
    const filter = plan.filter;
    const page: TemporalEntityRecord[] = [];
    let matched = 0;
    const end = query.offset + query.limit;
    const consider = (rec: TemporalEntityRecord | undefined): boolean => {
      if (rec === undefined) return true;
      if (query.attrs !== undefined && !query.attrs.some((a) => this.attrs.get([tenant, rec.id, a]) !== undefined)) return true;
      if (filter !== undefined && !filter(rec)) return true;
      if (matched >= query.offset && matched < end) page.push(rec);
      matched++;
      return query.count || matched < end;
    };
    if (plan.ids !== undefined) {
      const types = plan.typeIris;
      for (const id of plan.ids) {
        const rec = this.ents.get([tenant, id]);
        if (rec !== undefined && types !== undefined && !rec.type.some((t) => types.includes(t))) continue;
        if (!consider(rec)) break;
      }
    } else if (plan.typeIris !== undefined) {
      for (const id of this.idsOfTypes(tenant, plan.typeIris, query.afterId)) if (!consider(this.ents.get([tenant, id]))) break;
    } else {
      for (const { key, value } of this.ents.getRange({ start: [tenant, query.afterId ?? ''], end: [tenant, LAST] })) {
        if (key[1] === query.afterId) continue;
        if (!consider(value)) break;
      }
    }
    return query.count ? { entities: page, count: matched } : { entities: page };
  }

  /** Ids holding any of the types, in id order, each once: a merge of the type index's per-type ranges. */
  private *idsOfTypes(tenant: string, typeIris: readonly string[], afterId: string | undefined): Generator<string> {
    const streams = typeIris.map((t) =>
      this.typeIds.getKeys({ start: [tenant, t, afterId ?? ''], end: [tenant, t, LAST] })[Symbol.iterator](),
    );
    const heads = streams.map((s) => s.next());
    for (;;) {
      let min: string | undefined;
      for (const h of heads) if (!h.done && (min === undefined || (h.value[2] as string) < min)) min = h.value[2] as string;
      if (min === undefined) return;
      for (let i = 0; i < heads.length; i++) {
        while (!heads[i]!.done && heads[i]!.value[2] === min) heads[i] = streams[i]!.next();
      }
      if (min !== afterId) yield min;
    }
  }

  async entityEvents(tenant: string, id: string): Promise<EntityEvent[]> {
    const out: EntityEvent[] = [];
    for (const { value } of this.events.getRange({ start: [tenant, id], end: [tenant, id, MAX_T] })) out.push(value);
    return out;
  }

  async instances(tenant: string, id: string, sel: InstanceSelection): Promise<InstancePage> {
    const page: InstancePage = { attrs: {}, truncated: [] };
    const attrIris = sel.attrs ?? [...this.attrs.getKeys({ start: [tenant, id], end: [tenant, id, LAST] })].map((k) => k[2] as string);
    for (const attrIri of attrIris) {
      const found = this.attrInstances(tenant, id, attrIri, sel);
      if (found.list.length > 0) page.attrs[attrIri] = found.list;
      if (found.truncated) page.truncated.push(attrIri);
    }
    return page;
  }

  /** One attribute's instances: an index range scan on the time property, newest first when lastN asks. */
  private attrInstances(
    tenant: string,
    id: string,
    attrIri: string,
    sel: InstanceSelection,
  ): { list: HistoryInstance[]; truncated: boolean } {
    const w = sel.window;
    const prop = w?.timeproperty ?? 'createdAt';
    const from = w?.from ?? MIN_T;
    const to = w?.to ?? MAX_T;
    const byObserved = w !== undefined && prop === 'observedAt';
    const reverse = sel.lastN !== undefined;
    const want = Math.min(sel.lastN ?? Number.MAX_SAFE_INTEGER, sel.limit);
    // modifiedAt >= createdAt, so the createdAt index bounds a modifiedAt window from above only.
    const lo = prop === 'modifiedAt' ? MIN_T : from;
    const start: Key = [tenant, id, attrIri, reverse ? to : lo];
    const end: Key = [tenant, id, attrIri, reverse ? lo : to];
    const list: HistoryInstance[] = [];
    let truncated = false;
    const take = (h: HistoryInstance | undefined): boolean => {
      if (h === undefined) return true;
      if (sel.datasetIds !== undefined && !sel.datasetIds.has(h.datasetId ?? '@none')) return true;
      if (prop === 'modifiedAt' && w !== undefined && !inWindow(h.modifiedAt, from, to)) return true;
      if (prop === 'deletedAt' && w !== undefined && (h.deletedAt === undefined || !inWindow(h.deletedAt, from, to))) return true;
      if (list.length >= want) {
        // More match than were taken: truncated when the cap, not lastN, stopped the scan.
        truncated = sel.lastN === undefined || sel.lastN > sel.limit;
        return false;
      }
      list.push(h);
      return true;
    };
    if (w === undefined && sel.order === 'observedAt') {
      this.scanByObservedAt(tenant, id, attrIri, reverse, take);
    } else if (byObserved) {
      for (const { key, value: createdMs } of this.observed.getRange({ start, end, reverse }))
        if (!take(this.inst.get([tenant, id, attrIri, createdMs, key[4] as string]))) break;
    } else {
      for (const { value } of this.inst.getRange({ start, end, reverse })) if (!take(value)) break;
    }
    if (reverse) list.reverse();
    return { list, truncated };
  }

  /**
   * Every instance of an attribute in observedAt order (newest first with `reverse`), one without observedAt at its
   * createdAt (as temporal-render's instanceTime places it), until `take` says stop: the observedAt index merged with
   * the index of those without one, so a lastN reads about lastN instances however many the attribute has (it read
   * every instance recorded after the newest observedAt before: 6 s for lastN=100 of 1,000,000 imported ones).
   */
  private scanByObservedAt(
    tenant: string,
    id: string,
    attrIri: string,
    reverse: boolean,
    take: (h: HistoryInstance | undefined) => boolean,
  ): void {
    const lo: Key = [tenant, id, attrIri, MIN_T];
    const hi: Key = [tenant, id, attrIri, MAX_T];
    const range = reverse ? { start: hi, end: lo, reverse: true } : { start: lo, end: hi };
    const observed = this.observed.getRange(range)[Symbol.iterator]();
    const unobserved = this.unobserved.getKeys(range)[Symbol.iterator]();
    const comesFirst = (a: number, b: number): boolean => (reverse ? a > b : a < b);
    let o = observed.next();
    let u = unobserved.next();
    for (;;) {
      if (o.done && u.done) return;
      // At one time, an instance with observedAt comes first (the order the merge of both always had).
      if (!u.done && (o.done || comesFirst(u.value[3] as number, o.value.key[3] as number))) {
        if (!take(this.inst.get(u.value))) return;
        u = unobserved.next();
      } else {
        if (!take(this.inst.get([tenant, id, attrIri, o.value!.value, o.value!.key[4] as string]))) return;
        o = observed.next();
      }
    }
  }

  // ---- temporal API writes --------------------------------------------------------------------------------

  async addInstances(
    tenant: string,
    entity: { id: string; type: string[]; scope?: string[] },
    attrs: Record<string, AttrInstance[]>,
    at: string,
    opts?: MutateOptions,
  ): Promise<boolean> {
    return this.write(() => {
      const key = [tenant, entity.id];
      const rec = this.ents.get(key);
      if (rec === undefined) {
        this.putEvent(tenant, entity.id, 'created', at);
        const created: TemporalEntityRecord = { id: entity.id, type: entity.type, createdAt: at, modifiedAt: at };
        if (entity.scope !== undefined) created.scope = entity.scope;
        this.putRecord(tenant, undefined, created);
      } else {
        const type = rec.type.slice();
        for (const t of entity.type) if (!type.includes(t)) type.push(t);
        const { deletedAt: _gone, ...kept } = rec;
        this.putRecord(tenant, rec, { ...kept, type, modifiedAt: at, ...(entity.scope !== undefined ? { scope: entity.scope } : {}) });
      }
      for (const attrIri in attrs) {
        // Only the first instance of an attribute is placed after the stored ones; the others of this call follow it
        // (the same time, or the one it was moved to, and later instanceIds of this thread).
        let placedAt: string | undefined;
        for (const inst of attrs[attrIri]!) {
          const h = historyInstanceOf(inst, placedAt ?? at, newInstanceId(Date.parse(placedAt ?? at)));
          this.putInstance(tenant, entity.id, attrIri, h, placedAt === undefined);
          placedAt = h.createdAt;
        }
      }
      if (opts?.createTenant) this.registerTenant(tenant);
      return rec === undefined;
    });
  }

  // ---- the importer's history (seed 001, importer behaviour 4) ---------------------------------------------

  async importBatch(records: readonly ImportedHistoryRecord[]): Promise<{ refused?: string }> {
    return this.write(() => {
      const refused = this.importConflict(records);
      if (refused !== undefined) return { refused };
      for (const r of records) {
        const key = [r.tenant, r.id];
        const rec = this.ents.get(key);
        if (r.kind === 'entity') {
          const { kind, at } = r.event;
          this.putEvent(r.tenant, r.id, kind, at);
          if (kind === 'created' || rec === undefined)
            this.putRecord(r.tenant, rec, { id: r.id, type: r.type, createdAt: at, modifiedAt: at });
          else if (kind === 'replaced') {
            const { deletedAt: _gone, ...kept } = rec;
            this.putRecord(r.tenant, rec, { ...kept, type: r.type, modifiedAt: at });
          } else this.putRecord(r.tenant, rec, { ...rec, modifiedAt: at, deletedAt: at });
          continue;
        }
        if (rec === undefined) {
          const at = r.instance.createdAt;
          this.putRecord(r.tenant, undefined, { id: r.id, type: r.type, createdAt: at, modifiedAt: at });
        }
        // At its own time and id: not sequenced after the stored instances as a live write is.
        this.putInstance(r.tenant, r.id, r.attrIri, r.instance, false);
        this.attrs.putSync([r.tenant, r.id, r.attrIri], null);
      }
      this.registerTenantsOf(records);
      return {};
    });
  }

  /**
   * What refuses an imported batch: an instanceId present already for the attribute (at whatever createdAt: one
   * lookup in the instanceId index per instance, however long the attribute's history), or an event already there.
   */
  private importConflict(records: readonly ImportedHistoryRecord[]): string | undefined {
    const inBatch = new Set<string>();
    for (const r of records) {
      if (r.kind === 'entity') {
        const ms = Date.parse(r.event.at);
        for (const { value } of this.events.getRange({ start: [r.tenant, r.id, ms], end: [r.tenant, r.id, ms, LAST] }))
          if (value.kind === r.event.kind) return `entity ${r.id} has a ${r.event.kind} event at ${r.event.at} already`;
        continue;
      }
      const key = `${r.tenant}\n${r.id}\n${r.attrIri}\n${r.instance.instanceId}`;
      if (inBatch.has(key) || this.iids.get([r.tenant, r.id, r.attrIri, r.instance.instanceId]) !== undefined)
        return `instanceId ${r.instance.instanceId} of ${r.id} is present already`;
      inBatch.add(key);
    }
    return undefined;
  }

  private registerTenantsOf(records: readonly ImportedHistoryRecord[]): void {
    let last: string | undefined;
    for (const r of records) {
      if (r.tenant === last) continue;
      last = r.tenant;
      if (r.tenant !== '') this.registerTenant(r.tenant);
    }
  }

  async deleteTemporalEntity(tenant: string, id: string): Promise<boolean> {
    return this.write(() => {
      const rec = this.ents.get([tenant, id]);
      if (rec === undefined) return false;
      for (const t of rec.type) this.typeIds.removeSync([tenant, t, id]);
      const range = { start: [tenant, id], end: [tenant, id, LAST] };
      for (const { key, value } of this.inst.getRange(range)) this.removeInstance(tenant, id, key[2] as string, value);
      for (const k of this.attrs.getKeys(range)) this.attrs.removeSync(k);
      for (const k of this.events.getKeys({ start: [tenant, id], end: [tenant, id, MAX_T] })) this.events.removeSync(k);
      this.ents.removeSync([tenant, id]);
      return true;
    });
  }

  async deleteAttribute(tenant: string, id: string, attrIri: string, opts: { datasetId?: string; deleteAll: boolean }): Promise<boolean> {
    return this.write(() => {
      let removed = false;
      for (const { value } of this.inst.getRange({ start: [tenant, id, attrIri, MIN_T], end: [tenant, id, attrIri, MAX_T] })) {
        if (!opts.deleteAll && value.datasetId !== opts.datasetId) continue;
        this.removeInstance(tenant, id, attrIri, value);
        removed = true;
      }
      if (removed) this.dropAttrIfEmpty(tenant, id, attrIri);
      return removed;
    });
  }

  async updateInstance(
    tenant: string,
    id: string,
    attrIri: string,
    instanceId: string,
    instance: AttrInstance,
    at: string,
  ): Promise<InstanceUpdateOutcome> {
    return this.write(() => {
      const old = this.findInstance(tenant, id, attrIri, instanceId);
      if (old === undefined) return 'notFound';
      if (instance.type !== old.type) return 'typeMismatch';
      this.removeInstance(tenant, id, attrIri, old);
      const next: HistoryInstance = { ...old, ...instance, instanceId, createdAt: old.createdAt, modifiedAt: at };
      if (old.datasetId !== undefined && instance.datasetId === undefined) next.datasetId = old.datasetId;
      this.putInstance(tenant, id, attrIri, next, false);
      return 'updated';
    });
  }

  async deleteInstance(tenant: string, id: string, attrIri: string, instanceId: string): Promise<boolean> {
    return this.write(() => {
      const old = this.findInstance(tenant, id, attrIri, instanceId);
      if (old === undefined) return false;
      this.removeInstance(tenant, id, attrIri, old);
      this.dropAttrIfEmpty(tenant, id, attrIri);
      return true;
    });
  }
}

function inWindow(iso: string, from: number, to: number): boolean {
  const t = Date.parse(iso);
  return t >= from && t < to;
}
