// What `--troe tsdb` adds to the front's CPU per PATCH (issue 18: the write ratio), without QuestDB: a committed
// PATCH of one attribute (store/contract.ts WriteEvent) handed over as tsdb-history.ts record did and does: its ILP
// line from historyOfWrite's history write and an InstRow (ilp.ts instLine); its line written as walkHistoryOfWrite
// hands the instance over (ilp.ts historyLine, the path before facts.ts); now its facts as bytes (facts.ts), of which
// the writer thread makes the line (linesOfFacts, timed apart: not the front's). Each with the hand-off's copy and
// clone of a 10 ms hold.
// Run: npm run build && node dist/bench/micro/tsdb-record.js
import { historyOfWrite } from '../../src/store/kit/history-of-write.js';
import { instRow, newInstanceId } from '../../src/plugins/history/tsdb/rows.js';
import { instLine } from '../../src/plugins/history/tsdb/ilp.js';
import type { WriteEvent } from '../../src/store/contract.js';
import type { StoredEntity } from '../../src/ngsild/entity/model.js';
import { Bytes, WriteFacts, linesOfFacts } from '../../src/plugins/history/tsdb/facts.js';
import { historyLine } from '../../src/plugins/history/tsdb/ilp.js';
import { walkHistoryOfWrite, type HistorySink } from '../../src/store/kit/history-of-write.js';
import type { HistoryInstance } from '../../src/history/contract.js';
import { run, timeIt } from './harness.js';

const TABLE = 'ldb_inst_v2_default';
const ATTR = 'https://uri.etsi.org/ngsi-ld/default-context/temperature';
/** PATCHes in 10 ms of the front at about 7,000 PATCH/s (link.ts FRONT_HOLD_MS). */
const HELD = 70;
let k = 0;

/** The event of a PATCH of temperature, as the store reports it. */
function patchEvent(): WriteEvent {
  const id = `urn:ngsi-ld:Bench:${++k % 1000}`;
  const created = '2026-01-01T00:00:00.000Z';
  const now = new Date(1_700_000_000_000 + k).toISOString();
  const old = { type: 'Property', value: k - 1, createdAt: created, modifiedAt: created };
  const inst = { type: 'Property', value: k, createdAt: created, modifiedAt: now };
  const base = { id, type: ['https://uri.etsi.org/ngsi-ld/default-context/Bench'], createdAt: created };
  const before: StoredEntity = { ...base, modifiedAt: created, [ATTR]: [old] };
  const after: StoredEntity = { ...base, modifiedAt: now, [ATTR]: [inst] };
  return {
    tenant: '',
    id,
    seq: k,
    before,
    after,
    change: { kind: 'update', created: [], modified: [ATTR], deleted: [], previous: { [ATTR]: [old] }, written: { [ATTR]: ['@none'] } },
  } as WriteEvent;
}

/** tsdb-history.ts record before: the history write, its rows, their lines. */
function linesBefore(events: readonly WriteEvent[]): string {
  let lines = '';
  for (const ev of events) {
    const w = historyOfWrite(ev.before, ev.after ?? null, ev.change, newInstanceId);
    for (const { attrIri, instance } of w.instances) lines += instLine(TABLE, instRow(ev.id, attrIri, instance));
  }
  return lines;
}

/** The lines written as the walk hands each instance over (the front's work before facts.ts; PATCH: no entity row). */
class WalkLines implements HistorySink {
  lines = '';
  id = '';
  entity(): void {}
  instance(attrIri: string, h: HistoryInstance, atMs: number): void {
    this.lines += historyLine(TABLE, this.id, attrIri, h, atMs);
  }
}

run(async () => {
  const events = Array.from({ length: 1000 }, patchEvent);
  let i = 0;
  const next = (): WriteEvent[] => [events[i++ % events.length]!];
  const walk = new WalkLines();
  const linesWalked = (evs: readonly WriteEvent[]): string => {
    walk.lines = '';
    for (const ev of evs) {
      walk.id = ev.id;
      walkHistoryOfWrite(ev.before, ev.after ?? null, ev.change, newInstanceId, walk);
    }
    return walk.lines;
  };
  const tables = { inst: TABLE, ent: 'ldb_ent_default' };
  const f = new WriteFacts();
  const held = new Bytes();
  let hold: Uint8Array | undefined;
  for (let round = 0; round < 2; round++) {
    await timeIt('historyOfWrite only', () => historyOfWrite(next()[0]!.before, next()[0]!.after!, next()[0]!.change, newInstanceId));
    for (const [name, lines] of [
      ['before: history write, row, line', linesBefore],
      ['before: the line from the walk', linesWalked],
    ] as const) {
      let text = '';
      await timeIt(`${name}, held, cloned per ${HELD}`, () => {
        text += lines(next());
        if (i % HELD === 0) {
          structuredClone({ k: 'rows', b: [{ tenant: '', lines: text, inst: HELD, ent: 0 }] });
          text = '';
        }
      });
    }
    await timeIt(`now: the facts (facts.ts), copied into the hold, cloned per ${HELD}`, () => {
      f.reset(tables);
      for (const ev of next()) f.add(ev);
      held.append(f.bytes.buf, f.bytes.len);
      if (i % HELD === 0) {
        hold = structuredClone({ facts: Uint8Array.prototype.slice.call(held.buf, 0, held.len) }).facts;
        held.len = 0;
      }
    });
    await timeIt(`writer: the lines of a hold's facts (linesOfFacts), per row`, () => linesOfFacts('', hold!, tables), { per: HELD });
  }
});
