// A `q` tree with its names resolved (CIM 009 v1.8 §4.9): attribute paths as expanded IRIs, strings with their
// expansion, expandValues marked on the comparisons it concerns. Plain data that needs no @context to evaluate:
// what a store query carries (store/contract.ts EntityQuery.q), compiled with `compileQ(tree, asWritten)`.
import type { QLiteral, QNode, QPath, QUri, QValue } from './q-ast.js';
import { stepIri } from './q-eval.js';

type Expand = (term: string) => string;

/** The expansion of names that are already IRIs: a resolved tree is compiled with it. */
export const asWritten: Expand = (name) => name;

/**
 * `ast` with every name expanded by `expand` (the request's @context). `compileQ(resolveQ(ast, expand, ev), asWritten)`
 * matches what `compileQ(ast, expand, ev)` matches. Throws what `expand` throws (a name past the size limits).
 */
export function resolveQ(ast: QNode, expand: Expand, expandValues?: ReadonlySet<string>): QNode {
  switch (ast.kind) {
    case 'and':
    case 'or':
      return { kind: ast.kind, terms: ast.terms.map((n) => resolveQ(n, expand, expandValues)) };
    case 'exists':
    case 'notExists':
      return { kind: ast.kind, path: resolvePath(ast.path, expand) };
    case 'match':
      return { kind: 'match', path: resolvePath(ast.path, expand), negated: ast.negated, pattern: ast.pattern };
    case 'compare': {
      const path = resolvePath(ast.path, expand);
      const node: QNode = { kind: 'compare', path, op: ast.op, value: resolveValue(ast.value, expand) };
      if (ast.vocab === true || (expandValues !== undefined && expandValues.has(path.attr[0]!))) node.vocab = true;
      return node;
    }
  }
}

/** An attribute path with its names expanded (its first one an attribute, entity member or IRI; then steps). */
export function resolvePath(path: QPath, expand: Expand): QPath {
  const attr = new Array<string>(path.attr.length);
  attr[0] = expand(path.attr[0]!);
  for (let i = 1; i < path.attr.length; i++) attr[i] = stepIri(path.attr[i]!, expand);
  return { attr, compound: path.compound };
}

function resolveValue(v: QValue, expand: Expand): QValue {
  if (v.kind === 'list') return { kind: 'list', items: v.items.map((i) => resolveLiteral(i, expand)) };
  if (v.kind === 'range') return v;
  return resolveLiteral(v, expand);
}

function resolveLiteral<L extends QLiteral | QUri>(lit: L, expand: Expand): L {
  if (lit.kind !== 'string' && lit.kind !== 'uri') return lit;
  return { ...lit, expanded: lit.expanded ?? expand(lit.value) };
}
