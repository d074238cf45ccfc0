// How many batch entity operations run at once on a thread (Store.batchesAtOnce): the others wait their turn before
// parsing their body, so what a thread holds in flight stays a few bodies whatever the clients send at once. One
// counter per thread (module state is per worker), shared by every batch operation.
import type { OpHandler } from '../pipeline/handler.js';
import type { Store } from '../store/contract.js';

let running = 0;
const waiting: Array<() => void> = [];

/** Resolves once the operation may run: at once while fewer than the store's bound run. */
export function takeSlot(store: Store): Promise<void> | undefined {
  const bound = store.batchesAtOnce;
  if (bound === undefined || running < bound) {
    running++;
    return undefined;
  }
  return new Promise((resolve) => waiting.push(resolve));
}

/** Ends an operation's turn: the slot passes to the longest waiting one. */
export function giveSlot(): void {
  const next = waiting.shift();
  if (next !== undefined) next();
  else running--;
}

/** The handler run in a slot, given back however it ends. */
export function inSlot(handler: OpHandler): OpHandler {
  return async (req, ctx) => {
    const turn = takeSlot(ctx.store);
    if (turn !== undefined) await turn;
    try {
      return await handler(req, ctx);
    } finally {
      giveSlot();
    }
  };
}
