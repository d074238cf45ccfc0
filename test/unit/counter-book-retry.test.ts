// The notifier's subscription counters (notify/counters.ts) survive a store that refuses a write for a while (docdb
// out of reach: 503): the counters are written again at the next flush, not dropped until the next notification.
import t from 'tap';
import { CounterBook } from '../../src/notify/counters.js';
import type { Store, DocCollection } from '../../src/store/contract.js';
import { LdError } from '../../src/ngsild/problem.js';

const log = { debug: () => {}, info: () => {}, warn: () => {}, error: () => {}, child: () => log } as never;

t.test('a refused counters write is written again at the next flush', async (t) => {
  const stored = new Map<string, Record<string, unknown>>();
  let refuse = 1;
  const collection = {
    put: async (id: string, doc: Record<string, unknown>) => {
      if (refuse > 0) {
        refuse--;
        throw new LdError('Unavailable', 'the database is not reachable');
      }
      stored.set(id, doc);
    },
  } as unknown as DocCollection;
  const store = { collection: () => collection } as unknown as Store;
  const book = new CounterBook(store, log, 'b1');
  book.sending('', 'urn:s:1', '2026-01-01T00:00:00Z');
  await book.flush();
  t.equal(stored.size, 0, 'the first write refused');
  await book.flush();
  t.same(
    stored.get('urn:s:1\nb1'),
    { timesSent: 1, timesFailed: 0, lastNotification: '2026-01-01T00:00:00Z' },
    'written at the next flush',
  );
  await book.close();
});
