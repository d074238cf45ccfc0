// Where a Snapshot keeps what it captured (CIM 009 v1.9.1 §4.3.7): its own entity space in the store, a tenant name
// no client can give (NGSILD-Tenant takes [a-z0-9_-] only), so every store plugin holds it as it holds a tenant.
import { randomUUID } from 'node:crypto';

/** The collection of a tenant that holds its Snapshots (their definitions, not their entities). */
export const SNAPSHOTS = 'snapshots';

/** Between the tenant and the key: '~' is no tenant name's character, so no request can name this space. */
const SPACE_MARK = '~snapshot~';

/** The entity space of a Snapshot of `tenant` ('' for the default one) whose storage key is `key`. */
export const snapshotSpace = (tenant: string, key: string): string => `${tenant}${SPACE_MARK}${key}`;

/** A fresh storage key: a Snapshot and each clone of it get their own, so deleting one never touches another. */
export const newSpaceKey = (): string => randomUUID();

/** Whether a store tenant is a Snapshot's entity space rather than a tenant clients name. */
export const isSnapshotSpace = (tenant: string): boolean => tenant.includes(SPACE_MARK);
