// The change of a write as a store records it in its event and history (store/contract.ts MutationOutcome.change).
// Part of the store kit.
import { changeBetween, type WriteChange } from '../../ngsild/entity/write-change.js';
import type { MutationOutcome, StoredEntity } from '../contract.js';

/** The operation's change (called when it is a function), else derived from the states. */
export function changeOfOutcome(
  outcome: MutationOutcome<unknown>,
  before: StoredEntity | undefined,
  after: StoredEntity | undefined,
): WriteChange {
  const change = outcome.change;
  if (change === undefined) return changeBetween(before, after);
  return typeof change === 'function' ? change() : change;
}
