// The core of linked entity retrieval (CIM 009 v1.8.1 §4.5.23), shared by the retrieval routes (ops/linked.ts) and
// notifications (§5.2.14 NotificationParams join, joinLevel): with `flat` the entities the Relationships of the
// primaries point to come after them as entities of their own; with `inline` each Relationship carries its target
// under `entity`. `joinLevel` bounds the hops; `containedBy` lists ids already in the chain, which are never joined
// again, and every id visited is added, so cycles end. No I/O here: the linked entities come from a `ReadEntities`
// the caller gives (the store as the request's auth allows it, or the notifier's store).
import type { ResolvedContext } from '../context/resolved.js';
import type { Projection } from '../query/projection.js';
import type { AttrInstance, StoredEntity } from './model.js';
import { ENTITY_CORE_MEMBERS } from './model.js';
import { renderEntity, type RenderEntityOptions } from './render.js';
import { featureOf, renderGeoJson, type GeoJsonFeature } from './geojson.js';

/** Deepest joinLevel accepted: each level can multiply the entities read. */
export const MAX_JOIN_LEVEL = 5;
/** Most linked entities one answer (or notification) reads; beyond it the rest are left as plain references. */
export const MAX_JOINED = 1000;

export interface JoinOptions {
  mode: 'flat' | 'inline';
  level: number;
  containedBy: ReadonlySet<string>;
}

/** Rendering options with the parsed projections (§4.21), whose braces project the entities a join adds. */
export interface JoinRenderOptions extends RenderEntityOptions {
  projection?: { pick?: Projection; omit?: Projection };
}

/**
 * The entities of `ids` in `tenant` that exist and may be shown, in any order; the others are left out (they stay
 * plain references). Called with each id once per JoinSource, at most MAX_JOINED ids in all.
 */
export type ReadEntities = (tenant: string, ids: readonly string[]) => Promise<readonly StoredEntity[]>;

/**
 * One answer's (or one notification's) linked entities: where they are read from, the @context they are rendered
 * with, and each one read once, MAX_JOINED at most.
 */
export class JoinSource {
  private readonly seen = new Map<string, StoredEntity | null>();
  private asked = 0;

  constructor(
    readonly tenant: string,
    private readonly read: ReadEntities,
    readonly context: ResolvedContext,
  ) {}

  /** Reads, in one call, those of `ids` not read yet, as many as MAX_JOINED still allows. */
  async load(ids: Iterable<string>): Promise<void> {
    const wanted = new Set<string>();
    for (const id of ids) {
      if (this.asked + wanted.size >= MAX_JOINED) break;
      if (!this.seen.has(id)) wanted.add(id);
    }
    if (wanted.size === 0) return;
    this.asked += wanted.size;
    for (const id of wanted) this.seen.set(id, null);
    for (const e of await this.read(this.tenant, [...wanted])) if (wanted.has(e.id)) this.seen.set(e.id, e);
  }

  /** A linked entity loaded before; undefined when missing, not shown, or beyond the bound. */
  get(id: string): StoredEntity | undefined {
    return this.seen.get(id) ?? undefined;
  }
}

/**
 * The options of the entities a Relationship `relName` of an entity rendered with `opts` links to: the braces given
 * for it in pick and omit (`rel{a,b}`), or no projection at all when it has none; attrs never applies to them (it
 * selects the primary entities' attributes).
 */
export function linkedRenderOptions<O extends JoinRenderOptions>(opts: O, relName: string): O {
  const pick = opts.projection?.pick?.linked.get(relName);
  const omit = opts.projection?.omit?.linked.get(relName);
  const out: O = { ...opts, attrs: undefined, pick: pick?.names, omit: omit?.plain, projection: undefined };
  if (pick !== undefined || omit !== undefined) out.projection = { pick, omit };
  return out;
}

/**
 * The ids a stored entity's Relationships and ListRelationships point to, per attribute IRI, in order: every
 * instance of a multi-attribute (§4.5.5, one per datasetId) and every element of an objectList. Only the
 * attributes the entity's answer shows (attrs, pick, omit of `opts`) are followed, and with `byDataset` only the
 * instances of its datasetIds (a primary's; a linked entity's instances are followed whole).
 */
