// The tsdb history's writer (its own thread, writer-thread.ts): takes the rows every thread hands it (the facts of
// their writes, facts.ts, of which it makes the ILP lines, ilp.ts), appends them to QuestDB through ILP over HTTP
// (@questdb/nodejs-client's transport) in batches, off the request path. While QuestDB is slow
// or down, rows wait in a bounded buffer (--troeBuffer rows; past it, entity writes wait: back-pressure) and are sent
// again, in order, once it answers: QuestDB's dedup keys make a batch sent twice land once (rows.ts).
import { Sender, SenderOptions, createTransport, type SenderTransport } from '@questdb/nodejs-client';
import { fastEscape } from './fast-escape.js';
import type { FromWriter, Greeting, ToWriter, WriterReport } from './channel.js';
import type { EntRow, InstRow, LineBatch } from './rows.js';
import { linesOfFacts } from './facts.js';
import { migrateOld } from './migrate-v1.js';
import { tableDdl } from './rows.js';
import { QuestDbRefused, exec, lit, rowsOf } from './sql.js';
import { REFUSAL_WARNS_PER_MINUTE, RefusalWarns, describe, itemsOf, refusedStatus, writeFinding } from './refusals.js';
import { tablesOf, type TenantTables, type TsdbSettings } from './settings.js';

/** Rows sent in one ILP request at most. */
const BATCH_ROWS = 20_000;
/**
 * Rows are sent once this many wait, or once the oldest waited LINGER_MS, or at once when a read asks (sync).
 * QuestDB's CPU per row falls with the rows per request (bench/micro/questdb-ilp-cost.ts, 9.3.4: about 3,900 µs for
 * a request of 1 row, 115 µs/row at 100, 45 at 1,000, 16 at 10,000): each request is a WAL transaction with its own
 * commit and apply. Sending whenever the previous request returned made requests of a few dozen rows under load.
 */
const FLUSH_ROWS = 10_000;
const LINGER_MS = 1000;
const RETRY_MIN_MS = 250;
const RETRY_MAX_MS = 5_000;
/** How long a sync waits for QuestDB to apply what was sent (its WAL tables apply asynchronously). */
const APPLY_WAIT_MS = 10_000;
/** How often the lag is told to the instances while rows wait (and once more when none is left). */
const LAG_EVERY_MS = 1000;

interface Pending {
  /** Position of the rows message after which the sync was asked. */
  target: number;
  id: string;
  reply: (m: FromWriter) => void;
}

const rowCount = (b: LineBatch): number => b.inst + b.ent;

export class Writer {
  private readonly queue: LineBatch[] = [];
  /** When each batch of the queue arrived (Date.now()), for the lag. */
  private readonly queuedAt: number[] = [];
  private lagToldAt = 0;
  private queuedRows = 0;
  /** History rows QuestDB refused and the writer dropped since start (/metrics). */
  private refused = 0;
  private readonly refusalWarns = new RefusalWarns();
  /** rows messages received, and how many of them are in QuestDB. */
  private received = 0;
  private sent = 0;
  private readonly syncs: Pending[] = [];
  private readonly ensured = new Set<string>();
  /** tablesOf per tenant written (it may hash the tenant). */
  private readonly tableCache = new Map<string, TenantTables>();
  /** Tables written since QuestDB last said it applied everything. */
  private readonly unapplied = new Set<string>();
  private transport: SenderTransport | undefined;
  private timer: NodeJS.Timeout | undefined;
  private running = false;
  private down = false;
  private retryMs = RETRY_MIN_MS;
  private full = false;
  private lastError = '';
  private closing = false;
  /**
   * The old layout's tables are carried over (migrate-v1.ts) before any row is sent: a row sent first could be put
   * back to an older version by the copy. Tried at start and again with the back-off while QuestDB is away.
   */
  private migrated = false;

  constructor(
    private readonly s: TsdbSettings,
    private readonly post: (m: Greeting) => void,
    private readonly report: (m: WriterReport) => void,
  ) {
    this.schedule();
  }

