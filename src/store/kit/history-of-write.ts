// What one committed entity write adds to a history (seed 001, importer behaviour 4), the same for every history
// plugin: embdb applies it in the write's own transaction, a history beside the store appends it. Part of the kit.
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

const NGSI_LD_NULL = 'urn:ngsi-ld:null';

/**
 * The history of the write that turns `current` into `next` (null: deleted; undefined current: created), whose change
 * the operation reported: a replace is an event; an update records the instances it wrote (new, or in place of one)
 * and a tombstone per instance it removed. `newInstanceId` names each new instance from its time in ms.
 */
export function historyOfWrite(
  current: StoredEntity | undefined,
  next: StoredEntity | null,
  change: WriteChange,
  newInstanceId: (ms: number) => string,
): HistoryWrite {
  const out: HistoryWrite = { fresh: false, instances: [] };
  const add = (attrIri: string, instance: HistoryInstance): void => {
    out.instances.push({ attrIri, instance });
  };
  if (next === null) {
    if (current === undefined) return out;
    const at = new Date().toISOString();
    out.event = { kind: 'deleted', at };
    out.entity = { ...temporalRecordOf(current), modifiedAt: at, deletedAt: at };
    for (const attrIri in current) {
      if (ENTITY_CORE_MEMBERS.has(attrIri)) continue;
      for (const old of current[attrIri] as AttrInstance[]) add(attrIri, tombstoneOf(old, at, newInstanceId));
    }
    return out;
  }
  const at = next.modifiedAt;
  if (current === undefined) {
    out.event = { kind: 'created', at: next.createdAt };
    out.entity = temporalRecordOf(next);
    out.fresh = true;
    for (const attrIri in next) {
      if (ENTITY_CORE_MEMBERS.has(attrIri)) continue;
      for (const inst of next[attrIri] as AttrInstance[]) add(attrIri, historyInstanceOf(inst, at, newInstanceId(Date.parse(at))));
    }
    return out;
  }
  if (change.kind === 'replace') out.event = { kind: 'replaced', at };
  // The temporal entity changes with its types or scope; its instances carry their own times (one write less).
  if (!sameList(current.type, next.type) || !sameList(current.scope, next.scope)) out.entity = temporalRecordOf(next);
  for (const attrIri of change.created) addWritten(next, attrIri, change.written[attrIri], at, add, newInstanceId);
  for (const attrIri of change.modified) addWritten(next, attrIri, change.written[attrIri], at, add, newInstanceId);
  for (const attrIri of change.modified) {
    const after = next[attrIri] as AttrInstance[] | undefined;
    for (const old of change.previous[attrIri] ?? []) {
      if (after?.some((a) => a.datasetId === old.datasetId)) continue;
      add(attrIri, tombstoneOf(old, at, newInstanceId));
    }
  }
  for (const attrIri of change.deleted) for (const old of change.previous[attrIri] ?? []) add(attrIri, tombstoneOf(old, at, newInstanceId));
  return out;
}

/** The instances of an attribute that the write put there, as new history instances. */
function addWritten(
  next: StoredEntity,
  attrIri: string,
  written: readonly string[] | undefined,
  at: string,
  add: (attrIri: string, instance: HistoryInstance) => void,
  newInstanceId: (ms: number) => string,
): void {
  if (written === undefined || written.length === 0) return;
  for (const inst of (next[attrIri] as AttrInstance[] | undefined) ?? []) {
    if (written.includes(datasetKey(inst))) add(attrIri, historyInstanceOf(inst, at, newInstanceId(Date.parse(at))));
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
function tombstoneOf(old: AttrInstance, at: string, newInstanceId: (ms: number) => string): HistoryInstance {
  const t: HistoryInstance = { type: old.type, instanceId: newInstanceId(Date.parse(at)), createdAt: at, modifiedAt: at, deletedAt: at };
  t[VALUE_MEMBER[old.type]] = NGSI_LD_NULL;
  if (old.datasetId !== undefined) t.datasetId = old.datasetId;
  return t;
}

function temporalRecordOf(e: StoredEntity): TemporalEntityRecord {
  const rec: TemporalEntityRecord = { id: e.id, type: e.type, createdAt: e.createdAt, modifiedAt: e.modifiedAt };
  if (e.scope !== undefined) rec.scope = e.scope;
  return rec;
}
