// URL parameters of a request: decoded once, in request order; the NGSI-LD `options` list split into flags.
import { badRequest } from '../ngsild/problem.js';

export class QueryParams {
  readonly list: Array<readonly [string, string]> = [];
  private readonly map = new Map<string, string>();

  constructor(raw: string) {
    if (raw === '') return;
    for (const part of raw.split('&')) {
      if (part === '') continue;
      const eq = part.indexOf('=');
      const name = decode(eq < 0 ? part : part.slice(0, eq));
      const value = eq < 0 ? '' : decode(part.slice(eq + 1));
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

  /** The words of `options` (CIM 009 §6.3.x: keyValues, concise, sysAttrs, noOverwrite, replace, update, ...). */
  options(allowed: readonly string[]): Set<string> {
    const words = new Set<string>();
    const v = this.map.get('options');
    if (v === undefined) return words;
    for (const w of v.split(',')) {
      const word = w.trim();
      if (!allowed.includes(word)) throw badRequest(`options: '${word}' is not one of ${allowed.join(', ')}`);
      words.add(word);
    }
    return words;
  }

  /** Refuses any parameter the operation does not know (CIM 009: unknown parameters are a bad request). */
  only(allowed: ReadonlySet<string>): void {
    for (const name of this.map.keys()) if (!allowed.has(name)) throw badRequest(`unknown URL parameter '${name}'`);
  }
}

function decode(s: string): string {
  // '+' stays '+': it is literal in a URI query (RFC 3986) and scopeQ uses it (`/a/+`).
  if (!s.includes('%')) return s;
  try {
    return decodeURIComponent(s);
  } catch {
    throw badRequest(`URL parameter text '${s.slice(0, 80)}' is not valid percent-encoding`);
  }
}