  /** A message of one instance, whose answers go back by `reply`. */
  on(m: Exclude<ToWriter, { k: 'flushed' } | { k: 'bye' }>, reply: (m: FromWriter) => void): void {
    if (m.k === 'rows') {
      const now = Date.now();
      for (const f of m.b) {
        const b = linesOfFacts(f.tenant, f.facts, this.tablesOf(f.tenant));
        if (b.failed > 0) {
          this.refused += b.failed;
          this.lagToldAt = 0;
          this.log('error', { err: b.error, tenant: f.tenant, rows: b.failed }, 'tsdb: history rows could not be written as ILP: dropped');
        }
        this.queue.push(b);
        this.queuedAt.push(now);
        this.queuedRows += rowCount(b);
      }
      this.tellLag(false);
      this.received += m.b.length;
      if (!this.full && this.queuedRows > this.s.buffer) {
        this.full = true;
        this.post({ k: 'pressure', full: true });
        this.log(
          'warn',
          { rows: this.queuedRows, buffer: this.s.buffer },
          'tsdb: the history buffer is full: entity writes wait for QuestDB',
        );
      }
      this.schedule();
      return;
    }
    this.syncs.push({ target: this.received, id: m.id, reply });
    if (this.down) {
      this.answerSyncs(this.lastError);
      return;
    }
    this.schedule();
  }

  private tablesOf(tenant: string): TenantTables {
    let t = this.tableCache.get(tenant);
    if (t === undefined) this.tableCache.set(tenant, (t = tablesOf(this.s.name, tenant)));
    return t;
  }

