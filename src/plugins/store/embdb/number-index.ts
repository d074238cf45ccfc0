// The number index of embdb: for an entity type and attribute a query asked for, the numbers its entities hold there,
// so that a query by type with a `q` comparing the attribute with a number (`temperature>=38`, `==10..20`) reads the
// entities holding a number in range instead of every entity of the type (issue 24: 1 match in 20 cost 20 entity
// reads per answer). The index only narrows: it yields every entity that can match (q-eval.ts comparableNumbers is
// what a comparison with a number reads), and the query's own `q` decides on each.
//
// Built on use, so that a write pays nothing for the attributes no query compares: the first such query of a
// (tenant, type, attribute) registers the pair as `building` and is answered by scanning the type; the pair is then
// filled in chunks of CHUNK entities, one write transaction each, and marked `complete`, from which on queries read it.
// From `building` on every write maintains the pair's entries in its own transaction, so an entity the build already
// passed stays right, and one it has not reached yet is put by the build as it then is (entries are idempotent).
//
// An attribute holding more than MAX_NUMBERS_PER_ATTRIBUTE distinct numbers in one entity (a long ListProperty) is
// not listed number by number: the entity goes under the pair's WIDE key, which every read of the pair takes in.
import type { Database } from 'lmdb';
import { readKey, writeKey } from 'ordered-binary';
import type { StoredEntity } from '../../../ngsild/entity/model.js';
import { comparableNumbers, type QNumberRange } from '../../../ngsild/query/q-eval.js';
import type { IndexWriter } from './pending-entries.js';

/** `[tenant, typeIri, attrIri, number]` → ids (sorted duplicates); `[tenant, typeIri, attrIri]` is the WIDE key. */
export type NumberKey = [string, string, string, number] | [string, string, string];
/** `[tenant, typeIri, attrIri]`: a pair the index covers, `building` or `complete`. */
export type PairKey = [string, string, string];
export type PairState = 'building' | 'complete';

/** Index entries per entity, type and attribute past which the entity goes under the WIDE key instead. */
export const MAX_NUMBERS_PER_ATTRIBUTE = 64;
/** Entities of a pair put per write transaction of its build: a build never holds the write lock for long. */
export const CHUNK = 2_000;
/** The key of `meta` that changes with every change of the pairs: a thread reads the pairs again when it moved. */
export const PAIRS_GENERATION_KEY = 'numberPairsGeneration';

/** The entry of an attribute listed under its WIDE key. */
const WIDE = 'wide';
type Entry = number | typeof WIDE;

/** The index entries of one attribute of an entity: its numbers, or WIDE when there are too many. */
export function numberEntriesOf(entity: StoredEntity | null | undefined, attrIri: string): Set<Entry> | undefined {
  if (entity === null || entity === undefined) return undefined;
  const numbers: number[] = [];
  comparableNumbers(entity[attrIri], numbers);
  if (numbers.length === 0) return undefined;
  const set = new Set<Entry>(numbers);
  return set.size > MAX_NUMBERS_PER_ATTRIBUTE ? new Set([WIDE]) : set;
}

const keyOf = (tenant: string, typeIri: string, attrIri: string, entry: Entry): NumberKey =>
  entry === WIDE ? [tenant, typeIri, attrIri] : [tenant, typeIri, attrIri, entry];

/**
 * The pairs the index covers, per `tenant NUL typeIri`: the attributes. Read once per write transaction when the
 * generation moved (another thread or process registered a pair), else kept.
 */
export class NumberPairs {
  private generation = -1;
  private byType = new Map<string, string[]>();

  constructor(
    private readonly pairs: Database<PairState, PairKey>,
    private readonly meta: Database<number, string>,
  ) {}

  /** Inside a write transaction (its reads see every committed registration): the pairs as they are. */
  current(): this {
    const generation = this.meta.get(PAIRS_GENERATION_KEY) ?? 0;
    if (generation !== this.generation) {
      const byType = new Map<string, string[]>();
      for (const { key } of this.pairs.getRange({})) {
        const k = `${key[0]}\0${key[1]}`;
        const attrs = byType.get(k);
        if (attrs === undefined) byType.set(k, [key[2]]);
        else attrs.push(key[2]);
      }
      this.byType = byType;
      this.generation = generation;
    }
    return this;
  }

  /** The attributes of a type the index covers in a tenant. */
  attrsOf(tenant: string, typeIri: string): readonly string[] | undefined {
    return this.byType.size === 0 ? undefined : this.byType.get(`${tenant}\0${typeIri}`);
  }

  /** Inside a write transaction: sets a pair's state and moves the generation on. */
  set(key: PairKey, state: PairState): void {
    this.pairs.putSync(key, state);
    this.meta.putSync(PAIRS_GENERATION_KEY, (this.meta.get(PAIRS_GENERATION_KEY) ?? 0) + 1);
  }
}

