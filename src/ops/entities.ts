// Entity operations on one entity (CIM 009 v1.8 §5.6, §6.4 to §6.7): create, retrieve, delete, replace, merge,
// and the attribute routes. Every write is one store mutation: validation first, then one transaction.
import { LdError, badRequest, notFound } from '../ngsild/problem.js';
import type { StoredEntity } from '../ngsild/entity/model.js';
import { expandEntity, expandAttributes, expandAttributeFragment, expandFragment } from '../ngsild/entity/expand.js';
import {
  appendAttributes,
  updateAttributes,
  partialAttributeUpdate,
  deleteAttribute,
  deleteScope,
  replaceEntity,
  replaceAttribute,
  mergeEntity,
} from '../ngsild/entity/merge.js';

/** The core @context's IRI of `scope` (CIM 009 §4.18). */
const SCOPE_IRI = 'https://uri.etsi.org/ngsi-ld/scope';
import { renderEntity, rendersAnything } from '../ngsild/entity/render.js';
import { renderGeoJson, featureCollection } from '../ngsild/entity/geojson.js';
import type { LdRequest } from '../pipeline/ld-request.js';
import type { WorkerContext } from '../pipeline/worker-context.js';
import type { Mutation, MutateOptions } from '../store/contract.js';
import type { OpHandler, OpResult } from '../pipeline/handler.js';
import { renderOptions, type RenderOptions } from './render-options.js';
import { checkEntity, readableEntity } from './entity-auth.js';
import { GEO_JSON } from '../pipeline/media.js';
import { API_PREFIX } from '../ngsild/operations.js';
import { pathSegment } from '../ngsild/uri-encode.js';
import { isUri } from '../ngsild/entity/syntax.js';
import { checkIdSize, checkNameSize } from '../ngsild/entity/limits.js';
import { writeEntity } from './changes.js';
import { changeOf } from '../ngsild/entity/write-change.js';
import { retrieveWithSources } from './forward/retrieve.js';
import { joinOptions, flatLinked, renderInline, joinedFeatures } from './linked.js';
import { parseTypeExpression, compileTypeExpression } from '../ngsild/query/type-expression.js';
import { boolParam } from './types.js';
import { RetrieveCache } from './retrieve-cache.js';
import { bodyBytes } from '../pipeline/body-bytes.js';
import { liveRegistrations, localOnly } from './forward/sources.js';
import { nowIso } from './now-iso.js';

export function entityIdParam(req: LdRequest): string {
  const id = req.params[0]!;
  if (!isUri(id)) throw badRequest(`entity id '${String(id).slice(0, 200)}' is not a URI`);
  return checkIdSize(id, 'entity id');
}

