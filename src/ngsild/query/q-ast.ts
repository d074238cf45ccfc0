// The syntax tree of the NGSI-LD query language (CIM 009 v1.8 §4.9): what `parseQ` builds, `printQ` prints
// and `compileQ` evaluates. Plain data (it crosses threads with a subscription); names stay as written.

/**
 * An attribute path: `attr` is the dotted list of attribute / sub-attribute / metadata names (terms as written,
 * `%2E` decoded to `.`), `compound` the trailing member path inside the value (`a[b.c]` or `a[b][c]`; for a
 * LanguageProperty its one segment is the language tag or `*`). `compound` is empty when there is none.
 */
export interface QPath {
  attr: string[];
  compound: string[];
}

export type QCompareOp = '==' | '!=' | '>' | '>=' | '<' | '<=';

/**
 * A literal of the grammar; `dateTime`, `date`, `time` and `uri` keep their text as written. A string's `expanded`
 * is set in a tree whose names are resolved (q-resolve.ts): the string as a term of the request's @context, which a
 * VocabProperty's vocab (and expandValues) compares with.
 */
export type QLiteral =
  | { kind: 'number'; value: number }
  | { kind: 'string'; value: string; expanded?: string }
  | { kind: 'boolean'; value: boolean }
  | { kind: 'dateTime'; value: string }
  | { kind: 'date'; value: string }
  | { kind: 'time'; value: string };

/** CIM 009 §4.9 `URI`: only after `==` / `!=` (alone or in a value list). */
export interface QUri {
  kind: 'uri';
  value: string;
  /** As a string literal's `expanded`. */
  expanded?: string;
}

export interface QList {
  kind: 'list';
  items: (QLiteral | QUri)[];
}

/** `min..max`, both bounds of one comparable kind (number, string, dateTime, date or time). */
export interface QRange {
  kind: 'range';
  min: QLiteral;
  max: QLiteral;
}

export type QValue = QLiteral | QUri | QList | QRange;

export interface QAnd {
  kind: 'and';
  terms: QNode[];
}
export interface QOr {
  kind: 'or';
  terms: QNode[];
}
/** A bare attribute path: the target element exists. */
export interface QExists {
  kind: 'exists';
  path: QPath;
}
/** `!path`: the target element does not exist. */
export interface QNotExists {
  kind: 'notExists';
  path: QPath;
}
export interface QCompare {
  kind: 'compare';
  path: QPath;
  op: QCompareOp;
  value: QValue;
  /**
   * Set in a resolved tree when expandValues names the path's attribute (CIM 009 v1.8 table 6.4.3.2-1): its values
   * hold IRIs, so the query's strings compare as expanded terms, as for a VocabProperty.
   */
  vocab?: boolean;
}
/** `~=` (negated false) and `!~=` (negated true); `pattern` is RE2 syntax, validated by the parser. */
export interface QMatch {
  kind: 'match';
  path: QPath;
  negated: boolean;
  pattern: string;
}

export type QNode = QAnd | QOr | QExists | QNotExists | QCompare | QMatch;

// Literal shapes (CIM 009 §4.6.3), shared by the lexer and the evaluator (which applies them to stored strings).
export const DATE_TIME_RE = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?(Z|[+-]\d{2}:\d{2})?$/;
export const DATE_RE = /^(\d{4})-(\d{2})-(\d{2})$/;
export const TIME_RE = /^(\d{2}):(\d{2})(?::(\d{2})(\.\d+)?)?Z?$/;

function validYmd(y: number, m: number, d: number): boolean {
  if (m < 1 || m > 12 || d < 1) return false;
  const days = [31, (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0 ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
  return d <= days[m - 1]!;
}

function validHms(h: number, mi: number, s: number): boolean {
  return h <= 23 && mi <= 59 && s <= 59;
}

/** Milliseconds since the epoch of a DateTime (no offset means UTC), or NaN when `text` is not one. */
export function dateTimeMs(text: string): number {
  const m = DATE_TIME_RE.exec(text);
  if (m === null) return NaN;
  if (!validYmd(+m[1]!, +m[2]!, +m[3]!) || !validHms(+m[4]!, +m[5]!, m[6] === undefined ? 0 : +m[6])) return NaN;
  return Date.parse(m[7] === undefined ? text + 'Z' : text);
}

/** Milliseconds since the epoch of a Date at 00:00 UTC, or NaN. */
export function dateMs(text: string): number {
  const m = DATE_RE.exec(text);
  if (m === null || !validYmd(+m[1]!, +m[2]!, +m[3]!)) return NaN;
  return Date.UTC(+m[1]!, +m[2]! - 1, +m[3]!);
}

/** Milliseconds since midnight of a Time, or NaN. */
export function timeMs(text: string): number {
  const m = TIME_RE.exec(text);
  if (m === null) return NaN;
  const h = +m[1]!;
  const mi = +m[2]!;
  const s = m[3] === undefined ? 0 : +m[3];
  if (!validHms(h, mi, s)) return NaN;
  const frac = m[4] === undefined ? 0 : Number('0' + m[4]) * 1000;
  return ((h * 60 + mi) * 60 + s) * 1000 + frac;
}
