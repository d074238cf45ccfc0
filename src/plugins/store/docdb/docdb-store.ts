// docdb: the Store contract on a MongoDB-wire server (MongoDB, or FerretDB in the tests), shared by several brokers.
// Every thread of a broker opens its own client. Entity writes are conditional on the version read (a mutation runs
// again on the newer state when another writer got there first); queries go to the server as one filter
// (query-filter.ts), the worker finishing what the server cannot evaluate.
import {
  MongoClient,
  MongoServerError,
  MongoTopologyClosedError,
  type AnyBulkWriteOperation,
  type Collection,
  type Db,
  type Filter,
} from 'mongodb';
import type {
  AttrStat,
  BatchItem,
  BatchOutcome,
  BumpChange,
  DocCollection,
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
import type { PluginLogger } from '../../../plugin/contract.js';
import type { StoredEntity } from '../../../ngsild/entity/model.js';
import { changeOfOutcome } from '../../../store/kit/outcome-change.js';
import { LdError } from '../../../ngsild/problem.js';
import { addToAttrStats, addToTypeStats } from '../../../store/kit/discovery-counts.js';
import { entityQueryPredicate } from '../../../store/kit/entity-query.js';
import { applyBump, withBumped, type Bumped } from '../../../store/kit/bump.js';
import { entityDoc, entityOfDoc, signatureOfDoc, type EntityDoc } from './entity-doc.js';
import { translateQuery } from './query-filter.js';
import {
  COUNTERS,
  ENTITIES,
  TENANTS,
  WITHOUT_GENERATION,
  dbNameOf,
  docCollectionName,
  ensureLayout,
  generationDocId,
  idReadsOf,
  serverKind,
  type IdReads,
  type ServerKind,
} from './layout.js';
import { asStoreError, isUnreachable } from './errors.js';
import { CLAIMS, ClaimReleases, FRESH_MS, claim, needsCheck, type ClaimDoc } from './claims.js';
import { PRESENCE, Presence, type PresenceDoc } from './presence.js';
import { Generations, generationBuffer } from './generations.js';

/** Most matches an orderBy query or a worker-evaluated query holds to sort (as embdb: README "orderBy"). */
export const ORDERED_QUERY_CAP = 20_000;
/** Rounds of read, mutate, conditional write for one entity before the write is refused as contended (409). */
const MAX_ATTEMPTS = 32;
/** Period of the driver's server monitoring, and of the reconnection attempts after a start without the server. */
const HEARTBEAT_MS = 1000;
/**
 * Longest wait for the server's answer to one command: past it the request fails with 503 and the connection is
 * closed. A server that stopped answering (FerretDB 1.x deadlocked, see bulkConditional) never holds a request, or
 * the broker thread's connections, for ever; no command the broker sends takes a healthy server this long.
 */
const COMMAND_TIMEOUT_MS = 60_000;
/** Candidates read per round trip when the worker evaluates part of a query. */
const BATCH = 500;
/**
 * Most finds by `_id` one list of ids has in flight at once where the server reads ids one by one (layout.ts IdReads:
 * FerretDB), the rest waiting in the driver's queue: a batch of 100 takes 16 of the thread's connections (the pool,
 * --dbPoolSize, caps it lower), not all, so the requests beside it are served between its reads. Pushed down is not
 * indexed: FerretDB 1.24's SQLite backend indexes `_ferretdb_sjson->"_id"` and filters on `_ferretdb_sjson->'$._id'`,
 * which SQLite does not match (EXPLAIN QUERY PLAN: SCAN), so a find by `_id` reads the table up to the match (0.5 s at
 * its end with 21,000 entities) and an update or delete by `_id` reads all of it: a batch's replacements cost one
 * table scan each there, whatever the broker sends (issue 17, the docdb batch-upsert row).
 */
const ID_READS_AT_ONCE = 16;
/** Most tenants whose driver handles are kept (DocdbStore.handle). */
const MAX_HANDLES = 1000;
/** Most entities of an id list read in one round trip. */
const MAX_ID_BATCH = 10_000;

export interface DocdbSettings {
  uri: string;
  dbName: string;
  user?: string;
  password?: string;
  poolSize: number;
  timeoutMs: number;
  /** request: writes acknowledged by a majority and journaled; interval: the driver's default write concern. */
  sync: 'interval' | 'request';
  log: PluginLogger;
  /** Most matches an orderBy query sorts (tests give less). */
  orderedQueryCap?: number;
  /** The broker's id, written into its presence lease (a primary's only). */
  brokerId?: string;
  /** Longest wait for one command's answer (tests give less). */
  commandTimeoutMs?: number;
  /** @internal How lists of ids are read, whatever the server (tests of both paths); by default as the server is. */
  idReads?: IdReads;
  /**
   * The broker's counters of its collections' generations (generations.ts), one buffer for the stores of all its
   * threads (storePrepare makes it); absent: one of this store's own (an importer, a test).
   */
  generations?: SharedArrayBuffer;
}

interface DocRecord {
  _id: string;
  o: number;
  j: string;
  /** Counted members (DocCollection.bump), apart from the JSON text a put replaces. */
  b?: Bumped;
  /** How many bumps it had (FerretDB: the version a bump claims, claims.ts). */
  bv?: number;
}

/** The writer's clock in µs, never the same twice in this process: the floor of a new version. */
let lastClock = 0;
function clockMicros(): number {
  lastClock = Math.max(Date.now() * 1000, lastClock + 1);
  return lastClock;
}

export class DocdbStore implements Store {
  readonly name = 'docdb';
  private client: MongoClient;
  private readonly knownTenants = new Set<string>(['']);
  /** Layout of each tenant's database, ensured once per thread (a promise: concurrent first uses wait for one). */
  private readonly layouts = new Map<string, Promise<void>>();
  private closed = false;
  private connected = false;
  /** The client never connected (the server was down at start): see ensureClient. */
  private down = false;
  private reconnecting: Promise<void> | undefined;
  private server: Promise<ServerKind> | undefined;
  /** This process's lease on the database (presence.ts): kept by a primary, read by the importer. */
  private readonly presence: Presence;
  /** Claims of writes that landed, released in bulk (claims.ts; FerretDB only). */
  private readonly releases: ClaimReleases;
  /** @internal for DocdbCollection: the generations of the document collections. */
  readonly generations: Generations;

  constructor(private readonly settings: DocdbSettings) {
    this.client = this.newClient();
    this.presence = new Presence(() => this.db('').collection<PresenceDoc>(PRESENCE), settings.log, settings.brokerId);
    this.releases = new ClaimReleases((e) =>
      settings.log.warn({ err: e instanceof Error ? e.message : String(e) }, 'docdb: claims not released (taken over later)'),
    );
    this.generations = new Generations(settings.generations ?? generationBuffer(), (tenant, name) =>
      this.readGenerationToken(tenant, name),
    );
  }

  private newClient(): MongoClient {
    const settings = this.settings;
    const client = new MongoClient(settings.uri, {
      maxPoolSize: settings.poolSize,
      serverSelectionTimeoutMS: settings.timeoutMs,
      connectTimeoutMS: settings.timeoutMs,
      socketTimeoutMS: settings.commandTimeoutMs ?? COMMAND_TIMEOUT_MS,
      // How soon a server back (or gone) is noticed without a request: /ready follows it.
      heartbeatFrequencyMS: HEARTBEAT_MS,
      ...(settings.user !== undefined ? { auth: { username: settings.user, password: settings.password } } : {}),
      ...(settings.sync === 'request' ? { writeConcern: { w: 'majority', j: true } } : {}),
    });
    client.on('serverHeartbeatSucceeded', () => (this.connected = true));
    client.on('serverHeartbeatFailed', () => (this.connected = false));
    return client;
  }

  /** Connects and lays out the default tenant's database (and, in the primary, every registered tenant's). */
  async start(primary: boolean): Promise<void> {
    await this.client.connect();
    this.connected = true;
    await this.layout('');
    if (primary) for (const tenant of await this.listTenants()) await this.layout(tenant);
    if (primary) await this.presence.start();
  }

  /**
   * Another live broker or importer using this database (its presence lease, presence.ts); undefined when none. The
   * importer refuses such a database (seed 001, importer behaviour 1).
   */
  async openElsewhere(): Promise<string | undefined> {
    const others = await this.io(() => this.presence.others());
    return others === undefined ? undefined : `database '${this.settings.dbName}' is used by ${others}`;
  }

  /** The brokers of the set with a fresh presence lease (presence.ts), read by any thread of any of them. */
  async liveBrokers(): Promise<string[]> {
    return this.io(() => this.presence.liveBrokers());
  }

  /**
   * After a start without the server: tries again every HEARTBEAT_MS until it answers (requests answer 503 until
   * then, and /ready says so), then monitors it as usual.
   */
  reconnectInBackground(primary: boolean): void {
    this.down = true;
    const retry = (): void => {
      if (this.closed) return;
      // The connection can be lost again while start() lays out the tenants: that is one more retry, never an
      // unhandled rejection (it would end the process).
      this.ensureClient()
        .then(() => this.start(primary))
        .catch((e: unknown) => {
          if (this.closed) return;
          this.settings.log.warn(
            { err: e instanceof Error ? e.message : String(e) },
            'docdb: the database is not reachable yet; trying again',
          );
          setTimeout(retry, HEARTBEAT_MS).unref();
        });
    };
    setTimeout(retry, HEARTBEAT_MS).unref();
  }

  /**
   * A client whose first connection failed stays closed ("Topology is closed"): while so, each use first connects a
   * new one (one attempt at a time, shared by the requests that wait for it). Requests reconnect, not only the
   * timer: a pipeline thread idle in Piscina's wait runs no timers.
   */
  private async ensureClient(): Promise<void> {
    if (!this.down) return;
    this.reconnecting ??= (async () => {
      try {
        const old = this.client;
        this.client = this.newClient();
        void old.close().catch(() => undefined);
        await this.client.connect();
        this.down = false;
        this.connected = true;
        this.settings.log.info({ dbName: this.settings.dbName }, 'docdb: the database is reachable');
      } finally {
        this.reconnecting = undefined;
      }
    })();
    await this.reconnecting;
  }

  status(): StoreStatus {
    const detail: Record<string, unknown> = { dbName: this.settings.dbName, sync: this.settings.sync };
    return { open: !this.closed, name: this.name, reachable: this.connected, detail };
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    // The releases wait out their hold (claims.ts HOLD_MS: at most that long) before they go.
    if (this.connected && !this.down) await this.releases.ripe().then(() => this.releases.flush());
    await this.presence.stop(this.connected && !this.down);
    await this.client.close();
  }

  /** Writes are answered once the server acknowledged them with the write concern of --dbSync. */
  async flush(): Promise<void> {}

  /**
   * The driver's handle of a tenant's database and of its entities, made once per client: MongoClient.db copies the
   * client's options into every new Db (about 5% of the front's CPU per request on docdb, measured by a CPU profile of
   * the retrieve row, issue 17), and db.collection resolves them again for every new Collection.
   */
  private handles = new Map<string, { client: MongoClient; db: Db; entities: Collection<EntityDoc> }>();

  private handle(tenant: string): { db: Db; entities: Collection<EntityDoc> } {
    let h = this.handles.get(tenant);
    if (h === undefined || h.client !== this.client) {
      // Tenants are few (each is a database); the bound only keeps a flood of names from growing the map.
      if (this.handles.size >= MAX_HANDLES) this.handles.clear();
      const db = this.client.db(dbNameOf(this.settings.dbName, tenant));
      h = { client: this.client, db, entities: db.collection<EntityDoc>(ENTITIES) };
      this.handles.set(tenant, h);
    }
    return h;
  }

  private db(tenant: string): Db {
    return this.handle(tenant).db;
  }

  private async layout(tenant: string): Promise<void> {
    let done = this.layouts.get(tenant);
    if (done === undefined) {
      done = (async () => {
        const kind = (this.server ??= serverKind(this.client.db('admin')));
        // A failed probe is not kept: the next layout asks again (else one lost connection fails them forever).
        kind.catch(() => this.server === kind && (this.server = undefined));
        await ensureLayout(this.db(tenant), tenant === '', await kind);
      })();
      this.layouts.set(tenant, done);
      done.catch(() => this.layouts.delete(tenant));
    }
    await done;
  }

  /** The server indexes geometries (MongoDB: geo-index.ts); FerretDB 1.x does not. */
  private async geoIndex(): Promise<boolean> {
    const kind = (this.server ??= serverKind(this.client.db('admin')));
    kind.catch(() => this.server === kind && (this.server = undefined));
    return (await kind) === 'mongodb';
  }

  /**
   * The entities of a tenant. Reads need no layout (a database that does not exist reads empty, and is not created by
   * a read); a write lays the tenant out first (`layout`), once it has something to write: a refused request, or a
   * read naming any tenant, leaves no database behind.
   */
  private async entities(tenant: string): Promise<Collection<EntityDoc>> {
    return this.handle(tenant).entities;
  }

  /**
   * Runs a conditional write of entities read at the given versions (`readAt`: performance.now() before the read). On
   * MongoDB the write's own condition on the version is atomic. On FerretDB the writer first claims each (id, version)
   * it moves from (claims.ts) and `write` learns which it got; `byId()` then says whether it may write them by `_id`
   * alone, the one filter FerretDB 1.24 pushes down to SQLite (its `update` and `delete` handlers decode every
   * document of the collection for any other filter, issue 17): true within claims.ts FRESH_MS of the claim, whose
   * version was read less than claims.ts HOLD_MS before it or checked again here by `current` (the versions of ids).
   */
  private async guarded<R>(
    tenant: string,
    reads: Array<[string, number]>,
    readAt: number,
    write: (claimed: ReadonlySet<string>, byId: () => boolean) => Promise<R>,
    current?: (ids: string[]) => Promise<Map<string, number>>,
  ): Promise<R> {
    const wanted = new Map(reads);
    if ((await this.server) !== 'ferretdb' || wanted.size === 0) return write(new Set(wanted.keys()), () => false);
    const claims = this.db(tenant).collection<ClaimDoc>(CLAIMS);
    const got = await claim(claims, wanted);
    const mine = new Map([...wanted].filter(([id]) => got.has(id)));
    try {
      let checked = true;
      if (current !== undefined && got.size > 0 && needsCheck(readAt)) {
        // Slow from the read to the claim: another writer may have moved on from the version read meanwhile.
        const now = await current([...got]);
        for (const id of got) if (now.get(id) !== wanted.get(id)) got.delete(id);
      } else checked = current !== undefined;
      const claimedAt = performance.now();
      return await write(got, () => checked && performance.now() - claimedAt < FRESH_MS);
    } finally {
      // Also after a failed write: it may have landed all the same (an answer lost). Held, claims.ts HOLD_MS.
      this.releases.add(claims, mine);
    }
  }

  /** The versions of the entities of `ids` that exist. */
  private async versionsOf(coll: Collection<EntityDoc>, ids: string[]): Promise<Map<string, number>> {
    const docs = await findByIds(coll, ids, { v: 1 }, await this.idReads(), this.settings.poolSize);
    return new Map(docs.map((d) => [d._id, d.v]));
  }

  /** How this server is best asked for a list of ids (layout.ts IdReads), unless a test forces one. */
  private async idReads(): Promise<IdReads> {
    if (this.settings.idReads !== undefined) return this.settings.idReads;
    const kind = (this.server ??= serverKind(this.client.db('admin')));
    kind.catch(() => this.server === kind && (this.server = undefined));
    return idReadsOf(await kind);
  }

  /** Runs one piece of I/O, turning the driver's failures into the broker's (errors.ts). */
  private async io<R>(fn: () => Promise<R>): Promise<R> {
    try {
      await this.ensureClient();
      const r = await fn();
      this.connected = true;
      return r;
    } catch (e) {
      if (isUnreachable(e)) this.connected = false;
      if (e instanceof MongoTopologyClosedError && !this.closed) this.down = true;
      throw asStoreError(e, this.settings.log);
    }
  }

  // ---- tenants ------------------------------------------------------------------------------------------------

  async hasTenant(tenant: string): Promise<boolean> {
    if (this.knownTenants.has(tenant)) return true;
    const found = await this.io(() =>
      this.db('')
        .collection<{ _id: string }>(TENANTS)
        .findOne({ _id: tenant }, { projection: { _id: 1 } }),
    );
    if (found === null) return false;
    this.knownTenants.add(tenant);
    return true;
  }

  async addTenant(tenant: string): Promise<void> {
    await this.registerTenant(tenant);
  }

  /**
   * Entities per tenant from the server's collection metadata (estimatedDocumentCount: no scan; after an unclean
   * shutdown of the server it may be off until the server counts again). No bytes: the data is the server's.
   */
  async sizes(): Promise<StoreSizes> {
    const entities: Array<[string, number]> = [];
    for (const tenant of new Set(['', ...(await this.listTenants())]))
      entities.push([tenant, await this.io(async () => (await this.entities(tenant)).estimatedDocumentCount())]);
    return { entities };
  }

  async listTenants(): Promise<string[]> {
    const docs = await this.io(() =>
      this.db('')
        .collection<{ _id: string }>(TENANTS)
        .find({}, { projection: { _id: 1 } })
        .toArray(),
    );
    return docs.map((d) => d._id).sort();
  }

  /**
   * Registers a tenant after the write that creates it (the server has no transaction across databases): a crash
   * between the two leaves data in a database that listTenants does not name until the next creating write.
   */
  private async registerTenant(tenant: string): Promise<void> {
    if (this.knownTenants.has(tenant)) return;
    await this.io(async () => {
      await this.layout(tenant);
      await this.db('')
        .collection<{ _id: string; createdAt: string }>(TENANTS)
        .updateOne({ _id: tenant }, { $setOnInsert: { createdAt: new Date().toISOString() } }, { upsert: true })
        .catch((e: unknown) => {
          if (!isDuplicateKey(e)) throw e; // two upserts of one new tenant at once: the other registered it
        });
    });
    this.knownTenants.add(tenant);
  }

  // ---- entities -----------------------------------------------------------------------------------------------

  async getEntity(tenant: string, id: string): Promise<StoredEntity | undefined> {
    const doc = await this.io(async () => (await this.entities(tenant)).findOne({ _id: id }, { projection: { b: 1 } }));
    return doc === null ? undefined : entityOfDoc(doc);
  }

  async getEntityTypes(tenant: string, id: string): Promise<string[] | undefined> {
    const doc = await this.io(async () => (await this.entities(tenant)).findOne({ _id: id }, { projection: { t: 1 } }));
    return doc === null ? undefined : doc.t;
  }

  async mutateEntity<R>(tenant: string, id: string, mutation: Mutation<R>, opts?: MutateOptions): Promise<R> {
    const coll = await this.io(() => this.entities(tenant));
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      // A create (expectAbsent) goes without the read at first: an id that exists is a duplicate key of the insert,
      // and the mutation runs again on the entity read (and refuses it). On FerretDB the read scans the collection.
      const unread = attempt === 0 && opts?.expectAbsent === true;
      const readAt = performance.now();
      const found = unread ? null : await this.io(() => coll.findOne({ _id: id }, { projection: { b: 1, v: 1 } }));
      const current = found === null ? undefined : entityOfDoc(found);
      let outcome: MutationOutcome<R>;
      try {
        outcome = mutation(current);
      } catch (e) {
        if (unread) continue; // it has not seen the entity: it runs again, read
        throw e;
      }
      const next = outcome.next;
      if (next === undefined || (next === null && current === undefined)) {
        if (unread) continue;
        return outcome.result;
      }
      const version = Math.max((found?.v ?? 0) + 1, clockMicros());
      await this.io(() => this.layout(tenant));
      const doc = next === null ? null : entityDoc(next, version, await this.geoIndex());
      const written = await this.io(() =>
        this.guarded(
          tenant,
          found === null ? [] : [[id, found.v]],
          readAt,
          (ok, byId) => (ok.size === 0 && found !== null ? Promise.resolve(false) : writeConditionally(coll, id, found?.v, doc, byId())),
          (ids) => this.versionsOf(coll, ids),
        ),
      );
      if (!written) {
        await pause(attempt);
        continue;
      }
      if (next !== null && opts?.createTenant) await this.registerTenant(tenant);
      opts?.events?.push(eventOf(tenant, id, current, next, outcome, version));
      return outcome.result;
    }
    throw contended(id);
  }

  /**
   * A batch: the current states in one read, the mutations in order (an id given twice sees its first write), the
   * writes in one bulk write, each conditional on the version read. The ids another writer changed meanwhile run
   * their entries again on the newer state. The server writes entries one by one (no transaction spans them): an
   * error while writing rejects the batch with the entries before it written.
   */
  async mutateEntities<R>(tenant: string, items: readonly BatchItem<R>[], opts?: MutateOptions): Promise<BatchOutcome<R>[]> {
    if (items.length === 0) return [];
    const coll = await this.io(() => this.entities(tenant));
    const outcomes: BatchOutcome<R>[] = new Array(items.length);
    const events: Array<WriteEvent[] | undefined> = new Array(items.length);
    let pending = [...new Set(items.map((i) => i.id))];
    let wroteAny = false;
    for (let attempt = 0; pending.length > 0; attempt++) {
      if (attempt >= MAX_ATTEMPTS) throw contended(pending[0]!);
      const want = new Set(pending);
      // Creates that expect no entity (an import) go without the read at first: an id that exists comes back as a
      // duplicate key of the insert and runs again, read, in the next round. On FerretDB so does every creating batch
      // (an upsert): there the read scans the whole collection (seeding 100,000 entities by batch upserts read them
      // all again per batch), an insert of ids that exist only costs one refused command before the read.
      const unread = attempt === 0 && (opts?.expectAbsent === true || (opts?.createTenant === true && (await this.server) === 'ferretdb'));
      const readAt = performance.now();
      const how = await this.io(() => this.idReads());
      const read = unread ? [] : await this.io(() => findByIds(coll, pending, { b: 1, v: 1 }, how, this.settings.poolSize));
      const base = new Map(read.map((d) => [d._id, d]));
      const state = new Map<string, StoredEntity | undefined>();
      for (const id of pending) {
        const d = base.get(id);
        state.set(id, d === undefined ? undefined : entityOfDoc(d));
      }
      const lastVersion = new Map<string, number>();
      let floor = clockMicros();
      for (let i = 0; i < items.length; i++) {
        const item = items[i]!;
        if (!want.has(item.id)) continue;
        events[i] = undefined;
        const current = state.get(item.id);
        let outcome: MutationOutcome<R>;
        try {
          outcome = item.mutation(current);
        } catch (error) {
          outcomes[i] = { ok: false, error };
          continue;
        }
        outcomes[i] = { ok: true, result: outcome.result };
        const next = outcome.next;
        if (next === undefined || (next === null && current === undefined)) continue;
        // Versions grow along the batch, so its events' seqs never go back (store/contract.ts WriteEvent).
        const prior = lastVersion.get(item.id) ?? base.get(item.id)?.v ?? 0;
        const version = Math.max(prior + 1, floor);
        floor = version;
        lastVersion.set(item.id, version);
        state.set(item.id, next === null ? undefined : next);
        events[i] = [eventOf(tenant, item.id, current, next, outcome, version)];
      }
      // One write per id: its last state, conditional on the version read.
      const opIds = [...lastVersion.keys()].filter((id) => state.get(id) !== undefined || base.has(id));
      // Unread, an entry that did not create (it refused, or would delete) has not seen the entity: it runs again, read.
      const unsure = unread ? pending.filter((id) => state.get(id) === undefined) : [];
      // The layout first (a write only: a refused batch leaves no database behind), it tells what docs hold.
      if (opIds.length > 0) await this.io(() => this.layout(tenant));
      const geoIndex = opIds.length > 0 && (await this.geoIndex());
      // A batch of creates only (an import, a batch create of new ids) goes as one insert command: FerretDB runs each
      // upsert below as a find and then an insert (200 upserts took 1.7 s where one insert of 200 took 58 ms); the
      // unique _id refuses an id created meanwhile as the upsert's condition does (a duplicate key: run again).
      const createsOnly = opIds.every((id) => !base.has(id) && state.get(id) !== undefined);
      const ferret = (await this.server) === 'ferretdb';
      /** The write of `id`; `byId`: under a claim (guarded), by `_id` alone. */
      const opOf = (id: string, byId: boolean): AnyBulkWriteOperation<EntityDoc> => {
        const next = state.get(id);
        const v0 = base.get(id)?.v;
        if (next === undefined) return { deleteOne: { filter: byId ? { _id: id } : { _id: id, v: v0! } } };
        const doc = entityDoc(next, lastVersion.get(id)!, geoIndex);
        // FerretDB runs an upsert as a scan of the collection and then an insert: a create is the insert alone there.
        if (createsOnly || (ferret && v0 === undefined)) return { insertOne: { document: doc } };
        if (byId) return { replaceOne: { filter: { _id: id }, replacement: doc } };
        // A create is an upsert on the absence of the entity (another writer's create meanwhile is a duplicate key,
        // lost as an insert's would be): creates and replaces then go in one update command, one round trip.
        return {
          replaceOne: { filter: { _id: id, v: v0 === undefined ? { $exists: false } : v0 }, replacement: doc, upsert: v0 === undefined },
        };
      };
      const reads = opIds.flatMap((id): Array<[string, number]> => {
        const v0 = base.get(id)?.v;
        return v0 === undefined ? [] : [[id, v0]];
      });
      const lost = await this.io(() =>
        this.guarded(
          tenant,
          reads,
          readAt,
          async (claimed, byId) => {
            // Ids another writer holds are lost at once; creates need no claim (the unique id decides).
            const mine = opIds.filter((id) => !base.has(id) || claimed.has(id));
            const held = opIds.filter((id) => base.has(id) && !claimed.has(id));
            if (mine.length === 0) return held;
            const plain = byId();
            const lostHere = await bulkConditional(
              coll,
              mine.map((id) => opOf(id, plain)),
              mine,
              lastVersion,
              ferret,
              (ids) => this.versionsOf(coll, ids),
            );
            return [...held, ...lostHere];
          },
          (ids) => this.versionsOf(coll, ids),
        ),
      );
      if (opIds.length > lost.length) wroteAny = true;
      pending = [...lost, ...unsure];
      if (lost.length > 0) await pause(attempt);
    }
    if (wroteAny && opts?.createTenant) await this.registerTenant(tenant);
    if (opts?.events !== undefined) for (const e of events) if (e !== undefined) opts.events.push(...e);
    return outcomes;
  }

  async queryEntities(tenant: string, query: EntityQuery): Promise<EntityPage> {
    const { filter, exact } = translateQuery(query, query.geo !== undefined && (await this.io(() => this.geoIndex())));
    const coll = await this.io(() => this.entities(tenant));
    const paging = await this.io(() => this.pageOrder());
    if (exact && query.orderBy === undefined && query.ids === undefined) {
      // The server selects, orders, pages and counts: one round trip, plus one for the count.
      const [docs, count] = await this.io(() =>
        Promise.all([
          query.limit === 0
            ? Promise.resolve([])
            : coll.find(filter, { projection: { b: 1 }, ...paging, skip: query.offset, limit: query.limit }).toArray(),
          query.count ? coll.countDocuments(filter) : Promise.resolve(undefined),
        ]),
      );
      const entities = docs.map(entityOfDoc);
      return count === undefined ? { entities } : { entities, count };
    }
    const idReads = query.ids === undefined ? 'in' : await this.io(() => this.idReads());
    return this.io(() => this.workerPage(coll, filter, exact, query, paging, idReads));
  }

  /**
   * The order a query pages in when it has no orderBy (the contract asks for a stable one). MongoDB: by id, which the
   * indexes of the filter serve (`type` is {t, _id}). FerretDB 1.x (SQLite) pushes down no filter but an equality
   * on _id, and no sort: a sort makes it read, decode and sort every document of the collection before the first
   * page (a page of 20 of 100,000 entities by type took 23 s, against 12 ms unsorted). Unsorted, it reads its table
   * in row order, which an update in place keeps, and stops at the end of the page.
   */
  private async pageOrder(): Promise<{ sort?: { _id: 1 } }> {
    const kind = (this.server ??= serverKind(this.client.db('admin')));
    kind.catch(() => this.server === kind && (this.server = undefined));
    return (await kind) === 'mongodb' ? { sort: { _id: 1 } } : {};
  }

  /**
   * What the server cannot finish: candidates in the page order (pageOrder; or the order of the ids), tested here with the query's
   * predicate unless the filter was exact, then sorted (orderBy) and paged. Without orderBy or count, reading stops
   * at the end of the page; with them, every match is read, at most the cap of them (`sortCap`, as embdb).
   * `idReads` each: the candidates of an id list (`id=`, a join level) are read one find by `_id` each, as a batch's
   * (findByIds): FerretDB reads the filter's `$in` as its whole collection, and pushes an `_id` equality down; every
   * other member of the query is then tested here.
   */
  private async workerPage(
    coll: Collection<EntityDoc>,
    filter: Filter<EntityDoc>,
    exact: boolean,
    query: EntityQuery,
    paging: { sort?: { _id: 1 } },
    idReads: IdReads,
  ): Promise<EntityPage> {
    const end = query.offset + query.limit;
    const order = query.orderBy;
    const all = order !== undefined || query.count || query.ids !== undefined;
    const cap = this.settings.orderedQueryCap ?? ORDERED_QUERY_CAP;
    const matches: StoredEntity[] = [];
    let counted = 0;
    // The entities of an id list (a join=flat level, a batch's read) come in one round trip.
    // The limit (at most one document per distinct id) lets the server close the cursor with its first batch: no
    // getMore that answers nothing.
    const idCount = query.ids === undefined ? 0 : new Set(query.ids).size;
    const eachId = query.ids !== undefined && idReads === 'each' && idCount <= MAX_ID_BATCH;
    const test = exact && !eachId ? undefined : entityQueryPredicate(query);
    const batchSize = query.ids !== undefined ? Math.max(1, Math.min(idCount, MAX_ID_BATCH)) : BATCH;
    const cursor = eachId
      ? undefined
      : coll.find(filter, {
          projection: { b: 1 },
          ...paging,
          batchSize,
          ...(query.ids !== undefined && idCount <= MAX_ID_BATCH ? { limit: Math.max(1, idCount) } : {}),
        });
    const candidates = cursor ?? (await findByIds(coll, [...new Set(query.ids)], { b: 1 }, 'each', this.settings.poolSize));
    try {
      for await (const doc of candidates) {
        const entity = entityOfDoc(doc);
        if (test !== undefined && !test(entity)) continue;
        counted++;
        if (order !== undefined || query.ids !== undefined) {
          if (matches.length >= cap) return order !== undefined ? { entities: [], sortCap: cap } : tooMany(cap);
          matches.push(entity);
        } else if (counted > query.offset && counted <= end) matches.push(entity);
        if (!all && counted >= end) break;
      }
    } finally {
      await cursor?.close();
    }
    let page = matches;
    if (query.ids !== undefined && order === undefined) {
      const at = new Map(query.ids.map((id, i) => [id, i]));
      page = matches.sort((a, b) => at.get(a.id)! - at.get(b.id)!).slice(query.offset, end);
    } else if (order !== undefined) {
      const keyed = matches.map((e) => ({ e, key: order.keyOf(e) as SortKey }));
      keyed.sort((a, b) => order.compare(a.key, b.key) || (a.e.id < b.e.id ? -1 : a.e.id > b.e.id ? 1 : 0));
      page = keyed.slice(query.offset, end).map((k) => k.e);
    }
    return query.count ? { entities: page, count: counted } : { entities: page };
  }

  // ---- discovery counts ---------------------------------------------------------------------------------------

  /**
   * Counted from the entities' signatures when asked (no counter documents to keep in step across brokers without
   * transactions): one read of the types' and attributes' fields of the entities concerned.
   */
  async typeStats(tenant: string, typeIri?: string): Promise<TypeStat[]> {
    const stats = new Map<string, TypeStat>();
    await this.eachSignature(tenant, typeIri === undefined ? {} : { t: typeIri }, (sig) => addToTypeStats(stats, sig, 1));
    if (typeIri !== undefined) {
      const one = stats.get(typeIri);
      return one === undefined ? [] : [one];
    }
    return [...stats.values()].filter((s) => s.count > 0);
  }

  async attributeStats(tenant: string, attrIri?: string): Promise<AttrStat[]> {
    const stats = new Map<string, AttrStat>();
    await this.eachSignature(tenant, attrIri === undefined ? {} : { a: attrIri }, (sig) => addToAttrStats(stats, sig, 1));
    if (attrIri !== undefined) {
      const one = stats.get(attrIri);
      return one === undefined ? [] : [one];
    }
    return [...stats.values()];
  }

  private async eachSignature(
    tenant: string,
    filter: Filter<EntityDoc>,
    add: (sig: ReturnType<typeof signatureOfDoc>) => void,
  ): Promise<void> {
    await this.io(async () => {
      const cursor = (await this.entities(tenant)).find(filter, { projection: { t: 1, ak: 1 }, batchSize: 2000 });
      for await (const doc of cursor) add(signatureOfDoc(doc));
    });
  }

  // ---- document collections ----------------------------------------------------------------------------------

  collection(tenant: string, name: string): DocCollection {
    return new DocdbCollection(this, tenant, docCollectionName(name));
  }

  /** @internal for DocdbCollection */
  async docs(
    tenant: string,
    name: string,
    write = false,
  ): Promise<{ coll: Collection<DocRecord>; counters: Collection<{ _id: string; n: number }> }> {
    if (write) await this.layout(tenant);
    const db = this.db(tenant);
    return { coll: db.collection<DocRecord>(name), counters: db.collection<{ _id: string; n: number }>(COUNTERS) };
  }

  /** @internal */
  run<R>(fn: () => Promise<R>): Promise<R> {
    return this.io(fn);
  }

  /**
   * @internal for DocdbCollection.bump: MongoDB applies `$inc` to one document atomically; FerretDB 1.x reads the
   * document and writes it back (40 concurrent increments of one field ended at 19), so there a bump claims the
   * version it read (claims.ts), under a key apart from the entities' (`<collection>\n<id>`, which no entity id is).
   */
  async bumpDoc(tenant: string, name: string, id: string, member: string, change: BumpChange): Promise<boolean> {
    const { coll } = await this.docs(tenant, name, true);
    const kind = (this.server ??= serverKind(this.client.db('admin')));
    if ((await kind) === 'mongodb') {
      const inc: Record<string, number> = { bv: 1 };
      for (const [k, n] of Object.entries(change.inc ?? {})) inc[`b.${member}.${k}`] = n;
      const set: Record<string, string> = {};
      for (const [k, v] of Object.entries(change.set ?? {})) set[`b.${member}.${k}`] = v;
      return (await coll.updateOne({ _id: id }, { $inc: inc, ...(Object.keys(set).length > 0 ? { $set: set } : {}) })).matchedCount === 1;
    }
    for (let round = 0; ; round++) {
      const readAt = performance.now();
      const rec = await coll.findOne({ _id: id });
      if (rec === null) return false;
      const v = rec.bv ?? 0;
      // Its own condition on `bv` checks the version (a collection of a few documents: its scan costs little).
      const done = await this.guarded(tenant, [[`${name}\n${id}`, v]], readAt, async (claimed) => {
        if (claimed.size === 0) return false;
        const filter = rec.bv === undefined ? { _id: id, bv: { $exists: false } } : { _id: id, bv: v };
        return (await coll.updateOne(filter, { $set: { b: applyBump(rec.b, member, change), bv: v + 1 } })).matchedCount === 1;
      });
      if (done) return true;
      // Another writer holds this version: it is read again once that one is likely done.
      await new Promise((r) => setTimeout(r, Math.min(50, 1 + round) * Math.random()));
    }
  }

  /** @internal */
  tenantCreated(tenant: string): Promise<void> {
    return this.registerTenant(tenant);
  }

  /**
   * @internal for DocdbCollection, once a write of a document landed: this broker's threads see it at their next
   * request, and the other brokers of the set at their next read of the collection's token (generations.ts).
   */
  async collectionChanged(tenant: string, name: string): Promise<void> {
    this.generations.moved(tenant, name);
    const { counters } = await this.docs(tenant, name, true);
    const write = () => counters.updateOne({ _id: generationDocId(name) }, { $set: { g: this.generations.newToken() } }, { upsert: true });
    // Two first writes race to create the token's document, as insertNew's counter: the loser writes it again.
    await write().catch((e: unknown) => {
      if (isDuplicateKey(e)) return write();
      throw e;
    });
  }

  private async readGenerationToken(tenant: string, name: string): Promise<string | null> {
    return this.io(async () => {
      const { counters } = await this.docs(tenant, name);
      const doc = (await counters.findOne({ _id: generationDocId(name) }, { projection: { g: 1 } })) as { g?: unknown } | null;
      return typeof doc?.g === 'string' ? doc.g : null;
    });
  }
}

