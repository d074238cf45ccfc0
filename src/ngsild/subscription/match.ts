// Matching entity changes against subscriptions (CIM 009 v1.8 §5.8.6, §5.2.12 notificationTrigger): an index by
// tenant, entity type and id, so a write only looks at the subscriptions that can concern it, then the full test.
import type { AttrInstance, StoredEntity } from '../entity/model.js';
import { ENTITY_CORE_MEMBERS, VALUE_MEMBER } from '../entity/model.js';
import { nullValueOf } from '../entity/value-members.js';
import { datasetKey, sameList, type EntityWrite } from '../entity/write-change.js';
import type { CompiledSubscription } from './compile.js';
import type { NotificationTrigger } from './model.js';

interface TenantSubscriptions {
  byType: Map<string, CompiledSubscription[]>;
  byId: Map<string, CompiledSubscription[]>;
  wildcard: CompiledSubscription[];
  all: Map<string, CompiledSubscription>;
}

/** The subscriptions of every tenant, kept by each thread that matches (pipeline workers) or runs timers (notifier). */
export class SubscriptionIndex {
  private readonly tenants = new Map<string, TenantSubscriptions>();

  get size(): number {
    let n = 0;
    for (const t of this.tenants.values()) n += t.all.size;
    return n;
  }

  /** Whether the tenant has a subscription here (candidates() finds none for any change of a tenant without). */
  holds(tenant: string): boolean {
    const t = this.tenants.get(tenant);
    return t !== undefined && t.all.size > 0;
  }

  get(tenant: string, id: string): CompiledSubscription | undefined {
    return this.tenants.get(tenant)?.all.get(id);
  }

  *each(): IterableIterator<CompiledSubscription> {
    for (const t of this.tenants.values()) yield* t.all.values();
  }

  upsert(sub: CompiledSubscription): void {
    this.remove(sub.tenant, sub.id);
    let t = this.tenants.get(sub.tenant);
    if (t === undefined) {
      t = { byType: new Map(), byId: new Map(), wildcard: [], all: new Map() };
      this.tenants.set(sub.tenant, t);
    }
    t.all.set(sub.id, sub);
    if (sub.wildcard) t.wildcard.push(sub);
    for (const typeIri of new Set(sub.typeIris ?? [])) push(t.byType, typeIri, sub);
    for (const id of new Set(sub.ids ?? [])) push(t.byId, id, sub);
  }

  remove(tenant: string, id: string): void {
    const t = this.tenants.get(tenant);
    const old = t?.all.get(id);
    if (t === undefined || old === undefined) return;
    t.all.delete(id);
    if (old.wildcard) t.wildcard = t.wildcard.filter((s) => s !== old);
    for (const typeIri of new Set(old.typeIris ?? [])) pull(t.byType, typeIri, old);
    for (const eid of new Set(old.ids ?? [])) pull(t.byId, eid, old);
  }

  /** Subscriptions that may concern a change of an entity with these types (before and after) and id. */
  candidates(tenant: string, id: string, before: StoredEntity | undefined, after: StoredEntity | undefined): CompiledSubscription[] {
    const t = this.tenants.get(tenant);
    if (t === undefined) return NONE;
    let out: CompiledSubscription[] | undefined;
    let sources = 0;
    const add = (list: CompiledSubscription[] | undefined): void => {
      if (list === undefined || list.length === 0) return;
      sources++;
      out = out === undefined ? list : out.concat(list);
    };
    add(t.wildcard);
    add(t.byId.get(id));
    if (after !== undefined) for (const typeIri of after.type) add(t.byType.get(typeIri));
    if (before !== undefined)
      for (const typeIri of before.type) if (after === undefined || !after.type.includes(typeIri)) add(t.byType.get(typeIri));
    if (out === undefined) return NONE;
    return sources > 1 ? [...new Set(out)] : out;
  }
}

const NONE: CompiledSubscription[] = [];

function push(m: Map<string, CompiledSubscription[]>, key: string, sub: CompiledSubscription): void {
  const list = m.get(key);
  if (list === undefined) m.set(key, [sub]);
  else list.push(sub);
}

