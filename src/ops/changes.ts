// Records the entity changes of a write (src/pipeline/change-sink.ts) as its mutations run, for the change sink.
import type { Mutation } from '../store/contract.js';
import type { EntityChange } from '../pipeline/change-sink.js';

export type { EntityChange } from '../pipeline/change-sink.js';

/** Wraps a mutation so that the change it makes is recorded (only when it returns; a throwing one changes nothing). */
export function tracked<R>(changes: EntityChange[], tenant: string, id: string, mutation: Mutation<R>): Mutation<R> {
  return (current, writeSeq) => {
    const out = mutation(current, writeSeq);
    if (out.next !== undefined && !(out.next === null && current === undefined))
      changes.push({ tenant, id, before: current, after: out.next === null ? undefined : out.next, seq: writeSeq ?? 0 });
    return out;
  };
}
