import t from 'tap';
import { compileScopeQ, parseScopeQ, printScopeQ } from '../../src/ngsild/query/scopeq.js';
import { LdError } from '../../src/ngsild/problem.js';
import { kindOf } from './helpers/errors.js';

const sc = (...levels: string[]) => ({ kind: 'scope' as const, levels });

t.test('scopes, + for one level, a trailing # for a subtree, /# for any scope', async (t) => {
  t.same(parseScopeQ('/Madrid/Gardens'), sc('Madrid', 'Gardens'));
  t.same(parseScopeQ('/Madrid/+'), sc('Madrid', '+'));
  t.same(parseScopeQ('/Madrid/+/ParqueNorte'), sc('Madrid', '+', 'ParqueNorte'));
  t.same(parseScopeQ('/Madrid/#'), sc('Madrid', '#'));
  t.same(parseScopeQ('/#'), sc('#'));
  t.same(parseScopeQ('/Köln/Bezirk 1.a'.replace(' ', '_')), sc('Köln', 'Bezirk_1.a'));
});

t.test('; is AND, , and | are OR, AND first, parentheses group', async (t) => {
  t.same(parseScopeQ('/a;/b,/c'), { kind: 'or', terms: [{ kind: 'and', terms: [sc('a'), sc('b')] }, sc('c')] });
  t.same(parseScopeQ('/a;(/b|/c)'), { kind: 'and', terms: [sc('a'), { kind: 'or', terms: [sc('b'), sc('c')] }] });
  t.equal(printScopeQ(parseScopeQ('/a;/b|/c/#')), '(/a;/b),/c/#');
  t.equal(printScopeQ(parseScopeQ('/a;/b')), '(/a;/b)');
  t.same(parseScopeQ('(/Madrid/Districts;/CompanyA)|/CompanyB'), parseScopeQ('(/Madrid/Districts;/CompanyA),/CompanyB'));
});

t.test('malformed scope queries answer InvalidRequest with the position', async (t) => {
  const cases: [string, number, string][] = [
    ['a', 0, "expected a scope starting with '/'"],
    ['/', 1, "expected a scope level, '+' or '#' after '/'"],
    ['/a/', 3, 'expected a scope level'],
    ['/a//b', 3, 'expected a scope level'],
    ['/a/#/b', 4, "expected ';', ',', '|' or the end"],
    ['/a+', 2, "expected ';', ',', '|' or the end"],
    ['/a/b c', 4, "expected ';', ',', '|' or the end"],
    ['/a;', 3, "expected a scope starting with '/'"],
    ['(/a', 3, "expected ')'"],
    ['/a)', 2, "unbalanced ')'"],
  ];
  for (const [text, pos, what] of cases) {
    try {
      parseScopeQ(text);
      t.fail(`${text} parsed`);
    } catch (err) {
      t.ok(err instanceof LdError && err.kind === 'InvalidRequest', text);
      t.match((err as LdError).detail, what, text);
      t.match((err as LdError).detail, new RegExp(`^scopeQ: .* at position ${pos}$`), text);
    }
  }
  t.equal(
    kindOf(() => parseScopeQ('')),
    'InvalidRequest 400',
  );
});

t.test('an entity matches when any of its scopes matches; an entity without scope never does', async (t) => {
  const m = (q: string, scopes: string[] | undefined) => compileScopeQ(parseScopeQ(q))(scopes);
  t.equal(m('/Madrid/Gardens', ['/Madrid/Gardens']), true);
  t.equal(m('/Madrid/Gardens', ['/Madrid/Gardens/ParqueNorte']), false);
  t.equal(m('/Madrid/Gardens', ['/Madrid']), false);
  t.equal(m('/Madrid/Gardens', ['/Other', '/Madrid/Gardens']), true);
  t.equal(m('/Madrid/+', ['/Madrid/Gardens']), true);
  t.equal(m('/Madrid/+', ['/Madrid']), false);
  t.equal(m('/Madrid/+', ['/Madrid/Gardens/ParqueNorte']), false);
  t.equal(m('/Madrid/+/ParqueNorte', ['/Madrid/Gardens/ParqueNorte']), true);
  t.equal(m('/Madrid/+/ParqueNorte', ['/Madrid/Gardens/ParqueSur']), false);
  t.equal(m('/Madrid/#', ['/Madrid']), true);
  t.equal(m('/Madrid/#', ['/Madrid/Gardens/ParqueNorte/Parterre1']), true);
  t.equal(m('/Madrid/#', ['/Madridx']), false);
  t.equal(m('/#', ['/anything']), true);
  t.equal(m('/#', []), false);
  t.equal(m('/#', undefined), false);
  t.equal(m('!/a'.slice(1), undefined), false);
});

t.test('AND needs patterns matched (by the same or different scopes), OR any', async (t) => {
  const m = (q: string, scopes: string[]) => compileScopeQ(parseScopeQ(q))(scopes);
  t.equal(m('/a;/b', ['/a', '/b']), true);
  t.equal(m('/a;/b', ['/a']), false);
  t.equal(m('/a,/b', ['/b']), true);
  t.equal(m('/a/#;/a/b', ['/a/b']), true);
  t.equal(m('(/a;/b)|/c', ['/c']), true);
});
