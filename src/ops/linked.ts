// Linked entity retrieval (CIM 009 v1.8 §4.5.23): with `join=flat` the entities that Relationships of the answer
// point to are added to the answer as top-level entities; with `join=inline` each Relationship carries its target
// under `entity`. `joinLevel` bounds the hops (default 1); `containedBy` lists ids already in the chain, which are
// never joined again, and the broker adds every id it visits, so cycles end.
import { badRequest, RefusalError } from '../ngsild/problem.js';
import type { AttrInstance, StoredEntity } from '../ngsild/entity/model.js';
import { ENTITY_CORE_MEMBERS } from '../ngsild/entity/model.js';
import { renderEntity } from '../ngsild/entity/render.js';
import { featureOf, renderGeoJson, type GeoJsonFeature } from '../ngsild/entity/geojson.js';
import { isUri } from '../ngsild/entity/syntax.js';
import type { LdRequest } from '../pipeline/ld-request.js';
import type { WorkerContext } from '../pipeline/worker-context.js';
import { linkedRenderOptions, type RenderOptions } from './render-options.js';
import { readableEntity } from './entity-auth.js';

/** Deepest joinLevel accepted: each level can multiply the entities read. */
export const MAX_JOIN_LEVEL = 5;
/** Most linked entities one answer joins; beyond it the rest are left as plain references. */
export const MAX_JOINED = 1000;

export interface JoinOptions {
  mode: 'flat' | 'inline';
  level: number;
  containedBy: ReadonlySet<string>;
}

/** The join parameters of a request, or undefined when it asks for no join (absent or `@none`). */
export function joinOptions(req: LdRequest, body?: Record<string, unknown>): JoinOptions | undefined {
  const q = req.query;
  const join = q.get('join') ?? stringMember(body, 'join');
  const levelText = q.get('joinLevel') ?? numberText(body, 'joinLevel');
  const containedText = q.get('containedBy') ?? listText(body, 'containedBy');
  if (join === undefined || join === '@none') {
    if (levelText !== undefined) throw badRequest('joinLevel: only with join=flat or join=inline');
    return undefined;
  }
  if (join !== 'flat' && join !== 'inline') throw badRequest(`join: '${String(join).slice(0, 80)}' is not one of flat, inline, @none`);
  let level = 1;
  if (levelText !== undefined) {
    if (!/^\d{1,3}$/.test(levelText) || Number(levelText) < 1) throw badRequest(`joinLevel: '${levelText.slice(0, 80)}' is not a positive integer`);
    level = Number(levelText);
    if (level > MAX_JOIN_LEVEL) throw badRequest(`joinLevel: ${level} is above the maximum ${MAX_JOIN_LEVEL}`);
  }
  const containedBy = new Set<string>();
  if (containedText !== undefined) {
    for (const id of containedText.split(',').map((s) => s.trim())) {
      if (!isUri(id)) throw badRequest(`containedBy: '${String(id).slice(0, 200)}' is not a URI`);
      containedBy.add(id);
    }
  }
  return { mode: join, level, containedBy };
}

function stringMember(body: Record<string, unknown> | undefined, name: string): string | undefined {
  const v = body?.[name];
  if (v === undefined) return undefined;
  if (typeof v !== 'string') throw badRequest(`${name}: must be a string`);
  return v;
}

function numberText(body: Record<string, unknown> | undefined, name: string): string | undefined {
  const v = body?.[name];
  if (v === undefined) return undefined;
  if (typeof v !== 'number') throw badRequest(`${name}: must be a number`);
  return String(v);
}

function listText(body: Record<string, unknown> | undefined, name: string): string | undefined {
  const v = body?.[name];
  if (v === undefined) return undefined;
  if (!Array.isArray(v) || v.some((x) => typeof x !== 'string')) throw badRequest(`${name}: must be an array of URIs`);
  return (v as string[]).join(',');
}

/**
 * The ids a stored entity's Relationships and ListRelationships point to, per attribute IRI, in order: every
 * instance of a multi-attribute (§4.5.5, one per datasetId) and every element of an objectList. Only the
 * attributes the entity's answer shows (attrs, pick, omit of `opts`) are followed, and with `byDataset` only the
 * instances of its datasetIds (a primary's; a linked entity's instances are followed whole).
 */
