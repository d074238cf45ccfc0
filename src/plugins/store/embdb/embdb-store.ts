// embdb: the Store contract on one LMDB environment (lmdb-js), opened by every thread of the broker.
// Reads are synchronous on the latest committed snapshot; writes run as one transaction per call.
import { resolve } from 'node:path';
import { open, type Database, type RootDatabase } from 'lmdb';
import type {
  AttrStat,
  BatchItem,
  BatchOutcome,
  BumpChange,
  DocCollection,
  EntityOrder,
  EntityPage,
  EntityQuery,
  MutateOptions,
  Mutation,
  MutationOutcome,
  SortKey,
  Store,
  StoreSizes,
  StoreStatus,
  TypeStat,
  WriteEvent,
} from '../../../store/contract.js';
import { type WriteChange } from '../../../ngsild/entity/write-change.js';
import { entitySignature, sameContribution, type EntitySignature } from '../../../store/kit/discovery-counts.js';
import { applyBump, withBumped, type Bumped } from '../../../store/kit/bump.js';
import { planEntityQuery, type QueryPlan } from '../../../store/kit/entity-query.js';
import { changeOfOutcome } from '../../../store/kit/outcome-change.js';
import type { StoredEntity } from '../../../ngsild/entity/model.js';
import { KEY_CODEC, docKey, entityKey, storablePart, tenantRange, type DocKey, type EntityKey } from './keys.js';
import { EmbdbHistory } from './history.js';
import { ATTR_NUMBERS_DB, GEO_CELLS_DB, NUMBER_PAIRS_DB, TYPE_MEMBERS_DB, type IndexedDbs } from './index-rebuild.js';
import { geoCandidates, moveGeoEntries, type GeoCandidates, type GeoEntry, type GeoKey } from './geo-index.js';
import {
  CHUNK as NUMBER_CHUNK,
  NumberPairs,
  moveNumberEntries,
  putPairEntries,
  visitNumberCandidates,
  NUMBER_READ_KEY_CODEC,
  type NumberReadDb,
  type NumberKey,
  type PairKey,
  type PairState,
} from './number-index.js';
import type { PluginLogger } from '../../../plugin/contract.js';
import { StatsBatch, forgetCarriedStats } from './stats-batch.js';
import { ADMITTED_PER_QUERY, EntityCache, cacheKey } from './entity-cache.js';
import { PendingEntries } from './pending-entries.js';
import { PAGE_CACHE_ENTITIES_PER_PAGE, PAGE_CACHE_PAGES, PageCache } from './page-cache.js';

/**
 * Most matches an orderBy query sorts (README "orderBy"): their sort keys and ids are held in memory for the sort,
 * so the bound is on memory and time per request; a query matching more is answered `sortCap`.
 */
export const ORDERED_QUERY_CAP = 20_000;

/**
 * Pairs of the number index per type and tenant (number-index.ts): past them a query comparing another attribute of
 * the type with a number scans the type, as without the index.
 */
export const MAX_NUMBER_PAIRS_PER_TYPE = 8;
/** A key element after any name (UTF-8 never holds 0xff). */
/** How many (tenant, collection) pairs EmbdbStore.noteEmpty remembers as empty before it starts again. */
export const EMPTY_COLLECTIONS_MAX = 4096;
const AFTER_ANY_NAME = Uint8Array.of(0xff) as unknown as string;

/**
 * The meta key of a tenant's entities generation (EmbdbStore.entitiesGeneration); `docgen` keys name a collection,
 * and no tenant name holds a NUL (ngsild/entity/limits.ts).
 */
const generationKey = (tenant: string): string => `entgen\u0000${tenant}`;

/** `[tenant, IRI]`: the key of the discovery counts, as of the type index (array keys, compared element by element). */
const statKey = (tenant: string, iri: string): [string, string] => [tenant, iri];

/** The entity of an id in one query's tenant, undefined when there is none. */
type EntityReader = (id: string) => StoredEntity | undefined;

export interface EmbdbSettings {
  path: string;
  /** request: answer a write once durable; interval: once committed (lmdb flushes right behind each commit). */
  sync: 'interval' | 'request';
  compress: boolean;
  /**
   * Pages of read-only queries kept (--dbPageCache, page-cache.ts; its entities bound scales with it); 0: none, every
   * query reads the store. PAGE_CACHE_PAGES unless given.
   */
  pageCachePages?: number;
  /** reads: lmdb's batched async writer, reads never wait; writes: synchronous commit in the calling thread. */
  lockPrefer: 'reads' | 'writes';
  /** RAM store on tmpfs: durability means nothing there, so no fsync at all. */
  ram: boolean;
  /** `--troe embdb`: record the history of every write in the same transaction. */
  troe?: 'none' | 'embdb';
  /** Most matches an orderBy query sorts; ORDERED_QUERY_CAP unless given (tests give less). */
  orderedQueryCap?: number;
  /** Where a number index build (number-index.ts) says it ran, or why it failed. */
  log?: PluginLogger;
  /**
   * One Int32 that every handle on this environment (one per thread, storePrepare's) adds one to after each commit:
   * `freshen` starts a new read snapshot only when it moved. Absent: every freshen does (a handle opened alone).
   */
  commits?: SharedArrayBuffer;
}

interface DocRecord {
  seq: number;
  doc: Record<string, unknown>;
  /** Counted members (DocCollection.bump), kept apart from what put writes. */
  b?: Bumped;
}

/** What planOutcome computed of a write, for writePlan. */
interface WritePlan {
  next: StoredEntity | null;
  /** Whether the write moves counts, from the signature `before` to `after` (undefined: absent). */
  counted: boolean;
  before: EntitySignature | undefined;
  after: EntitySignature | undefined;
  /** Undefined when neither a history nor an event takes it. */
  change: WriteChange | undefined;
}

/** A single write in a group (mutateEntity): what it asks, and once its group ran, how it ended. */
interface GroupedWrite {
  tenant: string;
  id: string;
  mutation: Mutation<unknown>;
  opts: MutateOptions | undefined;
  events: WriteEvent[] | undefined;
  resolve: (result: unknown) => void;
  reject: (error: unknown) => void;
  /** Its own error (nothing of it written), else its result. */
  failed: boolean;
  outcome: unknown;
}

/** Where msgpackr's shared structures of the entities are kept, in the entities DB (no range of keys sees it). */
const STRUCTURES_KEY = Symbol.for('structures');

