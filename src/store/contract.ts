// The store contract (ARCHITECTURE.md "Stores"): what every store plugin implements and all core code goes through.
// Async and tenant-aware; the default tenant is ''. Store-neutral: queries are declarative, writes are mutations a
// store may retry and hand back as write events; the kit (src/store/kit/) has the helpers a plugin may share.
import type { StoredEntity } from '../ngsild/entity/model.js';
import type { EntityWrite, WriteChange } from '../ngsild/entity/write-change.js';
import type { OptionSpec, PluginLogger } from '../plugin/contract.js';
import type { History } from '../history/contract.js';
import type { EntityOrder, OrderTarget, SortKey } from '../ngsild/query/order-by.js';
import type { EntitySelectionQuery, EntitySelector, EntityProjection } from '../ngsild/query/entity-selection.js';

export type { StoredEntity } from '../ngsild/entity/model.js';
export type { EntityWrite, WriteChange, WriteKind } from '../ngsild/entity/write-change.js';

/**
 * A change to one entity, computed from its current state inside the store's write: synchronous and pure. Returns the
 * next state (`null` deletes, `undefined` leaves it as it is), a result handed back to the caller and, best, what the
 * write changes. Throwing (an LdError) writes nothing.
 *
 * A mutation may run more than once for one call, on different current states, and only its last run counts: a store
 * whose writes can race with another process's (docdb with several brokers) reads the entity with its version, runs
 * the mutation and writes only if the version is still the one it read, else reads again and runs the mutation
 * again. So the caller learns what was written from the outcome the call resolves with and from the write events
 * (MutateOptions.events), never from what a run of the mutation did on the side. (embdb's write transaction holds
 * the entity from read to commit: its check is trivially true; a mutation runs again only when the group of writes it
 * ran in is undone by another's failure, embdb-store.ts mutateEntity.)
 */
export type Mutation<R> = (current: StoredEntity | undefined) => MutationOutcome<R>;

export interface MutationOutcome<R> {
  next: StoredEntity | null | undefined;
  result: R;
  /**
   * What the write changes, as the operation computed it (ngsild/entity/merge.ts, write-change.ts). Absent, the store
   * derives it by comparing the states (changeBetween), which costs more and cannot tell a replace from an update.
   * A function is called only when the store needs the change (an event or a history takes it): a batch upsert
   * replacing entities nobody listens to then builds no change (issue 24). A store reads it with the kit's changeOfOutcome.
   */
  change?: WriteChange | (() => WriteChange);
}

export interface MutateOptions {
  /** Register the tenant in the same transaction when this write creates something (creating operations only). */
  createTenant?: boolean;
  /**
   * Given, the store appends to it, once the write committed, the event of each entity the call changed (not of a
   * mutation that left its entity as it was, or deleted one that was not there, nor of a batch entry that failed), in
   * the order the mutations ran. Not given, a store need not build events.
   */
  events?: WriteEvent[];
  /**
   * The store's own history (Store.history) records nothing of this write: the importer writes an entity's history
   * itself, from the stream or as a create at the entity's own times (seed 001, importer behaviour 3 to 5). A store
   * without a history of its own ignores it.
   */
  noHistory?: boolean;
  /**
   * The entries are creates that expect no entity (a create, a batch create, the importer's records): a store may
   * write them without reading first, as long as each entry whose id exists still runs on the entity as it is (and so
   * is refused, never overwritten). docdb then skips its first read, a whole scan of the collection on FerretDB.
   */
  expectAbsent?: boolean;
}

/**
 * A committed write of one entity: what subscriptions, a history beside the store (history/contract.ts) and bridges
 * consume. `seq` orders the writes of one entity for notifications: of two committed writes of one entity where one
 * finished before the other started, the later has the greater seq, whichever thread or broker made them; the writes
 * of one call share theirs or grow in their order. (embdb: the LMDB write transaction's id; a store shared by brokers
 * may use a version it keeps per entity, counting on across deletes.)
 */
export interface WriteEvent extends EntityWrite {
  tenant: string;
  id: string;
  seq: number;
}