function relationshipTargets(entity: StoredEntity, opts: RenderOptions, compact: (iri: string) => string, byDataset: boolean): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const key in entity) {
    if (ENTITY_CORE_MEMBERS.has(key)) continue;
    const instances = entity[key];
    if (!Array.isArray(instances)) continue;
    if (!attributeShown(key, opts, compact)) continue;
    for (const inst of instances as AttrInstance[]) {
      if (byDataset && opts.datasetId !== undefined && !opts.datasetId.has(inst.datasetId ?? '@none')) continue;
      let objects: unknown[];
      if (inst.type === 'Relationship') objects = Array.isArray(inst.object) ? inst.object : inst.object === undefined ? [] : [inst.object];
      else if (inst.type === 'ListRelationship') objects = (inst.objectList ?? []).map(listObject);
      else continue;
      const list = out.get(key) ?? [];
      for (const o of objects) if (typeof o === 'string') list.push(o);
      out.set(key, list);
    }
  }
  return out;
}

function attributeShown(attrIri: string, opts: RenderOptions, compact: (iri: string) => string): boolean {
  const { attrs, pick, omit } = opts;
  if (attrs !== undefined && !attrs.has(attrIri)) return false;
  if (pick === undefined && omit === undefined) return true;
  const name = compact(attrIri);
  return (pick === undefined || pick.has(name)) && (omit === undefined || !omit.has(name));
}

/** An objectList element as stored ({object}) or as rendered in keyValues (the id itself). */
function listObject(el: unknown): unknown {
  return typeof el === 'object' && el !== null ? (el as { object?: unknown }).object : el;
}

/** Reads linked entities once each per answer; refused or missing ones stay unjoined. */
class LinkedReader {
  private readonly seen = new Map<string, StoredEntity | null>();
  joined = 0;
  constructor(private readonly req: LdRequest, private readonly ctx: WorkerContext) {}

  async get(id: string): Promise<StoredEntity | undefined> {
    const hit = this.seen.get(id);
    if (hit !== undefined) return hit ?? undefined;
    if (this.joined >= MAX_JOINED) return undefined;
    this.joined++;
    let entity: StoredEntity | null = (await this.ctx.store.getEntity(this.req.tenant, id)) ?? null;
    if (entity !== null) {
      try {
        entity = await readableEntity(this.req, this.ctx, entity);
      } catch (e) {
        if (!(e instanceof RefusalError)) throw e;
        entity = null;
      }
    }
    this.seen.set(id, entity);
    return entity ?? undefined;
  }
}

/**
 * join=flat: the entities linked from `primaries`, up to `level` hops, each once, none of the primaries or of
 * containedBy, each rendered with the projection of the Relationship it was reached through (CIM 009 v1.8.1 §4.21
 * `rel{...}`; none when the Relationship has no braces): the primaries' own projections select their attributes.
 */
export async function flatLinked(req: LdRequest, ctx: WorkerContext, primaries: readonly StoredEntity[], join: JoinOptions, opts: RenderOptions): Promise<Record<string, unknown>[]> {
  return (await linkedEntities(req, ctx, primaries, join, opts)).map(({ entity, opts: linkedOpts }) => renderEntity(entity, req.context, linkedOpts));
}

interface Reached {
  entity: StoredEntity;
  opts: RenderOptions;
}

/** The entities join=flat adds, in the order they are met (breadth first), with the options each is rendered with. */
async function linkedEntities(req: LdRequest, ctx: WorkerContext, primaries: readonly StoredEntity[], join: JoinOptions, opts: RenderOptions): Promise<Reached[]> {
  const reader = new LinkedReader(req, ctx);
  const compact = (iri: string): string => req.context.compactIri(iri);
  const included = new Set<string>([...join.containedBy, ...primaries.map((e) => e.id)]);
  const out: Reached[] = [];
  let frontier: readonly Reached[] = primaries.map((entity) => ({ entity, opts }));
  for (let hop = 0; hop < join.level && frontier.length > 0; hop++) {
    const next: Reached[] = [];
    for (const from of frontier) {
      for (const [attrIri, ids] of relationshipTargets(from.entity, from.opts, compact, hop === 0)) {
        let linkedOpts: RenderOptions | undefined;
        for (const id of ids) {
          if (included.has(id)) continue;
          included.add(id);
          const linked = await reader.get(id);
          if (linked === undefined) continue;
          linkedOpts ??= linkedRenderOptions(from.opts, compact(attrIri));
          const reached = { entity: linked, opts: linkedOpts };
          out.push(reached);
          next.push(reached);
        }
      }
    }
    frontier = next;
  }
  return out;
}

/**
 * The Features of a GeoJSON answer with a join (§4.5.23 with §6.3.15): with join=flat, the linked entities are
 * Features of the same FeatureCollection after the primaries; with join=inline, each primary's properties carry its
 * linked entities inline (as NGSI-LD entities, not Features: they are values of the Relationship).
 */