/** The spatial index's answer for a geoproperty no key can hold: no candidate. */
const NONE: GeoCandidates = () => {};

export class EmbdbStore implements Store {
  readonly name = 'embdb';
  /** Store contract: 1 to 8 at once cost the same per entity, 50 nearly twice that (bench/micro/batch-upsert.ts). */
  readonly batchesAtOnce = 4;
  private readonly env: RootDatabase;
  private readonly entities: Database<StoredEntity, EntityKey>;
  /**
   * The type index: `[tenant, typeIri]` → the ids of its entities, as LMDB sorted duplicates (dupsort) in id order.
   * A page of a type is one cursor positioned once, then stepping through short values: no per-entry key of
   * `[tenant, typeIri, id]` to compare on the way or to decode (the type IRI each time), which the format-2 index
   * paid for every entity of a page (index-rebuild.ts migrates it).
   */
  private readonly typeMembers: Database<string, [string, string]>;
  /** The spatial index (geo-index.ts): `[tenant, geoproperty IRI, cell]` → ids. */
  private readonly geoCells: Database<GeoEntry, GeoKey>;
  /** The number index (number-index.ts): `[tenant, typeIri, attrIri, number]` → ids, for the pairs below. */
  private readonly attrNumbers: Database<string, NumberKey>;
  /** The same index, its range keys read as their number alone (number-index.ts NUMBER_READ_KEY_CODEC). */
  private readonly attrNumberReads: NumberReadDb;
  /** The (tenant, type, attribute) pairs the number index covers, `building` or `complete`. */
  private readonly numberPairsDb: Database<PairState, PairKey>;
  private readonly numberPairs: NumberPairs;
  /** The builds this handle runs, by `tenant NUL type NUL attr`: a query asking meanwhile waits for the same one. */
  private readonly pairBuilds = new Map<string, Promise<boolean>>();
  private readonly tenants: Database<{ createdAt: string }, string>;
  /** Discovery index: `[tenant, typeIri]` → counts of the type (§5.7.5); kept in the entity's write transaction. */
  private readonly typeStatDb: Database<TypeStat, [string, string]>;
  /** Discovery index: `[tenant, attrIri]` → counts of the attribute (§5.7.7). */
  private readonly attrStatDb: Database<AttrStat, [string, string]>;
  private readonly docs: Database<DocRecord, DocKey>;
  private readonly docOrder: Database<string, (string | number)[]>;
  /** Format markers of derived data (index-rebuild.ts). */
  private readonly meta: Database<number, string>;
  private readonly knownTenants = new Set<string>(['']);
  private closed = false;
  /** Entities the query being paged read (EntityPage.examined). */
  private examined = 0;
  /** The entities read-only queries decoded before (entity-cache.ts). */
  private readonly entityCache = new EntityCache();
  /** The pages read-only queries were answered with (page-cache.ts); undefined with --dbPageCache 0. */
  private readonly pageCache: PageCache | undefined;
  /** The index entries of the write being applied (applyOutcome), written after everything that can throw. */
  private readonly pendingGeo = new PendingEntries<GeoKey, GeoEntry>();
  private readonly pendingNumbers = new PendingEntries<NumberKey>();
  /** The single writes waiting for their group's transaction to start (mutateEntity); undefined once it started. */
  private openGroup: GroupedWrite[] | undefined;
  readonly history: EmbdbHistory | undefined;
  /** The environment's path as the count records carried between writes know it (stats-batch.ts): one per env. */
  private readonly statsPath: string;
  /** EmbdbSettings.commits, and its value when this handle last started a read snapshot (-1: never). */
  private readonly commits: Int32Array | undefined;
  private snapshotAt = -1;
  /** Collection generations read in the snapshot begun at `generationsAt` (snapshotGeneration). */
  private readonly generations = new Map<string, number>();
  private generationsAt = Number.NaN;

  constructor(private readonly settings: EmbdbSettings) {
    this.statsPath = resolve(settings.path);
    this.commits = settings.commits === undefined ? undefined : new Int32Array(settings.commits);
    const pages = settings.pageCachePages ?? PAGE_CACHE_PAGES;
    this.pageCache = pages > 0 ? new PageCache(pages, pages * PAGE_CACHE_ENTITIES_PER_PAGE) : undefined;
    this.env = open({
      path: settings.path,
      maxDbs: 32, // the store's own DBs, the history's (history.ts) and room for indexes
      compression: settings.compress,
      noSync: settings.ram,
      encoder: { useRecords: false },
    });
    // Entities of one type share a shape: msgpackr's shared structures (kept in the DB under a symbol key that no
    // range sees) decode ~5x faster than the records lmdb otherwise defines inline in every value
    // (bench/micro/entity-decode.ts). Shapes past the limit are encoded as before, so more types only cost speed.
    // lmdb passes maxSharedStructures on to msgpackr but its DatabaseOptions type does not declare it.
    const entityOptions = { ...KEY_CODEC, name: 'entities', sharedStructuresKey: STRUCTURES_KEY, maxSharedStructures: 512 };
    this.entities = this.env.openDB<StoredEntity, EntityKey>(entityOptions);
    this.meta = this.env.openDB<number, string>({ ...KEY_CODEC, name: 'meta' });
    // Copies: lmdb writes the environment's compression into the options a database is opened with, and the next
    // store of this process (a test's, an import's) would then compress where its own settings say not to.
    this.typeMembers = this.env.openDB<string, [string, string]>({ ...TYPE_MEMBERS_DB });
    this.geoCells = this.env.openDB<GeoEntry, GeoKey>({ ...GEO_CELLS_DB });
    this.attrNumbers = this.env.openDB<string, NumberKey>({ ...ATTR_NUMBERS_DB });
    this.attrNumberReads = this.env.openDB<string, NumberKey>({ ...ATTR_NUMBERS_DB, ...NUMBER_READ_KEY_CODEC });
    this.numberPairsDb = this.env.openDB<PairState, PairKey>({ ...NUMBER_PAIRS_DB });
    this.numberPairs = new NumberPairs(this.numberPairsDb, this.meta);
    this.tenants = this.env.openDB<{ createdAt: string }, string>({ ...KEY_CODEC, name: 'tenants' });
    // Count records are maps keyed by IRIs: as plain msgpack maps, not records defined inline in every value.
    const mapOptions = { useRecords: false };
    this.typeStatDb = this.env.openDB<TypeStat, [string, string]>({ ...KEY_CODEC, name: 'typeStats', ...mapOptions });
    this.attrStatDb = this.env.openDB<AttrStat, [string, string]>({ ...KEY_CODEC, name: 'attrStats', ...mapOptions });
    this.docs = this.env.openDB<DocRecord, DocKey>({ ...KEY_CODEC, name: 'docs' });
    this.docOrder = this.env.openDB<string, (string | number)[]>({ ...KEY_CODEC, name: 'docOrder' });
    this.history =
      settings.troe === 'embdb'
        ? new EmbdbHistory(
            this.env,
            <R>(fn: () => R) => this.write(fn),
            (tenant) => this.registerTenant(tenant),
          )
        : undefined;
  }

