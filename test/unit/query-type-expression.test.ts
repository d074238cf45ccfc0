import t from 'tap';
import { compileTypeExpression, parseTypeExpression, printTypeExpression } from '../../src/ngsild/query/type-expression.js';
import { LdError } from '../../src/ngsild/problem.js';
import { kindOf } from './helpers/errors.js';

const expand = (term: string): string => (term.includes(':') ? term : `https://example.org/ns/${term}`);
const ty = (name: string) => ({ kind: 'type' as const, name });
const iri = (name: string) => `https://example.org/ns/${name}`;

t.test('the §4.17 examples parse', async (t) => {
  t.same(parseTypeExpression('Building|House'), parseTypeExpression('Building,House'));
  t.same(parseTypeExpression('(Home;Vehicle)'), { kind: 'and', terms: [ty('Home'), ty('Vehicle')] });
  t.same(parseTypeExpression('(Home;Vehicle)|Motorhome'), parseTypeExpression('(Home;Vehicle),Motorhome'));
});

t.test('a single type, an OR list with , or |, and AND with ;', async (t) => {
  t.same(parseTypeExpression('Vehicle'), ty('Vehicle'));
  t.same(parseTypeExpression('A,B,C'), { kind: 'or', terms: [ty('A'), ty('B'), ty('C')] });
  t.same(parseTypeExpression('A|B'), { kind: 'or', terms: [ty('A'), ty('B')] });
  t.same(parseTypeExpression('A;B'), { kind: 'and', terms: [ty('A'), ty('B')] });
});

t.test('AND binds tighter than OR and parentheses group', async (t) => {
  t.same(parseTypeExpression('A;B,C'), { kind: 'or', terms: [{ kind: 'and', terms: [ty('A'), ty('B')] }, ty('C')] });
  t.same(parseTypeExpression('A;(B|C)'), { kind: 'and', terms: [ty('A'), { kind: 'or', terms: [ty('B'), ty('C')] }] });
  t.same(parseTypeExpression('((A))'), ty('A'));
});

t.test('types may be compact or absolute IRIs, dots and slashes included', async (t) => {
  t.same(parseTypeExpression('ex:Car,https://example.org/ns/Bus.v2#x'), {
    kind: 'or',
    terms: [ty('ex:Car'), ty('https://example.org/ns/Bus.v2#x')],
  });
});

t.test('printTypeExpression writes OR as , and parenthesizes every AND and nested group', async (t) => {
  t.equal(printTypeExpression(parseTypeExpression('A|B')), 'A,B');
  t.equal(printTypeExpression(parseTypeExpression('A;B|C')), '(A;B),C');
  t.equal(printTypeExpression(parseTypeExpression('A;B')), '(A;B)');
  t.equal(printTypeExpression(parseTypeExpression('(A,B);C')), '((A,B);C)');
});

t.test('malformed type selections answer InvalidRequest with the position', async (t) => {
  const cases: [string, number, string][] = [
    ['', -1, 'empty expression'],
    ['A,', 2, 'expected an entity type'],
    [',A', 0, 'expected an entity type'],
    ['A;;B', 2, 'expected an entity type'],
    ['(A', 2, "expected ')'"],
    ['A)', 1, "unbalanced ')'"],
    ['A B', 1, "expected ';', ',', '|' or the end"],
    ['()', 1, 'expected an entity type'],
    ['('.repeat(65) + 'A' + ')'.repeat(65), 64, 'nested deeper than 64'],
  ];
  for (const [text, pos, what] of cases) {
    try {
      parseTypeExpression(text);
      t.fail(`${text} parsed`);
    } catch (err) {
      t.ok(err instanceof LdError && err.kind === 'InvalidRequest', text);
      t.match((err as LdError).detail, what, text);
      if (pos >= 0) t.match((err as LdError).detail, new RegExp(`^type: .* at position ${pos}$`), text);
    }
  }
  t.equal(
    kindOf(() => parseTypeExpression('A'.repeat(8193))),
    'InvalidRequest 400',
  );
});

t.test('matches: OR needs one of the types, AND needs all', async (t) => {
  const m = (expr: string, types: string[]) => compileTypeExpression(parseTypeExpression(expr), expand).matches(types.map(iri));
  t.equal(m('A', ['A']), true);
  t.equal(m('A', ['B']), false);
  t.equal(m('A', []), false);
  t.equal(m('A,B', ['B', 'C']), true);
  t.equal(m('A,B', ['C']), false);
  t.equal(m('A;B', ['A']), false);
  t.equal(m('A;B', ['B', 'A']), true);
  t.equal(m('(A;B)|C', ['C']), true);
  t.equal(m('A;(B|C)', ['A', 'C']), true);
  t.equal(m('A;(B|C)', ['B', 'C']), false);
});

t.test('typeIris lists the expanded types of a pure OR list and is undefined once AND appears', async (t) => {
  const c = (expr: string) => compileTypeExpression(parseTypeExpression(expr), expand).typeIris;
  t.same(c('A'), [iri('A')]);
  t.same(c('A,B|(C,ex:D)'), [iri('A'), iri('B'), iri('C'), 'ex:D']);
  t.same(c('A,A'), [iri('A')]);
  t.equal(c('A;B'), undefined);
  t.equal(c('A,(B;C)'), undefined);
});