/**
 * Writes `doc` (null: deletes) if the entity is still at version `v0` (undefined: absent); false when it is not.
 * `byId`: the version is held by a claim (guarded): the filter is `_id` alone, which FerretDB pushes down.
 */
async function writeConditionally(
  coll: Collection<EntityDoc>,
  id: string,
  v0: number | undefined,
  doc: EntityDoc | null,
  byId: boolean,
): Promise<boolean> {
  if (v0 === undefined) {
    if (doc === null) return true;
    try {
      await coll.insertOne(doc);
      return true;
    } catch (e) {
      if (isDuplicateKey(e)) return false; // created meanwhile by another writer: the mutation runs again on it
      throw e;
    }
  }
  const filter = byId ? { _id: id } : { _id: id, v: v0 };
  if (doc === null) return (await coll.deleteOne(filter)).deletedCount === 1;
  return (await coll.replaceOne(filter, doc)).matchedCount === 1;
}

/**
 * The bulk write of a batch, unordered (one lost race does not stop the others). Answers the ids whose write did not
 * happen because another writer changed the entity first: a duplicate key on insert or upsert, or a conditional replace or
 * delete that matched nothing (found by reading back the versions of the ids, as the counts do not say which).
 *
 * `oneUpdatePerCommand` (FerretDB 1.x): each replacement goes as an update command of its own. FerretDB's update
 * handler keeps the read of every statement of a command open (a SQLite connection each) until the command ends and
 * takes one more connection for each write: an update command of 100 statements, or a few of them at once, holds
 * all 100 connections of its pool and waits for one more for ever, and every later command on that database waits
 * behind it (a batch upsert of 100 entities hung the server, bench/RESULTS.md; FerretDB v1.24.0
 * internal/handler/msg_update.go, its `defer closer.Close()` inside the loop over the statements).
 */
