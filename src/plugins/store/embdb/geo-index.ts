// The spatial index of embdb: every attribute instance holding a GeoJSON geometry, by the grid cells its bounding box
// covers, so a geo-query reads the entities near its search box instead of every entity of the type. The index only
// narrows: it yields a superset of the matches, and the query's own predicate (ngsild/query/geoq.ts) decides.
//
// Each entry holds, beside the id, the bounding box of the entity's geometries of that attribute ([id, lon, lat] when
// they are all Points at one position): a query rules out a candidate on its box (geo-box-test.ts) and reads only
// the entities the box leaves possible. Entries sort by id first (ordered-binary arrays), so a cell's entries are
// still in id order.
//
// Cells are CELL_DEGREES squares numbered row by row (row from latitude, column from longitude), so one row of a
// search box is one contiguous key range. A geometry whose box covers more than MAX_CELLS_PER_GEOMETRY cells (a
// country, a line across the world) goes to one shared WIDE cell that every geo-query reads.
import type { Database } from 'lmdb';
import type { StoredEntity } from '../../../ngsild/entity/model.js';
import { ENTITY_CORE_MEMBERS } from '../../../ngsild/entity/model.js';
import { bboxOf, geometryOf, type BBox } from '../../../ngsild/query/geoq.js';
import { GEO_MAYBE, GEO_NO, GEO_YES, type GeoBoxTest, type GeoVerdict } from '../../../ngsild/query/geo-box-test.js';
import { compareIds } from './keys.js';
import type { IndexWriter } from './pending-entries.js';

/** Key of the spatial index: `[tenant, geoproperty IRI, cell]`; values: GeoEntry (sorted duplicates). */
export type GeoKey = [string, string, number];
/** An index value: the entity id, then `lon, lat` (all its geometries one Point) or its box `west, south, east, north`. */
export type GeoEntry = [string, ...number[]];

/** 0.01° is about 1.1 km of latitude: a city-scale near query reads a handful of cells. */
export const CELL_DEGREES = 0.01;
const COLUMNS = Math.round(360 / CELL_DEGREES);
const ROWS = Math.round(180 / CELL_DEGREES);
export const MAX_CELLS_PER_GEOMETRY = 1024;
/** The cell of geometries too wide to list their cells; read by every geo-query. */
export const WIDE = -1;
/** A search box over more cells than this is not worth the index: the query scans its types as without one. */
export const MAX_SEARCH_CELLS = 40_000;
/** Candidates past this: the index is not narrowing enough here, the query scans instead. */
export const MAX_CANDIDATES = 50_000;

const column = (lon: number): number => Math.min(COLUMNS - 1, Math.max(0, Math.floor((lon + 180) / CELL_DEGREES)));
const row = (lat: number): number => Math.min(ROWS - 1, Math.max(0, Math.floor((lat + 90) / CELL_DEGREES)));

/** The rows of a box and, in each, its first and last column. */
function span(box: BBox): { r0: number; r1: number; c0: number; c1: number; cells: number } {
  const c0 = column(box[0]);
  const c1 = column(box[2]);
  const r0 = row(box[1]);
  const r1 = row(box[3]);
  return { r0, r1, c0, c1, cells: (r1 - r0 + 1) * (c1 - c0 + 1) };
}

/** The cells of one geometry's bounding box, or [WIDE]; false when the box is not finite (nothing to index). */
function cellsOfBox(box: BBox, into: Set<number>): boolean {
  if (!box.every(Number.isFinite)) return false;
  const s = span(box);
  if (s.cells > MAX_CELLS_PER_GEOMETRY) {
    into.add(WIDE);
    return true;
  }
  for (let r = s.r0; r <= s.r1; r++) for (let c = s.c0; c <= s.c1; c++) into.add(r * COLUMNS + c);
  return true;
}

/** What the index holds of one attribute: its cells, the box of its geometries and whether they are all one Point. */
export interface GeoIndexed {
  cells: Set<number>;
  box: BBox;
  onePoint: boolean;
}

/**
 * Every attribute of an entity holding a geometry, with the cells of its instances and their box. Whatever the
 * instance's type: the geo-query's predicate judges any instance whose value is a GeoJSON geometry (geoq.ts
 * geometryOf), so does this. A geometry without finite positions is left out, as the predicate never matches it.
 */