function relationshipTargets(
  entity: StoredEntity,
  opts: JoinRenderOptions,
  compact: (iri: string) => string,
  byDataset: boolean,
): Map<string, string[]> {
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

function attributeShown(attrIri: string, opts: JoinRenderOptions, compact: (iri: string) => string): boolean {
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

interface Reached<O> {
  entity: StoredEntity;
  opts: O;
}

/** The Relationship an entity of one hop was first met through: whose options its linked entities take. */
interface Via<O> {
  opts: O;
  relName: string;
  linkedOpts?: O;
}

/**
 * join=flat: the entities linked from `primaries`, up to `level` hops, each once, none of the primaries or of
 * containedBy, in the order they are met (breadth first), each rendered with the projection of the Relationship it
 * was reached through (§4.21 `rel{...}`; none when the Relationship has no braces). One read per hop.
 */
export async function flatLinked<O extends JoinRenderOptions>(
  src: JoinSource,
  primaries: readonly StoredEntity[],
  join: JoinOptions,
  opts: O,
): Promise<Record<string, unknown>[]> {
  return (await linkedEntities(src, primaries, join, opts)).map(({ entity, opts: linkedOpts }) =>
    renderEntity(entity, src.context, linkedOpts),
  );
}

async function linkedEntities<O extends JoinRenderOptions>(
  src: JoinSource,
  primaries: readonly StoredEntity[],
  join: JoinOptions,
  opts: O,
): Promise<Reached<O>[]> {
  const compact = (iri: string): string => src.context.compactIri(iri);
  const included = new Set<string>([...join.containedBy, ...primaries.map((e) => e.id)]);
  const out: Reached<O>[] = [];
  let frontier: readonly Reached<O>[] = primaries.map((entity) => ({ entity, opts }));
  for (let hop = 0; hop < join.level && frontier.length > 0; hop++) {
    const met: Array<{ id: string; via: Via<O> }> = [];
    for (const from of frontier) {
      for (const [attrIri, ids] of relationshipTargets(from.entity, from.opts, compact, hop === 0)) {
        const via: Via<O> = { opts: from.opts, relName: compact(attrIri) };
        for (const id of ids) {
          if (included.has(id)) continue;
          included.add(id);
          met.push({ id, via });
        }
      }
    }
    await src.load(met.map((m) => m.id));
    const next: Reached<O>[] = [];
    for (const { id, via } of met) {
      const linked = src.get(id);
      if (linked === undefined) continue;
      via.linkedOpts ??= linkedRenderOptions(via.opts, via.relName);
      const reached = { entity: linked, opts: via.linkedOpts };
      out.push(reached);
      next.push(reached);
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
export async function joinedFeatures<O extends JoinRenderOptions & { geometryProperty?: string }>(
  src: JoinSource,
  primaries: readonly StoredEntity[],
  join: JoinOptions,
  opts: O,
): Promise<GeoJsonFeature[]> {
  const features: GeoJsonFeature[] = [];
  if (join.mode === 'flat') {
    for (const e of primaries) features.push(renderGeoJson(e, src.context, opts));
    for (const { entity, opts: linkedOpts } of await linkedEntities(src, primaries, join, opts))
      features.push(renderGeoJson(entity, src.context, { ...linkedOpts, geometryProperty: opts.geometryProperty }));
    return features;
  }
  for (const e of primaries) {
    const properties = await renderInline(src, e, join, opts);
    delete properties.id;
    features.push(featureOf(e, src.context, opts, properties));
  }
  return features;
}

/** join=inline: renders `entity` with each Relationship's target under its `entity` member, `level` hops deep. */
export async function renderInline<O extends JoinRenderOptions>(
  src: JoinSource,
  entity: StoredEntity,
  join: JoinOptions,
  opts: O,
): Promise<Record<string, unknown>> {
  return inline(src, entity, opts, join.level, new Set([...join.containedBy, entity.id]));
}

async function inline<O extends JoinRenderOptions>(
  src: JoinSource,
  entity: StoredEntity,
  opts: O,
  level: number,
  chain: ReadonlySet<string>,
): Promise<Record<string, unknown>> {
  const out = renderEntity(entity, src.context, opts);
  if (level <= 0) return out;
  const compact = (iri: string): string => src.context.compactIri(iri);
  // The Relationships the answer shows, and one read for every entity they link to.
  const links: Array<{ name: string; ids: string[] }> = [];
  const wanted: string[] = [];
  for (const [attrIri, ids] of relationshipTargets(entity, opts, compact, false)) {
    const name = compact(attrIri);
    if (out[name] === undefined) continue;
    links.push({ name, ids });
    for (const id of ids) if (!chain.has(id)) wanted.push(id);
  }
  await src.load(wanted);
  for (const { name, ids } of links) {
    const rendered = out[name];
    // CIM 009 v1.8.1 §4.21: `rel{...}` in pick or omit projects the entities `rel` links to; none without braces.
    const linkedOpts = linkedRenderOptions(opts, name);
    const targets = new Map<string, Record<string, unknown>>();
    for (const id of ids) {
      if (chain.has(id) || targets.has(id)) continue;
      const linked = src.get(id);
      if (linked === undefined) continue;
      targets.set(id, await inline(src, linked, linkedOpts, level - 1, new Set([...chain, id])));
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
        const list = member.objectList
          .map(listObject)
          .filter((o): o is string => typeof o === 'string' && targets.has(o))
          .map((o) => targets.get(o)!);
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
  if (Array.isArray(rendered)) return rendered.map((r) => (typeof r === 'string' ? (targets.get(r) ?? r) : r));
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