async function bulkConditional(
  coll: Collection<EntityDoc>,
  ops: AnyBulkWriteOperation<EntityDoc>[],
  ids: string[],
  versions: Map<string, number>,
  oneUpdatePerCommand: boolean,
  versionsOf: (ids: string[]) => Promise<Map<string, number>>,
): Promise<string[]> {
  const lost = new Set<string>();
  let applied = 0;
  const all = ops.map((_, i) => i);
  const groups = oneUpdatePerCommand
    ? [all.filter((i) => !('replaceOne' in ops[i]!)), ...all.filter((i) => 'replaceOne' in ops[i]!).map((i) => [i])]
    : [all];
  for (const group of groups) {
    if (group.length === 0) continue;
    const r = await bulkGroup(
      coll,
      group.map((i) => ops[i]!),
    );
    for (const at of r.lost) lost.add(ids[group[at]!]!);
    applied = r.applied < 0 || applied < 0 ? -1 : applied + r.applied;
  }
  if (applied === ops.length - lost.size) return [...lost];
  // Some conditional write matched nothing: the ids not at the version this batch wrote lost their race.
  const at = await versionsOf(ids);
  ids.forEach((id, i) => {
    const deleting = 'deleteOne' in ops[i]!;
    const v = at.get(id);
    if (deleting ? v !== undefined && v !== versions.get(id) : v !== versions.get(id)) lost.add(id);
  });
  return [...lost];
}

