// Operations on stored entities (CIM 009 v1.8 §5.6): append, update, partial update, delete and replace of
// attributes, replace and merge-patch of entities. Pure: the input entity is never changed; the result shares the
// untouched attribute arrays with it. Each result lists what changed, for notifications and history.
import { badRequest } from '../problem.js';
import { VALUE_MEMBER, ENTITY_CORE_MEMBERS, type AttrInstance, type AttrType, type StoredEntity } from './model.js';
import { RESERVED_GEO_IRIS, type AttrFragment } from './expand.js';
import { isNullMarker } from './value-members.js';
import { datasetKey, noChanges, type AttrChanges } from './write-change.js';

export type { AttrChanges } from './write-change.js';

export interface NotUpdated {
  /** Expanded attribute name. */
  attrName: string;
  reason: string;
}

/** Result of append and update (§5.6.2, §5.6.3): `updated` lists every attribute applied (created or modified). */
export interface UpdateResult extends AttrChanges {
  entity: StoredEntity;
  updated: string[];
  notUpdated: NotUpdated[];
}

/** Result of operations on one attribute; `found` false (entity unchanged) is the caller's 404 (§5.6.4, §5.6.5). */
export interface AttrResult extends AttrChanges {
  found: boolean;
  entity: StoredEntity;
}

export interface EntityResult extends AttrChanges {
  entity: StoredEntity;
}

function keyOf(inst: AttrInstance | AttrFragment): string | undefined {
  return inst.datasetId;
}

function indexOfDataset(instances: readonly AttrInstance[], datasetId: string | undefined): number {
  for (let i = 0; i < instances.length; i++) if (instances[i]!.datasetId === datasetId) return i;
  return -1;
}

function isDeletion(inst: AttrInstance | AttrFragment): boolean {
  if (inst.type === undefined) return false;
  return isNullMarker(inst[VALUE_MEMBER[inst.type]]);
}

/** `next` as the new version of `old`: the createdAt of what it replaces is kept (§4.8). */
function replacing(old: AttrInstance, next: AttrInstance, now: string): AttrInstance {
  const r: AttrInstance = { ...next };
  if (old.createdAt !== undefined) r.createdAt = old.createdAt;
  r.modifiedAt = now;
  return r;
}

/** Keeps the default instance first, as the model requires. */
function put(instances: AttrInstance[], inst: AttrInstance): void {
  if (inst.datasetId === undefined) instances.unshift(inst);
  else instances.push(inst);
}

function addTypes(entity: StoredEntity, types: readonly string[] | undefined): boolean {
  if (types === undefined) return false;
  let merged: string[] | undefined;
  for (const t of types) {
    if (entity.type.includes(t) || merged?.includes(t)) continue;
    merged ??= entity.type.slice();
    merged.push(t);
  }
  if (merged === undefined) return false;
  entity.type = merged;
  return true;
}

/**
 * The scope a fragment's `scope` gives an entity (CIM 009 v1.8 §4.18): the given scopes replace the entity's, or with
 * `merge` (append with noOverwrite) are added to them; undefined when that changes nothing.
 */
function nextScope(current: readonly string[] | undefined, given: readonly string[], merge: boolean): string[] | undefined {
  const next = merge && current !== undefined ? [...current, ...given.filter((s) => !current.includes(s))] : [...new Set(given)];
  if (current !== undefined && current.length === next.length && current.every((s, i) => s === next[i])) return undefined;
  return next;
}

/** Entity members that operations on attributes also change, named as in an UpdateResult (§5.2.18). */
export const TYPE_MEMBER = 'type';
export const SCOPE_MEMBER = 'scope';

/** Records what happened to one attribute: its instances before and after, and the keys of those `written`. */
function noteChanged(
  c: AttrChanges,
  attrIri: string,
  before: AttrInstance[] | undefined,
  after: AttrInstance[] | undefined,
  written: string[],
): void {
  if (before === undefined) {
    if (after !== undefined) {
      c.created.push(attrIri);
      c.written[attrIri] = written;
    }
    return;
  }
  c.previous[attrIri] = before;
  if (after === undefined) c.deleted.push(attrIri);
  else {
    c.modified.push(attrIri);
    c.written[attrIri] = written;
  }
}

