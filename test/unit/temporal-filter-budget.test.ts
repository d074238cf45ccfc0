// The documented bound on the work of q / geo-queries on the history: a request that would judge entities and read
// instances past HISTORY_FILTER_BUDGET is refused with TooManyResults, never judged on part of the history.
import t from 'tap';
import { Budget, HISTORY_FILTER_BUDGET } from '../../src/ops/temporal-filter.js';
import { kindOf } from './helpers/errors.js';
import type { HistoryInstance } from '../../src/history/contract.js';

const some = (n: number): HistoryInstance[] =>
  Array.from({ length: n }, (_, i) => ({ type: 'Property', value: i, instanceId: `urn:i:${i}`, createdAt: 'x', modifiedAt: 'x' }));

t.test('reads within the budget pass and are counted', async (t) => {
  const b = new Budget();
  b.spend({ attrs: { a: some(10), b: some(5) }, truncated: [] });
  t.equal(b.left, HISTORY_FILTER_BUDGET - 15);
});

t.test('going past the budget, or a page the history truncated, is TooManyResults', async (t) => {
  const b = new Budget();
  b.left = 3;
  t.equal(
    kindOf(() => b.spend({ attrs: { a: some(4) }, truncated: [] })),
    'TooManyResults 403',
  );
  t.equal(
    kindOf(() => new Budget().spend({ attrs: { a: some(1) }, truncated: ['a'] })),
    'TooManyResults 403',
  );
  const c = new Budget();
  c.left = 2;
  c.spendOne();
  c.spendOne();
  t.equal(
    kindOf(() => c.spendOne()),
    'TooManyResults 403',
    'each entity judged counts, even with no instance',
  );
});