/**
 * @internal (tests) The documents of the `ids` that exist, in no particular order: one `$in` (`in`), or one find by `_id` per id with at
 * most ID_READS_AT_ONCE (and the pool's size) in flight (`each`). The same documents either way: each find reads the
 * document as it is at that moment, as `$in` does (no snapshot spans the ids on either path), and the conditional
 * writes that follow check the versions read.
 */
export async function findByIds<P extends Partial<Record<keyof EntityDoc, 1>>>(
  coll: Collection<EntityDoc>,
  ids: readonly string[],
  projection: P,
  how: IdReads,
  poolSize: number,
): Promise<EntityDoc[]> {
  if (ids.length === 0) return [];
  if (how === 'in') return coll.find({ _id: { $in: [...ids] } }, { projection }).toArray();
  const found: EntityDoc[] = [];
  let next = 0;
  const reader = async (): Promise<void> => {
    while (next < ids.length) {
      const doc = await coll.findOne({ _id: ids[next++]! }, { projection });
      if (doc !== null) found.push(doc);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(ID_READS_AT_ONCE, poolSize, ids.length)) }, reader));
  return found;
}

/** One bulkWrite: how many writes the server applied (-1: it did not say), and the indexes lost to a duplicate key. */
async function bulkGroup(
  coll: Collection<EntityDoc>,
  ops: AnyBulkWriteOperation<EntityDoc>[],
): Promise<{ applied: number; lost: number[] }> {
  try {
    const r = await coll.bulkWrite(ops, { ordered: false });
    return { applied: r.insertedCount + r.upsertedCount + r.matchedCount + r.deletedCount, lost: [] };
  } catch (e) {
    const errors = (e as { writeErrors?: Array<{ index: number; code?: number }> | { index: number; code?: number } }).writeErrors;
    const list = errors === undefined ? [] : Array.isArray(errors) ? errors : [errors];
    if (list.length === 0 || list.some((w) => w.code !== 11000)) throw e;
    const r = (e as { result?: { insertedCount: number; upsertedCount: number; matchedCount: number; deletedCount: number } }).result;
    const applied = r === undefined ? -1 : r.insertedCount + r.upsertedCount + r.matchedCount + r.deletedCount;
    return { applied, lost: list.map((w) => w.index) };
  }
}