function pull(m: Map<string, CompiledSubscription[]>, key: string, sub: CompiledSubscription): void {
  const list = m.get(key);
  if (list === undefined) return;
  const rest = list.filter((s) => s !== sub);
  if (rest.length === 0) m.delete(key);
  else m.set(key, rest);
}

/** A change that a subscription notifies: why, and the entity to render (stored model, changes marked). */
export interface Matched {
  trigger: NotificationTrigger;
  entity: StoredEntity;
}

/** True while a subscription notifies (isActive, not expired). */
export function isLive(sub: CompiledSubscription, now: number): boolean {
  return sub.isActive && sub.expiresAtMs > now;
}

/**
 * The full test of one write against one subscription; undefined when it does not notify. What changed is the
 * write's own account of it (write-change.ts), read for the attributes it names only.
 */
export function matchChange(sub: CompiledSubscription, write: EntityWrite, now: number): Matched | undefined {
  if (sub.periodMs !== undefined || !isLive(sub, now)) return undefined;
  const { before, after } = write;
  const subject = after ?? before;
  if (subject === undefined) return undefined;
  if (sub.selects !== undefined && !sub.selects(subject)) return undefined;
  if (sub.filter !== undefined && !sub.filter(subject)) return undefined;
  const triggers = sub.triggers;
  const nowIso = new Date(now).toISOString();
  const datasetIds = sub.render.datasetId;
  if (after === undefined) {
    const gone: StoredEntity = { id: subject.id, type: subject.type, createdAt: subject.createdAt, modifiedAt: nowIso, deletedAt: nowIso };
    if (triggers.has('entityDeleted')) {
      // CIM 009 §5.8.6: an entity's deletion shows its deletedAt only, unless showChanges asks for what it had: then
      // each of its attributes, deleted, with its previous value.
      if (sub.showChanges) addDeletedAttrs(gone, subject, undefined, sub, nowIso);
      return { trigger: 'entityDeleted', entity: gone };
    }
    if (!triggers.has('attributeDeleted')) return undefined;
    // CIM 009 §5.8.6: deleting an entity deletes its attributes, so a subscription to attributeDeleted (and not to
    // entityDeleted) hears of the watched ones the entity had, each as NGSI-LD null, with the entity's deletedAt.
    return addDeletedAttrs(gone, subject, sub.watched, sub, nowIso) ? { trigger: 'attributeDeleted', entity: gone } : undefined;
  }
  if (before === undefined) {
    const created = changedAttrs(write, sub.watched, datasetIds);
    if (triggers.has('entityCreated') && (sub.watched === undefined || created.created.length > 0))
      return { trigger: 'entityCreated', entity: after };
    if (triggers.has('attributeCreated') && created.created.length > 0) return { trigger: 'attributeCreated', entity: after };
    return undefined;
  }
  const diff = changedAttrs(write, sub.watched, datasetIds);
  const any = diff.created.length + diff.updated.length + diff.deleted.length > 0;
  let trigger: NotificationTrigger | undefined;
  const membersChanged = (): boolean => !sameList(before.type, after.type) || !sameList(before.scope, after.scope);
  if (triggers.has('entityUpdated') && (any || (sub.watched === undefined && membersChanged()))) trigger = 'entityUpdated';
  else if (triggers.has('attributeCreated') && diff.created.length > 0) trigger = 'attributeCreated';
  else if (triggers.has('attributeUpdated') && diff.updated.length > 0) trigger = 'attributeUpdated';
  else if (triggers.has('attributeDeleted') && diff.deleted.length > 0) trigger = 'attributeDeleted';
  if (trigger === undefined) return undefined;
  const notifyDeleted = (trigger === 'attributeDeleted' || trigger === 'entityUpdated') && diff.deleted.length > 0;
  if (!sub.showChanges && !notifyDeleted) return { trigger, entity: after };
  const entity: StoredEntity = { ...after };
  const previous = write.change.previous;
  if (sub.showChanges)
    for (const attrIri of diff.updated) entity[attrIri] = withPrevious(after[attrIri] as AttrInstance[], previous[attrIri]!);
  // CIM 009 §5.8.6: a deleted attribute, or a deleted datasetId instance of one (§5.6.5), is notified with the
  // NGSI-LD null as its value, after the instances the attribute keeps.
  if (notifyDeleted) {
    for (const attrIri of diff.deleted) {
      const kept = (entity[attrIri] as AttrInstance[] | undefined) ?? [];
      const keptSelected = instancesIn(after, attrIri, datasetIds);
      const lost = lostInstances(inDatasets(previous[attrIri], datasetIds)!, keptSelected);
      entity[attrIri] = [...kept, ...deletedInstances(lost, keptSelected === undefined, sub, nowIso)];
    }
  }
  return { trigger, entity };
}

