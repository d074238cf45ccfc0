// Batch entity operations of one thread run a few at once (ops/batch-slots.ts, Store.batchesAtOnce): the others wait
// their turn in arrival order, a slot comes back however its operation ends, and a store without a bound runs all.
import t from 'tap';
import { giveSlot, inSlot, takeSlot } from '../../src/ops/batch-slots.js';
import type { Store } from '../../src/store/contract.js';
import type { OpHandler } from '../../src/pipeline/handler.js';

const bounded = { batchesAtOnce: 2 } as unknown as Store;
const unbounded = {} as unknown as Store;
const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

t.test('past the bound an operation waits, and slots pass on in arrival order', async (t) => {
  t.equal(takeSlot(bounded), undefined, 'first: at once');
  t.equal(takeSlot(bounded), undefined, 'second: at once');
  const order: number[] = [];
  const third = takeSlot(bounded)!.then(() => order.push(3));
  const fourth = takeSlot(bounded)!.then(() => order.push(4));
  await tick();
  t.same(order, [], 'both wait while two run');
  giveSlot();
  await third;
  await tick();
  t.same(order, [3], 'one slot back: the longest waiting runs');
  giveSlot();
  await fourth;
  t.same(order, [3, 4]);
  giveSlot();
  giveSlot();
  t.equal(takeSlot(bounded), undefined, 'all given back: at once again');
  giveSlot();
});

t.test('a store without a bound runs every operation at once', async (t) => {
  for (let i = 0; i < 100; i++) t.equal(takeSlot(unbounded), undefined);
  for (let i = 0; i < 100; i++) giveSlot();
});

t.test('a handler that throws gives its slot back', async (t) => {
  const ctx = { store: bounded } as never;
  let runs = 0;
  const failing: OpHandler = async () => {
    runs++;
    throw new Error('bad entry');
  };
  const ok: OpHandler = async () => {
    runs++;
    return { status: 204 };
  };
  for (let i = 0; i < 5; i++) await t.rejects(inSlot(failing)({} as never, ctx), /bad entry/);
  t.same(await inSlot(ok)({} as never, ctx), { status: 204 }, 'still runs after five failures on a bound of 2');
  t.equal(runs, 6);
});
