// Keeps the derived data and key layout of an embdb store at the format this code writes: a store created before the
// type and count indexes (or before entities were encoded with shared structures, or before array keys) is brought
// up to date once, at open.
import type { Database, Key, RootDatabase } from 'lmdb';
import type { AttrStat, TypeStat } from '../../../store/contract.js';
import { addToAttrStats, addToTypeStats, entitySignature } from '../../../store/kit/discovery-counts.js';
import type { PluginLogger } from '../../../plugin/contract.js';
import type { StoredEntity } from '../../../ngsild/entity/model.js';
import { KEY_CODEC, type DocKey, type EntityKey } from './keys.js';
import { putGeoEntries, type GeoEntry, type GeoKey } from './geo-index.js';
import { PAIRS_GENERATION_KEY, type NumberKey, type PairKey, type PairState } from './number-index.js';
import { migrateJoinedKeys } from './key-migration.js';

/**
 * Version of what the store derives from its entities. 1 (or no marker): written before the marker existed, so its
 * type index and discovery counts may be missing or incomplete; 2: type index `[tenant, typeIri, id]` keys (database
 * `typeIds`), typeStats, attrStats, entities encoded with lmdb's shared structures; 3: the type index as sorted
 * duplicates `[tenant, typeIri]` → id (database `typeMembers`), `typeIds` dropped; 4: the spatial index
 * `[tenant, geoproperty IRI, cell]` → id (database `geoCells`, geo-index.ts); 5: the keys of `entities` and `docs` as
 * arrays `[tenant, id]`, `[tenant, collection, id]` where they were strings joined with NUL, which ordered-binary
 * encoded two ways (keys.ts) so that queries scanning a tenant missed keys of 64 characters or more (key-migration.ts);
 * 6: the spatial index's values `[id, lon, lat]` or `[id, west, south, east, north]` where they were ids (a query
 * rules out candidates on the box without reading them: geo-index.ts), so a format-4 or -5 store is rebuilt; 7: the
 * indexes' values never compressed (idsByKey), where a dbCompress store's ids of 1000 bytes and more were LZ4-compressed
 * out of id order (and now read as other ids), so a format-6 store is rebuilt.
 * The number index (number-index.ts) needs no format: it is built per pair on use, and a store without it has none.
 */
export const INDEX_FORMAT_VERSION = 7;
/** The first format with array keys in `entities` and `docs`. */
const ARRAY_KEYS_FORMAT = 5;
/** The first format whose indexes and counts need no rebuild from the entities (uncompressed index values). */
const INDEXES_FORMAT = 7;
export const INDEX_FORMAT_KEY = 'indexFormat';

/** Entities read and rewritten per write transaction: bounded so a large store never holds one huge transaction. */
const CHUNK = 10_000;
/** A progress line every this many entities (a 1M-entity store logs a few dozen lines). */
const PROGRESS_EVERY = 50_000;

/**
 * An index database: entity ids as sorted duplicates under each key, compared as ordered-binary strings (id order).
 * Never compressed, whatever the store's dbCompress: lmdb LZ4-compresses values from 1000 bytes, and an id that long
 * compressed sorted out of id order (a page by type missed it, and a paged scan read it again and again).
 */
const idsByKey = (name: string) => ({ ...KEY_CODEC, name, dupSort: true, encoding: 'ordered-binary', compression: false }) as const;
/** The type index (embdb-store.ts). */
export const TYPE_MEMBERS_DB = idsByKey('typeMembers');
/** The spatial index (geo-index.ts): its values are [id, box...] arrays, in id order as well. */
export const GEO_CELLS_DB = idsByKey('geoCells');
/** The number index (number-index.ts) and the pairs it covers. */
export const ATTR_NUMBERS_DB = idsByKey('attrNumbers');
export const NUMBER_PAIRS_DB = { ...KEY_CODEC, name: 'numberPairs' } as const;
/** The format-2 type index, dropped by the rebuild. */
const LEGACY_TYPE_IDS_DB = 'typeIds';

export interface IndexedDbs {
  env: RootDatabase;
  entities: Database<StoredEntity, EntityKey>;
  docs: Database<unknown, DocKey>;
  typeMembers: Database<string, [string, string]>;
  geoCells: Database<GeoEntry, GeoKey>;
  attrNumbers: Database<string, NumberKey>;
  numberPairs: Database<PairState, PairKey>;
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
  if (found >= INDEXES_FORMAT || !hasEntities(dbs)) {
    await dbs.meta.put(INDEX_FORMAT_KEY, INDEX_FORMAT_VERSION);
    return 0;
  }
  return rebuildIndexes(dbs, log, found);
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
  log.info({ from, to: INDEX_FORMAT_VERSION }, 'embdb: rebuilding the type and spatial indexes and discovery counts');
  const legacy = dbs.env.openDB<null, [string, string, string]>({ ...KEY_CODEC, name: LEGACY_TYPE_IDS_DB });
  dbs.env.transactionSync(() => {
    legacy.dropSync();
    dbs.typeMembers.clearSync();
    dbs.geoCells.clearSync();
    // The number index is built again on use, pair by pair.
    dbs.attrNumbers.clearSync();
    dbs.numberPairs.clearSync();
    dbs.meta.putSync(PAIRS_GENERATION_KEY, (dbs.meta.get(PAIRS_GENERATION_KEY) ?? 0) + 1);
    dbs.typeStats.clearSync();
    dbs.attrStats.clearSync();
  });
  const typeStats = new Map<string, Map<string, TypeStat>>();
  const attrStats = new Map<string, Map<string, AttrStat>>();
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
    if (chunk.length === 0) break;
    dbs.env.transactionSync(() => {
      for (const { key, value } of chunk) {
        const tenant = key[0];
        for (const typeIri of value.type) dbs.typeMembers.putSync([tenant, typeIri], value.id);
        putGeoEntries(dbs.geoCells, tenant, value);
        const sig = entitySignature(value);
        addToTypeStats(mapOf(typeStats, tenant), sig, 1);
        addToAttrStats(mapOf(attrStats, tenant), sig, 1);
        dbs.entities.putSync(key, value);
      }
    });
    const before = visited;
    visited += chunk.length;
    after = chunk[chunk.length - 1]!.key;
    if (Math.floor(visited / PROGRESS_EVERY) > Math.floor(before / PROGRESS_EVERY))
      log.info({ entities: visited, ms: Date.now() - started }, 'embdb: index rebuild progress');
  }
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