  status(): StoreStatus {
    return {
      open: !this.closed,
      name: this.name,
      detail: { path: this.settings.ram ? '(RAM)' : this.settings.path, sync: this.settings.sync, lockPrefer: this.settings.lockPrefer },
    };
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    // A store made again at this path starts its transaction ids afresh: nothing this one carried may match them.
    forgetCarriedStats(this.statsPath);
    await this.env.flushed;
    await this.env.close();
  }

  /**
   * The other live processes in LMDB's reader table (a broker, another importer): each keeps a reader slot from its
   * first read until it closes the store. Slots of dead processes are cleared first (readerCheck).
   */
  openElsewhere(): string | undefined {
    if (this.settings.ram) return undefined;
    this.env.readerCheck();
    const pids = new Set<number>();
    for (const line of this.env.readerList().split('\n')) {
      const m = /^\s*(\d+)\s/.exec(line);
      if (m === null) continue;
      const pid = Number(m[1]);
      if (pid !== process.pid && alive(pid)) pids.add(pid);
    }
    if (pids.size === 0) return undefined;
    return `${this.settings.path} is open in process ${[...pids].join(', ')}`;
  }

  async flush(): Promise<void> {
    await this.env.flushed;
  }

  /**
   * lmdb keeps a thread's read snapshot until a timer of that thread turns, so a request could read what was there
   * before a write another thread acknowledged a moment ago (a PATCH on the front thread, then a query in the pool).
   * Dropping the snapshot costs one renewal at the next read; an iterator still open keeps its own (lmdb refcounts it).
   */
  freshen(): void {
    // Unchanged since this handle's snapshot began: no thread committed since, so the snapshot already holds every
    // write acknowledged (each is counted before its write resolves). lmdb-js renews a snapshot with a timer each
    // time (setTimeout), so a reset per request cost a timer per request on the front (issue 24).
    if (this.commits !== undefined) {
      const now = Atomics.load(this.commits, 0);
      if (now === this.snapshotAt) return;
      this.snapshotAt = now;
    }
    this.env.resetReadTxn();
  }

  /**
   * Runs fn as one write transaction as the lock preference says; resolves after commit (and flush with sync=request).
   * Whatever fn throws undoes all it wrote. transactionSync aborts on a throw; lmdb's batched async writer runs the
   * callbacks of one batch in one LMDB transaction and commits what a callback wrote before it threw, so fn runs there
   * as a child transaction, which a throw aborts alone.
   */
  private async write<R>(fn: () => R): Promise<R> {
    const guarded = (): R => {
      try {
        return fn();
      } catch (error) {
        forgetCarriedStats(this.statsPath);
        throw error;
      }
    };
    try {
      const result = this.settings.lockPrefer === 'writes' ? this.env.transactionSync(guarded) : await this.env.childTransaction(guarded);
      if (this.settings.sync === 'request') await this.env.flushed;
      return result;
    } finally {
      // Committed (or undone: counting that too costs one needless freshen), before the caller acknowledges it.
      if (this.commits !== undefined) Atomics.add(this.commits, 0, 1);
      // This handle reads its own writes at once, as lmdb does: no generation read before them is kept.
      this.generationsAt = Number.NaN;
    }
  }

  async hasTenant(tenant: string): Promise<boolean> {
    if (this.knownTenants.has(tenant)) return true;
    if (this.tenants.get(tenant) === undefined) return false;
    this.knownTenants.add(tenant);
    return true;
  }

  async addTenant(tenant: string): Promise<void> {
    if (await this.hasTenant(tenant)) return;
    await this.write(() => this.registerTenant(tenant));
  }

  async listTenants(): Promise<string[]> {
    return [...this.tenants.getKeys()];
  }

  async sizes(): Promise<StoreSizes> {
    const stats = this.entities.getStats() as { entryCount: number; pageSize: number; lastPageNumber: number };
    const bytes = (stats.lastPageNumber + 1) * stats.pageSize;
    const tenants = new Set(['', ...this.tenants.getKeys()]);
    // One tenant: LMDB's own entry count of the DB (no scan), less the shared structures' record stored beside them.
    if (tenants.size === 1) {
      const structures = this.entities.get(STRUCTURES_KEY as never) === undefined ? 0 : 1;
      return { bytes, entities: [['', stats.entryCount - structures]] };
    }
    const entities: Array<[string, number]> = [];
    for (const tenant of tenants) {
      entities.push([tenant, this.entities.getKeysCount(tenantRange(tenant))]);
      // A count is a native walk over the tenant's keys: the requests waiting on this thread run between two tenants.
      await new Promise((resolve) => setImmediate(resolve));
    }
    return { bytes, entities };
  }

  async getEntity(tenant: string, id: string): Promise<StoredEntity | undefined> {
    return this.entityOf(tenant, id);
  }

  entityBytes(tenant: string, id: string): Uint8Array | undefined {
    if (!storablePart(id)) return undefined;
    const bytes = this.entities.getBinaryFast(entityKey(tenant, id));
    // lmdb's reused read buffer is larger than the value: its `length` property (not its byteLength) is the value's.
    return bytes === undefined ? undefined : bytes.subarray(0, bytes.length);
  }

  async getEntityTypes(tenant: string, id: string): Promise<string[] | undefined> {
    return this.entityOf(tenant, id)?.type;
  }

  /** The entity of an id, undefined for an id too long to be stored (keys.ts storablePart). */
  private entityOf(tenant: string, id: string): StoredEntity | undefined {
    return storablePart(id) ? this.entities.get(entityKey(tenant, id)) : undefined;
  }

