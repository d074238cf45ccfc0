// URL parameters of a request: decoded once, in request order; the NGSI-LD `options` list split into flags.
import { badRequest, invalidRequest } from '../ngsild/problem.js';

/**
 * The `options` word Orion-LD keeps from NGSIv2 for `count=true` (README "Tolerances for real clients"): accepted
 * by every operation that takes `options`, it asks list operations for NGSILD-Results-Count and is a no-op elsewhere.
 */
const COUNT_WORD = 'count';

/** The one parameter whose `+` is a character of its own: the single-level wildcard of scopeQ (`/Madrid/+`). */
const PLUS_KEPT = 'scopeQ';
const PLUS = /\+/g;

export class QueryParams {
  readonly list: Array<readonly [string, string]> = [];
  private readonly map = new Map<string, string>();

  constructor(raw: string) {
    if (raw === '') return;
    for (const part of raw.split('&')) {
      if (part === '') continue;
      const eq = part.indexOf('=');
      const name = decode(eq < 0 ? part : part.slice(0, eq), true);
      const value = eq < 0 ? '' : decode(part.slice(eq + 1), name !== PLUS_KEPT);
      if (this.map.has(name)) throw badRequest(`URL parameter '${name}' is given more than once`);
      this.map.set(name, value);
      this.list.push([name, value]);
    }
  }

  get(name: string): string | undefined {
    return this.map.get(name);
  }

  has(name: string): boolean {
    return this.map.has(name);
  }

  names(): IterableIterator<string> {
    return this.map.keys();
  }

  /** A comma-separated list parameter, empty entries refused. */
  csv(name: string): string[] | undefined {
    const v = this.map.get(name);
    if (v === undefined) return undefined;
    const items = v.split(',');
    for (const item of items) if (item.trim() === '') throw badRequest(`URL parameter '${name}' has an empty entry`);
    return items.map((s) => s.trim());
  }

  /**
   * The words of `options` (CIM 009 §6.3.x: keyValues, concise, sysAttrs, noOverwrite, replace, update, ...), plus
   * Orion-LD's `count`. A word the operation does not support is 400 InvalidRequest (CIM 009 v1.8.1 §6.3.20).
   */
  options(allowed: readonly string[]): Set<string> {
    const words = new Set<string>();
    const v = this.map.get('options');
    if (v === undefined) return words;
    for (const w of v.split(',')) {
      const word = w.trim();
      if (word !== COUNT_WORD && !allowed.includes(word))
        throw invalidRequest(`options: '${word.slice(0, 60)}' is not one of ${allowed.join(', ')}`);
      words.add(word);
    }
    return words;
  }

  /** Whether a list operation is asked for its total (CIM 009 §6.3.13 `count=true`, or Orion-LD's `options=count`). */
  count(): boolean {
    const text = this.map.get('count');
    if (text !== undefined && text !== 'true' && text !== 'false') throw badRequest(`count: '${text.slice(0, 30)}' is not true or false`);
    if (text === 'true') return true;
    const v = this.map.get('options');
    return v !== undefined && v.split(',').some((w) => w.trim() === COUNT_WORD);
  }

  /** Refuses any parameter the operation does not know: 400 InvalidRequest (CIM 009 v1.8.1 §6.3.20). */
  only(allowed: ReadonlySet<string>): void {
    for (const name of this.map.keys()) if (!allowed.has(name)) throw invalidRequest(`unknown URL parameter '${name.slice(0, 60)}'`);
  }
}

/**
 * Percent-decoding of a name or value. `+` is a space (application/x-www-form-urlencoded: what Python requests, Java
 * URLEncoder, Go url.Values and HTML forms send; a literal `+` comes as %2B), except in scopeQ, where clients write
 * the wildcard as it is.
 */
function decode(s: string, plusIsSpace: boolean): string {
  const text = plusIsSpace && s.includes('+') ? s.replace(PLUS, ' ') : s;
  if (!text.includes('%')) return text;
  try {
    return decodeURIComponent(text);
  } catch {
    throw badRequest(`URL parameter text '${s.slice(0, 80)}' is not valid percent-encoding`);
  }
}
