// Geo-queries (CIM 009 v1.8 §4.10): validation of georel / geometry / coordinates / geoproperty (GET parameters,
// or the `geoQ` member of POST /entityOperations/query and of subscriptions) and their evaluation with turf.
//
// Errors are 400 BadRequestData (§6.3.5: values that do not make sense for the request); the detail names the member.

import { turf } from './turf-lib.js';
import type { Geometry, LineString, MultiPolygon, Polygon, Position } from 'geojson';
import type { StoredEntity } from '../entity/model.js';
import { badRequest } from '../problem.js';

export const GEO_RELATIONS = ['near', 'within', 'contains', 'intersects', 'equals', 'disjoint', 'overlaps'] as const;
export type GeoRel = (typeof GEO_RELATIONS)[number];
export const GEOMETRY_TYPES = ['Point', 'MultiPoint', 'LineString', 'MultiLineString', 'Polygon', 'MultiPolygon'] as const;
export type GeometryType = (typeof GEOMETRY_TYPES)[number];
/** [west, south, east, north] in degrees. */
export type BBox = [number, number, number, number];

export interface GeoQuery {
  georel: GeoRel;
  /** Metres, `near` only. */
  maxDistance: number | undefined;
  minDistance: number | undefined;
  geometry: Geometry;
  /** As written in the request (default `location`). */
  geopropertyTerm: string;
  geopropertyIri: string;
  /** Bounding box of the query geometry. */
  bbox: BBox;
}

/** Longest accepted `coordinates` text: a bound on parsing work, answered with 400. */
export const COORDINATES_MAX_LENGTH = 1 << 20;
const DISTANCE_RE = /^(maxDistance|minDistance)==((?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?)$/;

type Expand = (term: string) => string;

/**
 * The GET form (§6.4.3.2 parameters). Undefined when the request has no geo-query (no georel, geometry nor
 * coordinates); a partial or invalid one is 400 BadRequestData.
 */
export function parseGeoQuery(params: Record<string, string | null | undefined>, expand: Expand): GeoQuery | undefined {
  // null as well as undefined: URLSearchParams.get answers null for an absent parameter.
  const georel = params['georel'] ?? undefined;
  const geometry = params['geometry'] ?? undefined;
  const coordinates = params['coordinates'] ?? undefined;
  const geoproperty = params['geoproperty'] ?? undefined;
  if (georel === undefined && geometry === undefined && coordinates === undefined) return undefined;
  return build(georel, geometry, coordinates === undefined ? undefined : parseCoordinatesText(coordinates), geoproperty, expand);
}

/** The object form (`geoQ` of POST /entityOperations/query, subscriptions): coordinates an array (or its JSON text). */
export function parseGeoQueryObject(geoQ: unknown, expand: Expand): GeoQuery {
  if (typeof geoQ !== 'object' || geoQ === null || Array.isArray(geoQ)) throw badRequest('geoQ: must be an object');
  const o = geoQ as Record<string, unknown>;
  for (const k of ['georel', 'geometry', 'geoproperty'] as const) {
    if (o[k] !== undefined && typeof o[k] !== 'string') throw badRequest(`geoQ.${k}: must be a string`);
  }
  const c = o['coordinates'];
  if (c !== undefined && typeof c !== 'string' && !Array.isArray(c)) throw badRequest('geoQ.coordinates: must be an array');
  const coords = typeof c === 'string' ? parseCoordinatesText(c) : c;
  return build(
    o['georel'] as string | undefined,
    o['geometry'] as string | undefined,
    coords,
    o['geoproperty'] as string | undefined,
    expand,
  );
}

function parseCoordinatesText(text: string): unknown {
  if (text.length > COORDINATES_MAX_LENGTH) throw badRequest(`coordinates: longer than ${COORDINATES_MAX_LENGTH} characters`);
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw badRequest('coordinates: not a JSON array');
  }
}

