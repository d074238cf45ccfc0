// A geo-query's test on the bounding box of an entity's geometries alone (a spatial index keeps the box beside the
// id, so it rules out candidates without reading them). It only rules out: what it keeps, the query's predicate
// (geoq.ts compileGeoQuery) decides on the entity.
import type { BBox, GeoQuery } from './geoq.js';

/** The sphere the predicate measures on (turf's earthRadius, metres). */
const EARTH_RADIUS = 6_371_008.8;
const RADIANS = Math.PI / 180;
/** Relative slack on the distance: rounding never rules out what the predicate's own measure keeps. */
const SLACK = 1e-9;

/** What a box test answers: the entity cannot match, may match (the predicate decides), or meets the relation. */
export const GEO_NO = 0;
export const GEO_MAYBE = 1;
export const GEO_YES = 2;
export type GeoVerdict = typeof GEO_NO | typeof GEO_MAYBE | typeof GEO_YES;

/**
 * `west, south, east, north`: the box of the geoproperty's geometries; `onePoint`: they are all Points at one
 * position (west, south). Plain numbers: called once per index entry read.
 */
export type GeoBoxTest = (west: number, south: number, east: number, north: number, onePoint: boolean) => GeoVerdict;

/**
 * GEO_NO when no geometry inside the box (of every geometry of the entity's geoproperty) can stand in the query's
 * relation, else GEO_MAYBE, or GEO_YES where the box alone decides that the relation holds. `search`: the query's search box (geoq.ts geoQuerySearchBox), which holds every geometry that can match
 * (the spatial index reads the cells it covers). For `near;maxDistance` around a Point, geometries that are all one
 * Point are measured as the predicate measures a Point: the great-circle distance on turf's sphere (haversine),
 * compared through its haversine so no square root or arc is taken per entry; GEO_YES below the distance less the
 * slack, GEO_MAYBE within the slack of it (the predicate decides at the boundary).
 */
export function geoBoxTest(q: GeoQuery, search: BBox): GeoBoxTest {
  const [w, s, e, n] = search;
  const max = q.maxDistance;
  if (q.georel !== 'near' || max === undefined || q.geometry.type !== 'Point')
    return (west, south, east, north) => (west <= e && east >= w && south <= n && north >= s ? GEO_MAYBE : GEO_NO);
  const lon0 = q.geometry.coordinates[0]! * RADIANS;
  const lat0 = q.geometry.coordinates[1]! * RADIANS;
  const cosLat0 = Math.cos(lat0);
  // d <= limit exactly when hav(d / R) <= sin²(limit / 2R), for limit / 2R up to a quarter turn (beyond: everything).
  const bound = (limit: number): number => {
    const half = limit / (2 * EARTH_RADIUS);
    return half >= Math.PI / 2 ? Infinity : Math.sin(half) ** 2;
  };
  const most = bound(max * (1 + SLACK) + SLACK);
  const least = bound(max * (1 - SLACK));
  return (west, south, east, north, onePoint) => {
    if (!(west <= e && east >= w && south <= n && north >= s)) return GEO_NO;
    if (!onePoint) return GEO_MAYBE;
    const lat = south * RADIANS;
    const sinLat = Math.sin((lat - lat0) / 2);
    const sinLon = Math.sin((west * RADIANS - lon0) / 2);
    const hav = sinLat * sinLat + sinLon * sinLon * cosLat0 * Math.cos(lat);
    return hav <= least ? GEO_YES : hav <= most ? GEO_MAYBE : GEO_NO;
  };
}
