// The number index of embdb: per entity type and attribute, the numbers its entities hold there, so that a query by
// type with a `q` comparing an attribute with a number (`temperature>=38`, `==10..20`) reads the entities holding a
// number in range instead of every entity of the type (issue 24: 1 match in 20 cost 20 entity reads per answer).
// The index only narrows: it yields every entity that can match (q-eval.ts comparableNumbers is what a comparison
// with a number reads), and the query's own `q` decides on each.
//
// An attribute holding more than MAX_NUMBERS_PER_ATTRIBUTE distinct numbers in one entity (a long ListProperty) is
// not listed number by number: the entity goes under the attribute's WIDE key, which every read of it takes in.
import type { Database } from 'lmdb';
import type { StoredEntity } from '../../../ngsild/entity/model.js';
import { ENTITY_CORE_MEMBERS } from '../../../ngsild/entity/model.js';
import { comparableNumbers, type QNumberRange } from '../../../ngsild/query/q-eval.js';

/** `[tenant, typeIri, attrIri, number]` → ids (sorted duplicates); `[tenant, typeIri, attrIri]` is the WIDE key. */
export type NumberKey = [string, string, string, number] | [string, string, string];

/** Index entries per entity, type and attribute past which the entity goes under the WIDE key instead. */
export const MAX_NUMBERS_PER_ATTRIBUTE = 64;
/** The entry of an attribute listed under its WIDE key. */
const WIDE = 'wide';

type Entries = Map<string, Set<number | typeof WIDE>>;

const NO_ENTRIES: Entries = new Map();

/** The index entries of one entity, per attribute: its numbers, or WIDE. */
export function numberEntriesOf(entity: StoredEntity | null | undefined): Entries {
  if (entity === null || entity === undefined) return NO_ENTRIES;
  let out: Entries | undefined;
  const numbers: number[] = [];
  for (const attrIri in entity) {
    if (ENTITY_CORE_MEMBERS.has(attrIri)) continue;
    numbers.length = 0;
    comparableNumbers(entity[attrIri], numbers);
    if (numbers.length === 0) continue;
    let set = new Set<number | typeof WIDE>(numbers);
    if (set.size > MAX_NUMBERS_PER_ATTRIBUTE) set = new Set([WIDE]);
    (out ??= new Map()).set(attrIri, set);
  }
  return out ?? NO_ENTRIES;
}

const keyOf = (tenant: string, typeIri: string, attrIri: string, entry: number | typeof WIDE): NumberKey =>
  entry === WIDE ? [tenant, typeIri, attrIri] : [tenant, typeIri, attrIri, entry];

/** Inside the write transaction: moves an entity's index entries from its old state to its new one. */
export function moveNumberEntries(
  db: Database<string, NumberKey>,
  tenant: string,
  id: string,
  before: StoredEntity | undefined,
  after: StoredEntity | null,
): void {
  const old = numberEntriesOf(before);
  const now = numberEntriesOf(after);
  if (old.size === 0 && now.size === 0) return;
  const oldTypes = before?.type ?? [];
  const newTypes = after?.type ?? [];
  for (const typeIri of oldTypes) {
    const kept = newTypes.includes(typeIri) ? now : NO_ENTRIES;
    for (const [attrIri, entries] of old) {
      const keep = kept.get(attrIri);
      for (const entry of entries) if (keep === undefined || !keep.has(entry)) db.removeSync(keyOf(tenant, typeIri, attrIri, entry), id);
    }
  }
  for (const typeIri of newTypes) {
    const had = oldTypes.includes(typeIri) ? old : NO_ENTRIES;
    for (const [attrIri, entries] of now) {
      const was = had.get(attrIri);
      for (const entry of entries) if (was === undefined || !was.has(entry)) db.putSync(keyOf(tenant, typeIri, attrIri, entry), id);
    }
  }
}

/** Every index entry of an entity (the rebuild). */
export function putNumberEntries(db: Database<string, NumberKey>, tenant: string, entity: StoredEntity): void {
  moveNumberEntries(db, tenant, entity.id, undefined, entity);
}

/** After any number: a key element whose first byte is above a number's (below 0x20, keys.ts). */
const AFTER_NUMBERS = Uint8Array.of(0xff) as unknown as number;

/**
 * The ids of the entities of `typeIri` that may hold a number of `range` in its attribute: those under the WIDE key,
 * then those of each number in range in number order (ids in id order under each), until `visit` answers false. An
 * entity holding several numbers in range is visited at each: the caller keeps those it has seen.
 */
export function visitNumberCandidates(
  db: Database<string, NumberKey>,
  tenant: string,
  typeIri: string,
  range: QNumberRange,
  visit: (id: string) => boolean,
): boolean {
  const attrIri = range.attrIri;
  for (const id of db.getValues([tenant, typeIri, attrIri])) if (!visit(id)) return false;
  if (range.min > range.max) return true;
  const start: NumberKey = Number.isFinite(range.min)
    ? [tenant, typeIri, attrIri, range.min]
    : [tenant, typeIri, attrIri, -Number.MAX_VALUE];
  for (const { key, value } of db.getRange({ start, end: [tenant, typeIri, attrIri, AFTER_NUMBERS] })) {
    const n = key[3];
    if (n === undefined) continue;
    if (n > range.max || (range.maxOpen && n === range.max)) break;
    if (range.minOpen && n === range.min) continue;
    if (!visit(value)) return false;
  }
  return true;
}
