// Where docdb keeps what: database `<dbName>` for the default tenant and `<dbName>-<tenant>` for each other one
// (Orion-LD's and coraine's convention); in each, the collections below and the indexes queries need, created at
// start and when a tenant is first used (createIndexes is idempotent on both servers).
import type { Db } from 'mongodb';

/** Entities (entity-doc.ts). */
export const ENTITIES = 'entities';
/** The registry of named tenants, in the default tenant's database: `{_id: tenant, createdAt}`. */
export const TENANTS = 'tenants';
/**
 * Insertion counters of the document collections, `{_id: collection name, n}`, and their change tokens,
 * `{_id: generationDocId(name), g}` (generations.ts): documents apart, so that FerretDB 1.x, which runs an update as a
 * read and a write of the whole document, never loses a token to a concurrent insert's count or the reverse.
 */
export const COUNTERS = 'docCounters';

/** The id of a collection's change token in COUNTERS: no collection name holds a ':' (COLLECTION_NAME). */
export function generationDocId(name: string): string {
  return 'generation:' + name;
}

/**
 * Collections without a generation: the notifier writes the notification counters at every flush (notify/counters.ts,
 * each second per subscription that notified) and nothing keeps a listing of them, so a token write per put would be
 * a cost for no reader.
 */
export const WITHOUT_GENERATION: ReadonlySet<string> = new Set(['subscriptionCounters']);

/**
 * The document collections the broker uses (store/contract.ts DocCollection), created with their index at start so
 * that every broker of a set sees the same layout: subscriptions and their counters, registrations, hosted
 * @contexts, policies of the policy API, subscription owners (issue 16).
 */
export const DOC_COLLECTIONS = [
  'subscriptions',
  'subscriptionCounters',
  'csourceRegistrations',
  'jsonldContexts',
  'odrlPolicies',
  'subscriptionOwners',
  'snapshots',
];

const RESERVED = new Set([ENTITIES, TENANTS, COUNTERS, 'writeClaims', 'brokerPresence']);
const COLLECTION_NAME = /^[A-Za-z][A-Za-z0-9_-]{0,63}$/;

/** The server collection of a contract collection name; a name the layout cannot hold is a programming error. */
export function docCollectionName(name: string): string {
  if (!COLLECTION_NAME.test(name) || RESERVED.has(name)) throw new Error(`docdb: '${name}' cannot name a document collection`);
  return name;
}

/** Longest database name MongoDB takes (64 bytes, less one). */
const DB_NAME_MAX = 63;
/** Longest tenant name (ngsild/tenant.ts). */
const TENANT_MAX = 50;

/** Refuses a --dbName that could not hold every tenant's database name, or is no database name at all. */
export function checkDbName(dbName: string): void {
  if (!/^[A-Za-z0-9_-]+$/.test(dbName)) throw new Error(`--dbName '${dbName.slice(0, 80)}': letters, digits, '_' and '-' only`);
  if (dbName.length + 1 + TENANT_MAX > DB_NAME_MAX)
    throw new Error(`--dbName '${dbName}': at most ${DB_NAME_MAX - 1 - TENANT_MAX} characters (a tenant's database is <dbName>-<tenant>)`);
}

export function dbNameOf(dbName: string, tenant: string): string {
  return tenant === '' ? dbName : `${dbName}-${tenant}`;
}

/** What answers on the wire: what it can index differs. */
export type ServerKind = 'mongodb' | 'ferretdb';

/** FerretDB says so in buildInfo (`ferretdbVersion`: "v1.24.0" on its SQLite and PostgreSQL backends alike). */
export async function serverKind(admin: Pick<Db, 'command'>): Promise<ServerKind> {
  const info = await admin.command({ buildInfo: 1 });
  return typeof info.ferretdbVersion === 'string' ? 'ferretdb' : 'mongodb';
}

/**
 * How a list of ids is read: `in`, one `{_id: {$in: ids}}` (one round trip, MongoDB serves it from its _id index);
 * `each`, one find by `_id` per id, a few at once (FerretDB 1.24 pushes an `_id` equality down to its backend but not
 * a `$in`: that reads and decodes the whole collection, 4.0 s for 100 ids among 50,000 on PostgreSQL with a GIN
 * index on _id, against 0.21 s for 100 single reads).
 */
export type IdReads = 'in' | 'each';

export function idReadsOf(kind: ServerKind): IdReads {
  return kind === 'ferretdb' ? 'each' : 'in';
}

/** The collections and indexes of one tenant's database. */
export async function ensureLayout(db: Db, isDefault: boolean, server: ServerKind): Promise<void> {
  const entities = db.collection(ENTITIES);
  // One createIndex per index: FerretDB 1.24 drops the connection (a panic) on a createIndexes of several indexes that
  // exist already, which every start after the first sends.
  // FerretDB 1.24 on SQLite gets none of them: its queries push down an equality on `_id` alone (and that on another
  // expression than its `_id` index, so not even that one serves a query), every other filter is its scan, while
  // SQLite computes each index's expression at every insert and update (5,000 inserts: 1.05 s with these four, 0.69 s
  // without; issue 17). FerretDB v1.24.0 internal/backends/sqlite/collection.go Query, metadata/registry.go.
  if (server === 'mongodb') {
    await entities.createIndex({ t: 1, _id: 1 }, { name: 'type' });
    await entities.createIndex({ s: 1 }, { name: 'scope' });
    await entities.createIndex({ a: 1 }, { name: 'attrs' });
    await entities.createIndex({ qx: 1 }, { name: 'qother' });
    // MongoDB (4.2+) indexes the per-attribute fields of q values and geometry boxes with one wildcard index each.
    // FerretDB 1.x accepts such an index and then fails every insert: there those filters are evaluated by its scan.
    for (const field of ['qv', 'gb']) await entities.createIndex({ [field + '.$**']: 1 }, { name: field + 'Wildcard' });
    // The shapes of the geometries (geo-index.ts), which geo-queries ask with $geoWithin / $geoIntersects.
    await entities.createIndex({ 'gi.g': '2dsphere' }, { name: 'geo' });
  }
  // The order is the insertion counter, then the id: two inserts can be handed one number (FerretDB 1.24 runs
  // findAndModify's $inc as a read and a write, not one atomic step), and the id keeps their order total, so paging
  // with skip never repeats or drops a document.
  for (const name of DOC_COLLECTIONS) await db.collection(name).createIndex({ o: 1, _id: 1 }, { name: 'orderId' });
  if (isDefault) await db.collection(TENANTS).createIndex({ createdAt: 1 }, { name: 'created' });
}
