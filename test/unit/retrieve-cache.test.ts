// ops/retrieve-cache.ts: an answer is given back only for the bytes it was rendered from, and the cache holds at
// most its entries and bytes (lru-cache), dropping the least recently used first.
import t from 'tap';
import { RetrieveCache } from '../../src/ops/retrieve-cache.js';

const bytes = (...b: number[]) => new Uint8Array(b);
const answer = (n: number) => new Uint8Array(n).fill(7);

t.test('an answer is given back for the same bytes only, and a stale one is dropped', async (t) => {
  const c = new RetrieveCache();
  c.set('k', bytes(1, 2, 3), answer(4));
  t.same(c.get('k', bytes(1, 2, 3)), answer(4));
  t.equal(c.get('k', bytes(1, 2, 4)), undefined, 'same length, other bytes');
  t.equal(c.size, 0, 'the stale entry is gone');
  c.set('k', bytes(1, 2, 3), answer(4));
  t.equal(c.get('k', bytes(1, 2)), undefined, 'other length');
  t.equal(c.get('other', bytes(1, 2, 3)), undefined, 'other key');
});

t.test('at most maxEntries, the least recently used dropped first', async (t) => {
  const c = new RetrieveCache(2, 1 << 20);
  c.set('a', bytes(1), answer(1));
  c.set('b', bytes(2), answer(1));
  c.set('c', bytes(3), answer(1));
  t.equal(c.size, 2);
  t.equal(c.get('a', bytes(1)), undefined);
  t.ok(c.get('b', bytes(2)));
  t.ok(c.get('c', bytes(3)));
  c.set('c', bytes(4), answer(1));
  t.equal(c.size, 2, 'replacing a key keeps one entry for it');
  t.ok(c.get('c', bytes(4)));
  // b was set before c, but read since: the entry to go for d is b's only if nothing read it after c.
  t.ok(c.get('b', bytes(2)), 'b read: now the most recently used');
  c.set('d', bytes(5), answer(1));
  t.ok(c.get('b', bytes(2)), 'b stays');
  t.equal(c.get('c', bytes(4)), undefined, 'c, least recently used, went');
  t.ok(c.get('d', bytes(5)));
});

t.test('a stale entry and an entry too large for the cache leave room, and never answer', async (t) => {
  const c = new RetrieveCache(100, 1 << 20);
  c.set('k', bytes(1), answer(8));
  c.set('k', bytes(2), answer(70 * 1024));
  t.equal(c.get('k', bytes(1)), undefined, 'the older answer for the key is not kept beside a refused one');
  t.equal(c.size, 0);
});

t.test('at most maxBytes; an answer too large for an entry is not kept', async (t) => {
  const c = new RetrieveCache(100, 30);
  c.set('a', bytes(1), answer(10));
  c.set('b', bytes(2), answer(10));
  c.set('c', bytes(3), answer(10));
  t.equal(c.size, 2, '33 bytes do not fit in 30');
  t.equal(c.get('a', bytes(1)), undefined);
  const big = new RetrieveCache();
  big.set('x', bytes(1), answer(70 * 1024));
  t.equal(big.size, 0);
});

t.test('a copying cache (a pool thread) hands out copies: transferring one leaves the kept answer whole', async (t) => {
  const c = new RetrieveCache(100, 1 << 20, true);
  c.set('k', bytes(1), answer(8));
  const first = c.get('k', bytes(1))!;
  structuredClone(first, { transfer: [first.buffer as ArrayBuffer] });
  t.equal(first.byteLength, 0, 'the transferred answer is detached');
  t.same(c.get('k', bytes(1)), answer(8));
});

t.test('on the front thread (nothing transferred) the kept answer itself is handed out, not a new buffer', async (t) => {
  const c = new RetrieveCache();
  const given = answer(8);
  c.set('k', bytes(1), given);
  const first = c.get('k', bytes(1));
  t.equal(first, given, 'the bytes set are the bytes kept');
  t.equal(c.get('k', bytes(1)), first, 'every get answers the same bytes');
  t.same(first, answer(8));
});
