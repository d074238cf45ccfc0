// What one write did to one entity (issue 14, write events): the operation and the attributes it created, modified
// and deleted with their previous instances. Computed once where the write is applied (merge.ts, the operations),
// carried with the committed write to what consumes it: subscriptions, a history, bridges.
import { ENTITY_CORE_MEMBERS, type AttrInstance, type StoredEntity } from './model.js';

/**
 * The operation that applied a write (CIM 009 v1.8 §5.6): create (create, batch create and upsert of a new entity),
 * replace (PUT of the entity, upsert with replace), merge (PATCH of the entity, batch merge), update (the attribute
 * routes: PATCH of attributes or one attribute, PUT and DELETE of one attribute or the scope; a purge's drop or keep),
 * append (POST of attributes, batch update, upsert with update), delete (the entity: DELETE, batch delete, purge).
 */
export type WriteKind = 'create' | 'replace' | 'merge' | 'update' | 'append' | 'delete';

/** The attributes a write changed, by expanded name. */
export interface AttrChanges {
  /** Attributes that did not exist before. */
  created: string[];
  /** Existing attributes with an instance added, replaced, merged or deleted (but some instance left). */
  modified: string[];
  /** Attributes removed entirely. */
  deleted: string[];
  /** The instances, before the operation, of every modified or deleted attribute. */
  previous: Record<string, AttrInstance[]>;
  /**
   * Per created or modified attribute, the datasetIds (`@none`: the default instance) of the instances the write put
   * there, new or in place of one: every instance of a created attribute. An instance of a modified attribute whose
   * datasetId is not listed is the one it was; a previous instance whose datasetId the attribute no longer has was
   * deleted.
   */
  written: Record<string, string[]>;
}

export interface WriteChange extends AttrChanges {
  kind: WriteKind;
}

/** A write of one entity: its state before (undefined: created) and after (undefined: deleted), and the change. */
export interface EntityWrite {
  before: StoredEntity | undefined;
  after: StoredEntity | undefined;
  change: WriteChange;
}

/** The key of an instance among its attribute's instances. */
export const datasetKey = (inst: { datasetId?: string }): string => inst.datasetId ?? '@none';

export function noChanges(): AttrChanges {
  return { created: [], modified: [], deleted: [], previous: {}, written: {} };
}

/** The change of a write of `kind`, from what merge.ts reports. */
export function changeOf(kind: WriteKind, c: AttrChanges): WriteChange {
  return { kind, created: c.created, modified: c.modified, deleted: c.deleted, previous: c.previous, written: c.written };
}

/** The creation of `entity`: each of its attributes created. */
export function creationOf(entity: StoredEntity): WriteChange {
  const c: WriteChange = { kind: 'create', ...noChanges() };
  for (const attrIri in entity) {
    if (ENTITY_CORE_MEMBERS.has(attrIri)) continue;
    c.created.push(attrIri);
    c.written[attrIri] = (entity[attrIri] as AttrInstance[]).map(datasetKey);
  }
  return c;
}

/** The deletion of `entity`: each of its attributes deleted. */
export function deletionOf(entity: StoredEntity): WriteChange {
  const c: WriteChange = { kind: 'delete', ...noChanges() };
  for (const attrIri in entity) {
    if (ENTITY_CORE_MEMBERS.has(attrIri)) continue;
    c.deleted.push(attrIri);
    c.previous[attrIri] = entity[attrIri] as AttrInstance[];
  }
  return c;
}

/**
 * The change between two states of an entity found by comparing them, for a write that did not say what it changed
 * (a mutation given to a store directly): an instance counts as written when no equal instance of its datasetId was
 * there. Slower than the change the operations compute, and it cannot tell a replace: an update of `kind`.
 */
export function changeBetween(before: StoredEntity | undefined, after: StoredEntity | undefined, kind: WriteKind = 'update'): WriteChange {
  if (before === undefined) return after === undefined ? { kind, ...noChanges() } : creationOf(after);
  if (after === undefined) return deletionOf(before);
  const c: WriteChange = { kind, ...noChanges() };
  for (const attrIri in after) {
    if (ENTITY_CORE_MEMBERS.has(attrIri)) continue;
    const now = after[attrIri] as AttrInstance[];
    const was = before[attrIri] as AttrInstance[] | undefined;
    if (was === undefined) {
      c.created.push(attrIri);
      c.written[attrIri] = now.map(datasetKey);
      continue;
    }
    if (was === now) continue;
    const written: string[] = [];
    for (const inst of now) {
      const old = was.find((w) => w.datasetId === inst.datasetId);
      if (old === undefined || !sameJsonValue(old, inst)) written.push(datasetKey(inst));
    }
    const removed = was.some((w) => !now.some((n) => n.datasetId === w.datasetId));
    if (written.length === 0 && !removed) continue;
    c.modified.push(attrIri);
    c.previous[attrIri] = was;
    c.written[attrIri] = written;
  }
  for (const attrIri in before) {
    if (ENTITY_CORE_MEMBERS.has(attrIri) || after[attrIri] !== undefined) continue;
    c.deleted.push(attrIri);
    c.previous[attrIri] = before[attrIri] as AttrInstance[];
  }
  return c;
}

/** Equality of two JSON values (members in any order). */
function sameJsonValue(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!sameJsonValue(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  const x = a as Record<string, unknown>;
  const y = b as Record<string, unknown>;
  let n = 0;
  for (const k in x) {
    if (x[k] === undefined) continue;
    if (!Object.hasOwn(y, k) || !sameJsonValue(x[k], y[k])) return false;
    n++;
  }
  for (const k in y) if (y[k] !== undefined) n--;
  return n === 0;
}

/** Two lists (types, scopes) with the same members in the same order; both absent counts as the same. */
export function sameList(a: readonly string[] | undefined, b: readonly string[] | undefined): boolean {
  if (a === b) return true;
  if (a === undefined || b === undefined || a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