function eventOf<R>(
  tenant: string,
  id: string,
  before: StoredEntity | undefined,
  next: StoredEntity | null,
  outcome: MutationOutcome<R>,
  seq: number,
): WriteEvent {
  const after = next === null ? undefined : next;
  return { tenant, id, before, after, change: changeOfOutcome(outcome, before, after), seq };
}

/** A lost race waits a little before the next round, longer each time, so that the winner's write lands. */
function pause(attempt: number): Promise<void> {
  return attempt === 0 ? Promise.resolve() : new Promise((r) => setTimeout(r, Math.min(50, 2 ** attempt) * Math.random()));
}

export function isDuplicateKey(e: unknown): boolean {
  return e instanceof MongoServerError && e.code === 11000;
}

function contended(id: string): LdError {
  return new LdError('Conflict', `entity '${id.slice(0, 200)}' is being written by others at the same time: try again`);
}

function tooMany(cap: number): never {
  throw new LdError('TooManyResults', `the query selects more than ${cap} entities by id`);
}

class DocdbCollection implements DocCollection {
  /** Absent on the collections whose writes would pay for a token no reader uses (layout.ts WITHOUT_GENERATION). */
  readonly generation?: () => number;

  constructor(
    private readonly store: DocdbStore,
    private readonly tenant: string,
    private readonly name: string,
  ) {
    if (!WITHOUT_GENERATION.has(name)) this.generation = () => this.store.generations.current(this.tenant, this.name);
  }

