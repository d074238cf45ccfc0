// The lines QuestDB refuses (issue 18): an ILP request answered 400 is rolled back whole by QuestDB, so one line it
// cannot take (an observedAt past 9999-12-31, QuestDB's last designated timestamp, ilp.ts; a value of another type
// than its column) made the writer send the whole queue again for ever: every tenant's later
// history stuck behind one row, then back-pressure. Here a refused request is split until the refused lines are
// found; the others are written and each refused line is dropped with a warn line (writer.ts).
// The client's transport drops the body of an error answer (4.x stdlib_http: it ends the request at the status
// line), so the pieces go by a plain node:http POST that reads QuestDB's error JSON: its message, and the line it
// stopped at, which splits the request there rather than in halves.
import { request } from 'node:http';
import type { TsdbSettings } from './settings.js';

/** QuestDB took the lines (204), or refused them (400, 413): its message and the 1-based line it names, if any. */
type Answer = { ok: true } | { ok: false; message: string; line?: number };

/** A line and whose it is, for the warn line of a refusal. */
export interface Item {
  tenant: string;
  line: string;
}

export interface Refusal extends Item {
  message: string;
}

/** Statuses that refuse what the request holds: splitting it finds the lines; any other failure is QuestDB away. */
const REFUSING = new Set([400, 413]);

/** The status the client's transport put in its error (`HTTP request failed, statusCode=400, error=`), if any. */
export function refusedStatus(e: unknown): boolean {
  const m = /statusCode=(\d{3})/.exec(e instanceof Error ? e.message : '');
  return m !== null && REFUSING.has(Number(m[1]));
}

const REQUEST_MS = 10_000;
const MESSAGE_MAX = 300;

/** One ILP request by node:http; anything but 204 or a refusal throws (the writer retries the batch later). */
function post(s: TsdbSettings, text: string): Promise<Answer> {
  const body = Buffer.from(text, 'utf8');
  const headers: Record<string, string | number> = { 'content-type': 'text/plain; charset=utf-8', 'content-length': body.length };
  if (s.user !== undefined) headers.authorization = `Basic ${Buffer.from(`${s.user}:${s.pwd ?? ''}`).toString('base64')}`;
  return new Promise<Answer>((resolve, reject) => {
    const req = request(
      { host: s.host.replace(/^\[|\]$/g, ''), port: s.port, method: 'POST', path: '/write?precision=n', headers, timeout: REQUEST_MS },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', reject);
        res.on('end', () => {
          const status = res.statusCode ?? 0;
          if (status === 204) return resolve({ ok: true });
          if (!REFUSING.has(status)) return reject(new Error(`QuestDB answered an ILP request ${status}`));
          let message = `QuestDB answered ${status}`;
          let line: number | undefined;
          try {
            const j = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { message?: unknown; line?: unknown };
            if (typeof j.message === 'string') message = j.message;
            if (typeof j.line === 'number' && Number.isInteger(j.line)) line = j.line;
          } catch {
            // Not QuestDB's error JSON: the status alone; the request is split in halves.
          }
          resolve({ ok: false, message, line });
        });
      },
    );
    req.on('timeout', () => req.destroy(new Error('QuestDB did not answer an ILP request in time')));
    req.on('error', reject);
    req.end(body);
  });
}

const text = (items: readonly Item[]): string => {
  let t = '';
  for (const i of items) t += i.line;
  return t;
};

/**
 * Writes `items`, splitting each refused piece: at the line QuestDB names (the lines before it are sent, that one
 * dropped, the rest split in halves), else in halves, down to single lines. Refused lines are returned; a failure
 * that is not a refusal throws with part of the items possibly written (a resend lands once: the dedup keys).
 * Halving bounds the work when many lines are refused: each level sends every line at most once.
 */
export async function writeFinding(s: TsdbSettings, items: readonly Item[]): Promise<Refusal[]> {
  if (items.length === 0) return [];
  const a = await post(s, text(items));
  if (a.ok) return [];
  if (items.length === 1) return [{ ...items[0]!, message: a.message }];
  const out: Refusal[] = [];
  let rest = items;
  if (a.line !== undefined && a.line >= 1 && a.line <= items.length) {
    out.push(...(await writeFinding(s, items.slice(0, a.line - 1))));
    out.push({ ...items[a.line - 1]!, message: a.message });
    rest = items.slice(a.line);
  }
  if (rest.length === items.length || rest.length > 1) {
    const half = rest.length >> 1;
    out.push(...(await writeFinding(s, rest.slice(0, half))));
    out.push(...(await writeFinding(s, rest.slice(half))));
  } else out.push(...(await writeFinding(s, rest)));
  return out;
}

/** The items of a request's batches: one per line, with its tenant. */
export function itemsOf(batches: ReadonlyArray<{ tenant: string; lines: string }>): Item[] {
  const out: Item[] = [];
  for (const b of batches)
    for (let at = 0; at < b.lines.length;) {
      const end = b.lines.indexOf('\n', at);
      const stop = end < 0 ? b.lines.length : end + 1;
      out.push({ tenant: b.tenant, line: b.lines.slice(at, stop) });
      at = stop;
    }
  return out;
}

/** A text of QuestDB or of a client for a log line: capped, control characters shown as `\uXXXX` (pino escapes the rest). */
export function shown(v: string, max = MESSAGE_MAX): string {
  const t = v.replace(/[\u0000-\u001f\u007f\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  return t.length > max ? `${t.slice(0, max)}…` : t;
}

/** What the warn line of a refused line says of it: its table (ours) and entity (the client's, capped). */
export function describe(r: Refusal): Record<string, unknown> {
  const table = /^[a-z0-9_]+/.exec(r.line)?.[0] ?? '';
  const entity = /,entity=((?:\\.|[^,\\ ])*)/.exec(r.line)?.[1]?.replace(/\\(.)/g, '$1');
  const o: Record<string, unknown> = { tenant: shown(r.tenant, 100), table, err: shown(r.message) };
  if (entity !== undefined) o.entity = shown(entity, 200);
  return o;
}

/** Refused lines logged one by one per minute; past them a notice, then only /metrics counts them. */
export const REFUSAL_WARNS_PER_MINUTE = 10;
const MINUTE_MS = 60_000;

/**
 * Whether the next refused line gets its warn line: a client can make every history row it writes refused (an
 * observedAt past 2262), and one warn line each would let it fill the log at its write rate. 'log' for the first
 * REFUSAL_WARNS_PER_MINUTE of a minute, 'notice' once for the next (the writer says further ones go unlogged), then
 * 'quiet' until the minute ends.
 */
export class RefusalWarns {
  private windowStart = -Infinity;
  private inWindow = 0;

  constructor(
    private readonly perMinute = REFUSAL_WARNS_PER_MINUTE,
    private readonly now: () => number = Date.now,
  ) {}

  next(): 'log' | 'notice' | 'quiet' {
    const t = this.now();
    if (t - this.windowStart >= MINUTE_MS) {
      this.windowStart = t;
      this.inWindow = 0;
    }
    this.inWindow++;
    if (this.inWindow <= this.perMinute) return 'log';
    return this.inWindow === this.perMinute + 1 ? 'notice' : 'quiet';
  }
}
