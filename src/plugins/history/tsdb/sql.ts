// SQL on QuestDB's HTTP endpoint (/exec): the reads of the tsdb history and its DDL. Every value reaches the text as
// a quoted literal (lit) or a number the code made; names are ours (settings.ts tablesOf).
import { Agent, request, type IncomingMessage } from 'node:http';
import type { TsdbSettings } from './settings.js';

/** QuestDB cannot be reached, or answered with an error it may not give again: reads answer 503. */
export class QuestDbDown extends Error {}

/** QuestDB refused the statement (a bug of ours, or a table that is not there yet). */
export class QuestDbRefused extends Error {
  constructor(
    message: string,
    readonly status: number,
  ) {
    super(message);
  }
}

/** A statement longer than QuestDB takes in one request line (its HTTP header buffer, about 56 kB by default). */
export class QueryTooLong extends Error {}

/** Characters of SQL the history sends at most in one /exec request: well inside QuestDB's request line. */
export const MAX_SQL = 16_000;

/** Literals grouped so that each group's list stays under `budget` characters: one query per group. */
export function literalGroups(values: readonly string[], budget = MAX_SQL / 2): string[][] {
  const out: string[][] = [];
  let group: string[] = [];
  let size = 0;
  for (const v of values) {
    const l = lit(v);
    if (group.length > 0 && size + l.length + 1 > budget) {
      out.push(group);
      group = [];
      size = 0;
    }
    group.push(l);
    size += l.length + 1;
  }
  if (group.length > 0) out.push(group);
  return out;
}

export interface SqlResult {
  columns: Array<{ name: string; type: string }>;
  dataset: unknown[][];
}

/**
 * A string literal. A quote is doubled, and a text holding one is written as a concatenation around a literal quote:
 * QuestDB 9.3.4 compares an indexed SYMBOL column with a constant 'o''brien' by its raw text and finds nothing,
 * while the same value built by an expression matches (tsdb.bad-input.test.ts).
 */
export function lit(s: string): string {
  if (!s.includes("'")) return `'${s}'`;
  return `(${s
    .split("'")
    .map((part) => `'${part}'`)
    .join(" || '''' || ")})`;
}

/** A timestamp literal of ms since the epoch (QuestDB keeps µs). */
export const tsLit = (ms: number): string => `${Math.trunc(ms) * 1000}::timestamp`;

export function authHeader(s: TsdbSettings): Record<string, string> {
  if (s.user === undefined) return {};
  return { authorization: `Basic ${Buffer.from(`${s.user}:${s.pwd ?? ''}`, 'utf8').toString('base64')}` };
}

/**
 * Connections to QuestDB kept open between statements (per thread). node:http rather than fetch: fetch (undici) cost
 * the pipeline thread about 500 µs of CPU per statement against 100 here, and a lastN read makes four of them
 * (bench/temporal-tsdb.ts: 1,438 µs of pipeline per lastN=100 at 1,000,000 instances).
 */
const agent = new Agent({ keepAlive: true, maxSockets: 32 });

interface HttpAnswer {
  status: number;
  text: string;
}

/** One GET of `path`; a kept connection QuestDB closed meanwhile is tried once more on a new one. */
function get(s: TsdbSettings, path: string, timeoutMs: number, retry = true): Promise<HttpAnswer> {
  return new Promise<HttpAnswer>((resolve, reject) => {
    const req = request({ host: s.host, port: s.port, path, headers: authHeader(s), agent });
    const timer = setTimeout(() => req.destroy(new Error(`no answer in ${timeoutMs} ms`)), timeoutMs);
    req.on('error', (e: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      if (retry && req.reusedSocket && (e.code === 'ECONNRESET' || e.code === 'EPIPE'))
        get(s, path, timeoutMs, false).then(resolve, reject);
      else reject(e);
    });
    req.on('response', (res: IncomingMessage) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('error', (e) => {
        clearTimeout(timer);
        reject(e);
      });
      res.on('end', () => {
        clearTimeout(timer);
        resolve({ status: res.statusCode ?? 0, text });
      });
    });
    req.end();
  });
}

export async function exec(s: TsdbSettings, query: string, timeoutMs = 10_000): Promise<SqlResult> {
  if (query.length > MAX_SQL * 2) throw new QueryTooLong(`a history query of ${query.length} characters`);
  let res: HttpAnswer;
  try {
    res = await get(s, `/exec?query=${encodeURIComponent(query)}`, timeoutMs);
  } catch (e) {
    throw new QuestDbDown(`QuestDB at ${s.host}:${s.port} cannot be reached: ${(e as Error).message}`);
  }
  let body: { error?: string; columns?: SqlResult['columns']; dataset?: unknown[][] };
  try {
    body = JSON.parse(res.text) as typeof body;
  } catch {
    throw new QuestDbDown(`QuestDB at ${s.host}:${s.port} answered ${res.status} without JSON`);
  }
  const ok = res.status >= 200 && res.status < 300;
  if (body.error !== undefined || !ok) {
    const msg = `QuestDB: ${body.error ?? `status ${res.status}`}`;
    if (res.status >= 500 || res.status === 401 || res.status === 403) throw new QuestDbDown(msg);
    throw new QuestDbRefused(msg, res.status);
  }
  return { columns: body.columns ?? [], dataset: body.dataset ?? [] };
}

/** Rows as objects by column name. */
export function rowsOf(r: SqlResult): Array<Record<string, unknown>> {
  const names = r.columns.map((c) => c.name);
  return r.dataset.map((row) => {
    const o: Record<string, unknown> = {};
    for (let i = 0; i < names.length; i++) o[names[i]!] = row[i];
    return o;
  });
}

/** A QuestDB timestamp as written back (µs, `…000000Z`) to an ISO 8601 ms string. */
export const isoOf = (v: unknown): string | undefined => (typeof v === 'string' ? new Date(Date.parse(v)).toISOString() : undefined);