  /** Inside a write transaction: the count records it moves (stats-batch.ts). */
  private statsBatch(): StatsBatch {
    return new StatsBatch(this.typeStatDb, this.attrStatDb, this.statsPath, this.env.getWriteTxnId());
  }

  /**
   * With the batched writer (lockPrefer reads), the single writes that come while the writer is busy run together as
   * one group: one callback and one child transaction for all, their counts written once (issue 24: a count record
   * written per create was a fifth of the store's CPU per create, bench/micro/one-entity.ts). A write that fails
   * before its first put (its mutation, its index entries) fails alone in the group; anything thrown after a put
   * undoes the group, whose writes then run again one by one (runGroup). With a history (troe embdb), which can still
   * throw after the entity's puts, and with lockPrefer writes (a synchronous commit per call), each runs alone.
   */
  async mutateEntity<R>(tenant: string, id: string, mutation: Mutation<R>, opts?: MutateOptions): Promise<R> {
    if (this.settings.lockPrefer === 'writes' || (this.history !== undefined && opts?.noHistory !== true))
      return this.mutateAlone(tenant, id, mutation, opts);
    return new Promise<R>((resolve, reject) => {
      const w: GroupedWrite = {
        tenant,
        id,
        mutation,
        opts,
        events: opts?.events === undefined ? undefined : [],
        resolve: resolve as (r: unknown) => void,
        reject,
        failed: false,
        outcome: undefined,
      };
      // Joined before the group's write starts (it may run its callback at once inside another transaction).
      if (this.openGroup !== undefined) this.openGroup.push(w);
      else void this.runGroup((this.openGroup = [w]));
    });
  }

  /** One write in a transaction (a child transaction with the batched writer) of its own. */
  private async mutateAlone<R>(tenant: string, id: string, mutation: Mutation<R>, opts?: MutateOptions): Promise<R> {
    const events = opts?.events === undefined ? undefined : ([] as WriteEvent[]);
    const result = await this.write(() => {
      if (events !== undefined) events.length = 0;
      const stats = this.statsBatch();
      const pairs = this.numberPairs.current();
      const key = entityKey(tenant, id);
      const current = this.entities.get(key);
      const outcome = mutation(current);
      const plan = this.planOutcome(tenant, id, current, outcome, pairs, events !== undefined);
      const r = plan === undefined ? outcome.result : this.writePlan(tenant, id, key, current, outcome, plan, stats, opts, events, 0);
      stats.flush();
      return r;
    });
    if (events !== undefined) opts!.events!.push(...events);
    return result;
  }

  /** Runs a group of single writes (mutateEntity) and settles each once the group is committed. */
  private async runGroup(group: GroupedWrite[]): Promise<void> {
    try {
      await this.write(() => this.writeGroup(group));
    } catch {
      // Thrown after a put (LMDB refused one): the group is undone, and each write runs again alone, so that only
      // the one at fault fails (a mutation may run more than once, store/contract.ts Mutation).
      if (this.openGroup === group) this.openGroup = undefined;
      for (const w of group) this.mutateAlone(w.tenant, w.id, w.mutation, w.opts).then(w.resolve, w.reject);
      return;
    }
    for (const w of group) {
      if (w.failed) w.reject(w.outcome);
      else {
        if (w.events !== undefined) w.opts!.events!.push(...w.events);
        w.resolve(w.outcome);
      }
    }
  }

  /** Inside the group's write transaction: each write in turn, then the counts they moved, written once. */
  private writeGroup(group: GroupedWrite[]): void {
    // Writes from now on start the next group.
    if (this.openGroup === group) this.openGroup = undefined;
    const stats = this.statsBatch();
    const pairs = this.numberPairs.current();
    let seq = 0;
    for (const w of group) {
      if (w.events !== undefined) w.events.length = 0;
      const key = entityKey(w.tenant, w.id);
      const current = this.entities.get(key);
      let outcome: MutationOutcome<unknown>;
      let plan: WritePlan | undefined;
      // Thrown before any put of it: this write's own error, nothing of it written.
      try {
        outcome = w.mutation(current);
        plan = this.planOutcome(w.tenant, w.id, current, outcome, pairs, w.events !== undefined);
      } catch (error) {
        w.failed = true;
        w.outcome = error;
        continue;
      }
      w.failed = false;
      if (plan === undefined) {
        w.outcome = outcome.result;
        continue;
      }
      if (w.events !== undefined && seq === 0) seq = this.env.getWriteTxnId();
      w.outcome = this.writePlan(w.tenant, w.id, key, current, outcome, plan, stats, w.opts, w.events, seq);
    }
    stats.flush();
  }

  async mutateEntities<R>(tenant: string, items: readonly BatchItem<R>[], opts?: MutateOptions): Promise<BatchOutcome<R>[]> {
    const events = opts?.events === undefined ? undefined : ([] as WriteEvent[]);
    const outcomes = await this.write(() => {
      if (events !== undefined) events.length = 0;
      let seq = 0;
      const stats = this.statsBatch();
      const pairs = this.numberPairs.current();
      const outcomes: BatchOutcome<R>[] = [];
      for (const item of items) {
        const key = entityKey(tenant, item.id);
        const current = this.entities.get(key);
        // Only the mutation's own error is the entry's (it computes and writes nothing, so the batch's counts hold
        // the successful entries only); an error while writing leaves this loop and aborts the whole transaction.
        let outcome: MutationOutcome<R>;
        try {
          outcome = item.mutation(current);
        } catch (error) {
          outcomes.push({ ok: false, error });
          continue;
        }
        const plan = this.planOutcome(tenant, item.id, current, outcome, pairs, events !== undefined);
        if (plan === undefined) {
          outcomes.push({ ok: true, result: outcome.result });
          continue;
        }
        // The transaction's id, read once: every write of it has the same sequence (a native call per entity else).
        if (events !== undefined && seq === 0) seq = this.env.getWriteTxnId();
        outcomes.push({ ok: true, result: this.writePlan(tenant, item.id, key, current, outcome, plan, stats, opts, events, seq) });
      }
      stats.flush();
      return outcomes;
    });
    if (events !== undefined) opts!.events!.push(...events);
    return outcomes;
  }