/** Notes that the instance of `key` was put (added, or in place of the one there). */
function wrote(written: string[], key: string): void {
  if (!written.includes(key)) written.push(key);
}

function setAttr(entity: StoredEntity, attrIri: string, instances: AttrInstance[]): AttrInstance[] | undefined {
  if (instances.length === 0) {
    delete entity[attrIri];
    return undefined;
  }
  entity[attrIri] = instances;
  return instances;
}

/**
 * Append Entity Attributes (§5.6.3): new attributes and instances are added; an instance with the datasetId of an
 * existing one replaces it (keeping its createdAt) unless `noOverwrite`, when it is reported in notUpdated.
 * An instance whose value member is `urn:ngsi-ld:null` deletes the matching instance. `types` are added to the entity's.
 */
export function appendAttributes(
  entity: StoredEntity,
  attrs: Record<string, AttrInstance[]>,
  opts: { noOverwrite: boolean; now: string; types?: readonly string[]; scope?: readonly string[] },
): UpdateResult {
  const next: StoredEntity = { ...entity };
  const result: UpdateResult = { entity: next, updated: [], notUpdated: [], ...noChanges() };
  // §4.16: a type in the fragment is added to the entity's types; §4.18: a scope replaces the entity's, or with
  // noOverwrite is added to it (an append never refuses a scope).
  let touched = addTypes(next, opts.types);
  if (touched) result.updated.push(TYPE_MEMBER);
  if (opts.scope !== undefined) {
    const scope = nextScope(entity.scope, opts.scope, opts.noOverwrite);
    if (scope !== undefined) {
      next.scope = scope;
      result.updated.push(SCOPE_MEMBER);
      touched = true;
    }
  }
  for (const attrIri in attrs) {
    const given = attrs[attrIri]!;
    const before = entity[attrIri] as AttrInstance[] | undefined;
    const instances = before === undefined ? [] : before.slice();
    const written: string[] = [];
    let applied = false;
    let refused: string | undefined;
    for (const inst of given) {
      const at = indexOfDataset(instances, keyOf(inst));
      if (isDeletion(inst)) {
        if (at < 0) refused = datasetReason(inst, 'has no instance to delete');
        else {
          instances.splice(at, 1);
          applied = true;
        }
      } else if (at < 0) {
        put(instances, inst);
        wrote(written, datasetKey(inst));
        applied = true;
      } else if (opts.noOverwrite) {
        refused = datasetReason(inst, 'exists and noOverwrite was asked');
      } else {
        instances[at] = replacing(instances[at]!, inst, opts.now);
        wrote(written, datasetKey(inst));
        applied = true;
      }
    }
    if (applied) {
      noteChanged(result, attrIri, before, setAttr(next, attrIri, instances), written);
      result.updated.push(attrIri);
      touched = true;
    }
    if (refused !== undefined) result.notUpdated.push({ attrName: attrIri, reason: refused });
  }
  if (touched) next.modifiedAt = opts.now;
  return result;
}

function datasetReason(inst: AttrInstance | AttrFragment, what: string): string {
  return inst.datasetId === undefined ? `the default instance ${what}` : `the instance with datasetId ${inst.datasetId} ${what}`;
}

/**
 * Update Entity Attributes (§5.6.2): only existing instances (matched by datasetId) are replaced, keeping their
 * createdAt; others are reported in notUpdated. `urn:ngsi-ld:null` deletes the matching instance.
 */