export async function joinedFeatures(req: LdRequest, ctx: WorkerContext, primaries: readonly StoredEntity[], join: JoinOptions, opts: RenderOptions & { geometryProperty?: string }): Promise<GeoJsonFeature[]> {
  const features: GeoJsonFeature[] = [];
  if (join.mode === 'flat') {
    for (const e of primaries) features.push(renderGeoJson(e, req.context, opts));
    for (const { entity, opts: linkedOpts } of await linkedEntities(req, ctx, primaries, join, opts))
      features.push(renderGeoJson(entity, req.context, { ...linkedOpts, geometryProperty: opts.geometryProperty }));
    return features;
  }
  for (const e of primaries) {
    const properties = await renderInline(req, ctx, e, join, opts);
    delete properties.id;
    features.push(featureOf(e, req.context, opts, properties));
  }
  return features;
}

/** join=inline: renders `entity` with each Relationship's target under its `entity` member, `level` hops deep. */
export async function renderInline(req: LdRequest, ctx: WorkerContext, entity: StoredEntity, join: JoinOptions, opts: RenderOptions): Promise<Record<string, unknown>> {
  const reader = new LinkedReader(req, ctx);
  return inline(req, reader, entity, opts, join.level, new Set([...join.containedBy, entity.id]));
}

async function inline(req: LdRequest, reader: LinkedReader, entity: StoredEntity, opts: RenderOptions, level: number, chain: ReadonlySet<string>): Promise<Record<string, unknown>> {
  const out = renderEntity(entity, req.context, opts);
  if (level <= 0) return out;
  const compact = (iri: string): string => req.context.compactIri(iri);
  for (const [attrIri, ids] of relationshipTargets(entity, opts, compact, false)) {
    const name = compact(attrIri);
    const rendered = out[name];
    if (rendered === undefined) continue;
    // CIM 009 v1.8.1 §4.21: `rel{...}` in pick or omit projects the entities `rel` links to; none without braces.
    const linkedOpts = linkedRenderOptions(opts, name);
    const targets = new Map<string, Record<string, unknown>>();
    for (const id of ids) {
      if (chain.has(id) || targets.has(id)) continue;
      const linked = await reader.get(id);
      if (linked === undefined) continue;
      targets.set(id, await inline(req, reader, linked, linkedOpts, level - 1, new Set([...chain, id])));
    }
    if (targets.size === 0) continue;
    if (opts.format === 'keyValues') {
      out[name] = inlineKeyValues(rendered, targets);
      continue;
    }
    for (const inst of Array.isArray(rendered) ? rendered : [rendered]) {
      if (typeof inst !== 'object' || inst === null) continue;
      const member = inst as Record<string, unknown>;
      const obj = member.object;
      if (typeof obj === 'string' && targets.has(obj)) member.entity = targets.get(obj);
      else if (Array.isArray(obj)) {
        const list = obj.filter((o): o is string => typeof o === 'string' && targets.has(o)).map((o) => targets.get(o)!);
        if (list.length > 0) member.entity = list.length === 1 ? list[0] : list;
      }
      // §4.5.23: the entities of a ListRelationship come inline as `entityList`, in the order of its objectList.
      if (Array.isArray(member.objectList)) {
        const list = member.objectList.map(listObject).filter((o): o is string => typeof o === 'string' && targets.has(o)).map((o) => targets.get(o)!);
        if (list.length > 0) member.entityList = list;
      }
    }
  }
  return out;
}

/**
 * keyValues inline (§4.5.23): each reference is replaced by the entity it names, in a plain reference, in the
 * array of a ListRelationship or a multi-valued object, and in the `dataset` map of a multi-attribute.
 */
function inlineKeyValues(rendered: unknown, targets: ReadonlyMap<string, Record<string, unknown>>): unknown {
  if (typeof rendered === 'string') return targets.get(rendered) ?? rendered;
  if (Array.isArray(rendered)) return rendered.map((r) => (typeof r === 'string' ? targets.get(r) ?? r : r));
  if (typeof rendered === 'object' && rendered !== null) {
    const dataset = (rendered as { dataset?: unknown }).dataset;
    if (typeof dataset === 'object' && dataset !== null) {
      const out: Record<string, unknown> = {};
      for (const [datasetId, v] of Object.entries(dataset)) out[datasetId] = inlineKeyValues(v, targets);
      return { dataset: out };
    }
  }
  return rendered;
}
