// The decoded entities a query read before, kept per store handle (so per thread) and handed out again while their
// stored bytes are unchanged (issue 24: decoding the candidates, and the garbage it leaves, were most of a query's
// store time). Validated by the bytes alone, so any write through any thread, process or broker makes an entry stale
// by itself. Entries are frozen: the callers that ask for them (EntityQuery.readOnly) only read them, and a mistake
// fails loudly instead of changing the next query's answer. The same object again means the same stored entity,
// which lets a caller key what it derives from an entity (a rendered form) on the object.
import type { StoredEntity } from '../../../ngsild/entity/model.js';

/** Entries and stored bytes per store handle: a bound on the memory (decoded entities are a few times larger). */
export const ENTITY_CACHE_ENTRIES = 4096;
export const ENTITY_CACHE_BYTES = 4 * 1024 * 1024;
/** A larger entity is not kept: it would push out many small ones, and its decode is a small part of its query. */
const MAX_ENTRY_BYTES = 16 * 1024;
/**
 * New entries one query may add: a query reading thousands of candidates (a `q` no index serves) would otherwise
 * replace the whole cache on each run, paying a copy and a freeze per candidate for entries the next run evicts.
 */
export const ADMITTED_PER_QUERY = 256;

interface Entry {
  bytes: Uint8Array;
  entity: StoredEntity;
}

export class EntityCache {
  private readonly entries = new Map<string, Entry>();
  private bytes = 0;

  constructor(
    private readonly maxEntries = ENTITY_CACHE_ENTRIES,
    private readonly maxBytes = ENTITY_CACHE_BYTES,
  ) {}

  /** The entity kept for `key` if it was decoded from exactly `stored` (lmdb's reused buffer: only compared). */
  get(key: string, stored: Uint8Array): StoredEntity | undefined {
    const e = this.entries.get(key);
    if (e === undefined) return undefined;
    if (e.bytes.byteLength === stored.byteLength && Buffer.compare(e.bytes, stored) === 0) return e.entity;
    this.drop(key, e);
    return undefined;
  }

  /** Keeps `entity`, decoded from `bytes` (a copy the caller no longer changes), frozen; the oldest entries go first. */
  set(key: string, bytes: Uint8Array, entity: StoredEntity): StoredEntity {
    if (bytes.byteLength > MAX_ENTRY_BYTES) return entity;
    const old = this.entries.get(key);
    if (old !== undefined) this.drop(key, old);
    while (this.entries.size >= this.maxEntries || (this.bytes + bytes.byteLength > this.maxBytes && this.entries.size > 0)) {
      const [oldestKey, oldest] = this.entries.entries().next().value as [string, Entry];
      this.drop(oldestKey, oldest);
    }
    deepFreeze(entity);
    this.entries.set(key, { bytes, entity });
    this.bytes += bytes.byteLength;
    return entity;
  }

  get size(): number {
    return this.entries.size;
  }

  private drop(key: string, e: Entry): void {
    this.entries.delete(key);
    this.bytes -= e.bytes.byteLength;
  }
}

/** The cache key of an entity: tenant names and ids never hold a NUL (ngsild/entity/limits.ts). */
export const cacheKey = (tenant: string, id: string): string => `${tenant}\u0000${id}`;

function deepFreeze(value: unknown): void {
  if (typeof value !== 'object' || value === null || Object.isFrozen(value)) return;
  Object.freeze(value);
  if (Array.isArray(value)) for (const v of value) deepFreeze(v);
  else for (const k in value) deepFreeze((value as Record<string, unknown>)[k]);
}
