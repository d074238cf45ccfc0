// Lone surrogates written by JSON escapes are found in member names and values, however deep; pairs are text.
import t from 'tap';
import { illFormedString } from '../../src/ngsild/entity/well-formed.js';

t.test('a lone surrogate anywhere in names or values is found; surrogate pairs and escaped backslashes are not', async (t) => {
  const cases: Array<[string, string, string | undefined]> = [
    ['a lone high surrogate in a name', '{"a\\ud800b":1}', 'a\ud800b'],
    ['a lone low surrogate in a value', '{"a":"x\\udc00"}', 'x\udc00'],
    ['a reversed pair', '{"a":["\\udc00\\ud800"]}', '\udc00\ud800'],
    ['a high surrogate at the end', '[[["ok","z\\udbff"]]]', 'z\udbff'],
    ['a pair, escaped', '{"a\\ud83d\\ude00":"\\ud83d\\ude00"}', undefined],
    ['a pair, as UTF-8', '{"a😀":"😀"}', undefined],
    ['an escaped backslash before u', '{"a":"\\\\ud800"}', undefined],
    ['other escapes', '{"\\u00e9t\\u00e9":"\\u0041"}', undefined],
  ];
  for (const [what, text, bad] of cases) t.equal(illFormedString(JSON.parse(text)), bad, what);
});

t.test('a lone surrogate 100,000 levels down is found without recursion', async (t) => {
  const text = '{"a":'.repeat(100_000) + '"\\ud800"' + '}'.repeat(100_000);
  t.equal(illFormedString(JSON.parse(text)), '\ud800');
});
