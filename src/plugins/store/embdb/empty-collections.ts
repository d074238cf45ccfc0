// The collections a thread found empty, kept until a document is created in them: every query lists its tenant's
// registrations (CIM 009 v1.8.1 §5.7.2.4, ops/forward/sources.ts), which mostly hold none, and a range read of none
// costs more than one key (bench query-type: ~3 µs of ~55 a request).
import type { Database } from 'lmdb';

/**
 * The key of `meta` that moves with every document created in one collection of one tenant; the collection's name
 * (the broker's own, no ':') first, so no two pairs share a key.
 */
const generationKey = (tenant: string, name: string): string => `docsCreated:${name}:${tenant}`;

/** A thread that polls many tenants keeps at most this many; past it, it starts over (each costs a list again). */
const MAX_KEPT = 10_000;

export class EmptyCollections {
  /** generationKey → the generation at which this thread listed the collection and found nothing. */
  private readonly seen = new Map<string, number>();

  constructor(private readonly meta: Database<number, string>) {}

  /** Inside a read: whether the collection was found empty and no document has been created in it since. */
  stillEmpty(tenant: string, name: string): boolean {
    const key = generationKey(tenant, name);
    const at = this.seen.get(key);
    return at !== undefined && at === (this.meta.get(key) ?? 0);
  }

  /** Inside the read that listed the collection and found nothing. */
  foundEmpty(tenant: string, name: string): void {
    if (this.seen.size >= MAX_KEPT) this.seen.clear();
    const key = generationKey(tenant, name);
    this.seen.set(key, this.meta.get(key) ?? 0);
  }

  /** Inside the write transaction that creates a document: every thread's "empty" of the collection is past. */
  created(tenant: string, name: string): void {
    const key = generationKey(tenant, name);
    this.meta.putSync(key, (this.meta.get(key) ?? 0) + 1);
  }
}
