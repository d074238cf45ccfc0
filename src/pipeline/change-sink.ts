// Entity changes as writes produce them and where the pipeline hands them once the transaction committed: the
// thread's change sink (subscriptions match there, src/notify/subscription-sink.ts; ARCHITECTURE.md step 11).
import type { StoredEntity } from '../ngsild/entity/model.js';

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
