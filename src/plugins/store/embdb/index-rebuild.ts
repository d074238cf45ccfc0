// Keeps the derived data and key layout of an embdb store at the format this code writes: a store created before the
// type and count indexes (or before entities were encoded with shared structures, or before array keys) is brought
// up to date once, at open.
import type { Database, Key, RootDatabase } from 'lmdb';
import type { AttrStat, TypeStat } from '../../../store/contract.js';
import { addToAttrStats, addToTypeStats, entitySignature } from '../../../store/kit/discovery-counts.js';
import type { PluginLogger } from '../../../plugin/contract.js';
import type { StoredEntity } from '../../../ngsild/entity/model.js';
import { KEY_CODEC, type DocKey, type EntityKey } from './keys.js';
import { putGeoEntries, type GeoKey } from './geo-index.js';
import { putNumberEntries, type NumberKey } from './number-index.js';
import { migrateJoinedKeys } from './key-migration.js';

/**
 * Version of what the store derives from its entities. 1 (or no marker): written before the marker existed, so its
 * type index and discovery counts may be missing or incomplete; 2: type index `[tenant, typeIri, id]` keys (database
 * `typeIds`), typeStats, attrStats, entities encoded with lmdb's shared structures; 3: the type index as sorted
 * duplicates `[tenant, typeIri]` → id (database `typeMembers`), `typeIds` dropped; 4: the spatial index
 * `[tenant, geoproperty IRI, cell]` → id (database `geoCells`, geo-index.ts); 5: the keys of `entities` and `docs` as
 * arrays `[tenant, id]`, `[tenant, collection, id]` where they were strings joined with NUL, which ordered-binary
 * encoded two ways (keys.ts) so that queries scanning a tenant missed keys of 64 characters or more (key-migration.ts);
 * 6: the number index `[tenant, typeIri, attrIri, number]` → id (database `attrNumbers`, number-index.ts).
 */
export const INDEX_FORMAT_VERSION = 6;
/** The first format with array keys in `entities` and `docs`. */
const ARRAY_KEYS_FORMAT = 5;
/** The first format whose type and spatial indexes and counts need no rebuild from the entities. */
const INDEXES_FORMAT = 4;
export const INDEX_FORMAT_KEY = 'indexFormat';

/** Entities read and rewritten per write transaction: bounded so a large store never holds one huge transaction. */
const CHUNK = 10_000;
/** A progress line every this many entities (a 1M-entity store logs a few dozen lines). */
const PROGRESS_EVERY = 50_000;

/** An index database: entity ids as sorted duplicates under each key, compared as ordered-binary strings (id order). */
const idsByKey = (name: string) => ({ ...KEY_CODEC, name, dupSort: true, encoding: 'ordered-binary' }) as const;
/** The type index (embdb-store.ts). */
export const TYPE_MEMBERS_DB = idsByKey('typeMembers');
/** The spatial index (geo-index.ts). */
export const GEO_CELLS_DB = idsByKey('geoCells');
/** The number index (number-index.ts). */
export const ATTR_NUMBERS_DB = idsByKey('attrNumbers');
/** The format-2 type index, dropped by the rebuild. */
const LEGACY_TYPE_IDS_DB = 'typeIds';

export interface IndexedDbs {
  env: RootDatabase;
  entities: Database<StoredEntity, EntityKey>;
  docs: Database<unknown, DocKey>;
  typeMembers: Database<string, [string, string]>;
  geoCells: Database<string, GeoKey>;
  attrNumbers: Database<string, NumberKey>;
  typeStats: Database<TypeStat, [string, string]>;
  attrStats: Database<AttrStat, [string, string]>;
  meta: Database<number, string>;
}

export function indexFormatOf(dbs: IndexedDbs): number {
  return dbs.meta.get(INDEX_FORMAT_KEY) ?? 1;
}

/**
 * Brings the key layout and then the indexes up to this code's format when the marker says they are older; returns
 * the entities visited by a rebuild (0 when none ran).
 */
export async function rebuildIndexesIfOld(dbs: IndexedDbs, log: PluginLogger): Promise<number> {
  const found = indexFormatOf(dbs);
  if (found >= INDEX_FORMAT_VERSION) return 0;
  // Keys first: the rebuild below reads entity keys as arrays. Each database costs one scan of its keys when it holds
  // nothing to move (a new store: nothing at all, and no line in the log).
  if (found < ARRAY_KEYS_FORMAT) {
    migrateJoinedKeys(dbs.env, dbs.entities as Database<unknown, Key>, 2, log, 'entities');
    migrateJoinedKeys(dbs.env, dbs.docs as Database<unknown, Key>, 3, log, 'docs');
  }
  // A store without entities has nothing to derive: it is marked current at once, without a rebuild in the log.
  if (!hasEntities(dbs)) {
    await dbs.meta.put(INDEX_FORMAT_KEY, INDEX_FORMAT_VERSION);
    return 0;
  }
  if (found < INDEXES_FORMAT) return rebuildIndexes(dbs, log, found);
  // Formats 4 and 5 lack only the number index.
  return buildNumberIndex(dbs, log, found);
}

