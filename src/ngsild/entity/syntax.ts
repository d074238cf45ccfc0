// Lexical checks of NGSI-LD input values: URIs, attribute names, date-times, language tags, scopes.
// Plain character loops and anchored regular expressions without backtracking hazards; no I/O.

/** An absolute URI: scheme ':' then at least one character, no whitespace, controls or `<>"{}|\^\``. */
export function isUri(s: unknown): s is string {
  if (typeof s !== 'string' || s.length < 3) return false;
  const first = s.charCodeAt(0);
  if (!isAlpha(first)) return false;
  let i = 1;
  for (; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === 58 /* : */) break;
    if (!(isAlpha(c) || (c >= 48 && c <= 57) || c === 43 || c === 45 || c === 46)) return false;
  }
  if (i >= s.length - 1) return false;
  for (i++; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c <= 32 || c === 127 || c === 34 || c === 60 || c === 62 || c === 92 || c === 94 || c === 96 || c === 123 || c === 124 || c === 125)
      return false;
  }
  return true;
}

function isAlpha(c: number): boolean {
  return (c >= 65 && c <= 90) || (c >= 97 && c <= 122);
}

/**
 * CIM 009 §4.6.2: names of attributes (and types) must not hold characters that are forbidden in the
 * API (`<>"'=;()`), whitespace or control characters. Returns the offending character, or undefined.
 */
export function forbiddenNameChar(name: string): string | undefined {
  for (let i = 0; i < name.length; i++) {
    const c = name.charCodeAt(i);
    if (
      c <= 32 ||
      c === 127 ||
      (c >= 0x80 && c <= 0x9f) ||
      c === 0xa0 ||
      c === 0x2028 ||
      c === 0x2029 ||
      c === 60 ||
      c === 62 ||
      c === 34 ||
      c === 39 ||
      c === 61 ||
      c === 59 ||
      c === 40 ||
      c === 41
    )
      return name.charAt(i);
  }
  return undefined;
}

const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?(Z|[+-](\d{2}):(\d{2}))?$/;

/** An ISO 8601 date-time (calendar date, `T`, time with seconds, optional fraction and zone) with valid fields. */
export function isDateTime(s: unknown): s is string {
  if (typeof s !== 'string') return false;
  const m = DATE_TIME.exec(s);
  if (m === null) return false;
  const month = +m[2]!;
  const day = +m[3]!;
  const hour = +m[4]!;
  const minute = +m[5]!;
  const second = +m[6]!;
  if (month < 1 || month > 12 || day < 1 || day > daysIn(+m[1]!, month)) return false;
  if (hour > 23 || minute > 59 || second > 60) return false;
  if (m[9] !== undefined && (+m[9] > 23 || +m[10]! > 59)) return false;
  return true;
}

function daysIn(year: number, month: number): number {
  if (month === 2) return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 29 : 28;
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
}

const LANGUAGE_TAG = /^[A-Za-z]{1,8}(-[A-Za-z0-9]{1,8})*$/;

/** A BCP 47-shaped language tag, or `@none` (the JSON-LD key of a string without language, CIM 009 §4.5.18). */
export function isLanguageKey(s: string): boolean {
  return s === '@none' || LANGUAGE_TAG.test(s);
}

// A level holds no '/', '#', '+' (scopeQ's wildcards), white space nor control character: a NUL, which PostgreSQL's
// jsonb refuses, made docdb on FerretDB's PostgreSQL backend fail the write.
const SCOPE = /^\/[^/#+\s\u0000-\u001f\u007f]+(\/[^/#+\s\u0000-\u001f\u007f]+)*$/;

/** CIM 009 §4.18: a scope is a path `/level1/level2`; `#` and `+` are reserved for scope queries. */
export function isScope(s: unknown): s is string {
  return typeof s === 'string' && SCOPE.test(s);
}

/** The JSON-LD/NGSI-LD null marker (CIM 009 §5.6.17, §4.5.x): a member whose value this is is deleted. */
export const NGSI_LD_NULL = 'urn:ngsi-ld:null';

export function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** A short JSON rendering of a value for error details. */
export function show(v: unknown): string {
  if (v === undefined) return 'nothing';
  const s = JSON.stringify(v);
  return s.length > 60 ? s.slice(0, 57) + '...' : s;
}