function build(
  georel: string | undefined,
  geometry: string | undefined,
  coordinates: unknown,
  geoproperty: string | undefined,
  expand: Expand,
): GeoQuery {
  if (georel === undefined || georel === '') throw badRequest('georel: missing (geometry and coordinates need it)');
  if (geometry === undefined || geometry === '') throw badRequest('geometry: missing (georel needs it)');
  if (coordinates === undefined) throw badRequest('coordinates: missing (georel needs them)');
  const rel = parseGeorel(georel);
  if (!(GEOMETRY_TYPES as readonly string[]).includes(geometry)) {
    throw badRequest(`geometry: '${geometry}' is not one of ${GEOMETRY_TYPES.join(', ')}`);
  }
  const geom = { type: geometry, coordinates: checkCoordinates(geometry as GeometryType, coordinates) } as Geometry;
  const geopropertyTerm = geoproperty === undefined || geoproperty === '' ? 'location' : geoproperty;
  return { ...rel, geometry: geom, geopropertyTerm, geopropertyIri: expand(geopropertyTerm), bbox: bboxOf(geom) };
}

// §4.10: georel = near;maxDistance==N | near;minDistance==N | within | contains | intersects | equals | disjoint |
// overlaps, N a PositiveNumber (an RFC 8259 number without minus sign, not zero).
function parseGeorel(text: string): Pick<GeoQuery, 'georel' | 'maxDistance' | 'minDistance'> {
  const [name, ...modifiers] = text.split(';');
  if (!(GEO_RELATIONS as readonly string[]).includes(name!)) {
    throw badRequest(`georel: '${name}' is not one of ${GEO_RELATIONS.join(', ')}`);
  }
  const georel = name as GeoRel;
  if (georel !== 'near') {
    if (modifiers.length > 0) throw badRequest(`georel: ${georel} takes no modifier`);
    return { georel, maxDistance: undefined, minDistance: undefined };
  }
  if (modifiers.length !== 1) throw badRequest('georel: near takes one modifier, maxDistance==<metres> or minDistance==<metres>');
  const d = DISTANCE_RE.exec(modifiers[0]!);
  if (d === null) throw badRequest(`georel: '${modifiers[0]}' is not maxDistance==<metres> or minDistance==<metres>`);
  const metres = Number(d[2]);
  if (!Number.isFinite(metres) || metres <= 0) throw badRequest(`georel: distance '${d[2]}' is not a positive number`);
  return d[1] === 'maxDistance'
    ? { georel, maxDistance: metres, minDistance: undefined }
    : { georel, maxDistance: undefined, minDistance: metres };
}

// ---- coordinates: RFC 7946 §3.1 nesting per geometry type -----------------------------------------------------

function fail(path: string, what: string): never {
  throw badRequest(`coordinates${path}: ${what}`);
}

function checkPosition(p: unknown, path: string): Position {
  if (!Array.isArray(p) || p.length < 2 || p.length > 3)
    fail(path, 'a position is [longitude, latitude] or [longitude, latitude, altitude]');
  for (const n of p) if (typeof n !== 'number' || !Number.isFinite(n)) fail(path, 'a position holds numbers');
  const [lon, lat] = p as number[];
  if (lon! < -180 || lon! > 180) fail(path, `longitude ${lon} is outside [-180, 180]`);
  if (lat! < -90 || lat! > 90) fail(path, `latitude ${lat} is outside [-90, 90]`);
  return p as Position;
}

function checkArray(a: unknown, path: string, min: number, what: string): unknown[] {
  if (!Array.isArray(a)) fail(path, `expected an array of ${what}`);
  if (a.length < min) fail(path, `expected at least ${min} ${what}`);
  return a;
}

function checkPositions(a: unknown, path: string, min: number): Position[] {
  return checkArray(a, path, min, 'positions').map((p, i) => checkPosition(p, `${path}[${i}]`));
}

function checkPolygon(a: unknown, path: string): Position[][] {
  return checkArray(a, path, 1, 'linear rings').map((ring, i) => {
    const positions = checkPositions(ring, `${path}[${i}]`, 4);
    const first = positions[0]!;
    const last = positions[positions.length - 1]!;
    if (first.length !== last.length || first.some((v, k) => v !== last[k])) fail(`${path}[${i}]`, 'a linear ring ends where it starts');
    return positions;
  });
}

