// The turf functions geo-queries evaluate with, required on first use (their CommonJS builds): loading them costs
// ~80 ms of CPU in a fresh thread, which every thread paid at start though only a geo-query needs them.
import { createRequire } from 'node:module';

export interface Turf {
  booleanDisjoint: typeof import('@turf/boolean-disjoint').booleanDisjoint;
  booleanEqual: typeof import('@turf/boolean-equal').booleanEqual;
  booleanIntersects: typeof import('@turf/boolean-intersects').booleanIntersects;
  booleanOverlap: typeof import('@turf/boolean-overlap').booleanOverlap;
  booleanWithin: typeof import('@turf/boolean-within').booleanWithin;
  distance: typeof import('@turf/distance').distance;
  pointToLineDistance: typeof import('@turf/point-to-line-distance').pointToLineDistance;
  pointToPolygonDistance: typeof import('@turf/point-to-polygon-distance').pointToPolygonDistance;
}

const require = createRequire(import.meta.url);
let lib: Turf | undefined;

/** The turf functions; the first call loads them synchronously, so no geo-query waits on another's load. */
export function turf(): Turf {
  return (lib ??= {
    booleanDisjoint: (require('@turf/boolean-disjoint') as typeof import('@turf/boolean-disjoint')).booleanDisjoint,
    booleanEqual: (require('@turf/boolean-equal') as typeof import('@turf/boolean-equal')).booleanEqual,
    booleanIntersects: (require('@turf/boolean-intersects') as typeof import('@turf/boolean-intersects')).booleanIntersects,
    booleanOverlap: (require('@turf/boolean-overlap') as typeof import('@turf/boolean-overlap')).booleanOverlap,
    booleanWithin: (require('@turf/boolean-within') as typeof import('@turf/boolean-within')).booleanWithin,
    distance: (require('@turf/distance') as typeof import('@turf/distance')).distance,
    pointToLineDistance: (require('@turf/point-to-line-distance') as typeof import('@turf/point-to-line-distance')).pointToLineDistance,
    pointToPolygonDistance: (require('@turf/point-to-polygon-distance') as typeof import('@turf/point-to-polygon-distance'))
      .pointToPolygonDistance,
  });
}
