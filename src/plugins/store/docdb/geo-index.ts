// The shapes MongoDB's 2dsphere index holds for an entity's geometries, and the regions geo-queries (CIM 009 §4.10)
// ask it for. The worker decides every match (geoq.ts, turf: planar edges in longitude/latitude); MongoDB only
// narrows (geodesic edges), so both sides are conservative: the server may answer more than the matches, never fewer.
//
// Stored: a Point as itself; every other geometry as the box of each part (a polygon, a line, a group of points),
// grown by PAD. A box is always a valid GeoJSON polygon for MongoDB (a stored geometry it refuses would fail the
// write: self-intersecting rings, repeated vertices, which the broker accepts), and its parallel edges are cut at
// every STEP degrees, so that the great-circle arcs between vertices stray at most 0.0011° from the parallel (at
// 45°, the worst latitude), well within PAD. FerretDB 1.x refuses nested arrays: these shapes are written only
// where the server is MongoDB (layout.ts), FerretDB filters on the boxes of entity-doc.ts `gb` instead.
import type { Geometry, Polygon, Position } from 'geojson';
import { bboxOf, type BBox, type GeoQuery } from '../../../ngsild/query/geoq.js';

/** One indexed shape: the attribute's field key (entity-doc.ts fieldKey) and a GeoJSON Point or Polygon. */
export interface IndexedShape {
  k: string;
  g: { type: 'Point'; coordinates: number[] } | Polygon;
}

/** Degrees an entity's box grows by on every side. */
export const PAD = 0.01;
/** Degrees a query's region grows by: enough for an entity box (PAD) within it, arcs bulging on both. */
export const QUERY_PAD = 3 * PAD;
/** Longest parallel edge between two vertices, in degrees. */
const STEP = 1;
/** Longest meridian edge (meridians are great circles: only to keep pole-to-pole edges from being antipodal). */
const MERIDIAN_STEP = 10;
/** Widest box polygon: wider boxes are cut in pieces (a polygon MongoDB reads as the smaller of its two sides). */
const PIECE_WIDTH = 90;
/** More parts than this are indexed as the one box of the whole geometry (a bound on the document's size). */
const MAX_PARTS = 64;

/** The shapes indexed for one geometry of the attribute with field key `k`. */
export function indexedShapes(k: string, g: Geometry): IndexedShape[] {
  if (g.type === 'Point') return [{ k, g: { type: 'Point', coordinates: [g.coordinates[0]!, g.coordinates[1]!] } }];
  const parts = partBoxes(g);
  const out: IndexedShape[] = [];
  for (const box of parts) {
    if (!box.every(Number.isFinite)) continue;
    for (const polygon of boxPolygons(box, PAD)) out.push({ k, g: polygon });
  }
  return out;
}

function partBoxes(g: Geometry): BBox[] {
  let parts: Geometry[];
  switch (g.type) {
    case 'MultiPoint':
      parts = g.coordinates.map((coordinates): Geometry => ({ type: 'Point', coordinates }));
      break;
    case 'MultiLineString':
      parts = g.coordinates.map((coordinates): Geometry => ({ type: 'LineString', coordinates }));
      break;
    case 'MultiPolygon':
      parts = g.coordinates.map((coordinates): Geometry => ({ type: 'Polygon', coordinates }));
      break;
    default:
      parts = [g];
  }
  return parts.length > MAX_PARTS ? [bboxOf(g)] : parts.map(bboxOf);
}

/**
 * The box grown by `pad` (clamped to the globe) as polygons at most PIECE_WIDTH wide. A side on a pole is the pole
 * itself: one vertex, its neighbours along meridians.
 */
export function boxPolygons([w0, s0, e0, n0]: BBox, pad: number): Polygon[] {
  const w = Math.max(-180, w0 - pad);
  const e = Math.min(180, e0 + pad);
  const s = Math.max(-90, s0 - pad);
  const n = Math.min(90, n0 + pad);
  const pieces = Math.max(1, Math.ceil((e - w) / PIECE_WIDTH));
  const width = (e - w) / pieces;
  const out: Polygon[] = [];
  for (let i = 0; i < pieces; i++) {
    const pw = w + i * width;
    const pe = i === pieces - 1 ? e : w + (i + 1) * width;
    out.push({ type: 'Polygon', coordinates: [ring(pw, s, pe, n)] });
  }
  return out;
}

function ring(w: number, s: number, e: number, n: number): Position[] {
  const r: Position[] = [];
  if (s <= -90) r.push([w, -90]);
  else for (const lon of steps(w, e, STEP)) r.push([lon, s]);
  for (const lat of inner(s, n, MERIDIAN_STEP)) r.push([e, lat]);
  if (n >= 90) r.push([e, 90]);
  else for (const lon of steps(e, w, STEP)) r.push([lon, n]);
  for (const lat of inner(n, s, MERIDIAN_STEP)) r.push([w, lat]);
  r.push(r[0]!);
  return r;
}

/** from, …, to in equal steps of at most `step` (both ends included). */
function steps(from: number, to: number, step: number): number[] {
  const count = Math.max(1, Math.ceil(Math.abs(to - from) / step));
  const out: number[] = [];
  for (let i = 0; i <= count; i++) out.push(i === count ? to : from + ((to - from) * i) / count);
  return out;
}

/** The points strictly between from and to, at most `step` apart. */
function inner(from: number, to: number, step: number): number[] {
  return steps(from, to, step).slice(1, -1);
}

/** How a geo-query is asked of the 2dsphere index of `gi.g`, or undefined when it is not (the worker decides alone). */
export interface GeoPushdown {
  /** `$geoWithin` for within and equals when the region is one polygon, else `$geoIntersects`. */
  operator: '$geoWithin' | '$geoIntersects';
  /** The region's pieces (asked as an `$or`: they share sides, which the polygons of a MultiPolygon may not). */
  pieces: Polygon[];
}

/**
 * The region every matching entity's indexed shapes meet (intersects, overlaps, contains, near;maxDistance: the
 * query's box, grown by the distance for near) or lie within (within, equals): the query's box grown by QUERY_PAD.
 * disjoint and near;minDistance match entities anywhere (farther than a distance): nothing to ask the index.
 */
export function geoPushdown(geo: GeoQuery, searchBox: BBox | undefined): GeoPushdown | undefined {
  if (searchBox === undefined) return undefined;
  const pieces = boxPolygons(searchBox, QUERY_PAD);
  const inside = (geo.georel === 'within' || geo.georel === 'equals') && pieces.length === 1;
  return { operator: inside ? '$geoWithin' : '$geoIntersects', pieces };
}