function checkCoordinates(type: GeometryType, c: unknown): unknown {
  switch (type) {
    case 'Point':
      return checkPosition(c, '');
    case 'MultiPoint':
      return checkPositions(c, '', 1);
    case 'LineString':
      return checkPositions(c, '', 2);
    case 'MultiLineString':
      return checkArray(c, '', 1, 'line strings').map((l, i) => checkPositions(l, `[${i}]`, 2));
    case 'Polygon':
      return checkPolygon(c, '');
    case 'MultiPolygon':
      return checkArray(c, '', 1, 'polygons').map((p, i) => checkPolygon(p, `[${i}]`));
  }
}

// ---- bounding boxes ------------------------------------------------------------------------------------------

function eachPosition(g: Geometry, f: (p: Position) => void): void {
  switch (g.type) {
    case 'Point':
      f(g.coordinates);
      break;
    case 'MultiPoint':
    case 'LineString':
      g.coordinates.forEach(f);
      break;
    case 'MultiLineString':
    case 'Polygon':
      for (const l of g.coordinates) l.forEach(f);
      break;
    case 'MultiPolygon':
      for (const p of g.coordinates) for (const l of p) l.forEach(f);
      break;
    case 'GeometryCollection':
      for (const sub of g.geometries) eachPosition(sub, f);
      break;
  }
}

export function bboxOf(g: Geometry): BBox {
  const b: BBox = [Infinity, Infinity, -Infinity, -Infinity];
  eachPosition(g, ([x, y]) => {
    if (x! < b[0]) b[0] = x!;
    if (y! < b[1]) b[1] = y!;
    if (x! > b[2]) b[2] = x!;
    if (y! > b[3]) b[3] = y!;
  });
  return b;
}

/**
 * Metres per degree of latitude, rounded down: a degree of meridian is 110,574 m to 111,694 m on the ellipsoid and
 * 111,195 m on the sphere turf measures on, so a box grown by distance / this holds every position within that distance.
 */
const METRES_PER_DEGREE_AT_LEAST = 110_000;

/**
 * The box an entity's geometry must intersect to possibly match (for a spatial index), or undefined when a match
 * can lie anywhere (disjoint, near;minDistance without maxDistance). For near;maxDistance the query box grows by
 * the distance (a slight over-estimate: the index narrows, the predicate decides).
 */
export function geoQuerySearchBox(q: GeoQuery): BBox | undefined {
  if (q.georel === 'disjoint') return undefined;
  if (q.georel !== 'near') return q.bbox;
  if (q.maxDistance === undefined) return undefined;
  const [w, s, e, n] = q.bbox;
  const dLat = q.maxDistance / METRES_PER_DEGREE_AT_LEAST;
  const south = Math.max(-90, s - dLat);
  const north = Math.min(90, n + dLat);
  const cos = Math.cos((Math.max(Math.abs(south), Math.abs(north)) * Math.PI) / 180);
  const dLon = cos < 1e-9 ? 360 : q.maxDistance / (METRES_PER_DEGREE_AT_LEAST * cos);
  if (w - dLon < -180 || e + dLon > 180 || south === -90 || north === 90) return [-180, south, 180, north];
  return [w - dLon, south, e + dLon, north];
}

// ---- evaluation ----------------------------------------------------------------------------------------------

/**
 * A predicate over stored entities: any instance of the geoproperty whose GeoJSON value stands in the relation to
 * the query geometry (§4.10: the entity's geometry is the subject: "within" = entity within the query geometry).
 * An entity without the geoproperty, or with a value that is not a geometry, does not match.
 */
export function compileGeoQuery(q: GeoQuery): (entity: StoredEntity) => boolean {
  const relation = relationOf(q);
  const iri = q.geopropertyIri;
  return (entity) => {
    const instances = entity[iri];
    if (!Array.isArray(instances)) return false;
    for (const inst of instances) {
      const g = geometryOf(inst);
      if (g === undefined) continue;
      try {
        if (relation(g)) return true;
      } catch {
        // turf refuses some combinations of geometry types (and malformed stored values): not a match
      }
    }
    return false;
  };
}