/** One entry of a batch: each runs in the same transaction, but a failing entry never changes another's outcome. */
export interface BatchItem<R> {
  id: string;
  mutation: Mutation<R>;
}

export type BatchOutcome<R> = { ok: true; result: R } | { ok: false; error: unknown };

/**
 * A query for entities (CIM 009 v1.8 §5.7.2), declarative so that a store can evaluate it or translate it (embdb
 * evaluates it with kit/entity-query.ts; a document store turns what it can into its own query language). Every name
 * is an expanded IRI: the caller expands the request's terms with its @context before it hands the query over.
 * An entity matches when it meets every member given; a query without any selects every entity of the tenant
 * (`local=true` alone).
 *
 * What a store answers exactly: the selection (every member below), the order (`orderBy`, else its own stable order
 * in which pages of one query do not overlap), the page (`offset`, `limit`) and `count`. It always returns whole
 * stored entities: the projection of what it returns (attrs, pick, omit, datasetId, lang) is the caller's.
 */
export interface EntityQuery extends EntitySelectionQuery {
  /**
   * CIM 009 v1.9.1 §4.23 orderBy: the matches are sorted before they are paged (ties, and entities equal on every
   * key, in id order), so that pages of one query do not overlap. Without it a store pages in its own stable order.
   */
  orderBy?: EntityOrder;
  limit: number;
  offset: number;
  count: boolean;
  /**
   * The caller only reads the entities of the page (renders them), changes none: the store may answer with objects
   * it keeps and hands out again, frozen, while the stored entity is unchanged (EntityPage.kept). A store may ignore it.
   * A frozen readOnly query is one the caller asks again as the same object (GET /entities' compiled queries,
   * ops/query-compiled.ts): a store may answer it with the page it gave that object before while nothing in the
   * tenant was written since (embdb: page-cache.ts).
   */
  readOnly?: boolean;
}

/** What an EntityQuery selects, without order and paging (ngsild/query/entity-selection.ts). */
export type { EntitySelectionQuery, EntitySelector, EntityProjection };

/** The order of an orderBy, as ngsild/query/order-by.ts compiles it for the store. */
export type { EntityOrder, OrderTarget, SortKey };

export interface EntityPage {
  entities: StoredEntity[];
  /** Total matches, when asked for. */
  count?: number;
  /**
   * Set, to the store's bound, when an orderBy query matched more entities than the store sorts in one request
   * (entities is then empty): the caller answers 403 TooManyResults.
   */
  sortCap?: number;
  /**
   * Set by a store that answered a readOnly query with kept objects: an entity object seen again is the same stored
   * entity (same id, same content), so a caller may key what it derives from one on the object (a WeakMap).
   */
  kept?: boolean;
  /**
   * With kept: how many entities the store read to answer (candidates tested, the page's included), the work the
   * query costs whatever else runs on the machine. The split runner runs a query that reads few on the front
   * (front-queries.ts).
   */
  examined?: number;
}

/**
 * Discovery counts of one entity type in a tenant (CIM 009 v1.8 §5.7.5 to §5.7.8): how many entities carry the
 * type, and per attribute IRI how many of them hold it and with which attribute types.
 */
export interface TypeStat {
  typeIri: string;
  count: number;
  attrs: Record<string, AttrUse>;
}

/** How many entities hold an attribute, by attribute type (an entity counts once per type it uses). */
export interface AttrUse {
  n: number;
  t: Record<string, number>;
}

/** Discovery counts of one attribute in a tenant: entities holding it, by attribute type and by entity type. */
export interface AttrStat {
  attrIri: string;
  count: number;
  attrTypes: Record<string, number>;
  typeIris: Record<string, number>;
}

