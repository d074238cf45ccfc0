// The operators of seed 000 §5.6 over two defined values (a missing value never reaches them, §5.7 rule 4).
// An operator answers true, false, or undefined where the reference engine's built-in fails on the types.

import { RE2JS } from 're2js';
import { compareValues, deepEqual, isMember } from './compare.js';

export const T = 1;
export const F = 0;
export const U = 2;
/** true, false, or undefined (seed 000 §5.7 rule 4: undefined is not true, nor is its negation). */
export type Tri = 0 | 1 | 2;

export type Operator = (left: unknown, right: unknown) => Tri;

const tri = (b: boolean): Tri => (b ? T : F);

function splitPath(p: string): string[] {
  let start = 0;
  let end = p.length;
  while (start < end && p.charCodeAt(start) === 47) start++;
  while (end > start && p.charCodeAt(end - 1) === 47) end--;
  return p.slice(start, end).split('/');
}

/** `http:isInPath`: the right path is a prefix of the left, segment by segment; `*` matches any one segment. */
function isInPath(left: unknown, right: unknown): Tri {
  if (typeof left !== 'string' || typeof right !== 'string') return U;
  const base = splitPath(right);
  const cand = splitPath(left);
  if (cand.length < base.length) return F;
  for (let i = 0; i < base.length; i++) {
    if (base[i] !== '*' && base[i] !== cand[i]) return F;
  }
  return T;
}

const OPERATORS: ReadonlyMap<string, Operator> = new Map<string, Operator>([
  ['odrl:eq', (l, r) => tri(deepEqual(l, r))],
  ['odrl:neq', (l, r) => tri(!deepEqual(l, r))],
  ['odrl:gt', (l, r) => tri(compareValues(l, r) > 0)],
  ['odrl:gteq', (l, r) => tri(compareValues(l, r) >= 0)],
  ['odrl:lt', (l, r) => tri(compareValues(l, r) < 0)],
  ['odrl:lteq', (l, r) => tri(compareValues(l, r) <= 0)],
  // seed 000 §5.6: hasPart and isPartOf both mean "the right operand is in the left"
  ['odrl:hasPart', (l, r) => tri(isMember(r, l))],
  ['odrl:isPartOf', (l, r) => tri(isMember(r, l))],
  ['odrl:isAnyOf', (l, r) => tri(isMember(l, r))],
  ['odrl:anyOf', (l, r) => tri(isMember(l, r))],
  ['odrl:isNoneOf', (l, r) => tri(!isMember(l, r))],
  ['odrl:isAllOf', (l, r) => tri(deepEqual(l, r))],
  ['http:isInPath', isInPath],
]);

export const REGEX_OPERATOR = 'odrl:regex';

export function isOperator(word: string): boolean {
  return OPERATORS.has(word) || word === REGEX_OPERATOR;
}

/** The operator of a word; a regex is compiled once here (RE2: linear time, unanchored search). */
export function operatorFor(word: string, right: unknown, rightIsConstant: boolean): Operator {
  if (word === REGEX_OPERATOR) {
    if (!rightIsConstant || typeof right !== 'string') throw new Error('the regex operator needs a string pattern');
    let re: RE2JS;
    try {
      re = RE2JS.compile(right);
    } catch {
      throw new Error(`invalid regex '${right}'`);
    }
    return (l) => (typeof l === 'string' ? tri(re.test(l)) : U);
  }
  const op = OPERATORS.get(word);
  if (op === undefined) throw new Error(`unknown operator '${word}'`);
  return op;
}
