// EntityMaps (CIM 009 v1.8.1 §5.2.35, v1.9.1 §5.2.39, §5.5.14, §5.5.9.3): which entities a query that spans
// context sources matched, in page order, and where each came from. The document as stored, its rendering, its
// lifetime and the bad inputs of an Update EntityMap (§5.14.2).
import { badRequest } from '../problem.js';
import { addDuration, parseDuration } from '../temporal/duration.js';

/** The store collection of a tenant's EntityMaps. */
export const ENTITY_MAPS = 'entityMaps';
/** One small document per map ({expiresAt}): the maps are counted and swept without reading them. */
export const ENTITY_MAP_INDEX = 'entityMapIndex';
/** Live maps a tenant keeps at most: past it, making one removes those expiring first (README "EntityMaps"). */
export const MAX_MAPS_PER_TENANT = 1000;

/** §5.2.39: the key of a locally held entity among the registration ids of an entry. */
export const LOCAL_ORIGIN = '@none';

/** Lifetime of a map whose query gave no entityMapLifetime, and the longest one granted (§5.5.14: the broker's call). */
export const DEFAULT_LIFETIME_MS = 3_600_000;
export const MAX_LIFETIME_MS = 86_400_000;
/** Most entities one map holds: a query matching more answers 403 TooManyResults (README "EntityMaps"). */
export const MAX_MAP_ENTITIES = 10_000;

/**
 * A map as stored: its entries as [entity id, origins] pairs in page order (an array: an entity id is no safe field
 * name in every store, and the order is the point), origins being registration ids and LOCAL_ORIGIN.
 */
export interface EntityMapDoc {
  id: string;
  expiresAt: string;
  entries: Array<[string, string[]]>;
  createdAt: string;
  modifiedAt: string;
}

export const isExpiredMap = (doc: EntityMapDoc, nowMs: number): boolean => Date.parse(doc.expiresAt) <= nowMs;

/**
 * The expiry of a new map: entityMapLifetime (an ISO 8601 duration, Table 6.4.3.2-1) from now, at most
 * MAX_LIFETIME_MS; the default without one. A lifetime that does not parse is the request's 400.
 */
export function mapExpiry(lifetime: string | undefined, nowMs: number): string {
  if (lifetime === undefined) return new Date(nowMs + DEFAULT_LIFETIME_MS).toISOString();
  const d = parseDuration(lifetime);
  if (d === undefined) throw badRequest(`entityMapLifetime: '${lifetime.slice(0, 60)}' is not an ISO 8601 duration`);
  const at = addDuration(nowMs, d);
  if (!(at > nowMs)) throw badRequest('entityMapLifetime: must be longer than zero');
  return new Date(Math.min(at, nowMs + MAX_LIFETIME_MS)).toISOString();
}

/**
 * §5.2.39: the EntityMap data type as a client sees it (entityMap keyed by entity id, in page order). No
 * `linkedMaps` (optional there: the EntityMaps the sources made for their part): the broker asks its sources by id
 * and makes no map on them, so it has none to name, and an empty object would say the sources have none.
 */
export function renderEntityMap(doc: EntityMapDoc): Record<string, unknown> {
  const entityMap: Record<string, string[]> = {};
  for (const [id, origins] of doc.entries) entityMap[id] = origins;
  return { id: doc.id, type: 'EntityMap', expiresAt: doc.expiresAt, entityMap };
}

const UPDATE_MEMBERS = new Set(['id', 'type', 'expiresAt', 'entityMap', 'linkedMaps', '@context']);

/**
 * §5.14.2.4: the new expiresAt of an Update EntityMap fragment, or undefined when it gives none. The output-only
 * members (entityMap, linkedMaps, §5.2.39) are ignored as the clause says; id and type, when given, must be the
 * map's; an unknown member or an expiresAt that is no future DateTime is a 400. The extension is bounded as a new
 * map's lifetime is.
 */
export function updatedExpiry(body: Record<string, unknown>, mapId: string, nowMs: number): string | undefined {
  for (const k of Object.keys(body)) if (!UPDATE_MEMBERS.has(k)) throw badRequest(`'${k.slice(0, 100)}' is no member of an EntityMap`);
  if (body.id !== undefined && body.id !== mapId) throw badRequest('id: an EntityMap fragment cannot change the id');
  if (body.type !== undefined && body.type !== 'EntityMap') throw badRequest("type: an EntityMap's type is 'EntityMap'");
  const v = body.expiresAt;
  if (v === undefined) return undefined;
  const at = typeof v === 'string' && /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/.test(v) ? Date.parse(v) : NaN;
  if (Number.isNaN(at)) throw badRequest(`expiresAt: '${String(v).slice(0, 60)}' is not a DateTime`);
  if (at <= nowMs) throw badRequest('expiresAt: must lie in the future');
  return new Date(Math.min(at, nowMs + MAX_LIFETIME_MS)).toISOString();
}

/**
 * The map id a request names in NGSILD-EntityMap: the map's id, or the resource URI the broker answered with
 * (`/ngsi-ld/v1/entityMaps/{id}`, maybe absolute). undefined when the value is none of them.
 */
export function mapIdOfHeader(value: string, apiPrefix: string): string | undefined {
  let v = value.trim();
  const at = v.indexOf(`${apiPrefix}/entityMaps/`);
  if (at >= 0) {
    try {
      v = decodeURIComponent(v.slice(at + apiPrefix.length + '/entityMaps/'.length));
    } catch {
      return undefined;
    }
  }
  return /^[A-Za-z][A-Za-z0-9+.-]*:[^\s<>"{}|\\^`]{1,1000}$/.test(v) ? v : undefined;
}
