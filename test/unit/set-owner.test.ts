// Which broker of a set owns a key (notify/set-owner.ts): every broker computes the same owner from the same live
// list, whatever its order; keys spread over the brokers; a broker gone moves only its own keys.
import t from 'tap';
import { ownerOf } from '../../src/notify/set-owner.js';

const keys = Array.from({ length: 300 }, (_, i) => `\nurn:ngsi-ld:Subscription:${i}`);

t.test('the same owner whatever the order of the live list; none of an empty one', async (t) => {
  for (const k of keys.slice(0, 20)) t.equal(ownerOf(k, ['a', 'b', 'c']), ownerOf(k, ['c', 'a', 'b']));
  t.equal(ownerOf(keys[0]!, []), undefined);
  t.equal(ownerOf(keys[0]!, ['only']), 'only');
});

t.test('keys spread over the brokers; one gone moves only its keys', async (t) => {
  const live = ['a', 'b', 'c'];
  const before = new Map(keys.map((k) => [k, ownerOf(k, live)!]));
  for (const b of live) t.ok([...before.values()].filter((o) => o === b).length > 50, `${b} owns a share`);
  for (const [k, o] of before) {
    const after = ownerOf(k, ['a', 'c']);
    if (o === 'b') t.not(after, 'b');
    else if (after !== o) t.fail(`${k} moved from ${o} although ${o} stayed`);
  }
});
