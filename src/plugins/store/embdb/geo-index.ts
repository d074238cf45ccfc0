// The spatial index of embdb: every attribute instance holding a GeoJSON geometry, by the grid cells its bounding box
// covers, so a geo-query reads the entities near its search box instead of every entity of the type. The index only
// narrows: it yields a superset of the matches, and the query's own predicate (ngsild/query/geoq.ts) decides.
//
// Cells are CELL_DEGREES squares numbered row by row (row from latitude, column from longitude), so one row of a
// search box is one contiguous key range. A geometry whose box covers more than MAX_CELLS_PER_GEOMETRY cells (a
// country, a line across the world) goes to one shared WIDE cell that every geo-query reads.
import type { Database } from 'lmdb';
import type { StoredEntity } from '../../../ngsild/entity/model.js';
import { ENTITY_CORE_MEMBERS } from '../../../ngsild/entity/model.js';
import { bboxOf, geometryOf, type BBox } from '../../../ngsild/query/geoq.js';
import { compareIds } from './keys.js';
import type { IndexWriter } from './pending-entries.js';

/** Key of the spatial index: `[tenant, geoproperty IRI, cell]`; values: entity ids (sorted duplicates). */
export type GeoKey = [string, string, number];

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

/** The cells of one geometry's bounding box, or [WIDE]. */
function cellsOfBox(box: BBox, into: Set<number>): void {
  if (!box.every(Number.isFinite)) return;
  const s = span(box);
  if (s.cells > MAX_CELLS_PER_GEOMETRY) {
    into.add(WIDE);
    return;
  }
  for (let r = s.r0; r <= s.r1; r++) for (let c = s.c0; c <= s.c1; c++) into.add(r * COLUMNS + c);
}

/**
 * Every attribute of an entity holding a geometry, with the cells of its instances. Whatever the instance's type: the
 * geo-query's predicate judges any instance whose value is a GeoJSON geometry (geoq.ts geometryOf), so does this.
 */
export function geoCellsOf(entity: StoredEntity | null | undefined): Map<string, Set<number>> {
  const out = new Map<string, Set<number>>();
  if (entity === null || entity === undefined) return out;
  for (const attrIri in entity) {
    if (ENTITY_CORE_MEMBERS.has(attrIri)) continue;
    const instances = entity[attrIri];
    if (!Array.isArray(instances)) continue;
    let cells: Set<number> | undefined;
    for (const inst of instances) {
      const g = geometryOf(inst);
      if (g === undefined) continue;
      cells ??= new Set();
      cellsOfBox(bboxOf(g), cells);
    }
    if (cells !== undefined && cells.size > 0) out.set(attrIri, cells);
  }
  return out;
}

/** Inside the write transaction: moves an entity's index entries from its old state to its new one. */
export function moveGeoEntries(
  db: IndexWriter<GeoKey>,
  tenant: string,
  id: string,
  before: StoredEntity | undefined,
  after: StoredEntity | null,
): void {
  const old = geoCellsOf(before);
  const now = geoCellsOf(after);
  if (old.size === 0 && now.size === 0) return;
  for (const [attrIri, cells] of old) {
    const keep = now.get(attrIri);
    for (const cell of cells) if (keep === undefined || !keep.has(cell)) db.removeSync([tenant, attrIri, cell], id);
  }
  for (const [attrIri, cells] of now) {
    const had = old.get(attrIri);
    for (const cell of cells) if (had === undefined || !had.has(cell)) db.putSync([tenant, attrIri, cell], id);
  }
}

/** Every index entry of an entity (the rebuild). */
export function putGeoEntries(db: Database<string, GeoKey>, tenant: string, entity: StoredEntity): void {
  for (const [attrIri, cells] of geoCellsOf(entity)) for (const cell of cells) db.putSync([tenant, attrIri, cell], entity.id);
}

/**
 * The ids of the entities whose `attrIri` may lie in `box`, each once, in the order of the scan and the type index
 * (their keys' order, compareIds); undefined when the index would not narrow the search (a box over too many cells,
 * or too many candidates): the caller scans as without an index. Each cell's ids come sorted (ordered-binary values
 * of a dupSort database): the cells of a small box (a city-scale near) are merged as the caller reads, so a query
 * that stops at its page reads no further; a larger box's are read whole first.
 */
export function geoCandidates(db: Database<string, GeoKey>, tenant: string, attrIri: string, box: BBox): Iterable<string> | undefined {
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
    return cells.length === 1 ? db.getValues(cells[0]!) : mergedValues(cells.map((key) => db.getValues(key)));
  }
  const runs: string[][] = [];
  let total = 0;
  const wide = [...db.getValues([tenant, attrIri, WIDE])];
  if (wide.length > 0) runs.push(wide);
  total += wide.length;
  for (let r = s.r0; r <= s.r1; r++) {
    const range = { start: [tenant, attrIri, r * COLUMNS + s.c0] as GeoKey, end: [tenant, attrIri, r * COLUMNS + s.c1 + 1] as GeoKey };
    let cell = Number.NaN;
    let run: string[] = [];
    for (const { key, value } of db.getRange(range)) {
      if (key[2] !== cell) {
        cell = key[2];
        runs.push((run = []));
      }
      run.push(value);
      if (++total > MAX_CANDIDATES) return undefined;
    }
  }
  return sortedUnion(runs);
}

/** The cells of a span, row by row. */
function cellsOfSpan(s: { r0: number; r1: number; c0: number; c1: number }): number[] {
  const cells: number[] = [];
  for (let r = s.r0; r <= s.r1; r++) for (let c = s.c0; c <= s.c1; c++) cells.push(r * COLUMNS + c);
  return cells;
}

/**
 * Sorted runs (compareIds) as one sorted sequence, each id once (a geometry over several cells is in each, and comes
 * out of them one after the other), read as the caller asks; a caller that stops early closes every run's cursor.
 */
export function* mergedValues(runs: Iterable<string>[]): Generator<string> {
  const its = runs.map((run) => run[Symbol.iterator]());
  const heads = its.map((it) => it.next().value as string | undefined);
  try {
    let last: string | undefined;
    for (;;) {
      let best = -1;
      for (let k = 0; k < heads.length; k++) {
        const id = heads[k];
        if (id !== undefined && (best < 0 || compareIds(id, heads[best]!) < 0)) best = k;
      }
      if (best < 0) return;
      const id = heads[best]!;
      heads[best] = its[best]!.next().value as string | undefined;
      if (id !== last) yield id;
      last = id;
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
