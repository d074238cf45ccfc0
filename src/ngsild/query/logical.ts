// The AND/OR/parentheses frame shared by the type selection (CIM 009 v1.8 §4.17) and scope query (§4.19)
// languages: atoms joined by ';' (AND, binding tighter) and an OR separator, grouped with parentheses.

import { invalidRequest } from '../problem.js';

export interface LogicalAnd<A> {
  kind: 'and';
  terms: Logical<A>[];
}
export interface LogicalOr<A> {
  kind: 'or';
  terms: Logical<A>[];
}
export type Logical<A> = A | LogicalAnd<A> | LogicalOr<A>;

export const LOGICAL_MAX_LENGTH = 8192;
export const LOGICAL_MAX_DEPTH = 64;

export interface LogicalSyntax<A> {
  /** Parameter name used in error details (`type`, `scopeQ`). */
  label: string;
  /** Characters that mean OR; the first is the one printed. */
  orChars: string;
  /** Reads one atom at `pos`: it and the position after it, or what was expected and where. */
  atom(text: string, pos: number): [A, number] | { expected: string; at: number };
}

function isComposite<A>(n: Logical<A>): n is LogicalAnd<A> | LogicalOr<A> {
  const kind = (n as { kind?: unknown }).kind;
  return kind === 'and' || kind === 'or';
}

/** Parses `text`; throws InvalidRequest `<label>: <what> at position N`. */
export function parseLogical<A>(text: string, syntax: LogicalSyntax<A>): Logical<A> {
  const { label, orChars } = syntax;
  if (text.length === 0) throw invalidRequest(`${label}: empty expression`);
  if (text.length > LOGICAL_MAX_LENGTH) throw invalidRequest(`${label}: longer than ${LOGICAL_MAX_LENGTH} characters`);
  let pos = 0;
  const fail = (what: string, at = pos): never => {
    throw invalidRequest(`${label}: ${what} at position ${at}`);
  };
  const unit = (depth: number): Logical<A> => {
    if (text.charAt(pos) === '(') {
      if (depth >= LOGICAL_MAX_DEPTH) fail(`parentheses nested deeper than ${LOGICAL_MAX_DEPTH}`);
      pos++;
      const inner = or(depth + 1);
      if (text.charAt(pos) !== ')') fail("expected ')'");
      pos++;
      return inner;
    }
    const r = syntax.atom(text, pos);
    if (!Array.isArray(r)) return fail(`expected ${r.expected}`, r.at);
    pos = r[1];
    return r[0];
  };
  const and = (depth: number): Logical<A> => {
    const first = unit(depth);
    if (text.charAt(pos) !== ';') return first;
    const terms = [first];
    while (text.charAt(pos) === ';') {
      pos++;
      terms.push(unit(depth));
    }
    return { kind: 'and', terms };
  };
  const isOr = (c: string) => c !== '' && orChars.includes(c);
  const or = (depth: number): Logical<A> => {
    const first = and(depth);
    if (!isOr(text.charAt(pos))) return first;
    const terms = [first];
    while (isOr(text.charAt(pos))) {
      pos++;
      terms.push(and(depth));
    }
    return { kind: 'or', terms };
  };
  const node = or(0);
  if (pos < text.length) fail(text.charAt(pos) === ')' ? "unbalanced ')'" : `expected ';', '${orChars.split('').join("', '")}' or the end`);
  return node;
}

/**
 * Canonical text: OR printed with the given character, every AND and every nested OR parenthesized (§4.17 and
 * §4.19 only admit a conjunction inside parentheses; the parser also takes a bare one).
 */
export function printLogical<A>(node: Logical<A>, orChar: string, printAtom: (a: A) => string): string {
  const print = (n: Logical<A>, nested: boolean): string => {
    if (!isComposite(n)) return printAtom(n);
    const text = n.terms.map((t) => print(t, true)).join(n.kind === 'and' ? ';' : orChar);
    return nested || n.kind === 'and' ? '(' + text + ')' : text;
  };
  return print(node, false);
}

/** Compiles a tree into a predicate over some subject, given a compiler for atoms. */
export function compileLogical<A, S>(node: Logical<A>, compileAtom: (a: A) => (s: S) => boolean): (s: S) => boolean {
  if (!isComposite(node)) return compileAtom(node);
  const fs = node.terms.map((n) => compileLogical(n, compileAtom));
  if (node.kind === 'and') {
    return (s) => {
      for (const f of fs) if (!f(s)) return false;
      return true;
    };
  }
  return (s) => {
    for (const f of fs) if (f(s)) return true;
    return false;
  };
}

export { isComposite };
