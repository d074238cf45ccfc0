// History records of the stream (seed 001 §2.5 temporalEntity, temporalInstance) as a history keeps them (importer
// behaviour 4): an entity event at its time; an instance checked and converted as a live write's attribute, with its
// instanceId, createdAt, modifiedAt and observedAt; a deletion a tombstone with the attribute's type (the record's,
// else that of the attribute's last instance), value `urn:ngsi-ld:null` and deletedAt. Written in batches of 500,
// one transaction each, refused whole (§7, §8).
import type { History, HistoryInstance, ImportedHistoryRecord } from '../../history/contract.js';
import type { ResolvedContext } from '../../ngsild/context/resolved.js';
import { ATTR_TYPES, VALUE_MEMBER, type AttrType } from '../../ngsild/entity/model.js';
import { NGSI_LD_NULL, isDateTime, isPlainObject, isUri, show } from '../../ngsild/entity/syntax.js';
import { badRequest } from '../../ngsild/problem.js';
import { storedInstanceOf } from './entity-record.js';

/** seed 001 §8: history import batch. */
export const HISTORY_BATCH = 500;

const ENTITY_OPS: ReadonlySet<string> = new Set(['created', 'replaced', 'deleted']);
const INSTANCE_OPS: ReadonlySet<string> = new Set(['created', 'modified', 'replaced', 'deleted']);

function only(data: Record<string, unknown>, members: readonly string[], kind: string): void {
  for (const k of Object.keys(data)) if (!members.includes(k)) throw badRequest(`${k}: not a member of a ${kind} record`);
}

function entityIdOf(data: Record<string, unknown>): string {
  if (!isUri(data.id)) throw badRequest(`id: ${show(data.id)} is not a URI`);
  return data.id;
}

export function temporalEntityOf(tenant: string, data: Record<string, unknown>, ctx: ResolvedContext): ImportedHistoryRecord {
  only(data, ['id', 'type', 'op', 'at'], 'temporalEntity');
  const id = entityIdOf(data);
  if (typeof data.op !== 'string' || !ENTITY_OPS.has(data.op)) throw badRequest(`op: ${show(data.op)} is not created, replaced or deleted`);
  if (!isDateTime(data.at)) throw badRequest(`at: ${show(data.at)} is not an ISO 8601 date-time`);
  const type = [ctx.expandTerm(data.type as string)];
  return { kind: 'entity', tenant, id, type, event: { kind: data.op as 'created', at: data.at } };
}

/** The attribute type a tombstone takes when its record names none: the last instance of the attribute. */
export type LastTypeOf = (tenant: string, id: string, attrIri: string) => Promise<AttrType | undefined>;

export async function temporalInstanceOf(
  tenant: string,
  data: Record<string, unknown>,
  ctx: ResolvedContext,
  lastTypeOf: LastTypeOf,
): Promise<ImportedHistoryRecord> {
  only(data, ['id', 'type', 'attr', 'op', 'instance'], 'temporalInstance');
  const id = entityIdOf(data);
  // Core terms expand to their IRIs; an absolute IRI stays as it is (the name rule was checked before).
  const attrIri = ctx.expandTerm(data.attr as string);
  if (typeof data.op !== 'string' || !INSTANCE_OPS.has(data.op))
    throw badRequest(`op: ${show(data.op)} is not created, modified, replaced or deleted`);
  const src = data.instance;
  if (!isPlainObject(src)) throw badRequest('instance: missing or not an object');
  if (!isUri(src.instanceId)) throw badRequest(`instance.instanceId: ${show(src.instanceId)} is not a URI`);
  const instanceId = src.instanceId;
  const base = { kind: 'instance' as const, tenant, id, type: [ctx.expandTerm(data.type as string)], attrIri };
  if (data.op !== 'deleted') {
    const inst = storedInstanceOf(id, attrIri, src, ctx);
    return { ...base, instance: { ...inst, instanceId } };
  }
  for (const t of ['createdAt', 'modifiedAt', 'deletedAt'])
    if (src[t] !== undefined && !isDateTime(src[t])) throw badRequest(`instance.${t}: ${show(src[t])} is not an ISO 8601 date-time`);
  const deletedAt = (src.deletedAt ?? src.modifiedAt ?? src.createdAt) as string | undefined;
  if (deletedAt === undefined) throw badRequest('instance.deletedAt: missing');
  let type: AttrType | undefined;
  if (src.type !== undefined) {
    if (typeof src.type !== 'string' || !ATTR_TYPES.has(src.type))
      throw badRequest(`instance.type: ${show(src.type)} is not an attribute type`);
    type = src.type as AttrType;
  } else type = await lastTypeOf(tenant, id, attrIri);
  // An attribute the history never saw: a deletion of a Property, the type the history renders as it is.
  type ??= 'Property';
  const tomb: HistoryInstance = {
    type,
    instanceId,
    createdAt: (src.createdAt as string | undefined) ?? deletedAt,
    modifiedAt: (src.modifiedAt as string | undefined) ?? deletedAt,
    deletedAt,
  };
  tomb[VALUE_MEMBER[type]] = NGSI_LD_NULL;
  if (src.datasetId !== undefined) {
    if (!isUri(src.datasetId)) throw badRequest(`instance.datasetId: ${show(src.datasetId)} is not a URI`);
    tomb.datasetId = src.datasetId;
  }
  return { ...base, instance: tomb };
}

/** Records waiting for their batch, with their line numbers. */
export class HistoryBatch {
  readonly records: ImportedHistoryRecord[] = [];
  readonly lines: number[] = [];
  /** Attribute types of the instances waiting, by tenant, entity and attribute: a later tombstone takes its type. */
  private readonly pendingTypes = new Map<string, AttrType>();

  constructor(private readonly history: History) {}

  get size(): number {
    return this.records.length;
  }

  add(line: number, record: ImportedHistoryRecord): void {
    this.records.push(record);
    this.lines.push(line);
    if (record.kind === 'instance') this.pendingTypes.set(attrKey(record.tenant, record.id, record.attrIri), record.instance.type);
  }

  /** The type of the attribute's last instance: one waiting in this batch, else the history's latest. */
  readonly lastTypeOf: LastTypeOf = async (tenant, id, attrIri) => {
    const pending = this.pendingTypes.get(attrKey(tenant, id, attrIri));
    if (pending !== undefined) return pending;
    const page = await this.history.instances(tenant, id, { attrs: [attrIri], lastN: 1, limit: 1 });
    return page.attrs[attrIri]?.[0]?.type;
  };

  /** Writes the batch as one transaction; the lines and records it held, and why it was refused. */
  async flush(): Promise<{ lines: number[]; records: ImportedHistoryRecord[]; refused?: string }> {
    const records = this.records.splice(0);
    const lines = this.lines.splice(0);
    this.pendingTypes.clear();
    if (records.length === 0) return { lines, records };
    try {
      const { refused } = await this.history.importBatch!(records);
      return refused === undefined ? { lines, records } : { lines, records, refused };
    } catch (e) {
      return { lines, records, refused: e instanceof Error ? e.message : String(e) };
    }
  }
}

const attrKey = (tenant: string, id: string, attrIri: string): string => `${tenant}\n${id}\n${attrIri}`;