export function updateAttributes(
  entity: StoredEntity,
  attrs: Record<string, AttrInstance[]>,
  opts: { now: string; types?: readonly string[]; scope?: readonly string[] },
): UpdateResult {
  const next: StoredEntity = { ...entity };
  const result: UpdateResult = { entity: next, updated: [], notUpdated: [], ...noChanges() };
  // §4.16: a type in the fragment is added to the entity's types. §4.18: a scope replaces the entity's scope as an
  // update replaces an attribute: only when the entity has one, else it is not updated.
  if (addTypes(next, opts.types)) result.updated.push(TYPE_MEMBER);
  if (opts.scope !== undefined) {
    if (entity.scope === undefined) result.notUpdated.push({ attrName: SCOPE_MEMBER, reason: 'the entity has no scope' });
    else {
      const scope = nextScope(entity.scope, opts.scope, false);
      if (scope !== undefined) next.scope = scope;
      result.updated.push(SCOPE_MEMBER);
    }
  }
  for (const attrIri in attrs) {
    const before = entity[attrIri] as AttrInstance[] | undefined;
    if (before === undefined) {
      result.notUpdated.push({ attrName: attrIri, reason: 'the attribute does not exist' });
      continue;
    }
    const instances = before.slice();
    const written: string[] = [];
    let applied = false;
    let refused: string | undefined;
    for (const inst of attrs[attrIri]!) {
      const at = indexOfDataset(instances, keyOf(inst));
      if (at < 0) refused = datasetReason(inst, 'does not exist');
      else {
        if (isDeletion(inst)) instances.splice(at, 1);
        else {
          instances[at] = replacing(instances[at]!, inst, opts.now);
          wrote(written, datasetKey(inst));
        }
        applied = true;
      }
    }
    if (applied) {
      noteChanged(result, attrIri, before, setAttr(next, attrIri, instances), written);
      result.updated.push(attrIri);
    }
    if (refused !== undefined) result.notUpdated.push({ attrName: attrIri, reason: refused });
  }
  if (result.updated.length > 0) next.modifiedAt = opts.now;
  return result;
}

/**
 * Partial Attribute Update (§5.6.4): the members given replace those of the instance with the datasetId
 * (`opts.datasetId`, else the fragment's, else the default instance); sub-attributes given replace theirs, and are
 * deleted by `urn:ngsi-ld:null`; a value member `urn:ngsi-ld:null` deletes the instance.
 * Throws 400 when the fragment changes the type without giving the new value member, or makes location etc. no GeoProperty.
 */
export function partialAttributeUpdate(
  entity: StoredEntity,
  attrIri: string,
  fragment: AttrFragment,
  opts: { datasetId?: string; now: string },
): AttrResult {
  const c = noChanges();
  const before = entity[attrIri] as AttrInstance[] | undefined;
  const datasetId = opts.datasetId ?? fragment.datasetId;
  const at = before === undefined ? -1 : indexOfDataset(before, datasetId);
  if (before === undefined || at < 0) return { found: false, entity, ...c };
  // CIM 009 §5.6.4: a partial update changes the members of the attribute, not what it is: a fragment typed as
  // another kind (Property for a Relationship) is refused; Update Entity Attributes (§5.6.2) replaces it whole.
  const kind = fragment.type;
  if (kind !== undefined && kind !== before[at]!.type && !isDeletion(fragment))
    throw badRequest(`${attrIri}: a partial update cannot make a ${before[at]!.type} a ${kind}; replace the attribute instead`);
  const next: StoredEntity = { ...entity, modifiedAt: opts.now };
  const instances = before.slice();
  const written: string[] = [];
  if (isDeletion(fragment)) {
    instances.splice(at, 1);
  } else {
    instances[at] = mergeInstance(instances[at]!, fragment, opts.now, attrIri);
    written.push(datasetKey(instances[at]!));
  }
  noteChanged(c, attrIri, before, setAttr(next, attrIri, instances), written);
  return { found: true, entity: next, ...c };
}

/**
 * `patch` merged into `old` (§5.6.4, §5.6.17): type and value member replaced when given (a new type needs its value
 * member), other core members replaced, sub-attributes merged recursively, `urn:ngsi-ld:null` sub-attributes removed.
 */
