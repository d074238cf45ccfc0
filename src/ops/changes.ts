// Entity changes as writes produce them: the state before and after each committed mutation, handed to the
// thread's change sink (subscriptions match there; ARCHITECTURE.md step 11) once the transaction committed.
import type { StoredEntity } from '../ngsild/entity/model.js';
import type { Mutation } from '../store/contract.js';

export interface EntityChange {
  tenant: string;
  id: string;
  /** undefined: the write created the entity. */
  before: StoredEntity | undefined;
  /** undefined: the write deleted the entity. */
  after: StoredEntity | undefined;
  /** The store's write sequence of the transaction (Mutation's writeSeq; 0 when the store keeps none). */
  seq: number;
}

/** Where committed changes go; absent when nothing listens (no subscriptions, no bridges). */
export interface ChangeSink {
  publish(changes: readonly EntityChange[]): void;
}

/** Wraps a mutation so that the change it makes is recorded (only when it returns; a throwing one changes nothing). */
export function tracked<R>(changes: EntityChange[], tenant: string, id: string, mutation: Mutation<R>): Mutation<R> {
  return (current, writeSeq) => {
    const out = mutation(current, writeSeq);
    if (out.next !== undefined && !(out.next === null && current === undefined))
      changes.push({ tenant, id, before: current, after: out.next === null ? undefined : out.next, seq: writeSeq ?? 0 });
    return out;
  };
}
