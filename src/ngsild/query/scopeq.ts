// The scope query language (CIM 009 v1.8 §4.19): scopes `/a/b`, `+` for any one level (`/a/+`, `/a/+/c`),
// a trailing `#` for a scope and everything below it (`/a/#`, `/#`: any scope at all), ';' AND, ',' OR, parentheses.

import { compileLogical, parseLogical, printLogical, type Logical } from './logical.js';

/** One scope pattern: its levels, where `+` stands for any one level and a last `#` for any levels below. */
export interface ScopePattern {
  kind: 'scope';
  levels: string[];
}
export type ScopeQuery = Logical<ScopePattern>;

// A scope level: anything but '/', the operators, parentheses, the wildcards, whitespace and controls.
const LEVEL_RE = /[^/;,|()+#\s\u0000-\u001f\u007f]+/uy;

export function parseScopeQ(text: string): ScopeQuery {
  return parseLogical<ScopePattern>(text, {
    label: 'scopeQ',
    orChars: ',|',
    atom(s, start) {
      if (s.charAt(start) !== '/') return { expected: "a scope starting with '/'", at: start };
      const levels: string[] = [];
      let pos = start;
      while (s.charAt(pos) === '/') {
        pos++;
        const c = s.charAt(pos);
        if (c === '+' || c === '#') {
          levels.push(c);
          pos++;
          if (c === '#') break;
          continue;
        }
        LEVEL_RE.lastIndex = pos;
        const m = LEVEL_RE.exec(s);
        if (m === null) return { expected: "a scope level, '+' or '#' after '/'", at: pos };
        levels.push(m[0]);
        pos += m[0].length;
      }
      return [{ kind: 'scope', levels }, pos];
    },
  });
}

export function printScopeQ(node: ScopeQuery): string {
  return printLogical(node, ',', (a) => '/' + a.levels.join('/'));
}

/** A predicate over an entity's scopes: a pattern holds when any of them matches it; no scope matches nothing. */
export function compileScopeQ(node: ScopeQuery): (scopes: readonly string[] | undefined) => boolean {
  const f = compileLogical<ScopePattern, string[][]>(node, (pattern) => {
    const levels = pattern.levels;
    const subtree = levels[levels.length - 1] === '#';
    const fixed = subtree ? levels.length - 1 : levels.length;
    return (scopes) => {
      for (const parts of scopes) {
        if (subtree ? parts.length < fixed : parts.length !== fixed) continue;
        let ok = true;
        for (let i = 0; i < fixed && ok; i++) ok = levels[i] === '+' || levels[i] === parts[i];
        if (ok) return true;
      }
      return false;
    };
  });
  return (scopes) => {
    if (scopes === undefined || scopes.length === 0) return false;
    return f(scopes.map(splitScope));
  };
}

function splitScope(scope: string): string[] {
  return scope.startsWith('/') ? scope.slice(1).split('/') : scope.split('/');
}