  /**
   * Inside a write transaction: everything of a write that can throw on its data, before any put (a write of a group
   * that throws here fails alone, mutateEntity): the index entries it moves (noted in pendingGeo and pendingNumbers),
   * the signatures of its counts and its change. Undefined when it writes nothing.
   */
  private planOutcome(
    tenant: string,
    id: string,
    current: StoredEntity | undefined,
    outcome: MutationOutcome<unknown>,
    pairs: NumberPairs,
    /** Whether the caller takes the write's event. */
    eventsWanted: boolean,
  ): WritePlan | undefined {
    const next = outcome.next;
    if (next === undefined || (next === null && current === undefined)) return undefined;
    moveGeoEntries(this.pendingGeo.clear(), tenant, id, current, next);
    moveNumberEntries(this.pendingNumbers.clear(), pairs, tenant, id, current, next);
    // An entity rewritten in its own shape (a batch upsert's replace, usually) moves no count: no signatures built.
    const counted = current === undefined || next === null || !sameContribution(current, next);
    const before = counted && current !== undefined ? entitySignature(current) : undefined;
    const after = counted && next !== null ? entitySignature(next) : undefined;
    const change = this.history === undefined && !eventsWanted ? undefined : changeOfOutcome(outcome, current, next ?? undefined);
    return { next, counted, before, after, change };
  }

  /**
   * Inside a write transaction, right after planOutcome: writes the entity (first: its encoding is the one step left
   * that can fail on the data), its counts, index entries, tenant and history, and notes its event (its sequence:
   * LMDB's transaction id, which grows with each write transaction of the env whichever thread commits it). Past
   * the entity's put only puts of checked keys (ngsild/entity/limits.ts) and reads follow, and the history.
   */
  private writePlan<R>(
    tenant: string,
    id: string,
    key: EntityKey,
    current: StoredEntity | undefined,
    outcome: MutationOutcome<R>,
    plan: WritePlan,
    stats: StatsBatch,
    opts: MutateOptions | undefined,
    events: WriteEvent[] | undefined,
    /** The transaction's id when the caller read it already. */
    seq: number,
  ): R {
    const next = plan.next;
    if (next === null) this.entities.removeSync(key);
    else this.entities.putSync(key, next);
    this.entitiesWritten(tenant, stats);
    if (plan.counted) stats.move(tenant, plan.before, plan.after);
    const oldTypes = current?.type ?? [];
    const newTypes = next?.type ?? [];
    for (const t of oldTypes) if (!newTypes.includes(t)) this.typeMembers.removeSync([tenant, t], id);
    for (const t of newTypes) if (!oldTypes.includes(t)) this.typeMembers.putSync([tenant, t], id);
    this.pendingGeo.writeTo(this.geoCells);
    this.pendingNumbers.writeTo(this.attrNumbers);
    if (next !== null && opts?.createTenant) this.registerTenant(tenant);
    const change = plan.change;
    if (change === undefined) return outcome.result;
    const after = next === null ? undefined : next;
    if (opts?.noHistory !== true) this.history?.recordWrite(tenant, id, current, next, change);
    events?.push({ tenant, id, before: current, after, change, seq: seq === 0 ? this.env.getWriteTxnId() : seq });
    return outcome.result;
  }

  async typeStats(tenant: string, typeIri?: string): Promise<TypeStat[]> {
    if (typeIri !== undefined) {
      const one = this.typeStatDb.get(statKey(tenant, typeIri));
      return one === undefined ? [] : [one];
    }
    return [...this.typeStatDb.getRange(tenantRange(tenant))].map((e) => e.value);
  }

  async attributeStats(tenant: string, attrIri?: string): Promise<AttrStat[]> {
    if (attrIri !== undefined) {
      const one = this.attrStatDb.get(statKey(tenant, attrIri));
      return one === undefined ? [] : [one];
    }
    return [...this.attrStatDb.getRange(tenantRange(tenant))].map((e) => e.value);
  }

  async queryEntities(tenant: string, query: EntityQuery): Promise<EntityPage> {
    // A compiled query asked again (EntityQuery.readOnly, frozen): its page while nothing of the tenant changed.
    if (this.pageCache !== undefined && query.readOnly === true && Object.isFrozen(query)) {
      const kept = this.pageCache.get(query, tenant, this.entitiesGeneration(tenant));
      if (kept !== undefined) return kept;
    }
    const plan = planEntityQuery(query);
    // The number index serves a query by type alone (no ids, no geo-query) once it covers the attribute of each type.
    if (plan.numbers !== undefined && (plan.typeIris === undefined || plan.ids !== undefined || plan.geo !== undefined))
      plan.numbers = undefined;
    if (plan.numbers !== undefined && !(await this.numberIndexReady(tenant, plan.typeIris!, plan.numbers.attrIri)))
      plan.numbers = undefined;
    if (query.readOnly !== true) return this.pageOf(tenant, plan, query, this.plainReader(tenant));
    // The generation is read in the same synchronous turn as the page, so from the same read snapshot; without a
    // page cache nothing keeps it.
    const generation = this.pageCache === undefined ? 0 : this.entitiesGeneration(tenant);
    const reader = this.keptReader(tenant);
    // pageOf runs in one synchronous turn: no other query of this handle counts in between.
    this.examined = 0;
    const page = this.pageOf(tenant, plan, query, (id) => {
      this.examined++;
      return reader(id);
    });
    page.kept = true;
    page.examined = this.examined;
    if (Object.isFrozen(query) && page.sortCap === undefined) this.pageCache?.set(query, tenant, generation, page);
    return page;
  }

  /**
   * The id of the last write transaction that wrote an entity of `tenant` (0: none since this key exists), moved by
   * every write of one (writePlan) and by a number index pair's completion, which changes the order of the pages it
   * serves: while it holds, every query of the tenant answers as before (page-cache.ts).
   */
  private entitiesGeneration(tenant: string): number {
    return this.meta.get(generationKey(tenant)) ?? 0;
  }

  /** Inside a write transaction that writes an entity of `tenant`: moves its generation, once per batch. */
  private entitiesWritten(tenant: string, stats: StatsBatch): void {
    if (stats.tenantsWritten.has(tenant)) return;
    stats.tenantsWritten.add(tenant);
    this.meta.putSync(generationKey(tenant), stats.txnId);
  }

