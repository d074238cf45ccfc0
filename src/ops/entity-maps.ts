// EntityMaps (CIM 009 v1.9.1 §5.14.1 to §5.14.3, §5.5.14, §5.5.9.3): Retrieve, Update and Delete EntityMap, and the
// maps of Query Entities (`entityMap=true` makes one at the first page, `NGSILD-EntityMap` serves later pages from
// it): the entities a query spanning sources matched are fixed with their order and origins, so pages neither
// overlap nor skip while the sources change.
import { randomUUID } from 'node:crypto';
import { LdError, badRequest, notFound } from '../ngsild/problem.js';
import { API_PREFIX } from '../ngsild/operations.js';
import { isUri } from '../ngsild/entity/syntax.js';
import { checkIdSize } from '../ngsild/entity/limits.js';
import { pathSegment } from '../ngsild/uri-encode.js';
import type { StoredEntity } from '../ngsild/entity/model.js';
import {
  ENTITY_MAPS,
  ENTITY_MAP_INDEX,
  LOCAL_ORIGIN,
  MAX_MAPS_PER_TENANT,
  MAX_MAP_ENTITIES,
  isExpiredMap,
  mapExpiry,
  mapIdOfHeader,
  renderEntityMap,
  updatedExpiry,
  type EntityMapDoc,
} from '../ngsild/entity-map/entity-map.js';
import type { DocCollection, EntityPage, EntityQuery } from '../store/contract.js';
import type { LdRequest } from '../pipeline/ld-request.js';
import type { WorkerContext } from '../pipeline/worker-context.js';
import type { OpHandler } from '../pipeline/handler.js';
import type { Selection } from './selection.js';
import { boolParam } from './types.js';
import { queryWithSources } from './forward/query.js';

const mapsOf = (req: LdRequest, ctx: WorkerContext): DocCollection => ctx.store.collection(req.tenant, ENTITY_MAPS);
const indexOf = (req: LdRequest, ctx: WorkerContext): DocCollection => ctx.store.collection(req.tenant, ENTITY_MAP_INDEX);

async function removeMap(req: LdRequest, ctx: WorkerContext, id: string): Promise<boolean> {
  await indexOf(req, ctx).delete(id);
  return mapsOf(req, ctx).delete(id);
}

/**
 * Before a map is made: the expired ones go, and while MAX_MAPS_PER_TENANT are live those expiring first go too (a
 * client naming one later gets a new map, as for an expired one: §5.5.14). Bounds what clients can make the store keep.
 */
async function makeRoom(req: LdRequest, ctx: WorkerContext, now: number): Promise<void> {
  const live: Array<{ id: string; at: number }> = [];
  for (const { id, doc } of await indexOf(req, ctx).list()) {
    const at = Date.parse(String(doc.expiresAt));
    if (!(at > now)) await removeMap(req, ctx, id);
    else live.push({ id, at });
  }
  live.sort((x, y) => x.at - y.at);
  for (let i = 0; live.length - i >= MAX_MAPS_PER_TENANT; i++) await removeMap(req, ctx, live[i]!.id);
}

/** The resource URI of a map: what NGSILD-EntityMap answers (§6.4.3.2) and a later request names. */
export const mapLocation = (id: string): string => `${API_PREFIX}/entityMaps/${pathSegment(id)}`;

/** A live map of an id, or undefined (an expired one is removed: §5.5.14, it cannot be used any more). */
async function liveMap(req: LdRequest, ctx: WorkerContext, id: string): Promise<EntityMapDoc | undefined> {
  const maps = mapsOf(req, ctx);
  const doc = (await maps.get(id)) as EntityMapDoc | undefined;
  if (doc === undefined) return undefined;
  if (!isExpiredMap(doc, Date.now())) return doc;
  await removeMap(req, ctx, id);
  return undefined;
}

function mapIdParam(req: LdRequest): string {
  const id = req.params[0]!;
  if (!isUri(id)) throw badRequest(`entity map id '${String(id).slice(0, 200)}' is not a URI`);
  return checkIdSize(id, 'entity map id');
}

async function mapOrNotFound(req: LdRequest, ctx: WorkerContext): Promise<EntityMapDoc> {
  const id = mapIdParam(req);
  const doc = await liveMap(req, ctx, id);
  if (doc === undefined) throw notFound(`entity map '${id}' does not exist`);
  return doc;
}

