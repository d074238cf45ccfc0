// The facts of committed entity writes as bytes (tsdb-history.ts record): the writing thread appends what each row
// needs to a reused buffer, and the writer thread makes the ILP lines of them (ilp.ts), off the request's core (issue
// 18: the front's CPU per PATCH with --troe tsdb, lines and their strings having cost it about 12 µs with their GC).
// A record: a tag byte, then strings (u32 LE byte length, UTF-8) and times (f64 LE ms):
// - INSTANCE: entity id, attribute IRI, the history instance's JSON (its body column; the writer reads the other
//   columns from it), its createdAt in ms.
// - ENTITY: entity id, kind (an event's, or 'record'), its time (ISO), the temporal entity's JSON or ''.
// - LINES: ILP lines made on the writing thread, then the rows of each table they hold (u32 LE): the temporal API's
//   writes (tsdb-history.ts write), and an instance whose JSON would not give back the same row (a value that is a
//   number JSON cannot write, a time not a string).
import type { EntityEvent, HistoryInstance, TemporalEntityRecord } from '../../../history/contract.js';
import { VALUE_MEMBER, type StoredEntity } from '../../../ngsild/entity/model.js';
import type { HistorySink } from '../../../store/kit/history-of-write.js';
import { walkHistoryOfWrite } from '../../../store/kit/history-of-write.js';
import type { WriteEvent } from '../../../store/contract.js';
import { entLine, historyLine } from './ilp.js';
import { entRow, newInstanceId, type EntKind, type LineBatch } from './rows.js';
import type { TenantTables } from './settings.js';

const INSTANCE = 1;
const ENTITY = 2;
const LINES = 3;

/** A growing byte buffer, reused: its bytes are `buf[0, len)`. */
export class Bytes {
  buf: Buffer;
  len = 0;

  constructor(size = 1 << 12) {
    this.buf = Buffer.allocUnsafeSlow(size);
  }

  private room(n: number): void {
    if (this.len + n <= this.buf.length) return;
    const next = Buffer.allocUnsafeSlow(Math.max(this.buf.length * 2, this.len + n));
    this.buf.copy(next, 0, 0, this.len);
    this.buf = next;
  }

  byte(b: number): void {
    this.room(1);
    this.buf[this.len++] = b;
  }

  str(s: string): void {
    // UTF-8 takes at most 3 bytes per UTF-16 unit (a surrogate pair: 4 for 2).
    this.room(4 + s.length * 3);
    const n = this.buf.write(s, this.len + 4, 'utf8');
    this.buf.writeUInt32LE(n, this.len);
    this.len += 4 + n;
  }

  u32(n: number): void {
    this.room(4);
    this.buf.writeUInt32LE(n, this.len);
    this.len += 4;
  }

  ms(t: number): void {
    this.room(8);
    this.buf.writeDoubleLE(t, this.len);
    this.len += 8;
  }

  /** Appends the first `n` bytes of `b`. */
  append(b: Buffer, n = b.length): void {
    this.room(n);
    b.copy(this.buf, this.len, 0, n);
    this.len += n;
  }

  /** The bytes so far, in a view of the reused buffer (valid until the next write). */
  view(): Buffer {
    return this.buf.subarray(0, this.len);
  }
}

/**
 * The facts of a thread's committed writes, one object per history instance reused write after write (reset): the
 * HistorySink of walkHistoryOfWrite, each part appended as it comes, with no string made per column.
 */
export class WriteFacts implements HistorySink {
  readonly bytes = new Bytes();
  /** Rows of each table the facts hold. */
  inst = 0;
  ent = 0;
  private tables: TenantTables = { inst: '', ent: '' };
  private id = '';

  /** Starts the facts of writes of a tenant whose tables are `tables` (a LINES record's lines are made for them). */
  reset(tables: TenantTables): void {
    this.tables = tables;
    this.bytes.len = 0;
    this.inst = 0;
    this.ent = 0;
  }

