// Parser of the NGSI-LD query language `q` (CIM 009 v1.8 §4.9) into the tree of q-ast.ts.
// Any unparsable text is a 400 InvalidRequest whose detail names the character offset and what was expected.
// Blanks (space, tab) around operators, values, ';', '|' and parentheses are skipped, as Orion-LD does, since
// clients write `temperature > 20; humidity < 80` (README "Tolerances for real clients"); the grammar has none.

import { LdError, invalidRequest } from '../problem.js';
import {
  dateMs,
  dateTimeMs,
  timeMs,
  type QCompareOp,
  type QList,
  type QLiteral,
  type QNode,
  type QPath,
  type QUri,
  type QValue,
} from './q-ast.js';
import { compileRe2 } from './re2.js';

export type * from './q-ast.js';
export { printQ } from './q-print.js';

/** Longest accepted `q` (characters): a bound on work per request, answered with 400, never a crash. */
export const Q_MAX_LENGTH = 8192;
/** Deepest accepted nesting of parentheses. */
export const Q_MAX_DEPTH = 64;

// CIM 009 §4.9 AttrName = unicodeLetter *(unicodeLetter / unicodeNumber / "_"); we also accept `_` first and the
// IRI characters `: / # - %` so that compact and absolute IRIs can name attributes (a `.` inside such a name is
// written `%2E`, since `.` separates path segments).
const NAME_RE = /[\p{L}_][\p{L}\p{N}_:/#%-]*/uy;
// A member of a compound value or a language tag: any name characters (digits first allowed, `a[0]`), or `*`.
const MEMBER_RE = /\*|[\p{L}\p{N}_:/#%-]+/uy;
const DATE_TIME_LEX = /\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:\d{2})?/y;
const DATE_LEX = /\d{4}-\d{2}-\d{2}/y;
const TIME_LEX = /\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?Z?/y;
// RFC 8259 §6 number.
const NUMBER_LEX = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
// RFC 3986 scheme ":" followed by at least one character allowed in a URI / IRI.
const URI_RE = /^[A-Za-z][A-Za-z0-9+.-]*:[^\s"<>\\^`{}\u0000-\u001f\u007f]+$/u;
const ESCAPED_DOT = /%2E/gi;

const OPERATORS: readonly (QCompareOp | '~=' | '!~=')[] = ['!~=', '==', '!=', '~=', '>=', '<=', '>', '<'];

/**
 * Parses a `q` expression. Throws LdError InvalidRequest (`q: <what> at position N`) when the text does not follow
 * the grammar, and OperationNotSupported for linked-entity paths (`attr{...}`, §4.9 example 13).
 */
export function parseQ(text: string): QNode {
  if (text.length === 0) throw invalidRequest('q: empty expression');
  if (text.length > Q_MAX_LENGTH) throw invalidRequest(`q: longer than ${Q_MAX_LENGTH} characters`);
  const parser = new QParser(text);
  const node = parser.parseOr(0);
  parser.blanks();
  if (parser.pos < text.length) parser.fail(parser.peek() === ')' ? "unbalanced ')'" : "expected ';', '|' or the end");
  return node;
}

/**
 * An attribute path on its own (`attr.sub[member]`, §4.9), as orderBy names what it sorts on (v1.9.1 §4.23).
 * Throws InvalidRequest as parseQ does when the text is not one whole path.
 */
export function parseQPath(text: string): QPath {
  if (text.length === 0) throw invalidRequest('q: expected an attribute name at position 0');
  if (text.length > Q_MAX_LENGTH) throw invalidRequest(`q: longer than ${Q_MAX_LENGTH} characters`);
  const parser = new QParser(text);
  const path = parser.parsePath();
  if (parser.pos < text.length) parser.fail("expected '.', '[' or the end of the path");
  return path;
}

class QParser {
  pos = 0;
  constructor(private readonly text: string) {}

  peek(): string {
    return this.text.charAt(this.pos);
  }

  fail(what: string, at: number = this.pos): never {
    throw invalidRequest(`q: ${what} at position ${at}`);
  }

  /** Skips blanks: the tolerance of the module comment. */
  blanks(): void {
    while (isBlank(this.text.charCodeAt(this.pos))) this.pos++;
  }

  parseOr(depth: number): QNode {
    const first = this.parseAnd(depth);
    if (this.peek() !== '|') return first;
    const terms = [first];
    while (this.peek() === '|') {
      this.pos++;
      terms.push(this.parseAnd(depth));
    }
    return { kind: 'or', terms };
  }

  // CIM 009 §4.9: AND takes precedence over OR.
  parseAnd(depth: number): QNode {
    const first = this.parseUnit(depth);
    if (this.peek() !== ';') return first;
    const terms = [first];
    while (this.peek() === ';') {
      this.pos++;
      terms.push(this.parseUnit(depth));
    }
    return { kind: 'and', terms };
  }

  /** A term or a parenthesized expression, and the blanks around it. */
  parseUnit(depth: number): QNode {
    this.blanks();
    if (this.peek() !== '(') {
      const term = this.parseTerm();
      this.blanks();
      return term;
    }
    if (depth >= Q_MAX_DEPTH) this.fail(`parentheses nested deeper than ${Q_MAX_DEPTH}`);
    this.pos++;
    const inner = this.parseOr(depth + 1);
    if (this.peek() !== ')') this.fail("expected ')'");
    this.pos++;
    this.blanks();
    return inner;
  }

  parseTerm(): QNode {
    if (this.peek() === '!') {
      this.pos++;
      this.blanks();
      const path = this.parsePath();
      this.blanks();
      if (!this.atTermEnd()) this.fail("expected ';', '|', ')' or the end after a non-existence term");
      return { kind: 'notExists', path };
    }
    const path = this.parsePath();
    this.blanks();
    if (this.atTermEnd()) return { kind: 'exists', path };
    const op = OPERATORS.find((o) => this.text.startsWith(o, this.pos));
    if (op === undefined) this.fail("expected an operator (==, !=, >, >=, <, <=, ~=, !~=), ';', '|', ')' or the end");
    this.pos += op.length;
    this.blanks();
    if (op === '~=' || op === '!~=') {
      const pattern = this.parsePattern();
      return { kind: 'match', path, negated: op === '!~=', pattern };
    }
    const value = op === '==' || op === '!=' ? this.parseEqualityValue() : this.parseComparable(true);
    this.blanks();
    if (!this.atTermEnd()) {
      const single = (op === '==' || op === '!=') && value.kind !== 'list' && value.kind !== 'range';
      this.fail(single ? "expected ',', '..', ';', '|', ')' or the end" : "expected ';', '|', ')' or the end");
    }
    return { kind: 'compare', path, op, value };
  }

  atTermEnd(): boolean {
    const c = this.peek();
    return c === '' || c === ';' || c === '|' || c === ')';
  }

  parsePath(): QPath {
    const attr = [this.parseName(NAME_RE, 'an attribute name')];
    while (this.peek() === '.') {
      this.pos++;
      attr.push(this.parseName(NAME_RE, "an attribute name after '.'"));
    }
    const compound: string[] = [];
    while (this.peek() === '[') {
      this.pos++;
      compound.push(this.parseName(MEMBER_RE, "a member name after '['"));
      while (this.peek() === '.') {
        this.pos++;
        compound.push(this.parseName(MEMBER_RE, "a member name after '.'"));
      }
      if (this.peek() !== ']') this.fail("expected '.' or ']'");
      this.pos++;
    }
    if (this.peek() === '{') {
      throw new LdError('OperationNotSupported', `q: linked-entity paths (attr{...}) are not supported, at position ${this.pos}`);
    }
    return { attr, compound };
  }

  parseName(re: RegExp, what: string): string {
    re.lastIndex = this.pos;
    const m = re.exec(this.text);
    if (m === null) this.fail(`expected ${what}`);
    this.pos += m[0].length;
    return m[0].includes('%') ? m[0].replace(ESCAPED_DOT, '.') : m[0];
  }

  // CIM 009 §4.9 CompEqualityValue = OtherValue / ValueList / Range / URI (and any single Value).
  parseEqualityValue(): QValue {
    const start = this.pos;
    const first = this.parseValue();
    this.blanks();
    if (this.text.startsWith('..', this.pos)) {
      if (first.kind === 'boolean' || first.kind === 'uri')
        this.fail(`a range bound must be a number, string, date, time or dateTime`, start);
      this.pos += 2;
      this.blanks();
      const maxAt = this.pos;
      const max = this.parseComparable(false);
      if (max.kind !== first.kind) this.fail(`expected a ${first.kind} as the upper bound of the range`, maxAt);
      if (this.peek() === ',') this.fail('a value list cannot hold a range');
      return { kind: 'range', min: first, max };
    }
    if (this.peek() !== ',') return first;
    const list: QList = { kind: 'list', items: [first] };
    while (this.peek() === ',') {
      this.pos++;
      this.blanks();
      list.items.push(this.parseValue());
      this.blanks();
      if (this.text.startsWith('..', this.pos)) this.fail('a value list cannot hold a range');
    }
    return list;
  }

  // CIM 009 §4.9 ComparableValue = Number / quotedStr / dateTime / date / time.
  parseComparable(alone: boolean): QLiteral {
    const start = this.pos;
    const v = this.parseValue();
    if (v.kind === 'boolean' || v.kind === 'uri') {
      this.fail('expected a number, string, date, time or dateTime (true, false and URIs only go with == and !=)', start);
    }
    this.blanks();
    if (alone && this.text.startsWith('..', this.pos)) this.fail('a range only goes with == and !=');
    if (alone && this.peek() === ',') this.fail('a value list only goes with == and !=');
    return v;
  }

  parseValue(): QLiteral | QUri {
    const start = this.pos;
    const c = this.peek();
    if (c === '"') return { kind: 'string', value: this.parseString() };
    let junkAt = -1;
    for (const [re, kind] of LITERAL_LEXERS) {
      re.lastIndex = start;
      const m = re.exec(this.text);
      if (m === null) continue;
      if (!this.isValueEnd(start + m[0].length)) {
        if (junkAt < 0) junkAt = start + m[0].length;
        continue;
      }
      const t = m[0];
      this.pos = start + t.length;
      switch (kind) {
        case 'dateTime':
          if (Number.isNaN(dateTimeMs(t))) this.fail(`invalid dateTime '${t}'`, start);
          return { kind, value: t };
        case 'date':
          if (Number.isNaN(dateMs(t))) this.fail(`invalid date '${t}'`, start);
          return { kind, value: t };
        case 'time':
          if (Number.isNaN(timeMs(t))) this.fail(`invalid time '${t}'`, start);
          return { kind, value: t };
        case 'number': {
          const n = Number(t);
          if (!Number.isFinite(n)) this.fail(`number out of range '${t}'`, start);
          return { kind, value: n };
        }
        case 'boolean':
          return { kind, value: t === 'true' };
      }
    }
    let end = start;
    while (end < this.text.length && !VALUE_STOP.has(this.text.charAt(end))) end++;
    const token = this.text.slice(start, end);
    if (token.length === 0 || !URI_RE.test(token)) {
      if (junkAt >= 0) this.fail("expected ',', '..', ';', '|', ')' or the end after a value", junkAt);
      this.fail('expected a value (a number, a "quoted string", a date, time or dateTime, true, false or a URI)', start);
    }
    this.pos = end;
    return { kind: 'uri', value: token };
  }

  isValueEnd(from: number): boolean {
    let at = from;
    while (isBlank(this.text.charCodeAt(at))) at++;
    const c = this.text.charAt(at);
    if (c === '' || c === ';' || c === '|' || c === ')' || c === ',') return true;
    return this.text.startsWith('..', at);
  }

  // RFC 8259 §7 string.
  parseString(): string {
    const start = this.pos;
    let i = start + 1;
    for (;;) {
      if (i >= this.text.length) this.fail('unterminated string', start);
      const ch = this.text.charCodeAt(i);
      if (ch === 0x22) break;
      if (ch < 0x20) this.fail('control character in a string', i);
      if (ch === 0x5c) {
        const e = this.text.charAt(i + 1);
        if (e === 'u') {
          if (!/^[0-9a-fA-F]{4}$/.test(this.text.slice(i + 2, i + 6))) this.fail('invalid \\u escape in a string', i);
          i += 6;
          continue;
        }
        if (!'"\\/bfnrt'.includes(e) || e === '') this.fail('invalid escape in a string', i);
        i += 2;
        continue;
      }
      i++;
    }
    this.pos = i + 1;
    return JSON.parse(this.text.slice(start, i + 1)) as string;
  }

  // RegExp: a JSON string (its content is the pattern), or bare text up to a top-level ';', '|' or ')'
  // (parentheses and character classes of the pattern are balanced, so `a~=(x|y)` keeps its alternation).
  parsePattern(): string {
    const start = this.pos;
    let pattern: string;
    if (this.peek() === '"') {
      pattern = this.parseString();
    } else {
      let depth = 0;
      let i = start;
      scan: while (i < this.text.length) {
        const c = this.text.charAt(i);
        switch (c) {
          case '\\':
            i += 2;
            continue;
          case '[': {
            i++;
            if (this.text.charAt(i) === '^') i++;
            if (this.text.charAt(i) === ']') i++;
            while (i < this.text.length && this.text.charAt(i) !== ']') i += this.text.charAt(i) === '\\' ? 2 : 1;
            if (i >= this.text.length) this.fail("unterminated '[' in the pattern", start);
            i++;
            continue;
          }
          case '(':
            depth++;
            break;
          case ')':
            if (depth === 0) break scan;
            depth--;
            break;
          case ';':
          case '|':
            if (depth === 0) break scan;
            break;
        }
        i++;
      }
      // Blanks before the ';', '|' or ')' that ends a bare pattern are the tolerance's; a quoted pattern keeps them.
      let end = Math.min(i, this.text.length);
      while (end > start && isBlank(this.text.charCodeAt(end - 1))) end--;
      pattern = this.text.slice(start, end);
      this.pos = Math.min(i, this.text.length);
    }
    if (pattern.length === 0) this.fail('expected a regular expression', start);
    const re = compileRe2(pattern);
    if (typeof re === 'string') this.fail(`invalid regular expression (${re})`, start);
    this.blanks();
    if (!this.atTermEnd()) this.fail("expected ';', '|', ')' or the end", this.pos);
    return pattern;
  }
}

const VALUE_STOP: ReadonlySet<string> = new Set([';', '|', ')', ',', ' ', '\t']);

const isBlank = (c: number): boolean => c === 0x20 || c === 0x09;

const LITERAL_LEXERS: readonly [RegExp, 'dateTime' | 'date' | 'time' | 'number' | 'boolean'][] = [
  [DATE_TIME_LEX, 'dateTime'],
  [DATE_LEX, 'date'],
  [TIME_LEX, 'time'],
  [NUMBER_LEX, 'number'],
  [/true|false/y, 'boolean'],
];