/** §5.14.1 Retrieve EntityMap. */
export const retrieveEntityMap: OpHandler = async (req, ctx) => {
  const doc = await mapOrNotFound(req, ctx);
  return { status: 200, body: renderEntityMap(doc), withContext: true };
};

/** §5.14.2 Update EntityMap: only expiresAt changes (§5.5.14: other components may only extend the expiry). */
export const updateEntityMap: OpHandler = async (req, ctx) => {
  const doc = await mapOrNotFound(req, ctx);
  const now = Date.now();
  const expiresAt = updatedExpiry(req.jsonObject(), doc.id, now);
  if (expiresAt !== undefined) {
    doc.expiresAt = expiresAt;
    doc.modifiedAt = new Date(now).toISOString();
    const maps = mapsOf(req, ctx);
    // Deleted meanwhile: not made again.
    if ((await maps.get(doc.id)) === undefined) throw notFound(`entity map '${doc.id}' does not exist`);
    await maps.put(doc.id, doc as unknown as Record<string, unknown>);
    await indexOf(req, ctx).put(doc.id, { expiresAt });
  }
  return { status: 204 };
};

/** §5.14.3 Delete EntityMap. */
export const deleteEntityMap: OpHandler = async (req, ctx) => {
  const doc = await mapOrNotFound(req, ctx);
  if (!(await removeMap(req, ctx, doc.id))) throw notFound(`entity map '${doc.id}' does not exist`);
  return { status: 204 };
};

/** What a query does with EntityMaps: nothing, make one, or serve its page from one. */
export interface MapUse {
  wanted: boolean;
  doc?: EntityMapDoc;
}

const NO_MAP: MapUse = { wanted: false };

/**
 * §5.7.2.4: the map a Query Entities request names in NGSILD-EntityMap, when it is live; `wanted` when the request
 * names one or says entityMap=true (an unknown or expired map is made anew, §5.5.14). A header that names no URI is
 * the request's 400.
 */
export async function mapUseOf(req: LdRequest, ctx: WorkerContext): Promise<MapUse> {
  const flag = boolParam(req, 'entityMap');
  const lifetime = req.query.get('entityMapLifetime');
  if (lifetime !== undefined) mapExpiry(lifetime, Date.now());
  const header = req.header('ngsild-entitymap');
  if (header === undefined) return flag ? { wanted: true } : NO_MAP;
  const id = mapIdOfHeader(header, API_PREFIX);
  if (id === undefined) throw badRequest('NGSILD-EntityMap: names no EntityMap (a URI, or the resource URI the broker answered)');
  return { wanted: true, doc: await liveMap(req, ctx, id) };
}

/** A page and whether entities follow it, with the sources' warnings. */
export interface MapPage {
  page: EntityPage;
  more: boolean;
  warnings: string[];
  mapId: string;
}

/** A new map and the entities it was made of, in its order. */
export interface NewMap {
  doc: EntityMapDoc;
  entities: StoredEntity[];
  warnings: string[];
}

/**
 * A new map of every entity the query matches (at most MAX_MAP_ENTITIES, else 403 TooManyResults), in the query's
 * order (§5.14.4.4, §5.7.2.4), stored for its lifetime (entityMapLifetime, else the default).
 */
export async function makeMap(req: LdRequest, ctx: WorkerContext, sel: Selection, query: EntityQuery): Promise<NewMap> {
  const origins = new Map<string, string[]>();
  const all: EntityQuery = { ...query, offset: 0, limit: MAX_MAP_ENTITIES + 1 };
  const distributed = await queryWithSources(req, ctx, sel, all, { origins });
  const found = distributed?.value ?? (await ctx.store.queryEntities(req.tenant, all));
  if (found.sortCap !== undefined)
    throw new LdError('TooManyResults', `orderBy sorts at most ${found.sortCap} matching entities: narrow the query`);
  if (found.entities.length > MAX_MAP_ENTITIES)
    throw new LdError('TooManyResults', `an EntityMap holds at most ${MAX_MAP_ENTITIES} entities: narrow the query`);
  const now = Date.now();
  const at = new Date(now).toISOString();
  const doc: EntityMapDoc = {
    id: `urn:ngsi-ld:EntityMap:${randomUUID()}`,
    expiresAt: mapExpiry(req.query.get('entityMapLifetime'), now),
    entries: found.entities.map((e) => [e.id, origins.get(e.id) ?? [LOCAL_ORIGIN]]),
    createdAt: at,
    modifiedAt: at,
  };
  await makeRoom(req, ctx, now);
  await indexOf(req, ctx).put(doc.id, { expiresAt: doc.expiresAt });
  await mapsOf(req, ctx).insert(doc.id, doc as unknown as Record<string, unknown>);
  return { doc, entities: found.entities, warnings: distributed?.warnings ?? [] };
}

