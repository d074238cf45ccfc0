// A geo-query's test on the bounding box of an entity's geometries alone (a spatial index keeps the box beside the
// id, so it rules out candidates without reading them). It only rules out: what it keeps, the query's predicate
// (geoq.ts compileGeoQuery) decides on the entity.
import { distance } from '@turf/distance';
import type { BBox, GeoQuery } from './geoq.js';

/** Slack on the point-to-point distance: rounding never rules out what the predicate's own measure keeps. */
const SLACK = 1e-9;

/** `box`: the box of the geoproperty's geometries; `onePoint`: they are all Points at one position (the box's corner). */
export type GeoBoxTest = (box: BBox, onePoint: boolean) => boolean;

/**
 * False when no geometry inside `box` (the box of every geometry of the entity's geoproperty) can stand in the
 * query's relation. `search`: the query's search box (geoq.ts geoQuerySearchBox), which holds every geometry that
 * can match (the spatial index reads the cells it covers). For `near;maxDistance` around a Point, geometries that
 * are all one Point are measured as the predicate measures a Point (turf distance, geoq.ts metresBetween).
 */
export function geoBoxTest(q: GeoQuery, search: BBox): GeoBoxTest {
  const [w, s, e, n] = search;
  const overlaps = (b: BBox): boolean => b[0] <= e && b[2] >= w && b[1] <= n && b[3] >= s;
  const max = q.maxDistance;
  if (q.georel !== 'near' || max === undefined || q.geometry.type !== 'Point') return overlaps;
  const at = q.geometry.coordinates;
  const limit = max + max * SLACK + SLACK;
  return (b, onePoint) => overlaps(b) && (!onePoint || distance([b[0], b[1]], at, { units: 'meters' }) <= limit);
}
