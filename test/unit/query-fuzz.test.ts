import t, { type Test } from 'tap';
import { parseQ } from '../../src/ngsild/query/q-parser.js';
import { compileQ } from '../../src/ngsild/query/q-eval.js';
import { parseTypeExpression } from '../../src/ngsild/query/type-expression.js';
import { compileScopeQ, parseScopeQ } from '../../src/ngsild/query/scopeq.js';
import type { StoredEntity } from '../../src/ngsild/entity/model.js';
import { LdError } from '../../src/ngsild/problem.js';
import { rng } from './helpers/rng.js';

// Random input never crashes a parser: it parses or throws an LdError, and it returns (no hang, no stack overflow).

// Mostly characters that mean something to the grammars, plus arbitrary code units (lone surrogates included).
const ALPHABET = 'aZ_09.,;|()[]{}!=<>~"\\/:#%+*-eE TtrufalsnUR\u00e9\u65e5';

function randomText(r: () => number): string {
  const n = Math.floor(r() * 40);
  let s = '';
  for (let i = 0; i < n; i++) {
    s += r() < 0.85 ? ALPHABET.charAt(Math.floor(r() * ALPHABET.length)) : String.fromCharCode(Math.floor(r() * 0x10000));
  }
  return s;
}

function onlyLdErrors(t: Test, parse: (s: string) => unknown, seed: number, count: number): void {
  const r = rng(seed);
  let foreign = 0;
  let parsed = 0;
  for (let i = 0; i < count; i++) {
    const s = randomText(r);
    try {
      parse(s);
      parsed++;
    } catch (err) {
      if (!(err instanceof LdError) || (err.status >= 500 && err.kind !== 'OperationNotSupported')) {
        foreign++;
        if (foreign <= 5) t.fail(`${JSON.stringify(s)} threw ${String(err)}`);
      }
    }
  }
  t.equal(foreign, 0, `${count} random inputs (${parsed} parsed) threw only LdError`);
}

function kindOf(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    return err instanceof LdError ? err.kind : `foreign ${String(err)}`;
  }
  return 'no error';
}

t.test('10000 random strings given to parseQ parse or throw an LdError', async (t) => {
  onlyLdErrors(t, parseQ, 42, 10000);
});

t.test('every random q that parses also compiles and evaluates without throwing', async (t) => {
  const entity = {
    id: 'urn:x',
    type: ['T'],
    createdAt: '2024-01-01T00:00:00Z',
    modifiedAt: '2024-01-01T00:00:00Z',
    'https://example.org/a': [{ type: 'Property', value: { b: [1, 'x'] }, observedAt: '2024-01-01T00:00:00Z' }],
  } as StoredEntity;
  onlyLdErrors(t, (s) => compileQ(parseQ(s), (term) => 'https://example.org/' + term)(entity), 7, 10000);
});

t.test('10000 random strings given to parseTypeExpression parse or throw an LdError', async (t) => {
  onlyLdErrors(t, parseTypeExpression, 43, 10000);
});

t.test('10000 random strings given to parseScopeQ parse (and evaluate) or throw an LdError', async (t) => {
  onlyLdErrors(t, (s) => compileScopeQ(parseScopeQ(s))(['/a/b']), 44, 10000);
});

t.test('deeply nested or long random-shaped q text is refused with an LdError', async (t) => {
  for (const s of ['('.repeat(100000), '!'.repeat(9000), 'a;'.repeat(4096) + 'a', 'a~=' + '('.repeat(3000) + ')'.repeat(3000)]) {
    t.equal(
      kindOf(() => parseQ(s)),
      'InvalidRequest',
      s.slice(0, 20),
    );
  }
  t.equal(
    kindOf(() => parseTypeExpression('('.repeat(5000))),
    'InvalidRequest',
  );
  t.equal(
    kindOf(() => parseScopeQ('('.repeat(5000))),
    'InvalidRequest',
  );
});