export function geoIndexOf(entity: StoredEntity | null | undefined): ReadonlyMap<string, GeoIndexed> {
  // Most entities hold no geometry: one shared empty answer, no Map per state of each write (issue 24).
  let out: Map<string, GeoIndexed> | undefined;
  if (entity === null || entity === undefined) return NO_GEO;
  for (const attrIri in entity) {
    if (ENTITY_CORE_MEMBERS.has(attrIri)) continue;
    const instances = entity[attrIri];
    if (!Array.isArray(instances)) continue;
    let indexed: GeoIndexed | undefined;
    for (const inst of instances) {
      const g = geometryOf(inst);
      if (g === undefined) continue;
      const box = bboxOf(g);
      const cells = indexed?.cells ?? new Set<number>();
      if (!cellsOfBox(box, cells)) continue;
      const point = g.type === 'Point';
      if (indexed === undefined) indexed = { cells, box, onePoint: point };
      else {
        const b = indexed.box;
        indexed.onePoint &&= point && box[0] === b[0] && box[1] === b[1];
        b[0] = Math.min(b[0], box[0]);
        b[1] = Math.min(b[1], box[1]);
        b[2] = Math.max(b[2], box[2]);
        b[3] = Math.max(b[3], box[3]);
      }
    }
    if (indexed !== undefined) (out ??= new Map()).set(attrIri, indexed);
  }
  return out ?? NO_GEO;
}

const NO_GEO: ReadonlyMap<string, GeoIndexed> = new Map();

/**
 * The index value of an entity's attribute. A -0 is written as 0 (`+ 0`): ordered-binary writes -0 in an array as
 * bytes it reads back as other members.
 */
export function geoEntryOf(id: string, g: GeoIndexed): GeoEntry {
  const [w, s, e, n] = g.box;
  return g.onePoint ? [id, w + 0, s + 0] : [id, w + 0, s + 0, e + 0, n + 0];
}

/** Same box and kind: the same entry (-0 and 0 are written alike). */
const sameBox = (a: GeoIndexed, b: GeoIndexed): boolean => a.onePoint === b.onePoint && a.box.every((x, k) => x === b.box[k]);

/** Inside the write transaction: moves an entity's index entries from its old state to its new one. */
export function moveGeoEntries(
  db: IndexWriter<GeoKey, GeoEntry>,
  tenant: string,
  id: string,
  before: StoredEntity | undefined,
  after: StoredEntity | null,
): void {
  const old = geoIndexOf(before);
  const now = geoIndexOf(after);
  if (old.size === 0 && now.size === 0) return;
  for (const [attrIri, was] of old) {
    const keep = now.get(attrIri);
    const same = keep !== undefined && sameBox(was, keep);
    const entry = geoEntryOf(id, was);
    for (const cell of was.cells) if (!same || !keep.cells.has(cell)) db.removeSync([tenant, attrIri, cell], entry);
  }
  for (const [attrIri, is] of now) {
    const had = old.get(attrIri);
    const same = had !== undefined && sameBox(had, is);
    const entry = geoEntryOf(id, is);
    for (const cell of is.cells) if (!same || !had.cells.has(cell)) db.putSync([tenant, attrIri, cell], entry);
  }
}

/** Every index entry of an entity (the rebuild). */
export function putGeoEntries(db: Database<GeoEntry, GeoKey>, tenant: string, entity: StoredEntity): void {
  for (const [attrIri, g] of geoIndexOf(entity)) {
    const entry = geoEntryOf(entity.id, g);
    for (const cell of g.cells) db.putSync([tenant, attrIri, cell], entry);
  }
}

/** What an entry's box says of its entity (no test: it may match). */
function verdictOf(entry: GeoEntry, test: GeoBoxTest | undefined): GeoVerdict {
  if (test === undefined) return GEO_MAYBE;
  if (entry.length === 3) return test(entry[1]!, entry[2]!, entry[1]!, entry[2]!, true);
  return test(entry[1]!, entry[2]!, entry[3]!, entry[4]!, false);
}

/**
 * The candidates of a geo-query, visited in id order until `visit` answers false. `certain`: the entry's box decided
 * that the geometry meets the relation (geo-box-test.ts GEO_YES), so the caller need not test it again.
 */
export type GeoCandidates = (visit: (id: string, certain: boolean) => boolean) => void;

/**
 * The entities whose `attrIri` may lie in `box` and whose entry the query's box `test` leaves possible, each once,
 * in the order of the scan and the type index (their keys' order, compareIds); undefined when the index would not
 * narrow the search (a box over too many cells, or too many entries): the caller scans as without an index. Each
 * cell's entries come sorted by id (ordered-binary values of a dupSort database): the cells of a small box (a
 * city-scale near) are merged as they are visited, so a query that stops at its page reads no further; a larger
 * box's are read whole first (and its candidates are never `certain`).
 */
