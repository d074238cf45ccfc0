// The store contract (ARCHITECTURE.md "Stores"): what every store plugin implements and all core code goes through.
// Async and tenant-aware; the default tenant is ''. Mutations run inside the store's transaction.
import type { StoredEntity } from '../ngsild/entity/model.js';
import type { OptionSpec, PluginLogger } from '../plugin/contract.js';

export type { StoredEntity } from '../ngsild/entity/model.js';

/**
 * A change to one entity, computed from its current state inside the store's write transaction.
 * Synchronous and pure: it may run again if the store retries. Returns the next state (`null` deletes,
 * `undefined` leaves it as it is) and a result handed back to the caller. Throwing an LdError writes nothing.
 */
export type Mutation<R> = (current: StoredEntity | undefined) => MutationOutcome<R>;

export interface MutationOutcome<R> {
  next: StoredEntity | null | undefined;
  result: R;
}

export interface MutateOptions {
  /** Register the tenant in the same transaction when this write creates something (creating operations only). */
  createTenant?: boolean;
}

/** One entry of a batch: each runs in the same transaction, but a failing entry never changes another's outcome. */
export interface BatchItem<R> {
  id: string;
  mutation: Mutation<R>;
}

export type BatchOutcome<R> = { ok: true; result: R } | { ok: false; error: unknown };

/** Selection of entities for a query; `filter` runs on candidates the indexes could not exclude. */
export interface EntityQuery {
  ids?: readonly string[];
  /** Candidate type IRIs (an OR list); undefined: every type. */
  typeIris?: readonly string[];
  filter?: (entity: StoredEntity) => boolean;
  limit: number;
  offset: number;
  count: boolean;
}

export interface EntityPage {
  entities: StoredEntity[];
  /** Total matches, when asked for. */
  count?: number;
}

/** A named document collection that nothing renders (`odrlPolicies`, `subscriptionOwners`, ...). */
export interface DocCollection {
  get(id: string): Promise<Record<string, unknown> | undefined>;
  /** Insert or replace. */
  put(id: string, doc: Record<string, unknown>): Promise<void>;
  /** Insert only: false when the id exists. */
  insert(id: string, doc: Record<string, unknown>): Promise<boolean>;
  delete(id: string): Promise<boolean>;
  /** In insertion order. */
  list(offset?: number, limit?: number): Promise<Array<{ id: string; doc: Record<string, unknown> }>>;
}

export interface StoreStatus {
  open: boolean;
  name: string;
  detail?: Record<string, unknown>;
}

export interface Store {
  readonly name: string;
  close(): Promise<void>;
  /** Resolves once every write acknowledged so far is durable. */
  flush(): Promise<void>;
  status(): StoreStatus;

  hasTenant(tenant: string): Promise<boolean>;
  listTenants(): Promise<string[]>;

  getEntity(tenant: string, id: string): Promise<StoredEntity | undefined>;
  /** Types of a stored entity (cheaper than a whole read where the store keeps them apart). */
  getEntityTypes(tenant: string, id: string): Promise<string[] | undefined>;
  mutateEntity<R>(tenant: string, id: string, mutation: Mutation<R>, opts?: MutateOptions): Promise<R>;
  mutateEntities<R>(tenant: string, items: readonly BatchItem<R>[], opts?: MutateOptions): Promise<BatchOutcome<R>[]>;
  queryEntities(tenant: string, query: EntityQuery): Promise<EntityPage>;

  collection(tenant: string, name: string): DocCollection;
}

/** Where a store plugin opens its data: decided by the primary (front) and handed to every thread. */
export interface StoreOpenParams {
  /** The plugin's options and the broker's store options (dbDir, dbSync, dbCompress, dbLockPrefer, ...). */
  options: Record<string, unknown>;
  /** True in the thread that creates the store's files (the front); workers open what it created. */
  primary: boolean;
  log: PluginLogger;
}

/** What a store plugin module exports. */
export interface StorePluginModule {
  options?: OptionSpec[];
  /** Called once in the primary before any thread opens the store: returns options the other threads need (e.g. a RAM path). */
  storePrepare?(params: StoreOpenParams): Promise<Record<string, unknown>>;
  storeOpen(params: StoreOpenParams): Promise<Store>;
  /** Called once in the primary at exit, after every thread closed its handle (e.g. removes a RAM store). */
  storeDispose?(params: StoreOpenParams): Promise<void>;
}