/**
 * Inside the write transaction: moves an entity's index entries from its old state to its new one, for the pairs
 * the index covers (none for most writes: then two map lookups per type are all it costs).
 */
export function moveNumberEntries(
  db: IndexWriter<NumberKey>,
  pairs: NumberPairs,
  tenant: string,
  id: string,
  before: StoredEntity | undefined,
  after: StoredEntity | null,
): void {
  const oldTypes = before?.type ?? [];
  const newTypes = after?.type ?? [];
  for (const typeIri of oldTypes) {
    const attrs = pairs.attrsOf(tenant, typeIri);
    if (attrs === undefined) continue;
    const stays = newTypes.includes(typeIri);
    for (const attrIri of attrs) {
      const old = numberEntriesOf(before, attrIri);
      if (old === undefined) continue;
      const keep = stays ? numberEntriesOf(after, attrIri) : undefined;
      for (const entry of old) if (keep === undefined || !keep.has(entry)) db.removeSync(keyOf(tenant, typeIri, attrIri, entry), id);
    }
  }
  for (const typeIri of newTypes) {
    const attrs = pairs.attrsOf(tenant, typeIri);
    if (attrs === undefined) continue;
    const stayed = oldTypes.includes(typeIri);
    for (const attrIri of attrs) {
      const now = numberEntriesOf(after, attrIri);
      if (now === undefined) continue;
      const had = stayed ? numberEntriesOf(before, attrIri) : undefined;
      for (const entry of now) if (had === undefined || !had.has(entry)) db.putSync(keyOf(tenant, typeIri, attrIri, entry), id);
    }
  }
}

/** Inside a write transaction of a build: the entries of one entity for one pair (idempotent). */
export function putPairEntries(db: Database<string, NumberKey>, key: PairKey, entity: StoredEntity): void {
  const entries = numberEntriesOf(entity, key[2]);
  if (entries !== undefined) for (const entry of entries) db.putSync(keyOf(key[0], key[1], key[2], entry), entity.id);
}

/** After any number: a key element whose first byte is above a number's (below 0x20, keys.ts). */
const AFTER_NUMBERS = Uint8Array.of(0xff) as unknown as number;

/** Bytes of a number that is not a key's first element: ordered-binary writes it in a sequence with all 9. */
const NUMBER_IN_KEY_BYTES = 9;

/**
 * The key reader of NUMBER_READ_DB: a key of a range over one pair's numbers is `[tenant, typeIri, attrIri, number]`,
 * and only its number is used, so only its last 9 bytes are decoded, not the two IRIs before it (issue 24: decoding
 * them was a tenth of a `q` query's time). A key whose tail is not a number (ordered-binary reads a -0 in an array
 * as other members) is decoded whole, as before, and its fourth element returned.
 */
function readNumberOfKey(source: Uint8Array, start: number, end: number): unknown {
  if (end - start > NUMBER_IN_KEY_BYTES) {
    const n: unknown = readKey(source, end - NUMBER_IN_KEY_BYTES, end);
    if (typeof n === 'number') return n;
  }
  const key: unknown = readKey(source, start, end);
  return Array.isArray(key) ? key[3] : undefined;
}

/**
 * The key codec of a second handle on the number index, for its reads by range (visitNumberCandidates): keys are
 * written as `NumberKey`s (keys.ts KEY_CODEC) and read back as their number alone, undefined for the WIDE key.
 * Never used to write.
 */
export const NUMBER_READ_KEY_CODEC = { keyEncoder: { writeKey, readKey: readNumberOfKey } } as const;

/** The number index opened with NUMBER_READ_KEY_CODEC: the keys of its ranges are numbers. */
export type NumberReadDb = Database<string, NumberKey>;

/**
 * The ids of the entities of `typeIri` that may hold a number of `range` in its attribute: those under the WIDE key,
 * then those of each number in range in number order (ids in id order under each), until `visit` answers false. An
 * entity holding several numbers in range is visited at each: the caller keeps those it has seen. `db` is the
 * index opened with numberReadDb.
 */
export function visitNumberCandidates(
  db: NumberReadDb,
  tenant: string,
  typeIri: string,
  range: QNumberRange,
  visit: (id: string) => boolean,
): boolean {
  const attrIri = range.attrIri;
  for (const id of db.getValues([tenant, typeIri, attrIri])) if (!visit(id)) return false;
  if (range.min > range.max) return true;
  const min = Number.isFinite(range.min) ? range.min : -Number.MAX_VALUE;
  for (const { key, value } of db.getRange({ start: [tenant, typeIri, attrIri, min], end: [tenant, typeIri, attrIri, AFTER_NUMBERS] })) {
    const n = key as unknown as number | undefined;
    if (n === undefined) continue;
    if (n > range.max || (range.maxOpen && n === range.max)) break;
    if (range.minOpen && n === range.min) continue;
    if (!visit(value)) return false;
  }
  return true;
}