  private pageOf(tenant: string, plan: QueryPlan<StoredEntity>, query: EntityQuery, read: EntityReader): EntityPage {
    if (query.orderBy !== undefined) return this.orderedPage(tenant, plan, query, query.orderBy, read);
    if (plan.ids === undefined && plan.typeIris !== undefined && plan.filter === undefined)
      return this.typePage(tenant, plan.typeIris, query, read);
    const page: StoredEntity[] = [];
    let matched = 0;
    const end = query.offset + query.limit;
    const filter = plan.filter;
    const rest = plan.geo?.rest;
    this.scan(tenant, plan, read, (entity, geoMet) => {
      const test = geoMet ? rest : filter;
      if (test !== undefined && !test(entity)) return true;
      if (matched >= query.offset && matched < end) page.push(entity);
      matched++;
      return query.count || matched < end;
    });
    return query.count ? { entities: page, count: matched } : { entities: page };
  }

  /** Each entity decoded afresh: the caller may change what it gets. */
  private plainReader(tenant: string): EntityReader {
    return (id) => (storablePart(id) ? this.entities.get(entityKey(tenant, id)) : undefined);
  }

  /**
   * EntityQuery.readOnly: the entity this thread decoded before while its stored bytes are the same (entity-cache.ts),
   * else decoded and kept, at most ADMITTED_PER_QUERY new ones per query. The bytes and the entity are read in the
   * same synchronous turn, so from the same read snapshot.
   */
  private keptReader(tenant: string): EntityReader {
    let admitted = 0;
    return (id) => {
      if (!storablePart(id)) return undefined;
      const key = entityKey(tenant, id);
      const raw = this.entities.getBinaryFast(key);
      if (raw === undefined) return undefined;
      // lmdb's reused read buffer is larger than the value: its `length` property (not its byteLength) is the value's.
      const stored = raw.subarray(0, raw.length);
      const name = cacheKey(tenant, id);
      const kept = this.entityCache.get(name, stored);
      if (kept !== undefined) return kept;
      if (admitted >= ADMITTED_PER_QUERY) return this.entities.get(key);
      // A copy (a Buffer's slice is a view): the next read overwrites lmdb's buffer.
      const bytes = new Uint8Array(stored);
      const entity = this.entities.get(key);
      if (entity === undefined) return undefined;
      admitted++;
      return this.entityCache.set(name, bytes, entity);
    };
  }

  /**
   * The candidates of a query, each once, in a stable order (the ids as given, else id order per index; the number
   * index's: by number, then id), until `visit` answers false. Candidates come from the spatial index, the ids, the
   * number index (a `q` comparing an attribute with a number, per type), the type index or the whole tenant;
   * types are checked here where the index read did not; the plan's filter is the caller's (`geoMet`: the spatial
   * index's entry showed the geo-query met, plan.geo.rest is left to test).
   */
  private scan(
    tenant: string,
    plan: QueryPlan<StoredEntity>,
    read: EntityReader,
    visit: (entity: StoredEntity, geoMet: boolean) => boolean,
  ): void {
    const geo = plan.ids === undefined ? plan.geo : undefined;
    const candidates =
      geo === undefined
        ? undefined
        : storablePart(geo.attrIri)
          ? geoCandidates(this.geoCells, tenant, geo.attrIri, geo.box, geo.test)
          : NONE;
    if (candidates !== undefined) {
      // The spatial index's candidates, in id order; the type index is not read, so types are checked here.
      const typeIris = plan.typeIris;
      candidates((id, certain) => {
        const entity = read(id);
        if (entity === undefined || (typeIris !== undefined && !typeIris.some((t) => entity.type.includes(t)))) return true;
        return visit(entity, certain);
      });
    } else if (plan.ids !== undefined) {
      for (const id of plan.ids) {
        const entity = read(id);
        if (entity !== undefined && !visit(entity, false)) return;
      }
    } else if (plan.typeIris !== undefined && plan.numbers !== undefined) {
      // The number index's candidates of each type, each entity once (it may hold several numbers in range).
      const seen = new Set<string>();
      const range = plan.numbers;
      for (const typeIri of plan.typeIris) {
        const more = visitNumberCandidates(this.attrNumberReads, tenant, typeIri, range, (id) => {
          if (seen.has(id)) return true;
          seen.add(id);
          const entity = read(id);
          return entity === undefined || visit(entity, false);
        });
        if (!more) return;
      }
    } else if (plan.typeIris !== undefined) {
      const seen = plan.typeIris.length > 1 ? new Set<string>() : undefined;
      for (const typeIri of plan.typeIris) {
        if (!storablePart(typeIri)) continue;
        for (const id of this.typeMembers.getValues([tenant, typeIri])) {
          if (seen !== undefined) {
            if (seen.has(id)) continue;
            seen.add(id);
          }
          const entity = read(id);
          if (entity !== undefined && !visit(entity, false)) return;
        }
      }
    } else {
      for (const { value } of this.entities.getRange(tenantRange(tenant))) {
        this.examined++;
        if (!visit(value, false)) return;
      }
    }
  }

  /**
   * Whether the number index covers `attrIri` of every type (number-index.ts). A pair not complete yet is built
   * first, and the query waits for it: its pages, and those of every later query, are then all in the index's order
   * (a scan's order for the first page and the index's for the next would let pages overlap).
   */
  private async numberIndexReady(tenant: string, typeIris: readonly string[], attrIri: string): Promise<boolean> {
    if (!storablePart(attrIri)) return false;
    for (const typeIri of typeIris) {
      if (!storablePart(typeIri)) return false;
      const key: PairKey = [tenant, typeIri, attrIri];
      if (this.numberPairsDb.get(key) === 'complete') continue;
      const name = key.join('\0');
      let build = this.pairBuilds.get(name);
      if (build === undefined) {
        build = this.buildNumberPair(key).finally(() => this.pairBuilds.delete(name));
        this.pairBuilds.set(name, build);
      }
      if (!(await build)) return false;
    }
    return true;
  }

