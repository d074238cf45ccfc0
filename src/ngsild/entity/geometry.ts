// GeoJSON geometry checks (RFC 7946 §3.1, as CIM 009 §4.7 requires for GeoProperty values): shape, nesting of
// coordinates, numeric WGS84 positions in range, closed linear rings. No I/O, no recursion beyond a collection.

export const GEOMETRY_TYPES: ReadonlySet<string> = new Set([
  'Point',
  'MultiPoint',
  'LineString',
  'MultiLineString',
  'Polygon',
  'MultiPolygon',
  'GeometryCollection',
]);

/** True when `v` claims to be a geometry (an object whose `type` is a GeoJSON geometry type); it may still be invalid. */
export function looksLikeGeometry(v: unknown): boolean {
  return (
    typeof v === 'object' &&
    v !== null &&
    !Array.isArray(v) &&
    typeof (v as { type?: unknown }).type === 'string' &&
    GEOMETRY_TYPES.has((v as { type: string }).type)
  );
}

/** Why `v` is not a valid GeoJSON geometry, or undefined when it is one. */
export function geometryProblem(v: unknown, collectionDepth = 0): string | undefined {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return 'is not a GeoJSON geometry object';
  const g = v as { type?: unknown; coordinates?: unknown; geometries?: unknown };
  if (typeof g.type !== 'string' || !GEOMETRY_TYPES.has(g.type)) return `has no GeoJSON geometry type (got ${describe(g.type)})`;
  if (g.type === 'GeometryCollection') {
    if (!Array.isArray(g.geometries)) return 'is a GeometryCollection without a geometries array';
    if (collectionDepth > 0) return 'nests a GeometryCollection in a GeometryCollection';
    for (let i = 0; i < g.geometries.length; i++) {
      const p = geometryProblem(g.geometries[i], collectionDepth + 1);
      if (p !== undefined) return `geometries[${i}] ${p}`;
    }
    return undefined;
  }
  const c = g.coordinates;
  switch (g.type) {
    case 'Point':
      return positionProblem(c, 'coordinates');
    case 'MultiPoint':
      return positionsProblem(c, 'coordinates', 0);
    case 'LineString':
      return positionsProblem(c, 'coordinates', 2);
    case 'MultiLineString':
      return listProblem(c, 'coordinates', (l, at) => positionsProblem(l, at, 2));
    case 'Polygon':
      return polygonProblem(c, 'coordinates');
    default: // MultiPolygon
      return listProblem(c, 'coordinates', polygonProblem);
  }
}

function describe(v: unknown): string {
  return v === undefined ? 'none' : JSON.stringify(v).slice(0, 40);
}

function positionProblem(p: unknown, at: string): string | undefined {
  if (!Array.isArray(p) || p.length < 2 || p.length > 3) return `${at} is not a position [lon, lat(, alt)]`;
  for (let i = 0; i < p.length; i++) {
    if (typeof p[i] !== 'number' || !Number.isFinite(p[i])) return `${at}[${i}] is not a number`;
  }
  if (p[0] < -180 || p[0] > 180) return `${at}[0] (longitude ${p[0]}) is outside [-180, 180]`;
  if (p[1] < -90 || p[1] > 90) return `${at}[1] (latitude ${p[1]}) is outside [-90, 90]`;
  return undefined;
}

function positionsProblem(ps: unknown, at: string, min: number): string | undefined {
  if (!Array.isArray(ps)) return `${at} is not an array of positions`;
  for (let i = 0; i < ps.length; i++) {
    const p = positionProblem(ps[i], `${at}[${i}]`);
    if (p !== undefined) return p;
  }
  if (ps.length < min) return `${at} has ${ps.length} positions, at least ${min} are needed`;
  return undefined;
}

function listProblem(l: unknown, at: string, each: (v: unknown, at: string) => string | undefined): string | undefined {
  if (!Array.isArray(l)) return `${at} is not an array`;
  for (let i = 0; i < l.length; i++) {
    const p = each(l[i], `${at}[${i}]`);
    if (p !== undefined) return p;
  }
  return undefined;
}

/** RFC 7946 §3.1.6: a polygon is rings of >= 4 positions whose first and last positions are equal. */
function polygonProblem(rings: unknown, at: string): string | undefined {
  if (!Array.isArray(rings) || rings.length === 0) return `${at} is not a non-empty array of linear rings`;
  for (let r = 0; r < rings.length; r++) {
    const ring: unknown = rings[r];
    const ringAt = `${at}[${r}]`;
    const p = positionsProblem(ring, ringAt, 4);
    if (p !== undefined) return p;
    const ps = ring as number[][];
    const first = ps[0]!;
    const last = ps[ps.length - 1]!;
    if (first.length !== last.length || first.some((x, i) => x !== last[i]))
      return `${ringAt} is not closed (first and last positions differ)`;
  }
  return undefined;
}
