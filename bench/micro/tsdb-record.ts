// What `--troe tsdb` adds to the front's CPU per PATCH (issue 18: the write ratio), without QuestDB: a committed
// PATCH of one attribute (store/contract.ts WriteEvent) turned into its history's ILP line, as tsdb-history.ts
// record does, before (historyOfWrite's history write, an InstRow, then the line: ilp.ts instLine) and now (the line
// written from the event in one pass: write-lines.ts), and the hand-off's clone of a 10 ms hold of them.
// Run: npm run build && node dist/bench/micro/tsdb-record.js
import { historyOfWrite } from '../../src/store/kit/history-of-write.js';
import { instRow, newInstanceId } from '../../src/plugins/history/tsdb/rows.js';
import { instLine } from '../../src/plugins/history/tsdb/ilp.js';
import type { WriteEvent } from '../../src/store/contract.js';
import type { StoredEntity } from '../../src/ngsild/entity/model.js';
import { WriteLines } from '../../src/plugins/history/tsdb/write-lines.js';
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

run(async () => {
  const events = Array.from({ length: 1000 }, patchEvent);
  let i = 0;
  const next = (): WriteEvent[] => [events[i++ % events.length]!];
  for (let round = 0; round < 2; round++) {
    await timeIt('historyOfWrite only', () => historyOfWrite(next()[0]!.before, next()[0]!.after!, next()[0]!.change, newInstanceId));
    await timeIt('before: history write, row, line', () => linesBefore(next()));
    const w = new WriteLines();
    const linesNow = (evs: readonly WriteEvent[]): string => {
      w.reset({ inst: TABLE, ent: 'ldb_ent_default' });
      for (const ev of evs) w.add(ev);
      return w.lines;
    };
    await timeIt('now: the line from the event (write-lines.ts)', () => linesNow(next()));
    for (const [name, lines] of [
      ['before', linesBefore],
      ['now', linesNow],
    ] as const) {
      let held = '';
      await timeIt(`${name}: the line, held, cloned per ${HELD}`, () => {
        held += lines(next());
        if (i % HELD === 0) {
          structuredClone({ k: 'rows', b: [{ tenant: '', lines: held, inst: HELD, ent: 0 }] });
          held = '';
        }
      });
    }
    // The lines encoded as they come into a reused buffer, and a copy of its bytes cloned per hold: nothing held on
    // the heap between scavenges.
    const buf = Buffer.allocUnsafeSlow(1 << 20);
    let at = 0;
    await timeIt(`now: the line encoded into a reused buffer, copied and cloned per ${HELD}`, () => {
      at += buf.write(linesNow(next()), at, 'utf8');
      if (i % HELD === 0) {
        structuredClone({ k: 'rows', b: [{ tenant: '', bytes: new Uint8Array(buf.subarray(0, at)), inst: HELD, ent: 0 }] });
        at = 0;
      }
    });
  }
});