  /** After a write that added, replaced or removed a document. */
  private changed(): Promise<void> {
    return this.generation === undefined ? Promise.resolve() : this.store.run(() => this.store.collectionChanged(this.tenant, this.name));
  }

  async get(id: string): Promise<Record<string, unknown> | undefined> {
    const doc = await this.store.run(async () => (await this.store.docs(this.tenant, this.name)).coll.findOne({ _id: id }));
    return doc === null ? undefined : withBumped(JSON.parse(doc.j) as Record<string, unknown>, doc.b);
  }

  async bump(id: string, member: string, change: BumpChange): Promise<boolean> {
    return this.store.run(() => this.store.bumpDoc(this.tenant, this.name, id, member, change));
  }

  /** Insert or replace; a replaced document keeps its place in the order. */
  async put(id: string, doc: Record<string, unknown>): Promise<void> {
    const j = JSON.stringify(doc);
    await this.store.run(async () => {
      const { coll } = await this.store.docs(this.tenant, this.name, true);
      for (;;) {
        if ((await coll.updateOne({ _id: id }, { $set: { j } })).matchedCount === 1) return;
        if (await this.insertNew(id, j)) return;
      }
    });
    await this.changed();
  }

  async insert(id: string, doc: Record<string, unknown>, opts?: MutateOptions): Promise<boolean> {
    const inserted = await this.store.run(() => this.insertNew(id, JSON.stringify(doc)));
    if (!inserted) return false;
    await this.changed();
    if (opts?.createTenant) await this.store.tenantCreated(this.tenant);
    return true;
  }