/** The GeoJSON geometry an attribute instance holds as its value, or undefined when it holds none. */
export function geometryOf(inst: unknown): Geometry | undefined {
  if (typeof inst !== 'object' || inst === null) return undefined;
  const v = (inst as { value?: unknown }).value;
  if (typeof v !== 'object' || v === null) return undefined;
  const g = v as { type?: unknown; coordinates?: unknown };
  if (!(GEOMETRY_TYPES as readonly unknown[]).includes(g.type) || !Array.isArray(g.coordinates)) return undefined;
  return v as Geometry;
}

function relationOf(q: GeoQuery): (g: Geometry) => boolean {
  const query = q.geometry;
  switch (q.georel) {
    case 'near': {
      // maxDistance: within the buffer of that radius around the query geometry; minDistance: disjoint from it.
      const max = q.maxDistance;
      if (max !== undefined) return (g) => metresBetween(g, query) <= max;
      const min = q.minDistance ?? 0;
      return (g) => metresBetween(g, query) > min;
    }
    case 'within':
      return (g) => within(g, query);
    case 'contains':
      return (g) => within(query, g);
    case 'intersects':
      return (g) => turf().booleanIntersects(g, query);
    case 'disjoint':
      return (g) => turf().booleanDisjoint(g, query);
    case 'equals':
      return (g) => g.type === query.type && turf().booleanEqual(g, query);
    case 'overlaps':
      return (g) => turf().booleanOverlap(g, query);
  }
}

/** Parts of a multi-geometry as single geometries (a single geometry is its own one part). */
function partsOf(g: Geometry): Geometry[] {
  switch (g.type) {
    case 'MultiPoint':
      return g.coordinates.map((coordinates) => ({ type: 'Point', coordinates }));
    case 'MultiLineString':
      return g.coordinates.map((coordinates) => ({ type: 'LineString', coordinates }));
    case 'MultiPolygon':
      return g.coordinates.map((coordinates) => ({ type: 'Polygon', coordinates }));
    default:
      return [g];
  }
}

const isMulti = (g: Geometry) => g.type === 'MultiPoint' || g.type === 'MultiLineString' || g.type === 'MultiPolygon';

// a within b. turf's booleanWithin refuses some pairs (a MultiLineString on either side, a container of lower
// dimension): a multi-geometry is within b when all its parts are; within a multi b when within one of its parts.
function within(a: Geometry, b: Geometry): boolean {
  try {
    return turf().booleanWithin(a, b);
  } catch {
    if (isMulti(a)) return partsOf(a).every((p) => within(p, b));
    if (isMulti(b)) return partsOf(b).some((p) => within(a, p));
    return false;
  }
}

// Shortest distance in metres between two geometries: 0 when they intersect, else the least distance from a
// vertex of one to the other (exact for points; for lines and areas the nearest points lie on a vertex of one).
function metresBetween(a: Geometry, b: Geometry): number {
  if (a.type === 'Point' && b.type === 'Point') return turf().distance(a.coordinates, b.coordinates, { units: 'meters' });
  if (turf().booleanIntersects(a, b)) return 0;
  let best = Infinity;
  eachPosition(a, (p) => {
    best = Math.min(best, pointToGeometry(p, b));
  });
  if (a.type !== 'Point' && a.type !== 'MultiPoint') {
    eachPosition(b, (p) => {
      best = Math.min(best, pointToGeometry(p, a));
    });
  }
  return best;
}

function pointToGeometry(p: Position, g: Geometry): number {
  switch (g.type) {
    case 'Point':
      return turf().distance(p, g.coordinates, { units: 'meters' });
    case 'LineString':
      return turf().pointToLineDistance(p, g as LineString, { units: 'meters' });
    case 'Polygon':
    case 'MultiPolygon':
      return Math.max(0, turf().pointToPolygonDistance(p, g as Polygon | MultiPolygon, { units: 'meters' }));
    default: {
      let best = Infinity;
      for (const part of partsOf(g)) best = Math.min(best, pointToGeometry(p, part));
      return best;
    }
  }
}
