// seed 001, importer behaviour 5: an entity of the stream's current state that no history record names gets, with
// a history store present, the history a create writes: its created event at its createdAt and an instance per
// attribute instance at that instance's own createdAt and modifiedAt, with a generated instanceId ("created rows").
// The stream holds the history after the current state, so which entities it names is known only at its end: the
// entities imported are noted in a file (not in memory: a stream of millions of entities keeps memory flat) and
// looked up in the history once the stream is read.
import { randomUUID } from 'node:crypto';
import { createReadStream, createWriteStream, mkdtempSync, rmSync, type WriteStream } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { once } from 'node:events';
import type { History, ImportedHistoryRecord } from '../../history/contract.js';
import type { Store } from '../../store/contract.js';
import { ENTITY_CORE_MEMBERS, type AttrInstance, type StoredEntity } from '../../ngsild/entity/model.js';
import { HISTORY_BATCH } from './history-records.js';
import { streamLines } from './line-reader.js';

const INSTANCE_ID = 'urn:ngsi-ld:attribute:instance:';
/** Candidates looked up in the history per query. */
const LOOKUP = 200;

/** The history records of a create of `entity` at its own times. */
export function createdHistoryOf(tenant: string, entity: StoredEntity): ImportedHistoryRecord[] {
  const out: ImportedHistoryRecord[] = [
    { kind: 'entity', tenant, id: entity.id, type: entity.type, event: { kind: 'created', at: entity.createdAt } },
  ];
  for (const attrIri of Object.keys(entity)) {
    if (ENTITY_CORE_MEMBERS.has(attrIri)) continue;
    for (const inst of entity[attrIri] as AttrInstance[]) {
      const createdAt = inst.createdAt ?? entity.createdAt;
      out.push({
        kind: 'instance',
        tenant,
        id: entity.id,
        type: entity.type,
        attrIri,
        instance: { ...inst, instanceId: INSTANCE_ID + randomUUID(), createdAt, modifiedAt: inst.modifiedAt ?? createdAt },
      });
    }
  }
  return out;
}

export class CreatedHistory {
  private readonly dir = mkdtempSync(join(tmpdir(), 'ldbroker-import-'));
  private readonly file = join(this.dir, 'entities.ndjson');
  private readonly out: WriteStream = createWriteStream(this.file);
  /** Entities named by a history record that was refused: they have history in the stream, not yet in the store. */
  private readonly named = new Set<string>();

  /** The file goes with the process however it ends (an interrupted import exits through process.exit). */
  private readonly removeOnExit = (): void => rmSync(this.dir, { recursive: true, force: true });

  constructor(
    private readonly store: Store,
    private readonly history: History,
  ) {
    process.once('exit', this.removeOnExit);
  }

  /** An entity imported: a candidate. */
  async note(tenant: string, id: string): Promise<void> {
    if (!this.out.write(JSON.stringify([tenant, id]) + '\n')) await once(this.out, 'drain');
  }

  /** An entity a refused history record names. */
  markNamed(tenant: string, id: string): void {
    this.named.add(`${tenant}\n${id}`);
  }

  /** Writes the created history of every noted entity the history has nothing of; counts the rows. */
  async write(count: (written: number, failed: number) => void): Promise<void> {
    this.out.end();
    await once(this.out, 'finish');
    let batch: ImportedHistoryRecord[] = [];
    const flush = async (): Promise<void> => {
      if (batch.length === 0) return;
      const rows = batch;
      batch = [];
      let refused: string | undefined;
      try {
        refused = (await this.history.importBatch!(rows)).refused;
      } catch (e) {
        refused = e instanceof Error ? e.message : String(e);
      }
      if (refused === undefined) count(rows.length, 0);
      else count(0, rows.length);
    };
    // The candidates of one tenant, looked up in the history LOOKUP at a time (one query, not one per entity: a
    // history beside the store answers each over the network).
    let tenant = '';
    let ids: string[] = [];
    const lookUp = async (): Promise<void> => {
      if (ids.length === 0) return;
      const asked = ids;
      ids = [];
      const { entities } = await this.history.queryTemporalEntities(tenant, { ids: asked, limit: asked.length, offset: 0, count: false });
      const present = new Set(entities.map((e) => e.id));
      const missing = asked.filter((id) => !present.has(id));
      if (missing.length === 0) return;
      // Their current state in one store read too (docdb: one round trip, not one per entity).
      const { entities: current } = await this.store.queryEntities(tenant, {
        ids: missing,
        limit: missing.length,
        offset: 0,
        count: false,
      });
      for (const entity of current) {
        const rows = createdHistoryOf(tenant, entity);
        if (batch.length + rows.length > HISTORY_BATCH) await flush();
        batch.push(...rows);
      }
    };
    try {
      for await (const line of streamLines(createReadStream(this.file), Number.MAX_SAFE_INTEGER)) {
        if (line.text === undefined || line.text === '') continue;
        const [t, id] = JSON.parse(line.text) as [string, string];
        if (this.named.has(`${t}\n${id}`)) continue;
        if (t !== tenant || ids.length >= LOOKUP) await lookUp();
        tenant = t;
        ids.push(id);
      }
      await lookUp();
      await flush();
    } finally {
      this.discard();
    }
  }

  /** Removes the file when the import stops before write. */
  discard(): void {
    this.out.destroy();
    this.removeOnExit();
    process.off('exit', this.removeOnExit);
  }
}