/** A new map of the query's matches and the page of it the request asks for (`limit` entities from `offset`). */
export async function pageWithNewMap(
  req: LdRequest,
  ctx: WorkerContext,
  sel: Selection,
  query: EntityQuery,
  limit: number,
  offset: number,
): Promise<MapPage> {
  const made = await makeMap(req, ctx, sel, query);
  const page: EntityPage = { entities: made.entities.slice(offset, offset + limit) };
  if (query.count) page.count = made.entities.length;
  return { page, more: made.entities.length > offset + limit, warnings: made.warnings, mapId: made.doc.id };
}

/**
 * §5.5.9.3: the page of a map from `offset`: its entities asked where the map says they are (the store, the sources
 * of their registrations), the query's filters checked again. Entities that no longer match, or are gone, leave the
 * map and the page is filled from the next ones; an entity whose source gave no answer stays in the map (the map
 * says nothing new of it) but is not on the page.
 */
export async function pageFromMap(
  req: LdRequest,
  ctx: WorkerContext,
  sel: Selection,
  query: EntityQuery,
  doc: EntityMapDoc,
  limit: number,
  offset: number,
): Promise<MapPage> {
  const entries = doc.entries;
  const removed = new Set<string>();
  const entities: StoredEntity[] = [];
  const warnings: string[] = [];
  let pos = offset;
  while (entities.length < limit && pos < entries.length) {
    const chunk = entries.slice(pos, pos + (limit - entities.length));
    pos += chunk.length;
    const failed = new Set<string>();
    const found = await entitiesOfChunk(req, ctx, sel, query, chunk, failed, warnings);
    for (const [id, origins] of chunk) {
      const e = found.get(id);
      if (e !== undefined) entities.push(e);
      else if (!origins.some((o) => failed.has(o))) removed.add(id);
    }
  }
  if (removed.size > 0) {
    doc.entries = entries.filter(([id]) => !removed.has(id));
    doc.modifiedAt = new Date().toISOString();
    const maps = mapsOf(req, ctx);
    if ((await maps.get(doc.id)) !== undefined) await maps.put(doc.id, doc as unknown as Record<string, unknown>);
  }
  const page: EntityPage = { entities };
  if (query.count) page.count = doc.entries.length;
  return { page, more: pos < entries.length, warnings, mapId: doc.id };
}

/** The entities of some map entries that still match the query, by id. */
async function entitiesOfChunk(
  req: LdRequest,
  ctx: WorkerContext,
  sel: Selection,
  query: EntityQuery,
  chunk: ReadonlyArray<[string, string[]]>,
  failed: Set<string>,
  warnings: string[],
): Promise<Map<string, StoredEntity>> {
  const localIds = chunk.filter(([, o]) => o.includes(LOCAL_ORIGIN)).map(([id]) => id);
  const local = pinIds(query, localIds);
  const asked: EntityQuery = { ...(local ?? query), offset: 0, limit: chunk.length, count: false, orderBy: undefined };
  const pinned = new Map<string, readonly string[]>(chunk);
  const distributed = await queryWithSources(req, ctx, sel, asked, { pinned, skipLocal: local === undefined, failed });
  let list: StoredEntity[];
  if (distributed !== undefined) {
    list = distributed.value.entities;
    warnings.push(...distributed.warnings);
  } else list = local === undefined ? [] : (await ctx.store.queryEntities(req.tenant, asked)).entities;
  const out = new Map<string, StoredEntity>();
  for (const e of list) if (pinned.has(e.id)) out.set(e.id, e);
  return out;
}

/** The store query restricted to some ids (each selector's ids met with them); undefined when it selects none. */
function pinIds(query: EntityQuery, ids: readonly string[]): EntityQuery | undefined {
  if (ids.length === 0) return undefined;
  const meet = (own: readonly string[] | undefined): string[] => (own === undefined ? [...ids] : own.filter((id) => ids.includes(id)));
  if (query.entities !== undefined) {
    const entities = query.entities.map((s) => ({ ...s, ids: meet(s.ids) })).filter((s) => s.ids.length > 0);
    return entities.length === 0 ? undefined : { ...query, entities };
  }
  const pinned = meet(query.ids);
  return pinned.length === 0 ? undefined : { ...query, ids: pinned };
}