  /** Adds the facts of one committed write. */
  add(ev: WriteEvent): void {
    this.id = ev.id;
    walkHistoryOfWrite(ev.before, (ev.after ?? null) as StoredEntity | null, ev.change, newInstanceId, this);
  }

  /** Adds ILP lines made here, `inst` and `ent` rows. */
  addLines(lines: string, inst: number, ent: number): void {
    this.bytes.byte(LINES);
    this.bytes.str(lines);
    this.bytes.u32(inst);
    this.bytes.u32(ent);
    this.inst += inst;
    this.ent += ent;
  }

  entity(event: EntityEvent | undefined, entity: TemporalEntityRecord | undefined): void {
    if (event === undefined && entity === undefined) return;
    const b = this.bytes;
    b.byte(ENTITY);
    b.str(this.id);
    b.str(event !== undefined ? event.kind : 'record');
    b.str(event !== undefined ? event.at : entity!.modifiedAt);
    b.str(entity === undefined ? '' : JSON.stringify(entity));
    this.ent++;
  }

  instance(attrIri: string, instance: HistoryInstance, atMs: number): void {
    if (!sameThroughJson(instance)) {
      this.addLines(historyLine(this.tables.inst, this.id, attrIri, instance, atMs), 1, 0);
      return;
    }
    const b = this.bytes;
    b.byte(INSTANCE);
    b.str(this.id);
    b.str(attrIri);
    b.str(JSON.stringify(instance));
    b.ms(atMs);
    this.inst++;
  }
}

/**
 * Whether the instance's line is the same made from its JSON: its value and times are what historyLine reads beside
 * the body, and JSON writes a number that is not finite (1e400 in a request is Infinity) as null.
 */
function sameThroughJson(h: HistoryInstance): boolean {
  const v = h[VALUE_MEMBER[h.type]];
  if (typeof v === 'number' && !Number.isFinite(v)) return false;
  return (h.observedAt === undefined || typeof h.observedAt === 'string') && (h.deletedAt === undefined || typeof h.deletedAt === 'string');
}

/**
 * The ILP lines of a tenant's facts (on the writer thread), in their order, and the rows they hold. A record whose
 * line cannot be made (a time historyLine or entLine refuses) is left out and counted in `failed`, with its error.
 */
export function linesOfFacts(tenant: string, facts: Uint8Array, tables: TenantTables): LineBatch & { failed: number; error?: string } {
  const b = Buffer.from(facts.buffer, facts.byteOffset, facts.byteLength);
  const out: LineBatch & { failed: number; error?: string } = { tenant, lines: '', inst: 0, ent: 0, failed: 0 };
  let p = 0;
  const str = (): string => {
    const n = b.readUInt32LE(p);
    const s = b.toString('utf8', p + 4, p + 4 + n);
    p += 4 + n;
    return s;
  };
  while (p < b.length) {
    const tag = b[p++];
    try {
      if (tag === INSTANCE) {
        const id = str();
        const attr = str();
        const json = str();
        const crt = b.readDoubleLE(p);
        p += 8;
        out.lines += historyLine(tables.inst, id, attr, JSON.parse(json) as HistoryInstance, crt, json);
        out.inst++;
      } else if (tag === ENTITY) {
        const id = str();
        const kind = str() as EntKind;
        const at = str();
        const rec = str();
        out.lines += entLine(tables.ent, entRow(id, kind, at, rec === '' ? undefined : (JSON.parse(rec) as TemporalEntityRecord)));
        out.ent++;
      } else if (tag === LINES) {
        out.lines += str();
        out.inst += b.readUInt32LE(p);
        out.ent += b.readUInt32LE(p + 4);
        p += 8;
      } else throw new Error(`tsdb: unknown fact ${tag}`);
    } catch (e) {
      // A record read whole before its line failed: the next one starts at p. An unknown tag ends the batch.
      out.failed++;
      out.error = (e as Error).message;
      if (tag !== INSTANCE && tag !== ENTITY && tag !== LINES) break;
    }
  }
  return out;
}