function attrParam(req: LdRequest): string {
  const name = req.params[1]!;
  if (name === '' || /[<>"'=;()\s]/.test(name)) throw badRequest(`attribute name '${name.slice(0, 200)}' is not valid`);
  return checkNameSize(req.context.expandTerm(name), 'attribute name');
}

function withoutContext(body: Record<string, unknown>): Record<string, unknown> {
  if (!('@context' in body)) return body;
  const { ['@context']: _ignored, ...rest } = body;
  return rest;
}

/** 207 body of a partial attribute write: UpdateResult (CIM 009 §5.2.18) with compact names. */
function updateResult(req: LdRequest, updated: readonly string[], notUpdated: readonly { attrName: string; reason: string }[]): OpResult {
  if (notUpdated.length === 0) return { status: 204 };
  return {
    status: 207,
    body: {
      updated: updated.map((a) => req.context.compactIri(a)),
      notUpdated: notUpdated.map((n) => ({ attributeName: req.context.compactIri(n.attrName), reason: n.reason })),
    },
  };
}

const missing = (id: string): LdError => notFound(`entity '${id}' does not exist`);

/**
 * `type` on GET and DELETE /entities/{id} (the API lists it there, "to avoid ambiguity"; Orion-LD accepts it, and
 * clients such as FiLiP send it): the entity must have one of the types asked for, else it is not found. Undefined
 * without the parameter.
 */
function typeParamTest(req: LdRequest): ((types: readonly string[]) => boolean) | undefined {
  const text = req.query.get('type');
  if (text === undefined) return undefined;
  return compileTypeExpression(parseTypeExpression(text), req.context.expandTerm.bind(req.context)).matches;
}

const missingOfType = (id: string, req: LdRequest): LdError =>
  notFound(`entity '${id}' of type '${String(req.query.get('type')).slice(0, 200)}' does not exist`);

export const createEntity: OpHandler = async (req, ctx) => {
  const entity = expandEntity(withoutContext(req.jsonObject()), req.context, { now: nowIso() });
  // Without an auth plugin: neither the list of attributes nor a turn of the event loop for nothing (issue 24).
  if (ctx.auth !== undefined)
    await checkEntity(req, ctx, { id: entity.id, types: entity.type, storedTypes: false, attrsWritten: attrNames(entity), read: false });
  await mutate(
    req,
    ctx,
    entity.id,
    (current) => {
      if (current !== undefined) throw new LdError('AlreadyExists', `entity '${entity.id}' already exists`);
      return { next: entity, result: undefined };
    },
    { createTenant: true, expectAbsent: true },
  );
  return { status: 201, headers: ['Location', `${API_PREFIX}/entities/${pathSegment(entity.id)}`] };
};

/** This thread's rendered retrieves (retrieve-cache.ts). */
const retrieveCache = new RetrieveCache();

export const retrieveEntity: OpHandler = async (req, ctx) => {
  const id = entityIdParam(req);
  // Whatever the query, the same query string succeeded before on these bytes: its checks below would pass again.
  // Not with an auth plugin (what it lets through may change) nor while a source may hold part of the entity.
  const cacheKey = ctx.auth === undefined ? retrieveCache.keyOf(req, id) : undefined;
  let storedBytes = cacheKey === undefined ? undefined : ctx.store.entityBytes?.(req.tenant, id);
  if (storedBytes !== undefined) {
    const answer = retrieveCache.get(cacheKey!, storedBytes);
    if (answer !== undefined && (localOnly(req) || (await liveRegistrations(req, ctx)).length === 0))
      return { status: 200, encoded: answer, withContext: true, geoJson: req.media === GEO_JSON };
    // LMDB's buffer is its next read's too: the entry keeps its own copy.
    storedBytes = new Uint8Array(storedBytes);
  }
  const opts = renderOptions(req);
  const join = joinOptions(req);
  const ofType = typeParamTest(req);
  // Taken (the catalog lists it) but a retrieve of one entity makes no map: only its value is checked.
  boolParam(req, 'entityMap');
  const local = await ctx.store.getEntity(req.tenant, id);
  // seed 000 §5.2: the local entity is decided on before anything is forwarded about it.
  if (local !== undefined && ctx.auth !== undefined) await readableEntity(req, ctx, local);
  // CIM 009 v1.8.1 §5.7.1.4: the parts registered context sources hold are merged in (ops/forward/retrieve.ts).
  const distributed = await retrieveWithSources(req, ctx, id, local, opts.attrs);
  const stored = distributed.value;
  // Not found here nor by any source that answered: the warnings say which sources did not (§6.3.17).
  if (stored === undefined && distributed.warnings.length > 0) return warnedProblem(missing(id), distributed.warnings);
  if (stored === undefined) throw missing(id);
  if (ofType !== undefined && !ofType(stored.type)) throw missingOfType(id, req);
  const entity = await readableEntity(req, ctx, stored);
  noneMatched(entity, req, opts);
  const result = await renderRetrieved(req, ctx, entity, opts, join);
  for (const w of distributed.warnings) (result.headers ??= []).push('NGSILD-Warning', w);
  // Only an answer of the local entity alone (no source merged in, no warning) rendered without a join (which reads
  // other entities) is kept; it stays valid exactly as long as the stored bytes it came from.
  if (
    storedBytes !== undefined &&
    local !== undefined &&
    distributed.value === local &&
    result.headers === undefined &&
    join === undefined
  ) {
    result.encoded = bodyBytes(req, result.body, result.withContext, result.geoJson);
    retrieveCache.set(cacheKey!, storedBytes, result.encoded);
  }
  return result;
};

function warnedProblem(e: LdError, warnings: readonly string[]): OpResult {
  const headers: string[] = [];
  for (const w of warnings) headers.push('NGSILD-Warning', w);
  return { status: e.status, body: e.toProblem(), headers };
}

async function renderRetrieved(
  req: LdRequest,
  ctx: WorkerContext,
  entity: StoredEntity,
  opts: RenderOptions,
  join: ReturnType<typeof joinOptions>,
): Promise<OpResult> {
  if (req.media === GEO_JSON) {
    const geometryProperty = req.query.get('geometryProperty');
    if (join === undefined)
      return { status: 200, body: renderGeoJson(entity, req.context, { ...opts, geometryProperty }), withContext: true, geoJson: true };
    // CIM 009 §4.5.23, §6.3.15: join=flat answers several entities, so a FeatureCollection; inline one Feature.
    const features = await joinedFeatures(req, ctx, [entity], join, { ...opts, geometryProperty });
    return { status: 200, body: join.mode === 'flat' ? featureCollection(features) : features[0], withContext: true, geoJson: true };
  }
  // CIM 009 v1.8 §4.5.23: join=flat answers the entity and the entities it links to as an array.
  if (join?.mode === 'flat')
    return {
      status: 200,
      body: [renderEntity(entity, req.context, opts), ...(await flatLinked(req, ctx, [entity], join, opts))],
      withContext: true,
    };
  if (join?.mode === 'inline') return { status: 200, body: await renderInline(req, ctx, entity, join, opts), withContext: true };
  return { status: 200, body: renderEntity(entity, req.context, opts), withContext: true };
}

/**
 * A retrieval that selects nothing of the entity is not found (ResourceNotFound): attrs naming none of its
 * attributes (a rule of ETSI ISG CIM, CIM 009 §6.5.3.1 "attributes to be matched"), or pick and omit leaving no
 * member (v1.8.1 §4.21).
 */
function noneMatched(entity: StoredEntity, req: LdRequest, opts: RenderOptions): void {
  const id = entity.id;
  if (opts.attrs !== undefined) {
    let any = false;
    for (const attrIri of opts.attrs)
      if (entity[attrIri] !== undefined) {
        any = true;
        break;
      }
    if (!any) throw notFound(`entity '${id}' has none of the attributes in attrs`);
  }
  if ((opts.pick !== undefined || opts.omit !== undefined) && !rendersAnything(entity, req.context, opts))
    throw notFound(`pick and omit leave no member of entity '${id}'`);
}

export const deleteEntity: OpHandler = async (req, ctx) => {
  const id = entityIdParam(req);
  const ofType = typeParamTest(req);
  await askStored(req, ctx, id);
  await mutate(req, ctx, id, (current) => {
    if (current === undefined) throw missing(id);
    if (ofType !== undefined && !ofType(current.type)) throw missingOfType(id, req);
    return { next: null, result: undefined };
  });
  return { status: 204 };
};

export const replaceEntityOp: OpHandler = async (req, ctx) => {
  const id = entityIdParam(req);
  const body = withoutContext(req.jsonObject());
  if (body.id !== undefined && body.id !== id) throw badRequest(`the body's id '${String(body.id)}' differs from the path's '${id}'`);
  const next = expandEntity({ ...body, id }, req.context, { now: nowIso() });
  await askStored(req, ctx, id, attrNames(next), next.type);
  await mutate(req, ctx, id, (current) => {
    if (current === undefined) throw missing(id);
    const r = replaceEntity(current, next, next.modifiedAt);
    return { next: r.entity, result: undefined, change: changeOf('replace', r) };
  });
  return { status: 204 };
};

export const mergeEntityOp: OpHandler = async (req, ctx) => {
  const id = entityIdParam(req);
  const body = withoutContext(req.jsonObject());
  if (body.id !== undefined && body.id !== id) throw badRequest(`the body's id '${String(body.id)}' differs from the path's '${id}'`);
  const { id: _id, ...patch } = body;
  const now = nowIso();
  const fragment = expandEntity({ ...patch, id }, req.context, { now, allowNull: true });
  const types = fragment.type.length === 0 ? undefined : fragment.type;
  await askStored(req, ctx, id, attrNames(fragment), types);
  await mutate(req, ctx, id, (current) => {
    if (current === undefined) throw missing(id);
    const r = mergeEntity(current, fragment, now);
    return { next: r.entity, result: undefined, change: changeOf('merge', r) };
  });
  return { status: 204 };
};

export const appendAttrs: OpHandler = async (req, ctx) => {
  const noOverwrite = req.query.options(['noOverwrite']).has('noOverwrite');
  const id = entityIdParam(req);
  const now = nowIso();
  const fragment = expandFragment(withoutContext(req.jsonObject()), req.context, { now });
  if (fragment.id !== undefined && fragment.id !== id) throw badRequest(`the body's id '${fragment.id}' differs from the path's '${id}'`);
  const attrs = fragment.attrs;
  // seed 000 §5.8: a write on .../attrs is decided on the stored types, whatever `type` its body gives
  await askStored(req, ctx, id, Object.keys(attrs));
  const outcome = await mutate(req, ctx, id, (current) => {
    if (current === undefined) throw missing(id);
    const r = appendAttributes(current, attrs, { noOverwrite, now, types: fragment.types, scope: fragment.scope });
    return { next: r.updated.length > 0 ? r.entity : undefined, result: r, change: changeOf('append', r) };
  });
  return updateResult(req, outcome.updated, outcome.notUpdated);
};

export const updateAttrs: OpHandler = async (req, ctx) => {
  const id = entityIdParam(req);
  const now = nowIso();
  // CIM 009 v1.8 §5.6.2 with §4.16 and §4.18: the fragment's `type` adds types, its `scope` updates the scope.
  const fragment = expandFragment(withoutContext(req.jsonObject()), req.context, { now });
  if (fragment.id !== undefined && fragment.id !== id) throw badRequest(`the body's id '${fragment.id}' differs from the path's '${id}'`);
  const attrs = fragment.attrs;
  // seed 000 §5.8: a write on .../attrs is decided on the stored types, whatever `type` its body gives
  await askStored(req, ctx, id, Object.keys(attrs));
  const outcome = await mutate(req, ctx, id, (current) => {
    if (current === undefined) throw missing(id);
    const r = updateAttributes(current, attrs, { now, types: fragment.types, scope: fragment.scope });
    return { next: r.updated.length > 0 ? r.entity : undefined, result: r, change: changeOf('update', r) };
  });
  return updateResult(req, outcome.updated, outcome.notUpdated);
};

export const partialAttrUpdate: OpHandler = async (req, ctx) => {
  const id = entityIdParam(req);
  const attrIri = attrParam(req);
  const now = nowIso();
  const fragment = expandAttributeFragment(withoutContext(req.jsonObject()), req.context, { now, attrIri });
  await askStored(req, ctx, id, [attrIri]);
  await mutate(req, ctx, id, (current) => {
    if (current === undefined) throw missing(id);
    const r = partialAttributeUpdate(current, attrIri, fragment, { datasetId: fragment.datasetId as string | undefined, now });
    if (!r.found)
      throw notFound(
        `entity '${id}' has no attribute '${req.params[1]}'${fragment.datasetId ? ` with datasetId '${String(fragment.datasetId)}'` : ''}`,
      );
    return { next: r.entity, result: undefined, change: changeOf('update', r) };
  });
  return { status: 204 };
};

/** `datasetId` and `deleteAll` of an attribute delete (CIM 009 §6.7.3.2, and the temporal one §6.22.3.2). */
export function deleteAttrParams(req: LdRequest): { datasetId: string | undefined; deleteAll: boolean } {
  const datasetId = req.query.get('datasetId');
  const deleteAllText = req.query.get('deleteAll');
  if (deleteAllText !== undefined && deleteAllText !== 'true' && deleteAllText !== 'false')
    throw badRequest(`deleteAll: '${deleteAllText}' is not true or false`);
  if (datasetId !== undefined && !isUri(datasetId)) throw badRequest(`datasetId '${datasetId}' is not a URI`);
  return { datasetId, deleteAll: deleteAllText === 'true' };
}

export const deleteAttr: OpHandler = async (req, ctx) => {
  const id = entityIdParam(req);
  const attrIri = attrParam(req);
  const { datasetId, deleteAll } = deleteAttrParams(req);
  await askStored(req, ctx, id, [attrIri]);
  // §4.18: the scope is deleted through the attribute route, by its name.
  const isScope = attrIri === SCOPE_IRI || req.params[1] === 'scope';
  await mutate(req, ctx, id, (current) => {
    if (current === undefined) throw missing(id);
    const r = isScope ? deleteScope(current, nowIso()) : deleteAttribute(current, attrIri, { datasetId, deleteAll, now: nowIso() });
    if (!r.found) throw notFound(`entity '${id}' has no attribute '${req.params[1]}'${datasetId ? ` with datasetId '${datasetId}'` : ''}`);
    return { next: r.entity, result: undefined, change: changeOf('update', r) };
  });
  return { status: 204 };
};

export const replaceAttr: OpHandler = async (req, ctx) => {
  const id = entityIdParam(req);
  const attrIri = attrParam(req);
  const now = nowIso();
  const body = withoutContext(req.jsonObject());
  const attrs = expandAttributes({ [req.params[1]!]: body }, req.context, { now });
  const instances = attrs[attrIri];
  if (instances === undefined) throw badRequest('the body is not an attribute');
  await askStored(req, ctx, id, [attrIri]);
  await mutate(req, ctx, id, (current) => {
    if (current === undefined) throw missing(id);
    const r = replaceAttribute(current, attrIri, instances, now);
    if (!r.found) throw notFound(`entity '${id}' has no attribute '${req.params[1]}'`);
    return { next: r.entity, result: undefined, change: changeOf('update', r) };
  });
  return { status: 204 };
};

/** seed 000 §5.2: a write on an existing entity is asked about the stored types, and about the types it adds. */
async function askStored(req: LdRequest, ctx: WorkerContext, id: string, attrsWritten?: string[], newTypes?: string[]): Promise<void> {
  if (ctx.auth === undefined) return;
  const stored = await ctx.store.getEntityTypes(req.tenant, id);
  if (stored === undefined) throw missing(id);
  await checkEntity(req, ctx, { id, types: stored, storedTypes: true, attrsWritten, read: false });
  const added = newTypes?.filter((t) => !stored.includes(t));
  if (added !== undefined && added.length > 0)
    await checkEntity(req, ctx, { id, types: added, storedTypes: false, attrsWritten, read: false });
}

export function attrNames(entity: StoredEntity): string[] {
  const names: string[] = [];
  for (const key in entity) if (key.includes(':') && key !== 'id') names.push(key);
  return names;
}

/**
 * One entity write through the store, its event published once committed. A create or a delete gives no change: it
 * is the whole entity's, which the store derives (write-change.ts creationOf, deletionOf) only when something listens.
 */
function mutate<R>(req: LdRequest, ctx: WorkerContext, id: string, mutation: Mutation<R>, opts?: MutateOptions): Promise<R> {
  return writeEntity(ctx, req.tenant, id, mutation, opts);
}