  /** Runs at once when a sync waits or FLUSH_ROWS rows do, else when the oldest row has waited LINGER_MS. */
  private schedule(): void {
    if (this.running || this.closing) return;
    // While QuestDB is away, the retry timer (run's back-off) decides: no request per message.
    if (this.down && this.timer !== undefined) return;
    if (this.queue.length === 0 && this.syncs.length === 0 && this.migrated) return;
    const urgent = this.syncs.length > 0 || this.queuedRows >= FLUSH_ROWS || !this.migrated;
    const ms = urgent ? 0 : Math.max(0, this.queuedAt[0]! + LINGER_MS - Date.now());
    if (this.timer !== undefined) {
      if (ms > 0) return;
      clearTimeout(this.timer);
    }
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.run();
    }, ms);
  }

  private async run(): Promise<void> {
    this.running = true;
    try {
      await this.migrate();
      // What waited when the send was due goes now; what arrives meanwhile waits for its own turn (schedule), or a
      // steady load would follow each large request with a small one of the rows that came during it.
      for (let due = this.queue.length; due > 0 && this.queue.length > 0;) {
        const before = this.queue.length;
        await this.sendBatch();
        due -= before - this.queue.length;
      }
      if (this.syncs.length > 0) {
        await this.waitApplied();
        this.answerSyncs();
      }
      if (this.down) this.log('info', { endpoint: `${this.s.host}:${this.s.port}` }, 'tsdb: QuestDB answers again: buffered history sent');
      this.down = false;
      this.retryMs = RETRY_MIN_MS;
    } catch (e) {
      this.transport = undefined;
      this.lastError = e instanceof Error ? e.message : String(e);
      if (!this.down)
        this.log(
          'error',
          { err: this.lastError, buffered: this.queuedRows },
          'tsdb: QuestDB is not taking the history: rows are kept and sent again',
        );
      this.down = true;
      this.answerSyncs(this.lastError);
      this.tellLag(false);
      this.running = false;
      if (!this.closing) {
        this.timer = setTimeout(() => {
          this.timer = undefined;
          void this.run();
        }, this.retryMs);
        this.retryMs = Math.min(this.retryMs * 2, RETRY_MAX_MS);
      }
      return;
    }
    this.running = false;
    this.schedule();
  }

  /** Sends the oldest batches (up to BATCH_ROWS rows) in one ILP request; they leave the queue once QuestDB took them. */
  private async sendBatch(): Promise<void> {
    let n = 0;
    let rows = 0;
    while (n < this.queue.length && (n === 0 || rows + rowCount(this.queue[n]!) <= BATCH_ROWS)) rows += rowCount(this.queue[n++]!);
    const batches = this.queue.slice(0, n);
    await this.migrate();
    const transport = await this.transportOf();
    const touched = new Set<string>();
    const taken: LineBatch[] = [];
    let text = '';
    for (const b of batches) {
      const t = this.tablesOf(b.tenant);
      try {
        await this.ensure(t.inst, t.ent);
      } catch (e) {
        if (!(e instanceof QuestDbRefused)) throw e;
        // QuestDB refuses the tables themselves (not a passing failure): the tenant's rows cannot land, and kept
        // they would hold back every other tenant's behind them.
        this.log(
          'error',
          { err: e.message, tenant: b.tenant, rows: rowCount(b) },
          'tsdb: QuestDB refuses the tables: history rows dropped',
        );
        continue;
      }
      text += b.lines;
      taken.push(b);
      if (b.inst > 0) touched.add(t.inst);
      if (b.ent > 0) touched.add(t.ent);
    }
    // One UTF-8 conversion of the whole request: the client's row API wrote each string of each row on its own.
    if (text !== '')
      try {
        await transport.send(Buffer.from(text, 'utf8'));
      } catch (e) {
        // QuestDB refused a line (400): the request was rolled back whole, and sent again as it is it would be
        // refused for ever, holding every later row of every tenant. Unavailability (5xx, no answer) is thrown: the
        // batch waits and goes again (run's back-off).
        if (!refusedStatus(e)) throw e;
        this.dropRefused(await writeFinding(this.s, itemsOf(taken)));
      }
    this.queue.splice(0, n);
    this.queuedAt.splice(0, n);
    this.queuedRows -= rows;
    this.tellLag(this.queue.length === 0);
    this.sent += n;
    for (const t of touched) this.unapplied.add(t);
    if (this.full && this.queuedRows < this.s.buffer / 2) {
      this.full = false;
      this.post({ k: 'pressure', full: false });
    }
  }

  /** One warn line per line QuestDB refused (dropped: its other lines were written), and the count for /metrics. */
  private dropRefused(refused: ReadonlyArray<Parameters<typeof describe>[0]>): void {
    for (const r of refused) {
      const say = this.refusalWarns.next();
      if (say === 'log') this.log('warn', describe(r), 'tsdb: QuestDB refused a history row: dropped');
      else if (say === 'notice')
        this.log(
          'warn',
          { perMinute: REFUSAL_WARNS_PER_MINUTE },
          'tsdb: more history rows refused this minute: dropped and counted (ldbroker_history_rows_refused_total), not logged until the minute ends',
        );
    }
    this.refused += refused.length;
    this.lagToldAt = 0;
  }

  /** Tells every instance the lag, at most every LAG_EVERY_MS unless `now` (the queue just emptied). */
  private tellLag(now: boolean): void {
    const t = Date.now();
    if (!now && t - this.lagToldAt < LAG_EVERY_MS) return;
    this.lagToldAt = t;
    const seconds = this.queuedAt.length === 0 ? 0 : (t - this.queuedAt[0]!) / 1000;
    this.post({ k: 'lag', rows: this.queuedRows, seconds, refused: this.refused });
  }

  private async transportOf(): Promise<SenderTransport> {
    this.transport ??= createTransport(await senderOptions(this.s, 1_000));
    return this.transport;
  }

  private async ensure(inst: string, ent: string): Promise<void> {
    if (this.ensured.has(inst)) return;
    for (const ddl of tableDdl(inst, ent)) await exec(this.s, ddl);
    this.ensured.add(inst);
  }

  private async migrate(): Promise<void> {
    if (this.migrated) return;
    await migrateOld(
      this.s,
      (names) => waitApplied(this.s, names),
      (level, obj, msg) => this.log(level, obj, msg),
    );
    this.migrated = true;
  }

  /** Waits until QuestDB applied every table written (WAL): a read after the sync sees the rows. */
  private async waitApplied(): Promise<void> {
    if (this.unapplied.size === 0) return;
    const names = [...this.unapplied];
    await waitApplied(this.s, names);
    for (const n of names) this.unapplied.delete(n);
  }

  /** Answers every sync whose rows were sent (all of them with an error). */
  private answerSyncs(error?: string): void {
    for (let i = 0; i < this.syncs.length;) {
      const p = this.syncs[i]!;
      if (error !== undefined || p.target <= this.sent) {
        p.reply(error === undefined ? { k: 'synced', id: p.id } : { k: 'synced', id: p.id, error });
        this.syncs.splice(i, 1);
      } else i++;
    }
  }

  /** At exit: one last try to send what is buffered, within `ms`; reports the rows it could not send. */
  async close(ms: number): Promise<number> {
    this.closing = true;
    if (this.timer !== undefined) clearTimeout(this.timer);
    const deadline = Date.now() + ms;
    while (this.running && Date.now() < deadline) await new Promise((res) => setTimeout(res, 10));
    try {
      while (this.queue.length > 0 && Date.now() < deadline) await this.sendBatch();
    } catch {
      // Reported below as rows lost.
    }
    await this.transport?.close().catch(() => {});
    return this.queuedRows;
  }

  private log(level: 'info' | 'warn' | 'error', obj: Record<string, unknown>, msg: string): void {
    this.report({ k: 'log', level, obj, msg });
  }
}