/** A named document collection that nothing renders (`odrlPolicies`, `subscriptionOwners`, ...). */
export interface DocCollection {
  get(id: string): Promise<Record<string, unknown> | undefined>;
  /** Insert or replace. */
  put(id: string, doc: Record<string, unknown>): Promise<void>;
  /**
   * Insert only: false when the id exists. With createTenant, a non-default tenant is registered in the same
   * transaction (CIM 009 v1.8 §4.14: creating a subscription or registration creates its tenant, as an entity does).
   */
  insert(id: string, doc: Record<string, unknown>, opts?: MutateOptions): Promise<boolean>;
  delete(id: string): Promise<boolean>;
  /** In insertion order. */
  list(offset?: number, limit?: number): Promise<Array<{ id: string; doc: Record<string, unknown> }>>;
  /**
   * A number that changes whenever a document is added, replaced or removed (not by `bump`): what a reader derived
   * from `list` stays true while it reads the same number. Exact for the writes of every thread of this broker (the
   * write's promise resolves once every thread reads another number); a store that other brokers share may see their
   * writes within a bound it states (docdb: a second, generations.ts CROSS_BROKER_MS). Absent where the store cannot
   * tell cheaply (docdb's notification counters): the reader lists again.
   */
  generation?(): number;
  /**
   * Counts into the member `member` (an object) of the document `id` as one atomic change, however many threads and
   * brokers count at once (a get and a put would lose the counts that raced them): `inc`'s numbers added (absent:
   * 0), `set`'s values written. The counted members are kept apart from `put` (a put of the document read before
   * never takes back a count; a delete removes them) and get and list show them over the document's own (kit/bump.ts).
   * False when there is no such document.
   */
  bump(id: string, member: string, change: BumpChange): Promise<boolean>;
}

/** One change of DocCollection.bump. */
export interface BumpChange {
  inc?: Record<string, number>;
  set?: Record<string, string>;
}

export interface StoreStatus {
  open: boolean;
  name: string;
  /** False while the store's server cannot be reached (a store on a network server, docdb): /ready answers 503. */
  reachable?: boolean;
  detail?: Record<string, unknown>;
}

/** What /metrics shows of a store (README "Metrics"). */
export interface StoreSizes {
  /** Bytes the store's data takes, where the store knows it (embdb: the pages in use of its file or RAM map). */
  bytes?: number;
  /** Entities per tenant ('' is the default tenant). */
  entities: Array<[tenant: string, count: number]>;
}

export interface Store {
  readonly name: string;
  close(): Promise<void>;
  /** Resolves once every write acknowledged so far is durable. */
  flush(): Promise<void>;
  /**
   * Called as each request starts: the reads that follow see every write committed before it, whichever thread or
   * broker made it (read-your-writes for a client whose next request runs elsewhere). A store whose reads are always
   * current leaves it out.
   */
  freshen?(): void;
  /**
   * How many batch entity operations of one thread the store serves best at once; absent: no bound. A store whose
   * writes are CPU work in the calling thread (embdb) gains nothing from more, and each one in flight holds its
   * parsed body and entities until its transaction commits: fifty at once outlived the young generation of the
   * thread's heap and nearly doubled a batch's CPU with garbage collection (issue 24, bench/micro/batch-upsert.ts).
   * A store that waits on a server leaves it out, so its round trips overlap.
   */
  readonly batchesAtOnce?: number;
  status(): StoreStatus;

  hasTenant(tenant: string): Promise<boolean>;
  listTenants(): Promise<string[]>;

  getEntity(tenant: string, id: string): Promise<StoredEntity | undefined>;
  /**
   * The stored encoding of an entity, or undefined when it is absent; valid only until the next read of the store on
   * this thread (embdb: LMDB's own buffer). Equal bytes are an unchanged entity, so a retrieve can answer from what it
   * rendered of it before (ops/retrieve-cache.ts). Absent where the store has no cheap raw read.
   */
  entityBytes?(tenant: string, id: string): Uint8Array | undefined;
  /** Types of a stored entity (cheaper than a whole read where the store keeps them apart). */
  getEntityTypes(tenant: string, id: string): Promise<string[] | undefined>;
  /** One transaction: when anything in it throws, nothing of it is written. */
  mutateEntity<R>(tenant: string, id: string, mutation: Mutation<R>, opts?: MutateOptions): Promise<R>;
  /**
   * One transaction for the batch. An item whose mutation throws (it only computes, writing nothing) has that error
   * as its outcome and the others go on; an error while writing rejects the whole batch with nothing written.
   */
  mutateEntities<R>(tenant: string, items: readonly BatchItem<R>[], opts?: MutateOptions): Promise<BatchOutcome<R>[]>;
  queryEntities(tenant: string, query: EntityQuery): Promise<EntityPage>;
  /**
   * Discovery counts (§5.7.5, §5.7.6) of the tenant's entity types, exact after every committed write; with a
   * typeIri, that type's counts only (empty when no entity has it). kit/discovery-counts.ts has the arithmetic of a
   * store that keeps them in its write transactions.
   */
  typeStats(tenant: string, typeIri?: string): Promise<TypeStat[]>;
  /** Discovery counts of attributes (§5.7.7, §5.7.8), as typeStats. */
  attributeStats(tenant: string, attrIri?: string): Promise<AttrStat[]>;

