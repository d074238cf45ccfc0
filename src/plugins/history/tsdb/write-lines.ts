// The ILP lines of committed entity writes (tsdb-history.ts record), made on the thread that wrote them: the
// history of each write (store/kit/history-of-write.ts walkHistoryOfWrite) goes straight into lines (ilp.ts), its
// instances with no row object between (issue 18: the front's CPU per PATCH with --troe tsdb). One per history
// instance, reused for every write.
import type { EntityEvent, HistoryInstance, TemporalEntityRecord } from '../../../history/contract.js';
import type { StoredEntity } from '../../../ngsild/entity/model.js';
import type { HistorySink } from '../../../store/kit/history-of-write.js';
import { walkHistoryOfWrite } from '../../../store/kit/history-of-write.js';
import type { WriteEvent } from '../../../store/contract.js';
import { entLine, historyLine } from './ilp.js';
import { entRow, newInstanceId } from './rows.js';
import type { TenantTables } from './settings.js';

export class WriteLines implements HistorySink {
  /** The lines so far, and how many rows of each table they hold. */
  lines = '';
  inst = 0;
  ent = 0;
  private tables: TenantTables = { inst: '', ent: '' };
  /** The entity of the write being added. */
  private id = '';

  /** Starts the lines of a batch of writes to `tables`. */
  reset(tables: TenantTables): void {
    this.tables = tables;
    this.lines = '';
    this.inst = 0;
    this.ent = 0;
  }

  /** Adds the lines of one committed write. */
  add(ev: WriteEvent): void {
    this.id = ev.id;
    walkHistoryOfWrite(ev.before, (ev.after ?? null) as StoredEntity | null, ev.change, newInstanceId, this);
  }

  entity(event: EntityEvent | undefined, entity: TemporalEntityRecord | undefined): void {
    if (event !== undefined) this.lines += entLine(this.tables.ent, entRow(this.id, event.kind, event.at, entity));
    else if (entity !== undefined) this.lines += entLine(this.tables.ent, entRow(this.id, 'record', entity.modifiedAt, entity));
    else return;
    this.ent++;
  }

  instance(attrIri: string, instance: HistoryInstance, atMs: number): void {
    this.lines += historyLine(this.tables.inst, this.id, attrIri, instance, atMs);
    this.inst++;
  }
}