/**
 * Reads every entity in chunks of CHUNK, in key order, each chunk handed to `write` inside one write transaction
 * (a large store never holds one huge transaction); answers the entities visited.
 */
function eachChunk(
  dbs: IndexedDbs,
  log: PluginLogger,
  started: number,
  write: (chunk: ReadonlyArray<{ key: EntityKey; value: StoredEntity }>) => void,
): number {
  let visited = 0;
  let after: EntityKey | undefined;
  for (;;) {
    const chunk: Array<{ key: EntityKey; value: StoredEntity }> = [];
    for (const { key, value } of dbs.entities.getRange(after === undefined ? { limit: CHUNK + 1 } : { start: after, limit: CHUNK + 1 })) {
      // The shared structures record lives under a symbol key in the same database.
      if (!Array.isArray(key)) continue;
      if (after !== undefined && key[0] === after[0] && key[1] === after[1]) continue;
      chunk.push({ key, value });
      if (chunk.length === CHUNK) break;
    }
    if (chunk.length === 0) return visited;
    dbs.env.transactionSync(() => write(chunk));
    const before = visited;
    visited += chunk.length;
    after = chunk[chunk.length - 1]!.key;
    if (Math.floor(visited / PROGRESS_EVERY) > Math.floor(before / PROGRESS_EVERY))
      log.info({ entities: visited, ms: Date.now() - started }, 'embdb: index rebuild progress');
  }
}

/**
 * A store of format 4 or 5 lacks only the number index: it is derived from every entity, the other indexes, the
 * counts and the entities left as they are. The marker is written last: a build cut short runs again at the next open.
 */
function buildNumberIndex(dbs: IndexedDbs, log: PluginLogger, from: number): number {
  const started = Date.now();
  log.info({ from, to: INDEX_FORMAT_VERSION }, 'embdb: building the number index');
  dbs.env.transactionSync(() => dbs.attrNumbers.clearSync());
  const visited = eachChunk(dbs, log, started, (chunk) => {
    for (const { key, value } of chunk) putNumberEntries(dbs.attrNumbers, key[0], value);
  });
  dbs.env.transactionSync(() => dbs.meta.putSync(INDEX_FORMAT_KEY, INDEX_FORMAT_VERSION));
  log.info({ entities: visited, ms: Date.now() - started, version: INDEX_FORMAT_VERSION }, 'embdb: number index built');
  return visited;
}

function hasEntities(dbs: IndexedDbs): boolean {
  // The shared structures record (a symbol key) is the only key that is not an entity's.
  for (const { key } of dbs.entities.getRange({ limit: 2 })) if (Array.isArray(key)) return true;
  return false;
}

/**
 * Clears the type index and the discovery counts and derives them again from every entity, rewriting each entity so
 * it is encoded as this code encodes it. The marker is written last: a rebuild cut short runs again at the next open.
 */
export async function rebuildIndexes(dbs: IndexedDbs, log: PluginLogger, from: number): Promise<number> {
  const started = Date.now();
  log.info({ from, to: INDEX_FORMAT_VERSION }, 'embdb: rebuilding the type, spatial and number indexes and discovery counts');
  const legacy = dbs.env.openDB<null, [string, string, string]>({ ...KEY_CODEC, name: LEGACY_TYPE_IDS_DB });
  dbs.env.transactionSync(() => {
    legacy.dropSync();
    dbs.typeMembers.clearSync();
    dbs.geoCells.clearSync();
    dbs.attrNumbers.clearSync();
    dbs.typeStats.clearSync();
    dbs.attrStats.clearSync();
  });
  const typeStats = new Map<string, Map<string, TypeStat>>();
  const attrStats = new Map<string, Map<string, AttrStat>>();
  const visited = eachChunk(dbs, log, started, (chunk) => {
    for (const { key, value } of chunk) {
      const tenant = key[0];
      for (const typeIri of value.type) dbs.typeMembers.putSync([tenant, typeIri], value.id);
      putGeoEntries(dbs.geoCells, tenant, value);
      putNumberEntries(dbs.attrNumbers, tenant, value);
      const sig = entitySignature(value);
      addToTypeStats(mapOf(typeStats, tenant), sig, 1);
      addToAttrStats(mapOf(attrStats, tenant), sig, 1);
      dbs.entities.putSync(key, value);
    }
  });
  dbs.env.transactionSync(() => {
    for (const [tenant, stats] of typeStats) for (const [typeIri, stat] of stats) dbs.typeStats.putSync([tenant, typeIri], stat);
    for (const [tenant, stats] of attrStats) for (const [attrIri, stat] of stats) dbs.attrStats.putSync([tenant, attrIri], stat);
    dbs.meta.putSync(INDEX_FORMAT_KEY, INDEX_FORMAT_VERSION);
  });
  log.info({ entities: visited, ms: Date.now() - started, version: INDEX_FORMAT_VERSION }, 'embdb: indexes rebuilt');
  return visited;
}

function mapOf<V>(outer: Map<string, Map<string, V>>, tenant: string): Map<string, V> {
  let inner = outer.get(tenant);
  if (inner === undefined) {
    inner = new Map();
    outer.set(tenant, inner);
  }
  return inner;
}