function mergeInstance(old: AttrInstance, patch: AttrInstance | AttrFragment, now: string, attrIri: string): AttrInstance {
  const r: AttrInstance = { ...old };
  const newType: AttrType | undefined = patch.type;
  if (newType !== undefined && newType !== old.type) {
    const member = VALUE_MEMBER[newType];
    if (!(member in patch)) throw badRequest(`${attrIri}: changing the type from ${old.type} to ${newType} needs the ${member} member`);
    delete r[VALUE_MEMBER[old.type]];
    if (newType !== 'Relationship' && newType !== 'ListRelationship') delete r.objectType;
    r.type = newType;
  }
  if (RESERVED_GEO_IRIS.has(attrIri) && r.type !== 'GeoProperty') throw badRequest(`${attrIri}: must be a GeoProperty, not a ${r.type}`);
  for (const key in patch) {
    if (key === 'type' || key === 'createdAt' || key === 'modifiedAt') continue;
    const v = patch[key];
    if (v === undefined) continue;
    if (key.indexOf(':') < 0) {
      r[key] = v;
      continue;
    }
    const sub = v as AttrInstance;
    const oldSub = old[key] as AttrInstance | undefined;
    if (isDeletion(sub)) delete r[key];
    else if (oldSub === undefined) r[key] = requireValue(sub, key);
    else r[key] = mergeInstance(oldSub, sub, now, key);
  }
  r.modifiedAt = now;
  return r;
}

/** A merge-patch instance that creates something must be complete: its value member, and its sub-attributes'. */
function requireValue<T extends AttrInstance | AttrFragment>(inst: T, attrIri: string): T {
  const type = inst.type;
  if (type !== undefined && !(VALUE_MEMBER[type] in inst))
    throw badRequest(`${attrIri}: a new ${type} needs a ${VALUE_MEMBER[type]} member`);
  for (const key in inst) if (key.indexOf(':') >= 0) requireValue(inst[key] as AttrInstance, key);
  return inst;
}

/**
 * Delete Entity Attribute (§5.6.5): the instance with `datasetId`, or every instance with `deleteAll`, else the
 * default instance. `found` false when there is no such attribute or instance.
 */
export function deleteAttribute(
  entity: StoredEntity,
  attrIri: string,
  opts: { datasetId?: string; deleteAll?: boolean; now: string },
): AttrResult {
  const c = noChanges();
  const before = entity[attrIri] as AttrInstance[] | undefined;
  if (before === undefined || ENTITY_CORE_MEMBERS.has(attrIri)) return { found: false, entity, ...c };
  let instances: AttrInstance[] = [];
  if (opts.deleteAll !== true) {
    const at = indexOfDataset(before, opts.datasetId);
    if (at < 0) return { found: false, entity, ...c };
    instances = before.slice();
    instances.splice(at, 1);
  }
  const next: StoredEntity = { ...entity, modifiedAt: opts.now };
  noteChanged(c, attrIri, before, setAttr(next, attrIri, instances), []);
  return { found: true, entity: next, ...c };
}

/**
 * Delete of the entity's scope through the attribute route (DELETE /entities/{id}/attrs/scope, §4.18, §5.6.5):
 * `found` false when the entity has none.
 */
export function deleteScope(entity: StoredEntity, now: string): AttrResult {
  const c = noChanges();
  if (entity.scope === undefined) return { found: false, entity, ...c };
  const next: StoredEntity = { ...entity, modifiedAt: now };
  delete next.scope;
  return { found: true, entity: next, ...c };
}

/**
 * Replace Entity (PUT /entities/{id}, §5.6.18 in v1.8): `next` takes the place of `old`, keeping id and createdAt.
 * Attributes of `old` missing from `next` are reported deleted, the others modified or created.
 */