/**
 * Sets on `gone` the attributes `subject` had (the watched ones, of the selected datasetIds), deleted with it; false
 * when there was none.
 */
function addDeletedAttrs(
  gone: StoredEntity,
  subject: StoredEntity,
  watched: ReadonlySet<string> | undefined,
  sub: CompiledSubscription,
  deletedAt: string,
): boolean {
  let any = false;
  for (const attrIri in subject) {
    if (ENTITY_CORE_MEMBERS.has(attrIri) || (watched !== undefined && !watched.has(attrIri))) continue;
    const lost = instancesIn(subject, attrIri, sub.render.datasetId);
    if (lost === undefined) continue;
    gone[attrIri] = deletedInstances(lost, true, sub, deletedAt);
    any = true;
  }
  return any;
}

/**
 * The instances an attribute lost, as a notification shows them (CIM 009 §5.8.6): each keeps its kind with the
 * NGSI-LD Null as its value member (§4.5.0: `urn:ngsi-ld:null` as value, object, vocab or json, in an array as
 * valueList or objectList, `{"@none": ...}` as languageMap), its datasetId, with showChanges the value it had, with
 * sysAttrs its createdAt and the deletion as modifiedAt and deletedAt. An attribute deleted whole (`whole`: the
 * subscription sees no instance left) is the attribute's name and the null alone: one instance, the default one's (else
 * the first's) kind, unless a datasetId or a previous value per instance is needed (the subscription selects
 * datasetIds, or showChanges).
 */
function deletedInstances(lost: readonly AttrInstance[], whole: boolean, sub: CompiledSubscription, deletedAt: string): AttrInstance[] {
  const showChanges = sub.showChanges;
  if (whole && lost.length > 1 && !showChanges && sub.render.datasetId === undefined) {
    const main = lost.find((inst) => inst.datasetId === undefined) ?? lost[0]!;
    return [nulled(main, deletedAt, false, false)];
  }
  return lost.map((inst) => nulled(inst, deletedAt, showChanges, true));
}

function nulled(inst: AttrInstance, deletedAt: string, withPrevious: boolean, withDatasetId: boolean): AttrInstance {
  const member = VALUE_MEMBER[inst.type];
  const out: AttrInstance = { type: inst.type };
  out[member] = nullValueOf(inst.type);
  if (withPrevious && inst[member] !== undefined) out[PREVIOUS[member]!] = inst[member];
  if (withDatasetId && inst.datasetId !== undefined) out.datasetId = inst.datasetId;
  if (inst.createdAt !== undefined) out.createdAt = inst.createdAt;
  out.modifiedAt = deletedAt;
  out.deletedAt = deletedAt;
  return out;
}

/** The instances of `was` whose datasetId `now` no longer has. */
function lostInstances(was: readonly AttrInstance[], now: readonly AttrInstance[] | undefined): AttrInstance[] {
  if (now === undefined) return was.slice();
  const kept = new Set(now.map(datasetKey));
  return was.filter((inst) => !kept.has(datasetKey(inst)));
}

interface AttrDiff {
  created: string[];
  updated: string[];
  /** Attributes deleted, or that lost some of their datasetId instances (those are in `updated` too when others changed). */
  deleted: string[];
}

