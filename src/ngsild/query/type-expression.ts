// The entity type selection language (CIM 009 v1.8 §4.17, used by `type` in §5.7.2 queries and subscriptions):
// type names joined by ',' or '|' (OR) and ';' (AND: the entity has both types), with parentheses.

import { compileLogical, isComposite, parseLogical, printLogical, type Logical } from './logical.js';

/** One entity type as written (a term of the request's @context, a compact IRI or an absolute IRI). */
export interface TypeName {
  kind: 'type';
  name: string;
}
export type TypeExpression = Logical<TypeName>;

// Anything but the operators, parentheses, whitespace and controls: terms and IRIs (':', '/', '#', '.').
const TYPE_NAME_RE = /[^,;|()\s\u0000-\u001f\u007f]+/uy;

export function parseTypeExpression(text: string): TypeExpression {
  return parseLogical<TypeName>(text, {
    label: 'type',
    orChars: ',|',
    atom(s, pos) {
      TYPE_NAME_RE.lastIndex = pos;
      const m = TYPE_NAME_RE.exec(s);
      return m === null ? { expected: 'an entity type', at: pos } : [{ kind: 'type', name: m[0] }, pos + m[0].length];
    },
  });
}

export function printTypeExpression(node: TypeExpression): string {
  return printLogical(node, ',', (a) => a.name);
}

/** `node` with every type name expanded by `expand`: what a store query carries (store/contract.ts EntityQuery.type). */
export function resolveTypeExpression(node: TypeExpression, expand: (term: string) => string): TypeExpression {
  if (!isComposite(node)) return { kind: 'type', name: expand(node.name) };
  return { kind: node.kind, terms: node.terms.map((t) => resolveTypeExpression(t, expand)) };
}

/** The expression that matches an entity with any of `typeIris` (one or more expanded type names). */
export function anyTypeOf(typeIris: readonly string[]): TypeExpression {
  if (typeIris.length === 1) return { kind: 'type', name: typeIris[0]! };
  return { kind: 'or', terms: typeIris.map((name) => ({ kind: 'type', name })) };
}

export interface CompiledTypeExpression {
  matches(types: readonly string[]): boolean;
  /** Expanded type IRIs when the expression is one type or a pure OR of types (for a type index lookup). */
  typeIris: string[] | undefined;
}

export function compileTypeExpression(node: TypeExpression, expand: (term: string) => string): CompiledTypeExpression {
  const orList = flatOrList(node);
  if (orList !== undefined) {
    const typeIris = [...new Set(orList.map((n) => expand(n.name)))];
    if (typeIris.length === 1) {
      const only = typeIris[0]!;
      return { typeIris, matches: (types) => types.includes(only) };
    }
    const wanted = new Set(typeIris);
    return {
      typeIris,
      matches(types) {
        for (const t of types) if (wanted.has(t)) return true;
        return false;
      },
    };
  }
  const f = compileLogical<TypeName, readonly string[]>(node, (a) => {
    const iri = expand(a.name);
    return (types) => types.includes(iri);
  });
  return { typeIris: undefined, matches: f };
}

function flatOrList(node: TypeExpression): TypeName[] | undefined {
  if (!isComposite(node)) return [node];
  if (node.kind !== 'or') return undefined;
  const out: TypeName[] = [];
  for (const t of node.terms) {
    const sub = flatOrList(t);
    if (sub === undefined) return undefined;
    out.push(...sub);
  }
  return out;
}