  /**
   * Fills one pair of the number index: registers it (`building`: from then on every write keeps its entries), puts
   * the entries of every entity of the type, NUMBER_CHUNK per write transaction in id order (other writes run between
   * two), then marks it `complete`. A build cut short (the process ended) is started again by the next query asking.
   * Answers whether the pair is complete.
   */
  private async buildNumberPair(key: PairKey): Promise<boolean> {
    const [tenant, typeIri, attrIri] = key;
    try {
      const state = await this.write((): PairState | 'refused' | undefined => {
        const state = this.numberPairsDb.get(key);
        if (state !== undefined) return state;
        // Every pair of a type costs each write of the type, so a client naming attributes in queries must not
        // grow them without end: only attributes some entity of the type holds, at most MAX_NUMBER_PAIRS_PER_TYPE.
        if (this.typeStatDb.get(statKey(tenant, typeIri))?.attrs[attrIri] === undefined) return 'refused';
        if (
          this.numberPairsDb.getKeysCount({ start: [tenant, typeIri], end: [tenant, typeIri, AFTER_ANY_NAME] }) >= MAX_NUMBER_PAIRS_PER_TYPE
        )
          return 'refused';
        this.numberPairs.set(key, 'building');
        return undefined;
      });
      if (state === 'complete') return true;
      if (state === 'refused') return false;
      const started = Date.now();
      let after: string | undefined;
      let entities = 0;
      for (;;) {
        if (this.closed) return false;
        // The ids are read in the write transaction: a read snapshot older than the registration could miss an
        // entity created just before it, which no write would then index.
        const from = after;
        const last = await this.write(() => {
          const range = from === undefined ? { limit: NUMBER_CHUNK } : { start: from, exclusiveStart: true, limit: NUMBER_CHUNK };
          let id: string | undefined;
          for (id of this.typeMembers.getValues([tenant, typeIri], range)) {
            const entity = this.entities.get(entityKey(tenant, id));
            if (entity !== undefined) putPairEntries(this.attrNumbers, key, entity);
            entities++;
          }
          return id;
        });
        if (last === undefined) break;
        after = last;
      }
      await this.write(() => {
        if (this.numberPairsDb.get(key) !== 'building') return;
        this.numberPairs.set(key, 'complete');
        this.meta.putSync(generationKey(tenant), this.env.getWriteTxnId());
      });
      this.settings.log?.info({ tenant, typeIri, attrIri, entities, ms: Date.now() - started }, 'embdb: number index built');
      return true;
    } catch (error) {
      // The query that asked scans its types instead; the next one starts the build again.
      this.settings.log?.warn({ err: error, typeIri, attrIri }, 'embdb: number index build failed');
      return false;
    }
  }

  /**
   * orderBy (CIM 009 v1.9.1 §4.23): every match is found and sorted before the page is cut, so pages do not overlap.
   * Only the sort keys and ids of the matches are held, at most ORDERED_QUERY_CAP of them: a query matching more is
   * answered `sortCap` (the caller refuses it, 403 TooManyResults) rather than sorted, as no index serves any key.
   */
  private orderedPage(
    tenant: string,
    plan: QueryPlan<StoredEntity>,
    query: EntityQuery,
    order: EntityOrder,
    read: EntityReader,
  ): EntityPage {
    const cap = this.settings.orderedQueryCap ?? ORDERED_QUERY_CAP;
    const matches: Array<{ id: string; key: SortKey }> = [];
    let over = false;
    const filter = plan.filter;
    const rest = plan.geo?.rest;
    this.scan(tenant, plan, read, (entity, geoMet) => {
      const test = geoMet ? rest : filter;
      if (test !== undefined && !test(entity)) return true;
      if (matches.length >= cap) {
        over = true;
        return false;
      }
      matches.push({ id: entity.id, key: order.keyOf(entity) });
      return true;
    });
    if (over) return { entities: [], sortCap: cap };
    matches.sort((a, b) => order.compare(a.key, b.key) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    const page: StoredEntity[] = [];
    for (const { id } of matches.slice(query.offset, query.offset + query.limit)) {
      const entity = read(id);
      if (entity !== undefined) page.push(entity);
    }
    return query.count ? { entities: page, count: matches.length } : { entities: page };
  }

  /**
   * A query by types alone: the page is read from the type index (offset skips keys, no entity read), and one type's
   * count comes from the discovery index, so the cost does not grow with the other data of the tenant.
   */
  private typePage(tenant: string, typeIris: readonly string[], query: EntityQuery, read: EntityReader): EntityPage {
    const page: StoredEntity[] = [];
    if (typeIris.length === 1 && !query.count) {
      // One type, no count: LMDB's cursor skips the offset (no id decoded) and stops at the page's end.
      const typeIri = typeIris[0]!;
      if (!storablePart(typeIri)) return { entities: page };
      for (const id of this.typeMembers.getValues([tenant, typeIri], { offset: query.offset, limit: query.limit })) {
        const entity = read(id);
        if (entity !== undefined) page.push(entity);
      }
      return { entities: page };
    }
    const end = query.offset + query.limit;
    let position = 0;
    const seen = typeIris.length > 1 ? new Set<string>() : undefined;
    outer: for (const typeIri of typeIris) {
      if (!storablePart(typeIri)) continue;
      for (const id of this.typeMembers.getValues([tenant, typeIri])) {
        if (seen !== undefined) {
          if (seen.has(id)) continue;
          seen.add(id);
        }
        if (position >= query.offset) {
          if (position >= end && !(query.count && seen !== undefined)) break outer;
          if (position < end) {
            const entity = read(id);
            if (entity !== undefined) page.push(entity);
          }
        }
        position++;
      }
    }
    if (!query.count) return { entities: page };
    if (seen !== undefined) return { entities: page, count: position };
    const typeIri = typeIris[0]!;
    return { entities: page, count: storablePart(typeIri) ? (this.typeStatDb.get(statKey(tenant, typeIri))?.count ?? 0) : 0 };
  }

  collection(tenant: string, name: string): DocCollection {
    return new EmbdbCollection(this, tenant, name);
  }

  /** @internal for EmbdbCollection */
  docsDb(): { docs: Database<DocRecord, DocKey>; order: Database<string, (string | number)[]> } {
    return { docs: this.docs, order: this.docOrder };
  }

  /**
   * @internal for EmbdbCollection. Collections this thread found empty, with the generation they had then: most
   * tenants have no registration, and the distributed operations ask for the tenant's registrations on every entity
   * request (ops/forward/sources.ts); one read of the generation costs less than a range over an empty collection.
   */
  readonly emptyCollections = new Map<string, number>();

  /**
   * @internal for EmbdbCollection: one entry per tenant and collection, and tenants are as many as clients name, so the
   * map is bounded: past EMPTY_COLLECTIONS_MAX entries it starts again (a forgotten entry costs one range read).
   */
  noteEmpty(key: string, generation: number): void {
    if (this.emptyCollections.size >= EMPTY_COLLECTIONS_MAX && !this.emptyCollections.has(key)) this.emptyCollections.clear();
    this.emptyCollections.set(key, generation);
  }

  /** @internal: the generation of a collection, moved by each write that adds, replaces or removes a document. */
  collectionGeneration(key: string): number {
    return this.meta.get(key) ?? 0;
  }

  /**
   * @internal: collectionGeneration as of this request's snapshot, read once per snapshot: with the commit counter,
   * a value read since the last freshen that started one (and no commit of this handle since) is the same value
   * (issue 24: every entity request asks for the registrations' generation).
   */
  snapshotGeneration(key: string): number {
    if (this.commits === undefined) return this.collectionGeneration(key);
    if (this.generationsAt !== this.snapshotAt) {
      this.generations.clear();
      this.generationsAt = this.snapshotAt;
    }
    let generation = this.generations.get(key);
    if (generation === undefined) {
      generation = this.collectionGeneration(key);
      this.generations.set(key, generation);
    }
    return generation;
  }

  /** @internal: inside the write transaction that adds or removes a document of the collection. */
  moveCollectionGeneration(key: string): void {
    this.meta.putSync(key, this.collectionGeneration(key) + 1);
  }

  /** @internal for index-rebuild.ts, run by the primary at open */
  indexedDbs(): IndexedDbs {
    return {
      env: this.env,
      entities: this.entities,
      docs: this.docs,
      typeMembers: this.typeMembers,
      geoCells: this.geoCells,
      attrNumbers: this.attrNumbers,
      numberPairs: this.numberPairsDb,
      typeStats: this.typeStatDb,
      attrStats: this.attrStatDb,
      meta: this.meta,
    };
  }

  /** @internal */
  runWrite<R>(fn: () => R): Promise<R> {
    return this.write(fn);
  }

  /** @internal Inside a write transaction: registers a tenant that is not yet (the default one never is). */
  registerTenant(tenant: string): void {
    if (tenant !== '' && !this.knownTenants.has(tenant) && this.tenants.get(tenant) === undefined)
      this.tenants.putSync(tenant, { createdAt: new Date().toISOString() });
  }
}

class EmbdbCollection implements DocCollection {
  /** Its generation's key in the meta database (tenant names hold no NUL). */
  private readonly generationKey: string;

