// The pages read-only queries were answered with, kept per store handle (so per thread) and handed out again while
// nothing in their tenant was written (issue 24: reading a page by type, 20 gets and the type index's cursor, was half
// of a polled query's CPU once its entities and their rendered forms were kept). Validated by the tenant's generation
// (EmbdbStore.entitiesGeneration: the id of the last write transaction that wrote one of its entities, in LMDB), so
// a write by any thread or process of any entity of the tenant makes each of its pages stale by itself.
import type { StoredEntity } from '../../../ngsild/entity/model.js';
import type { EntityPage, EntityQuery } from '../../../store/contract.js';

/**
 * Pages kept per store handle by default (--dbPageCache), and the entities they hold at most together per page kept:
 * bounds on the memory. The entities bound scales with the pages given (256 pages: 4096 entities).
 */
export const PAGE_CACHE_PAGES = 256;
export const PAGE_CACHE_ENTITIES_PER_PAGE = 16;
export const PAGE_CACHE_ENTITIES = PAGE_CACHE_PAGES * PAGE_CACHE_ENTITIES_PER_PAGE;

interface Entry {
  generation: number;
  entities: readonly StoredEntity[];
  count: number | undefined;
  examined: number | undefined;
}

export class PageCache {
  /** By `query id NUL tenant`, oldest first. */
  private readonly pages = new Map<string, Entry>();
  private entities = 0;
  /** A number per query object: a compiled query is one object for as long as its caller keeps it. */
  private readonly queryIds = new WeakMap<EntityQuery, number>();
  private nextQueryId = 0;

  constructor(
    private readonly maxPages = PAGE_CACHE_PAGES,
    private readonly maxEntities = PAGE_CACHE_ENTITIES,
  ) {}

  /**
   * The page kept for this query object in `tenant` if it was read at `generation`, as a page of its own (the caller
   * may cut its array: runQuery trims the one past the page).
   */
  get(query: EntityQuery, tenant: string, generation: number): EntityPage | undefined {
    const id = this.queryIds.get(query);
    if (id === undefined) return undefined;
    const key = `${id}\u0000${tenant}`;
    const e = this.pages.get(key);
    if (e === undefined) return undefined;
    if (e.generation !== generation) {
      this.drop(key, e);
      return undefined;
    }
    const page: EntityPage = { entities: e.entities.slice(), kept: true, examined: e.examined };
    if (e.count !== undefined) page.count = e.count;
    return page;
  }

  /** Keeps `page`, read at `generation` for this (frozen) query object; the oldest pages go first. */
  set(query: EntityQuery, tenant: string, generation: number, page: EntityPage): void {
    if (page.entities.length > this.maxEntities) return;
    let id = this.queryIds.get(query);
    if (id === undefined) this.queryIds.set(query, (id = this.nextQueryId++));
    const key = `${id}\u0000${tenant}`;
    const old = this.pages.get(key);
    if (old !== undefined) this.drop(key, old);
    while (this.pages.size >= this.maxPages || (this.entities + page.entities.length > this.maxEntities && this.pages.size > 0)) {
      const [oldestKey, oldest] = this.pages.entries().next().value as [string, Entry];
      this.drop(oldestKey, oldest);
    }
    this.pages.set(key, { generation, entities: page.entities.slice(), count: page.count, examined: page.examined });
    this.entities += page.entities.length;
  }

  get size(): number {
    return this.pages.size;
  }

  private drop(key: string, e: Entry): void {
    this.pages.delete(key);
    this.entities -= e.entities.length;
  }
}
