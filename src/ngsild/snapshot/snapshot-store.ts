// Where a Snapshot keeps what it holds (CIM 009 v1.9.1 §5.16): an entity space of its own in the store, a tenant
// name no request can give, so every store plugin and history holds it as it holds a tenant.
import { randomUUID } from 'node:crypto';

/** The collection of a tenant that holds its Snapshots (their definitions, not their entities). */
export const SNAPSHOTS = 'snapshots';

/**
 * Upper case: NGSILD-Tenant is read in lower case (ngsild/tenant.ts), so no request names a space. Letters, digits and
 * '_' only, 41 characters: within what a tenant may be in every store (docdb's database `<dbName>-<tenant>`, tsdb's
 * table names), as a tenant name of at most 50 is.
 */
const SPACE_PREFIX = 'Snapshot_';

/** The entity space of a Snapshot whose storage key is `key` (newSpaceKey). */
export const snapshotSpace = (key: string): string => SPACE_PREFIX + key;

/** A fresh storage key: a Snapshot and each clone of it get their own, so deleting one never touches another. */
export const newSpaceKey = (): string => randomUUID().replaceAll('-', '');

/** Whether a store tenant is a Snapshot's entity space rather than a tenant clients name. */
export const isSnapshotSpace = (tenant: string): boolean => tenant.startsWith(SPACE_PREFIX);