export function replaceEntity(old: StoredEntity, next: StoredEntity, now: string): EntityResult {
  return { entity: replacedEntity(old, next, now), ...replaceChanges(old, next) };
}

/** The entity of replaceEntity alone: what a write stores when nothing takes its change (ops/batch.ts). */
export function replacedEntity(old: StoredEntity, next: StoredEntity, now: string): StoredEntity {
  return { ...next, id: old.id, createdAt: old.createdAt, modifiedAt: now };
}

/** The changes of replaceEntity alone: what `next` in place of `old` does to each attribute. */
export function replaceChanges(old: StoredEntity, next: StoredEntity): AttrChanges {
  const c = noChanges();
  for (const key in old) {
    if (ENTITY_CORE_MEMBERS.has(key)) continue;
    if (!(key in next)) noteChanged(c, key, old[key] as AttrInstance[], undefined, []);
  }
  for (const key in next) {
    if (ENTITY_CORE_MEMBERS.has(key)) continue;
    const instances = next[key] as AttrInstance[];
    noteChanged(c, key, old[key] as AttrInstance[] | undefined, instances, instances.map(datasetKey));
  }
  return c;
}

/**
 * Replace Entity Attribute (PUT /entities/{id}/attrs/{attrId}, §5.6.19 in v1.8): each given instance replaces the
 * instance of its datasetId (keeping createdAt), or is added. `found` false when the attribute does not exist.
 */
export function replaceAttribute(entity: StoredEntity, attrIri: string, given: AttrInstance | AttrInstance[], now: string): AttrResult {
  const c = noChanges();
  const before = entity[attrIri] as AttrInstance[] | undefined;
  if (before === undefined) return { found: false, entity, ...c };
  const instances = before.slice();
  const written: string[] = [];
  for (const inst of Array.isArray(given) ? given : [given]) {
    const at = indexOfDataset(instances, keyOf(inst));
    if (at < 0) put(instances, inst);
    else instances[at] = replacing(instances[at]!, inst, now);
    wrote(written, datasetKey(inst));
  }
  const next: StoredEntity = { ...entity, modifiedAt: now };
  noteChanged(c, attrIri, before, setAttr(next, attrIri, instances), written);
  return { found: true, entity: next, ...c };
}

/**
 * Merge Entity (PATCH /entities/{id}, §5.6.17): types of the patch are added; scope, when given, replaced; new
 * attributes and instances added; existing instances (by datasetId) merged: value members replaced, sub-attributes
 * merged; `urn:ngsi-ld:null` (or JSON null, see expandEntity allowNull) deletes an attribute instance or sub-attribute.
 */
export function mergeEntity(entity: StoredEntity, patch: StoredEntity, now: string): EntityResult {
  const next: StoredEntity = { ...entity };
  const c = noChanges();
  let touched = addTypes(next, patch.type);
  if (patch.scope !== undefined) {
    next.scope = patch.scope;
    touched = true;
  }
  for (const attrIri in patch) {
    if (ENTITY_CORE_MEMBERS.has(attrIri)) continue;
    const before = entity[attrIri] as AttrInstance[] | undefined;
    const instances = before === undefined ? [] : before.slice();
    const written: string[] = [];
    let applied = false;
    for (const inst of patch[attrIri] as AttrInstance[]) {
      const at = indexOfDataset(instances, keyOf(inst));
      if (isDeletion(inst)) {
        if (at >= 0) {
          instances.splice(at, 1);
          applied = true;
        }
      } else if (at < 0) {
        requireValue(inst, attrIri);
        put(instances, inst);
        wrote(written, datasetKey(inst));
        applied = true;
      } else {
        instances[at] = mergeInstance(instances[at]!, inst, now, attrIri);
        wrote(written, datasetKey(inst));
        applied = true;
      }
    }
    if (!applied) continue;
    noteChanged(c, attrIri, before, setAttr(next, attrIri, instances), written);
    touched = true;
  }
  if (touched) next.modifiedAt = now;
  return { entity: next, ...c };
}
