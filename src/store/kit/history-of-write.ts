// What one committed entity write adds to a history (seed 001, importer behaviour 4), the same for every history
// plugin: embdb applies it in the write's own transaction, a history beside the store appends it. Part of the kit.
// walkHistoryOfWrite hands each part to a sink as it finds it (tsdb appends their facts as bytes on the request's
// thread, with no history write object in between: issue 18); historyOfWrite collects them.
import { ENTITY_CORE_MEMBERS, VALUE_MEMBER, type AttrInstance, type StoredEntity } from '../../ngsild/entity/model.js';
import { datasetKey, sameList, type WriteChange } from '../../ngsild/entity/write-change.js';
import type { EntityEvent, HistoryInstance, TemporalEntityRecord } from '../../history/contract.js';

export interface HistoryWrite {
  event?: EntityEvent;
  /**
   * The temporal entity as the write leaves it, when the write changes it (created, types or scope, deleted).
   * Unless `fresh` (a create, which also starts a re-created entity anew), the history keeps its record's createdAt.
   */
  entity?: TemporalEntityRecord;
  fresh: boolean;
  /** New instances and tombstones, in the order they were written. */
  instances: Array<{ attrIri: string; instance: HistoryInstance }>;
}

/**
 * What a history does with the parts of a write (walkHistoryOfWrite), in this order: `entity` at most once (the
 * write's event if any, and the temporal entity when the write changes it), then `instance` per new instance or
 * tombstone, in the order written. A sink is a reused object: no closure per write.
 */
export interface HistorySink {
  entity(event: EntityEvent | undefined, entity: TemporalEntityRecord | undefined, fresh: boolean): void;
  /** `atMs`: the instance's createdAt (the write's time) in ms since the epoch. */
  instance(attrIri: string, instance: HistoryInstance, atMs: number): void;
}

const NGSI_LD_NULL = 'urn:ngsi-ld:null';

/**
 * The history of the write that turns `current` into `next` (null: deleted; undefined current: created), whose change
 * the operation reported, handed to `sink`: a replace is an event; an update records the instances it wrote (new, or
 * in place of one) and a tombstone per instance it removed. `newInstanceId` names each new instance from its time in
 * ms.
 */
export function walkHistoryOfWrite(
  current: StoredEntity | undefined,
  next: StoredEntity | null,
  change: WriteChange,
  newInstanceId: (ms: number) => string,
  sink: HistorySink,
): void {
  if (next === null) {
    if (current === undefined) return;
    const at = new Date().toISOString();
    const ms = Date.parse(at);
    sink.entity({ kind: 'deleted', at }, { ...temporalRecordOf(current), modifiedAt: at, deletedAt: at }, false);
    for (const attrIri in current) {
      if (ENTITY_CORE_MEMBERS.has(attrIri)) continue;
      for (const old of current[attrIri] as AttrInstance[]) sink.instance(attrIri, tombstoneOf(old, at, newInstanceId(ms)), ms);
    }
    return;
  }
  const at = next.modifiedAt;
  const ms = Date.parse(at);
  if (current === undefined) {
    sink.entity({ kind: 'created', at: next.createdAt }, temporalRecordOf(next), true);
    for (const attrIri in next) {
      if (ENTITY_CORE_MEMBERS.has(attrIri)) continue;
      for (const inst of next[attrIri] as AttrInstance[]) sink.instance(attrIri, historyInstanceOf(inst, at, newInstanceId(ms)), ms);
    }
    return;
  }
  // The temporal entity changes with its types or scope; its instances carry their own times (one write less).
  const entity = !sameList(current.type, next.type) || !sameList(current.scope, next.scope) ? temporalRecordOf(next) : undefined;
  const event: EntityEvent | undefined = change.kind === 'replace' ? { kind: 'replaced', at } : undefined;
  if (event !== undefined || entity !== undefined) sink.entity(event, entity, false);
  for (const attrIri of change.created) walkWritten(next, attrIri, change.written[attrIri], at, ms, newInstanceId, sink);
  for (const attrIri of change.modified) walkWritten(next, attrIri, change.written[attrIri], at, ms, newInstanceId, sink);
  for (const attrIri of change.modified) {
    const after = next[attrIri] as AttrInstance[] | undefined;
    for (const old of change.previous[attrIri] ?? []) {
      if (after !== undefined && hasDataset(after, old.datasetId)) continue;
      sink.instance(attrIri, tombstoneOf(old, at, newInstanceId(ms)), ms);
    }
  }
  for (const attrIri of change.deleted)
    for (const old of change.previous[attrIri] ?? []) sink.instance(attrIri, tombstoneOf(old, at, newInstanceId(ms)), ms);
}

/** The history of a write as one object (walkHistoryOfWrite's parts, collected). */
export function historyOfWrite(
  current: StoredEntity | undefined,
  next: StoredEntity | null,
  change: WriteChange,
  newInstanceId: (ms: number) => string,
): HistoryWrite {
  const out: HistoryWrite = { fresh: false, instances: [] };
  walkHistoryOfWrite(current, next, change, newInstanceId, {
    entity(event, entity, fresh) {
      if (event !== undefined) out.event = event;
      if (entity !== undefined) out.entity = entity;
      out.fresh = fresh;
    },
    instance(attrIri, instance) {
      out.instances.push({ attrIri, instance });
    },
  });
  return out;
}

function hasDataset(list: readonly AttrInstance[], datasetId: string | undefined): boolean {
  for (const a of list) if (a.datasetId === datasetId) return true;
  return false;
}

/** The instances of an attribute that the write put there, as new history instances. */
function walkWritten(
  next: StoredEntity,
  attrIri: string,
  written: readonly string[] | undefined,
  at: string,
  ms: number,
  newInstanceId: (ms: number) => string,
  sink: HistorySink,
): void {
  if (written === undefined || written.length === 0) return;
  for (const inst of (next[attrIri] as AttrInstance[] | undefined) ?? []) {
    if (written.includes(datasetKey(inst))) sink.instance(attrIri, historyInstanceOf(inst, at, newInstanceId(ms)), ms);
  }
}

/** The instance as a history keeps it: its own identity, created and modified at the write's time. */
export function historyInstanceOf(inst: AttrInstance, at: string, instanceId: string): HistoryInstance {
  // Object.assign, not a spread followed by members: V8 (Node 20) takes a slow path for the spread, 1.7 µs against
  // 0.1 per instance, once per attribute of every write with a history (bench/micro/tsdb-handoff.ts).
  const h = Object.assign({}, inst) as HistoryInstance;
  h.instanceId = instanceId;
  h.createdAt = at;
  h.modifiedAt = at;
  return h;
}

/** seed 001 importer behaviour 4: a deletion is the attribute's type, value `urn:ngsi-ld:null` and deletedAt. */
function tombstoneOf(old: AttrInstance, at: string, instanceId: string): HistoryInstance {
  const t: HistoryInstance = { type: old.type, instanceId, createdAt: at, modifiedAt: at, deletedAt: at };
  t[VALUE_MEMBER[old.type]] = NGSI_LD_NULL;
  if (old.datasetId !== undefined) t.datasetId = old.datasetId;
  return t;
}

function temporalRecordOf(e: StoredEntity): TemporalEntityRecord {
  const rec: TemporalEntityRecord = { id: e.id, type: e.type, createdAt: e.createdAt, modifiedAt: e.modifiedAt };
  if (e.scope !== undefined) rec.scope = e.scope;
  return rec;
}