function instancesIn(
  entity: StoredEntity | undefined,
  attrIri: string,
  datasetIds: ReadonlySet<string> | undefined,
): AttrInstance[] | undefined {
  return inDatasets(entity?.[attrIri] as AttrInstance[] | undefined, datasetIds);
}

/** The instances of the datasetIds a subscription selects (all without a datasetId member); undefined when none. */
function inDatasets(all: AttrInstance[] | undefined, datasetIds: ReadonlySet<string> | undefined): AttrInstance[] | undefined {
  if (all === undefined || datasetIds === undefined) return all;
  const kept = all.filter((i) => datasetIds.has(datasetKey(i)));
  return kept.length === 0 ? undefined : kept;
}

/**
 * Attributes created, updated (an instance written: any member, modifiedAt included) and deleted by a write, as the
 * subscription sees them: watched ones only, and of the selected datasetIds only (an attribute whose selected
 * instances appear is created for it, one whose selected instances all go is deleted for it). Attributes deleted
 * whole are listed in the order the entity had them, the order a notification shows them in.
 */
export function changedAttrs(write: EntityWrite, watched: ReadonlySet<string> | undefined, datasetIds?: ReadonlySet<string>): AttrDiff {
  const diff: AttrDiff = { created: [], updated: [], deleted: [] };
  const { after, change } = write;
  for (const attrIri of change.created) {
    if (watched !== undefined && !watched.has(attrIri)) continue;
    if (instancesIn(after, attrIri, datasetIds) !== undefined) diff.created.push(attrIri);
  }
  for (const attrIri of change.modified) {
    if (watched !== undefined && !watched.has(attrIri)) continue;
    const was = inDatasets(change.previous[attrIri], datasetIds);
    const now = instancesIn(after, attrIri, datasetIds);
    if (was === undefined) {
      if (now !== undefined) diff.created.push(attrIri);
      continue;
    }
    if (now === undefined) {
      diff.deleted.push(attrIri);
      continue;
    }
    const written = change.written[attrIri] ?? [];
    const rewritten = now.some((inst) => written.includes(datasetKey(inst)));
    // One datasetId instance deleted (§5.6.5 with datasetId) is an attribute deletion; what else changed, an update.
    if (lostInstances(was, now).length > 0) diff.deleted.push(attrIri);
    if (rewritten) diff.updated.push(attrIri);
  }
  if (change.deleted.length > 0) {
    const gone = change.deleted.length === 1 ? change.deleted : inEntityOrder(change.deleted, write.before);
    for (const attrIri of gone) {
      if (watched !== undefined && !watched.has(attrIri)) continue;
      if (inDatasets(change.previous[attrIri], datasetIds) !== undefined) diff.deleted.push(attrIri);
    }
  }
  return diff;
}

/** `names` in the order `entity` has them as members. */
function inEntityOrder(names: readonly string[], entity: StoredEntity | undefined): string[] {
  if (entity === undefined) return names.slice();
  const wanted = new Set(names);
  const out: string[] = [];
  for (const key in entity) if (wanted.has(key)) out.push(key);
  return out;
}

const PREVIOUS: Record<string, string> = {
  value: 'previousValue',
  object: 'previousObject',
  languageMap: 'previousLanguageMap',
  vocab: 'previousVocab',
  json: 'previousJson',
  valueList: 'previousValueList',
  objectList: 'previousObjectList',
};

/** CIM 009 §5.2.12 showChanges: each updated instance carries its former value as previousValue (or previousObject...). */
function withPrevious(now: AttrInstance[], was: AttrInstance[]): AttrInstance[] {
  return now.map((inst) => {
    const old = was.find((w) => w.datasetId === inst.datasetId);
    if (old === undefined) return inst;
    const member = VALUE_MEMBER[old.type];
    const prev = PREVIOUS[member];
    if (prev === undefined || old[member] === undefined) return inst;
    return { ...inst, [prev]: old[member] };
  });
}
