// Retrieve Entity answered from what this thread rendered of the same entity before (issue 24: GET by id spent about
// a third of its front CPU decoding the entity, rendering it and serialising the JSON again for an unchanged entity).
// An entry is only used while the entity's stored bytes are the ones it was rendered from, so any write through any
// thread, process or broker (update, replace, delete then create, purge) makes it stale by itself: nothing to notify.
import { isMainThread } from 'node:worker_threads';
import { LRUCache } from 'lru-cache';
import type { ResolvedContext } from '../ngsild/context/resolved.js';
import type { LdRequest } from '../pipeline/ld-request.js';

/** Entries per thread, and their bytes (stored encoding plus answer): a bound on the memory the cache holds. */
export const RETRIEVE_CACHE_ENTRIES = 4096;
export const RETRIEVE_CACHE_BYTES = 16 * 1024 * 1024;
/** An answer above this is not kept: it would push out many small ones, and its render is a small part of its cost. */
const MAX_ENTRY_BYTES = 64 * 1024;

interface Entry {
  stored: Uint8Array;
  answer: Uint8Array;
}

export class RetrieveCache {
  /**
   * lru-cache bounds the entries and their bytes (stored encoding plus answer), least recently used out first: a hot
   * entity asked again and again stays while a scan of many others passes through.
   */
  private readonly entries: LRUCache<string, Entry>;
  /** A number per resolved @context object: a @context resolved again (changed, refetched) starts afresh. */
  private readonly contextIds = new WeakMap<ResolvedContext, number>();
  private nextContextId = 0;

  constructor(
    maxEntries = RETRIEVE_CACHE_ENTRIES,
    maxBytes = RETRIEVE_CACHE_BYTES,
    /**
     * Whether answers go out as copies: a pool thread transfers the body it answers with to the front, which detaches
     * its buffer (the kept one would be empty after). The front thread (inline runner) transfers nothing and writes
     * the body without changing it, so it answers with the kept bytes themselves: a copy there was a new ArrayBuffer
     * per GET, the largest part of a cached retrieve's cost.
     */
    private readonly copies = !isMainThread,
  ) {
    this.entries = new LRUCache<string, Entry>({
      max: maxEntries,
      maxSize: maxBytes,
      maxEntrySize: Math.min(MAX_ENTRY_BYTES, maxBytes),
      sizeCalculation: (e) => e.stored.byteLength + e.answer.byteLength,
    });
  }

  /**
   * What the answer depends on besides the stored entity: tenant, id, the @context its names are compacted with,
   * the negotiated media type (@context member or not, GeoJSON) and the query string (representation, attrs, pick,
   * omit, lang, type, geometryProperty...): equal keys and equal bytes render equal answers.
   */
  keyOf(req: LdRequest, id: string): string {
    let n = this.contextIds.get(req.context);
    if (n === undefined) {
      n = this.nextContextId++;
      this.contextIds.set(req.context, n);
    }
    return `${n}\u0000${req.tenant}\u0000${req.media}\u0000${id.length}:${id}\u0000${req.task.query}`;
  }

  /**
   * The answer kept for `key` when it was rendered from exactly these stored bytes (a copy where `copies`); the
   * caller never changes it. An entry rendered from other bytes (the entity was written since) is dropped.
   */
  get(key: string, stored: Uint8Array): Uint8Array | undefined {
    const e = this.entries.get(key);
    if (e === undefined) return undefined;
    if (!sameBytes(e.stored, stored)) {
      this.entries.delete(key);
      return undefined;
    }
    return this.copies ? e.answer.slice() : e.answer;
  }

  /**
   * Keeps `answer` (a copy where `copies`: the caller's goes out, and may be transferred), rendered from `stored` (a
   * copy the caller no longer changes); an entry above MAX_ENTRY_BYTES is not kept.
   */
  set(key: string, stored: Uint8Array, answer: Uint8Array): void {
    if (stored.byteLength + answer.byteLength > MAX_ENTRY_BYTES) {
      this.entries.delete(key);
      return;
    }
    this.entries.set(key, { stored, answer: this.copies ? answer.slice() : answer });
  }

  get size(): number {
    return this.entries.size;
  }
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.byteLength !== b.byteLength) return false;
  return Buffer.compare(a, b) === 0;
}