  constructor(
    private readonly store: EmbdbStore,
    private readonly tenant: string,
    private readonly name: string,
  ) {
    this.generationKey = `docgen\u0000${tenant}\u0000${name}`;
  }

  async get(id: string): Promise<Record<string, unknown> | undefined> {
    const rec = this.store.docsDb().docs.get(docKey(this.tenant, this.name, id));
    return rec === undefined ? undefined : withBumped(rec.doc, rec.b);
  }

  /** Read and written in one write transaction: no count is lost to another thread's. */
  async bump(id: string, member: string, change: BumpChange): Promise<boolean> {
    return this.store.runWrite(() => {
      const { docs } = this.store.docsDb();
      const key = docKey(this.tenant, this.name, id);
      const existing = docs.get(key);
      if (existing === undefined) return false;
      docs.putSync(key, { ...existing, b: applyBump(existing.b, member, change) });
      return true;
    });
  }

  async put(id: string, doc: Record<string, unknown>): Promise<void> {
    await this.store.runWrite(() => this.write(id, doc, false));
  }

  async insert(id: string, doc: Record<string, unknown>, opts?: MutateOptions): Promise<boolean> {
    return this.store.runWrite(() => {
      const inserted = this.write(id, doc, true);
      if (inserted && opts?.createTenant) this.store.registerTenant(this.tenant);
      return inserted;
    });
  }

  private write(id: string, doc: Record<string, unknown>, onlyNew: boolean): boolean {
    const { docs, order } = this.store.docsDb();
    const key = docKey(this.tenant, this.name, id);
    const existing = docs.get(key);
    if (existing !== undefined) {
      if (onlyNew) return false;
      docs.putSync(key, existing.b === undefined ? { seq: existing.seq, doc } : { seq: existing.seq, doc, b: existing.b });
      // A replaced document moves it too: readers keep what they derived from the list while it stays (generation()).
      this.store.moveCollectionGeneration(this.generationKey);
      return true;
    }
    let seq = 0;
    for (const k of order.getKeys({
      start: [this.tenant, this.name, Number.MAX_SAFE_INTEGER],
      end: [this.tenant, this.name, -1],
      reverse: true,
      limit: 1,
    }))
      seq = (k[2] as number) + 1;
    docs.putSync(key, { seq, doc });
    order.putSync([this.tenant, this.name, seq], id);
    this.store.moveCollectionGeneration(this.generationKey);
    return true;
  }

  async delete(id: string): Promise<boolean> {
    return this.store.runWrite(() => {
      const { docs, order } = this.store.docsDb();
      const key = docKey(this.tenant, this.name, id);
      const existing = docs.get(key);
      if (existing === undefined) return false;
      docs.removeSync(key);
      order.removeSync([this.tenant, this.name, existing.seq]);
      this.store.moveCollectionGeneration(this.generationKey);
      return true;
    });
  }

  generation(): number {
    return this.store.snapshotGeneration(this.generationKey);
  }

  async list(offset = 0, limit = Number.MAX_SAFE_INTEGER): Promise<Array<{ id: string; doc: Record<string, unknown> }>> {
    const { docs, order } = this.store.docsDb();
    const out: Array<{ id: string; doc: Record<string, unknown> }> = [];
    // Read in the same snapshot as the range below, so an empty range seen here is empty at this generation.
    const generation = this.store.collectionGeneration(this.generationKey);
    if (this.store.emptyCollections.get(this.generationKey) === generation) return out;
    for (const { value: id } of order.getRange({
      start: [this.tenant, this.name, -1],
      end: [this.tenant, this.name, Number.MAX_SAFE_INTEGER],
      offset,
      limit,
    })) {
      const rec = docs.get(docKey(this.tenant, this.name, id));
      if (rec !== undefined) out.push({ id, doc: withBumped(rec.doc, rec.b) });
    }
    if (out.length === 0 && offset === 0 && limit > 0) this.store.noteEmpty(this.generationKey, generation);
    else this.store.emptyCollections.delete(this.generationKey);
    return out;
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    // EPERM: it lives, under another user.
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}