  collection(tenant: string, name: string): DocCollection;

  /**
   * Registers a tenant that holds data elsewhere (a history beside the store, history/contract.ts), as the
   * `createTenant` of a creating write does; nothing when it is registered (the default tenant always is).
   */
  addTenant(tenant: string): Promise<void>;

  /**
   * The history (temporal representation) this store keeps in its own write transactions, when it was opened with
   * `keepHistory` (`--troe` names the store) and can keep one; absent otherwise.
   */
  readonly history?: History;

  /**
   * Another process holding this store open, described for a refusal (embdb: the pids in LMDB's reader table; docdb:
   * the fresh presence leases of other brokers and importers on its database), or undefined. The importer (seed 001,
   * importer behaviour 1) writes only into stores nothing else uses.
   */
  openElsewhere?(): string | undefined | Promise<string | undefined>;

  /**
   * On a store several brokers share: the ids (BrokerConfig.brokerId, given to the primary as
   * StoreOpenParams.brokerId) of the brokers using it now (docdb: those with a fresh presence lease), so that what
   * one broker of the set must do alone (the subordinate subscriptions of issue 22) is done by one of them. Absent on a
   * store only one broker uses.
   */
  liveBrokers?(): Promise<string[]>;

  /**
   * Sizes for /metrics. It may count every tenant's entities, so it is never asked per request: the front caches it
   * and asks again at most once a minute (front/store-sizes.ts). A store without it shows no size series.
   */
  sizes?(): Promise<StoreSizes>;
}

/** Where a store plugin opens its data: decided by the primary (front) and handed to every thread. */
export interface StoreOpenParams {
  /** The plugin's own options (declared in its `options`), parsed, and what its storePrepare returned. */
  options: Record<string, unknown>;
  /** True in the thread that creates the store's files (the front); workers open what it created. */
  primary: boolean;
  log: PluginLogger;
  /** `--troe` names this store: keep the history of every write in the write's own transaction (Store.history). */
  keepHistory?: boolean;
  /** The broker's id (BrokerConfig.brokerId), which a shared store's primary lists among its liveBrokers. */
  brokerId?: string;
}

/**
 * What a store plugin module exports: `dist/src/plugins/store/<name>/index.js`, or `<pluginDir>/store/<name>.js`.
 * Besides this contract a plugin may import the kit (src/store/kit/: query planning, discovery counts, history of a
 * write), nothing else of the broker.
 */
export interface StorePluginModule {
  /** The plugin's own command-line options (`-u` lists them; BROKER_<NAME> sets them too). */
  options?: OptionSpec[];
  /**
   * True when the store keeps its data in this machine's memory with these options (embdb without --dbDir): the
   * pipeline then runs one thread per core unless --connectionPoolSize says otherwise (seed 001 §4.4).
   */
  storeInMemory?(options: Record<string, unknown>): boolean;
  /**
   * True when other brokers may write the same data (docdb, a high-availability set): subscriptions are then
   * reloaded from the store every --subCacheIval seconds, as another broker may have changed them.
   */
  storeShared?(options: Record<string, unknown>): boolean;
  /** Called once in the primary before any thread opens the store: returns options the other threads need (e.g. a RAM path). */
  storePrepare?(params: StoreOpenParams): Promise<Record<string, unknown>>;
  storeOpen(params: StoreOpenParams): Promise<Store>;
  /** Called once in the primary at exit, after every thread closed its handle (e.g. removes a RAM store). */
  storeDispose?(params: StoreOpenParams): Promise<void>;
}