export function geoCandidates(
  db: Database<GeoEntry, GeoKey>,
  tenant: string,
  attrIri: string,
  box: BBox,
  test?: GeoBoxTest,
): GeoCandidates | undefined {
  const s = span(box);
  if (s.cells > MAX_SEARCH_CELLS) return undefined;
  if (s.cells <= MERGED_RUNS) {
    const cells: GeoKey[] = [];
    let total = 0;
    for (const cell of [WIDE, ...cellsOfSpan(s)]) {
      const key: GeoKey = [tenant, attrIri, cell];
      const n = db.getValuesCount(key);
      if (n > 0) cells.push(key);
      total += n;
    }
    if (total > MAX_CANDIDATES) return undefined;
    return (visit) =>
      visitMerged(
        cells.map((key) => db.getValues(key)),
        test,
        visit,
      );
  }
  const runs: string[][] = [];
  let total = 0;
  const wide = [...db.getValues([tenant, attrIri, WIDE])];
  total += wide.length;
  const wideIds = wide.filter((entry) => verdictOf(entry, test) !== GEO_NO).map((entry) => entry[0]);
  if (wideIds.length > 0) runs.push(wideIds);
  for (let r = s.r0; r <= s.r1; r++) {
    const range = { start: [tenant, attrIri, r * COLUMNS + s.c0] as GeoKey, end: [tenant, attrIri, r * COLUMNS + s.c1 + 1] as GeoKey };
    let cell = Number.NaN;
    let run: string[] = [];
    for (const { key, value } of db.getRange(range)) {
      if (key[2] !== cell) {
        cell = key[2];
        runs.push((run = []));
      }
      if (verdictOf(value, test) !== GEO_NO) run.push(value[0]);
      if (++total > MAX_CANDIDATES) return undefined;
    }
  }
  const ids = sortedUnion(runs);
  return (visit) => {
    for (const id of ids) if (!visit(id, false)) return;
  };
}

/** The cells of a span, row by row. */
function cellsOfSpan(s: { r0: number; r1: number; c0: number; c1: number }): number[] {
  const cells: number[] = [];
  for (let r = s.r0; r <= s.r1; r++) for (let c = s.c0; c <= s.c1; c++) cells.push(r * COLUMNS + c);
  return cells;
}

/**
 * Runs of entries sorted by id (compareIds) merged into one sorted sequence of the entries `test` leaves possible,
 * each id once (a geometry over several cells is in each, and comes out of them one after the other), visited until
 * `visit` answers false; every run's cursor is closed then.
 */
export function visitMerged(
  runs: Iterable<GeoEntry>[],
  test: GeoBoxTest | undefined,
  visit: (id: string, certain: boolean) => boolean,
): void {
  const its = runs.map((run) => run[Symbol.iterator]());
  try {
    const heads = its.map((it) => it.next().value as GeoEntry | undefined);
    let last: string | undefined;
    for (;;) {
      let best = -1;
      for (let k = 0; k < heads.length; k++) {
        const entry = heads[k];
        if (entry !== undefined && (best < 0 || compareIds(entry[0], heads[best]![0]) < 0)) best = k;
      }
      if (best < 0) return;
      const entry = heads[best]!;
      heads[best] = its[best]!.next().value as GeoEntry | undefined;
      const id = entry[0];
      if (id === last) continue;
      last = id;
      const verdict = verdictOf(entry, test);
      if (verdict !== GEO_NO && !visit(id, verdict === GEO_YES)) return;
    }
  } finally {
    for (const it of its) it.return?.();
  }
}

/** A box over at most this many cells has them merged as read; a larger one's are read and sorted whole. */
const MERGED_RUNS = 8;

/** Many runs: their union sorted whole. */
function sortedUnion(runs: readonly string[][]): string[] {
  const sorted = [...new Set(runs.flat())];
  // compareIds differs from the engine's sort only past U+D7FF (keys.ts): ids without such a character sort natively.
  return sorted.some((id) => BEYOND_BMP_START.test(id)) ? sorted.sort(compareIds) : sorted.sort();
}

/** A character from U+D800 on (a surrogate, or U+E000-U+FFFF), where UTF-16 and UTF-8 orders part. */
const BEYOND_BMP_START = /[\uD800-\uFFFF]/;
