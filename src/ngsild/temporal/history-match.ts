// q and geo-queries of a temporal query evaluated on an entity's history (CIM 009 v1.8 §5.7.4, §6.18.3.2), not on
// its current state: the entity's state is replayed instant by instant from its attribute instances. No I/O.
//
// The rule: an entity matches when, at some instant inside the query's time window, the state its history gives
// for that instant satisfies every filter (q and the geo-query together, at the same instant). The state at an
// instant holds, per attribute and datasetId, the latest instance at or before it on the window's time property
// (`deletedAt` orders by createdAt, which a tombstone shares with its deletedAt); a tombstone removes that instance.
// The instants are the window's start (the state carried in from before it) and every instance time inside it;
// without a window, every instance time of the history. An entity with no instance of the filtered attributes is
// judged once, on the state without them (so `!attr` matches it). Deleted entities are judged like any other.
import type { StoredEntity } from '../entity/model.js';
import type { HistoryInstance, TemporalEntityRecord } from './history-model.js';

export type StatePredicate = (state: StoredEntity) => boolean;

export interface HistoryMatchInput {
  rec: TemporalEntityRecord;
  /** Per attribute, the instances before the window (oldest first): the carried-in state. */
  before: Record<string, readonly HistoryInstance[]>;
  /** Per attribute, the instances inside the window (any order: they are merged by time here). */
  inside: Record<string, readonly HistoryInstance[]>;
  /** An instance's time on the window's time property, in ms. */
  timeOf: (inst: HistoryInstance) => number;
  /** The window's start in ms (absent: the history's beginning). */
  start?: number;
}

interface Step {
  attrIri: string;
  inst: HistoryInstance;
  t: number;
}

export function matchesAtSomeInstant(input: HistoryMatchInput, predicate: StatePredicate): boolean {
  const { rec } = input;
  const state: StoredEntity = { id: rec.id, type: rec.type, createdAt: rec.createdAt, modifiedAt: rec.modifiedAt };
  if (rec.scope !== undefined) state.scope = rec.scope;
  let carried = false;
  for (const attrIri in input.before) {
    for (const inst of input.before[attrIri]!) {
      apply(state, attrIri, inst);
      carried = true;
    }
  }
  const steps: Step[] = [];
  for (const attrIri in input.inside) for (const inst of input.inside[attrIri]!) steps.push({ attrIri, inst, t: input.timeOf(inst) });
  steps.sort((a, b) => a.t - b.t);
  let i = 0;
  // The window's start is one instant: instances recorded at it replace the carried-in ones before judging.
  if (input.start !== undefined)
    for (; i < steps.length && steps[i]!.t <= input.start; i++) {
      apply(state, steps[i]!.attrIri, steps[i]!.inst);
      carried = true;
    }
  if ((carried || steps.length === 0) && predicate(state)) return true;
  while (i < steps.length) {
    // Instances of one instant take effect together: the state between two of them never existed.
    const t = steps[i]!.t;
    for (; i < steps.length && steps[i]!.t === t; i++) apply(state, steps[i]!.attrIri, steps[i]!.inst);
    if (predicate(state)) return true;
  }
  return false;
}

/** The instance replaces the one of its datasetId; a tombstone (deletedAt) removes it. */
function apply(state: StoredEntity, attrIri: string, inst: HistoryInstance): void {
  const list = (state[attrIri] as HistoryInstance[] | undefined) ?? [];
  const kept = list.filter((i) => i.datasetId !== inst.datasetId);
  if (inst.deletedAt === undefined) kept.push(inst);
  if (kept.length === 0) delete state[attrIri];
  else state[attrIri] = kept;
}