/**
 * The client's options for ILP over HTTP. A Sender made of them sends only on flush: each flush is one HTTP request,
 * which QuestDB commits as one transaction per table it names (import-batch.ts relies on that); the writer sends its
 * lines through a transport made of them, one request per send.
 */
async function senderOptions(s: TsdbSettings, retryMs: number): Promise<SenderOptions> {
  // stdlib_http: the client's undici transport kept retrying a refused connection for more than 30 s whatever
  // retry_timeout said (4.2.0), which held the buffer; node:http fails at once and the writer retries on its own.
  const conf = `http::addr=${s.host}:${s.port};protocol_version=1;auto_flush=off;request_timeout=10000;retry_timeout=${retryMs};stdlib_http=on`;
  const opts = await SenderOptions.fromConfig(conf, { log: () => {} });
  // The credentials are set on the options, never written into a configuration text an error could quote.
  if (s.user !== undefined) {
    opts.username = s.user;
    opts.password = s.pwd ?? '';
  }
  return opts;
}

/** A transport for the importer's batches (import-batch.ts): each send is one ILP request. */
export async function newTransport(s: TsdbSettings, retryMs: number): Promise<SenderTransport> {
  return createTransport(await senderOptions(s, retryMs));
}

/** A sender (the client's row API): the reference of the lines' bytes (test/unit/tsdb-ilp.test.ts) and benchmarks. */
export async function newSender(s: TsdbSettings, retryMs: number): Promise<Sender> {
  const sender = new Sender(await senderOptions(s, retryMs));
  fastEscape(sender);
  return sender;
}

/** Waits until QuestDB applied what was committed to these tables (WAL): a read after it sees the rows. */
export async function waitApplied(s: TsdbSettings, names: readonly string[]): Promise<void> {
  if (names.length === 0) return;
  const deadline = Date.now() + APPLY_WAIT_MS;
  for (;;) {
    const r = rowsOf(
      await exec(s, `SELECT name, writerTxn, sequencerTxn, suspended FROM wal_tables() WHERE name IN (${names.map(lit).join(',')})`),
    );
    const behind = r.filter((t) => Number(t.writerTxn) < Number(t.sequencerTxn));
    const suspended = r.filter((t) => t.suspended === true);
    if (suspended.length > 0) throw new Error(`QuestDB suspended the table ${String(suspended[0]!.name)}`);
    if (behind.length === 0) return;
    if (Date.now() > deadline) throw new Error('QuestDB did not apply the history rows in time');
    await new Promise((res) => setTimeout(res, 5));
  }
}

export async function writeInst(sender: Sender, table: string, r: InstRow): Promise<void> {
  sender.table(table).symbol('entity', r.entity).symbol('attr', r.attr).symbol('ds', r.ds).symbol('vtype', r.vtype);
  sender.stringColumn('iid', r.iid).stringColumn('body', r.body).stringColumn('val', r.val).booleanColumn('gone', r.gone);
  if (r.num !== undefined) sender.floatColumn('num', r.num);
  if (r.str !== undefined) sender.stringColumn('str', r.str);
  if (r.obs !== undefined) sender.timestampColumn('observed_at', r.obs, 'ms');
  sender.timestampColumn('created_at', r.crt, 'ms');
  sender.timestampColumn('modified_at', r.mod, 'ms');
  if (r.del !== undefined) sender.timestampColumn('deleted_at', r.del, 'ms');
  await sender.at(r.ts, 'ms');
}

export async function writeEnt(sender: Sender, table: string, r: EntRow): Promise<void> {
  sender.table(table).symbol('entity', r.entity).symbol('kind', r.kind);
  if (r.attr !== undefined) sender.symbol('attr', r.attr);
  sender.stringColumn('rid', r.rid).booleanColumn('has_rec', r.rec !== undefined);
  if (r.ds !== undefined) sender.stringColumn('ds', r.ds);
  const rec = r.rec;
  if (rec !== undefined) {
    sender.stringColumn('types', JSON.stringify(rec.type));
    if (rec.scope !== undefined) sender.stringColumn('scope', JSON.stringify(rec.scope));
    sender.timestampColumn('created_at', Date.parse(rec.createdAt), 'ms');
    sender.timestampColumn('modified_at', Date.parse(rec.modifiedAt), 'ms');
    if (rec.deletedAt !== undefined) sender.timestampColumn('deleted_at', Date.parse(rec.deletedAt), 'ms');
  }
  await sender.at(r.ts, 'ms');
}