  /** Inserts at the end of the order; false when the id exists. */
  private async insertNew(id: string, j: string): Promise<boolean> {
    const { coll, counters } = await this.store.docs(this.tenant, this.name, true);
    if ((await coll.countDocuments({ _id: id }, { limit: 1 })) > 0) return false;
    const next = () => counters.findOneAndUpdate({ _id: this.name }, { $inc: { n: 1 } }, { upsert: true, returnDocument: 'after' });
    // Two first inserts of a collection race to create its counter: the loser's upsert is a duplicate key (MongoDB
    // documents it, FerretDB does it too); the counter exists then, and the increment is asked again.
    const counter = await next().catch((e: unknown) => {
      if (isDuplicateKey(e)) return next();
      throw e;
    });
    try {
      await coll.insertOne({ _id: id, o: counter?.n ?? Date.now(), j });
      return true;
    } catch (e) {
      if (isDuplicateKey(e)) return false;
      throw e;
    }
  }

  async delete(id: string): Promise<boolean> {
    const deleted = await this.store.run(
      async () => (await (await this.store.docs(this.tenant, this.name)).coll.deleteOne({ _id: id })).deletedCount === 1,
    );
    if (deleted) await this.changed();
    return deleted;
  }

  async list(offset = 0, limit = Number.MAX_SAFE_INTEGER): Promise<Array<{ id: string; doc: Record<string, unknown> }>> {
    if (limit <= 0) return [];
    const docs = await this.store.run(async () =>
      (await this.store.docs(this.tenant, this.name)).coll
        .find({}, { sort: { o: 1, _id: 1 }, skip: offset, ...(limit < Number.MAX_SAFE_INTEGER ? { limit } : {}) })
        .toArray(),
    );
    return docs.map((d) => ({ id: d._id, doc: withBumped(JSON.parse(d.j) as Record<string, unknown>, d.b) }));
  }
}
