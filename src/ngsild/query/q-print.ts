// Canonical text of a `q` tree (CIM 009 v1.8 §4.9): what parseQ reads back into an equal tree. Every nested AND/OR
// is parenthesized, strings and patterns are JSON-quoted, a '.' inside a name is written %2E.

import type { QLiteral, QNode, QPath, QUri, QValue } from './q-ast.js';

export function printQ(node: QNode): string {
  switch (node.kind) {
    case 'and':
      return node.terms.map(printNested).join(';');
    case 'or':
      return node.terms.map(printNested).join('|');
    case 'exists':
      return printPath(node.path);
    case 'notExists':
      return '!' + printPath(node.path);
    case 'compare':
      return printPath(node.path) + node.op + printValue(node.value);
    case 'match':
      return printPath(node.path) + (node.negated ? '!~=' : '~=') + JSON.stringify(node.pattern);
  }
}

function printNested(node: QNode): string {
  return node.kind === 'and' || node.kind === 'or' ? '(' + printQ(node) + ')' : printQ(node);
}

function printName(name: string): string {
  return name.includes('.') ? name.replaceAll('.', '%2E') : name;
}

export function printPath(path: QPath): string {
  const attr = path.attr.map(printName).join('.');
  return path.compound.length === 0 ? attr : attr + '[' + path.compound.map(printName).join('.') + ']';
}

function printValue(value: QValue): string {
  switch (value.kind) {
    case 'list':
      return value.items.map(printLiteral).join(',');
    case 'range':
      return printLiteral(value.min) + '..' + printLiteral(value.max);
    default:
      return printLiteral(value);
  }
}

function printLiteral(lit: QLiteral | QUri): string {
  switch (lit.kind) {
    case 'number':
      return String(lit.value);
    case 'string':
      return JSON.stringify(lit.value);
    case 'boolean':
      return lit.value ? 'true' : 'false';
    default:
      return lit.value;
  }
}
