// The history contract (CIM 009 v1.8 §5.5, §6.18 to §6.24; `--troe`): what a history plugin implements and the
// temporal API goes through. A history is fed by the store's writes and by the temporal API's own writes, and answers
// the temporal queries. Names are expanded IRIs; times are ISO 8601 strings in UTC. Two kinds fit this contract:
// - inside the store (`--troe` names the store, embdb): the store applies `historyOfWrite` (store/kit/
//   history-of-write.ts) of each write in the write's own transaction, and offers the history as Store.history;
// - beside it (a history plugin, tsdb for QuestDB): `record` is handed each committed write (WriteEvent) and appends
//   `historyOfWrite` of it. There is no transaction across the two: a crash between commit and append loses that
//   write's history, and such a history says so. Its instances are append-only rows ordered by time;
//   `updateInstance`, `deleteInstance`, `deleteAttribute` and `deleteTemporalEntity` are outcomes, which an
//   append-only history realises by appending rows that supersede or retract earlier ones (by instanceId) and that
//   its reads honour.
import type { AttrInstance } from '../ngsild/entity/model.js';
import type { EntityQuery, MutateOptions, WriteEvent } from '../store/contract.js';
import type { OptionSpec, PluginLogger } from '../plugin/contract.js';

// The temporal representation a history stores (its instances, records and time windows) is NGSI-LD's, defined in
// ngsild/temporal/history-model.ts.
import type { HistoryInstance, TemporalEntityRecord, TimeProperty, TimeWindow } from '../ngsild/temporal/history-model.js';
import type { AggrMethod, Triple } from '../ngsild/temporal/aggregate.js';
import type { Duration } from '../ngsild/temporal/duration.js';
import type { AttrType } from '../ngsild/entity/model.js';
export type { AggrMethod, Triple } from '../ngsild/temporal/aggregate.js';
export type { HistoryInstance, TemporalEntityRecord, TimeProperty, TimeWindow } from '../ngsild/temporal/history-model.js';

export interface EntityEvent {
  kind: 'created' | 'replaced' | 'deleted';
  at: string;
}

export interface InstanceSelection {
  /** Expanded attribute names; undefined: every attribute. */
  attrs?: readonly string[];
  /** Instances without a datasetId are selected by `@none`. */
  datasetIds?: ReadonlySet<string>;
  window?: TimeWindow;
  /**
   * Without a window, the time property instances are ordered and picked (lastN) by: `observedAt` orders those
   * without one at their createdAt; absent (or another property), createdAt.
   */
  order?: 'observedAt';
  /** The last `lastN` instances per attribute on the window's time property (or `order`; returned oldest first). */
  lastN?: number;
  /** At most this many instances per attribute; more matching sets `truncated`. */
  limit: number;
}

export interface InstancePage {
  /** Per attribute, in time order on the selection's time property. */
  attrs: Record<string, HistoryInstance[]>;
  /** Attributes that had more instances than the limit. */
  truncated: string[];
}

/**
 * A query on the history's temporal entities (§5.7.4), declarative as EntityQuery: ids, type, idPattern and entities
 * select as there (names expanded), scopeQ holds on the scope the temporal entity keeps.
 */
export interface TemporalEntityQuery extends Pick<EntityQuery, 'ids' | 'type' | 'idPattern' | 'entities' | 'scopeQ'> {
  /** Only entities whose history holds at least one of these attributes. */
  attrs?: readonly string[];
  /**
   * Keyset paging for callers that filter further on their side (q on the history): only entities whose id sorts
   * after this one. Without `ids`, entities come in id order, so the last id of a page continues the scan.
   */
  afterId?: string;
  limit: number;
  offset: number;
  count: boolean;
}

export type InstanceUpdateOutcome = 'updated' | 'notFound' | 'typeMismatch';

/**
 * What `aggregate` computes (CIM 009 v1.8 §4.5.19): over the instances `instances` would select with this window
 * (tombstones left out), each sample at its time on `timeproperty` (createdAt when it has none), per attribute and
 * datasetId, each method over periods of `period` from `from` (else the group's first sample), cut at `to`.
 */
export interface AggregateSelection {
  attrs?: readonly string[];
  datasetIds?: ReadonlySet<string>;
  window?: TimeWindow;
  timeproperty: TimeProperty;
  methods: readonly AggrMethod[];
  period: Duration | undefined;
  from?: number;
  to?: number;
}

/** One attribute's datasetId group, aggregated: its type, and per method [result, periodStart, periodEnd] triples. */
export interface AggregatedGroup {
  datasetId?: string;
  type: AttrType;
  results: Partial<Record<AggrMethod, Triple[]>>;
}

/** How far a history beside the store is behind the writes committed to the store (/metrics). */
export interface HistoryLag {
  /** Rows handed to the history and not yet written in it. */
  rows: number;
  /** Age of the oldest of them; 0 when none waits. */
  seconds: number;
  /** Rows the history's database refused and that were dropped, since start (a history that can refuse rows). */
  refused?: number;
}

