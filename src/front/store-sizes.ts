// The store's sizes for /metrics (Store.sizes: bytes, entities per tenant), asked at most once a minute and kept:
// a scrape never makes the store count, and a broker never scraped never asks. Tenants past TENANT_LABELS (the
// largest are kept) share one `<other>` label, so 100,000 tenants do not make 100,000 series.
import type { Store, StoreSizes } from '../store/contract.js';
import type { Logger } from '../logger.js';
import { isTenantName } from '../ngsild/tenant.js';

export const SIZES_EVERY_MS = 60_000;
/** Tenants shown on their own. */
export const TENANT_LABELS = 1000;
export const DEFAULT_TENANT_LABEL = '<default>';
export const OTHER_TENANT_LABEL = '<other>';
/** The entity space of a Snapshot: `Snapshot_` and a UUID's hex digits (snapshotSpace, newSpaceKey). */
const SNAPSHOT_SPACE = /^Snapshot_[0-9a-f]{32}$/;

export interface LabelledSizes {
  bytes?: number;
  /** [tenant label, entities]. */
  entities: Array<[string, number]>;
}

export class StoreSizesCache {
  private last: LabelledSizes | undefined;
  private askedAt = -Infinity;
  private asking: Promise<void> | undefined;

  constructor(
    private readonly store: Store,
    private readonly log: Logger,
    private readonly everyMs = SIZES_EVERY_MS,
    private readonly tenantLabels = TENANT_LABELS,
  ) {}

  /** The last sizes; asked again in the background when older than everyMs. The first read waits for the first answer. */
  async read(): Promise<LabelledSizes | undefined> {
    if (this.store.sizes === undefined) return undefined;
    if (this.asking === undefined && Date.now() - this.askedAt >= this.everyMs) this.asking = this.ask();
    if (this.last === undefined) await this.asking;
    return this.last;
  }

  private async ask(): Promise<void> {
    this.askedAt = Date.now();
    try {
      this.last = labelled(await this.store.sizes!(), this.tenantLabels);
    } catch (e) {
      this.log.warn({ err: e }, 'the store sizes cannot be read for /metrics');
    } finally {
      this.asking = undefined;
    }
  }
}

function labelled(sizes: StoreSizes, cap: number): LabelledSizes {
  const sorted = [...sizes.entities].sort((a, b) => b[1] - a[1]);
  const entities: Array<[string, number]> = [];
  let other = 0;
  let others = false;
  for (const [tenant, count] of sorted) {
    // Names come from the store, which holds only checked ones (ngsild/tenant.ts) and the broker's own Snapshot
    // spaces (ngsild/snapshot/snapshot-store.ts); anything else is not a label.
    const label = tenant === '' ? DEFAULT_TENANT_LABEL : isTenantName(tenant) || SNAPSHOT_SPACE.test(tenant) ? tenant : undefined;
    if (label !== undefined && entities.length < cap) entities.push([label, count]);
    else {
      other += count;
      others = true;
    }
  }
  if (others) entities.push([OTHER_TENANT_LABEL, other]);
  return sizes.bytes === undefined ? { entities } : { bytes: sizes.bytes, entities };
}