export interface History {
  readonly name: string;
  /**
   * The lag as last known (never a request to the history's server: /metrics reads it per scrape). Absent for a
   * history kept in the store's own write transactions, which is never behind.
   */
  lag?(): HistoryLag;
  getTemporalEntity(tenant: string, id: string): Promise<TemporalEntityRecord | undefined>;
  queryTemporalEntities(tenant: string, query: TemporalEntityQuery): Promise<{ entities: TemporalEntityRecord[]; count?: number }>;
  entityEvents(tenant: string, id: string): Promise<EntityEvent[]>;
  instances(tenant: string, id: string, selection: InstanceSelection): Promise<InstancePage>;
  /**
   * Aggregation done by the history itself (a time-series database's), per attribute with instances selected, in
   * the groups' time order; undefined when it cannot compute this one (the caller then aggregates `instances`).
   * Optional: without it the temporal API aggregates the instances in the worker.
   */
  aggregate?(tenant: string, id: string, selection: AggregateSelection): Promise<Record<string, AggregatedGroup[]> | undefined>;

  /**
   * Temporal create/append (§6.18.3.1, §6.20.3.1): adds instances, creating the temporal entity when new (true).
   * `opts.createTenant`: a history inside the store registers the tenant in the same transaction; the tenant
   * registry is the store's, so a history beside it (tsdb) cannot, and its caller must register the tenant there.
   */
  addInstances(
    tenant: string,
    entity: { id: string; type: string[]; scope?: string[] },
    attrs: Record<string, AttrInstance[]>,
    at: string,
    opts?: MutateOptions,
  ): Promise<boolean>;
  /** Removes the whole temporal representation; false when there is none. */
  deleteTemporalEntity(tenant: string, id: string): Promise<boolean>;
  /** Removes an attribute's instances (of one datasetId, the default ones, or all with deleteAll); false when none. */
  deleteAttribute(tenant: string, id: string, attrIri: string, opts: { datasetId?: string; deleteAll: boolean }): Promise<boolean>;
  /** Replaces one instance's members (§6.22.3.1), keeping its instanceId and createdAt. */
  updateInstance(
    tenant: string,
    id: string,
    attrIri: string,
    instanceId: string,
    instance: AttrInstance,
    at: string,
  ): Promise<InstanceUpdateOutcome>;
  deleteInstance(tenant: string, id: string, attrIri: string, instanceId: string): Promise<boolean>;

  /**
   * A history beside the store receives each committed write here, in commit order per entity, and appends
   * `historyOfWrite` of it (store/kit/history-of-write.ts). Resolves once a temporal read sees the write, or, for a
   * history that buffers its writes off the request path (tsdb), once the write is queued and its own reads wait for
   * what was queued before them; rejects (or throws) when it cannot keep it (the broker logs that: the write stands,
   * its history is lost). Returns nothing when the write is queued at once: the answer then waits for no promise
   * (tsdb, issue 18: three promises and a turn of microtasks per PATCH). A history inside the store has no `record`.
   */
  record?(tenant: string, events: readonly WriteEvent[]): Promise<void> | undefined;
  /**
   * The importer's history (seed 001 §2.5, importer behaviour 4, §8): one batch of at most 500 records of the stream,
   * written as one transaction with their own times and instanceIds. Refused whole (nothing written, `refused` says
   * why) when an instanceId of it is present already, or a temporal entity event with the same time and kind. A
   * temporal entity a record names but the history lacks is created with the record's entity type.
   */
  importBatch?(records: readonly ImportedHistoryRecord[]): Promise<{ refused?: string }>;
  /** Releases what the history holds (connections); called once per thread at exit. */
  close?(): Promise<void>;
}

/** One record of an imported history: an entity event, or an attribute instance (a tombstone for a deletion). */
export type ImportedHistoryRecord =
  | { kind: 'entity'; tenant: string; id: string; type: string[]; event: EntityEvent }
  | { kind: 'instance'; tenant: string; id: string; type: string[]; attrIri: string; instance: HistoryInstance };

/** How a history plugin is opened, in every thread that serves the temporal API or writes entities. */
export interface HistoryOpenParams {
  /** The plugin's own options (declared in its `options`), parsed. */
  options: Record<string, unknown>;
  /** True in the front thread (the first to open it); the pipeline threads open it after. */
  primary: boolean;
  log: PluginLogger;
  /** The broker instance's id: names what its threads share (a BroadcastChannel) apart from another broker's. */
  instance?: string;
}

/**
 * What a history plugin module exports: `dist/src/plugins/history/<name>/index.js`, `<pluginDir>/history/<name>.js`,
 * or a path given to `--troe`. It may import this contract, the store contract and the store kit.
 */
export interface HistoryPluginModule {
  /** The plugin's own command-line options (`-u` lists them; BROKER_<NAME> sets them too). */
  options?: OptionSpec[];
  historyOpen(params: HistoryOpenParams): Promise<History>;
}
