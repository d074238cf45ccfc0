// Linked entity retrieval (CIM 009 v1.8 §4.5.23): with `join=flat` the entities that Relationships of the answer
// point to are added to the answer as top-level entities; with `join=inline` each Relationship carries its target
// under `entity`. `joinLevel` bounds the hops (default 1); `containedBy` lists ids already in the chain, which are
// never joined again, and the broker adds every id it visits, so cycles end.
import { badRequest, RefusalError } from '../ngsild/problem.js';
import type { AttrInstance, StoredEntity } from '../ngsild/entity/model.js';
import { ENTITY_CORE_MEMBERS } from '../ngsild/entity/model.js';
import { renderEntity } from '../ngsild/entity/render.js';
import { isUri } from '../ngsild/entity/syntax.js';
import type { LdRequest } from '../pipeline/ld-request.js';
import type { WorkerContext } from '../pipeline/worker-context.js';
import type { RenderOptions } from './render-options.js';
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

/** The ids a stored entity's Relationships point to, per attribute IRI. */
function relationshipTargets(entity: StoredEntity): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const key in entity) {
    if (ENTITY_CORE_MEMBERS.has(key)) continue;
    const instances = entity[key];
    if (!Array.isArray(instances)) continue;
    for (const inst of instances as AttrInstance[]) {
      if (inst.type !== 'Relationship') continue;
      const objects = Array.isArray(inst.object) ? inst.object : inst.object === undefined ? [] : [inst.object];
      const list = out.get(key) ?? [];
      for (const o of objects) if (typeof o === 'string') list.push(o);
      out.set(key, list);
    }
  }
  return out;
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
 * containedBy, rendered like the primaries (without the projections, which select the primaries' attributes).
 */
export async function flatLinked(req: LdRequest, ctx: WorkerContext, primaries: readonly StoredEntity[], join: JoinOptions, opts: RenderOptions): Promise<Record<string, unknown>[]> {
  const reader = new LinkedReader(req, ctx);
  const included = new Set<string>([...join.containedBy, ...primaries.map((e) => e.id)]);
  const out: Record<string, unknown>[] = [];
  const linkedOpts = { ...opts, attrs: undefined, pick: undefined, omit: undefined };
  let frontier: readonly StoredEntity[] = primaries;
  for (let hop = 0; hop < join.level && frontier.length > 0; hop++) {
    const next: StoredEntity[] = [];
    for (const e of frontier) {
      for (const ids of relationshipTargets(e).values()) {
        for (const id of ids) {
          if (included.has(id)) continue;
          included.add(id);
          const linked = await reader.get(id);
          if (linked === undefined) continue;
          out.push(renderEntity(linked, req.context, linkedOpts));
          next.push(linked);
        }
      }
    }
    frontier = next;
  }
  return out;
}

/** join=inline: renders `entity` with each Relationship's target under its `entity` member, `level` hops deep. */
export async function renderInline(req: LdRequest, ctx: WorkerContext, entity: StoredEntity, join: JoinOptions, opts: RenderOptions): Promise<Record<string, unknown>> {
  const reader = new LinkedReader(req, ctx);
  return inline(req, reader, entity, opts, join.level, new Set([...join.containedBy, entity.id]));
}

async function inline(req: LdRequest, reader: LinkedReader, entity: StoredEntity, opts: RenderOptions, level: number, chain: ReadonlySet<string>): Promise<Record<string, unknown>> {
  const out = renderEntity(entity, req.context, opts);
  if (level <= 0) return out;
  const linkedOpts = { ...opts, attrs: undefined, pick: undefined, omit: undefined };
  for (const [attrIri, ids] of relationshipTargets(entity)) {
    const name = req.context.compactIri(attrIri);
    const rendered = out[name];
    if (rendered === undefined) continue;
    const targets = new Map<string, Record<string, unknown>>();
    for (const id of ids) {
      if (chain.has(id) || targets.has(id)) continue;
      const linked = await reader.get(id);
      if (linked === undefined) continue;
      targets.set(id, await inline(req, reader, linked, linkedOpts, level - 1, new Set([...chain, id])));
    }
    if (targets.size === 0) continue;
    if (opts.format === 'keyValues') {
      // keyValues: the reference itself is replaced by the entity it names.
      if (typeof rendered === 'string' && targets.has(rendered)) out[name] = targets.get(rendered);
      continue;
    }
    for (const inst of Array.isArray(rendered) ? rendered : [rendered]) {
      if (typeof inst !== 'object' || inst === null) continue;
      const obj = (inst as Record<string, unknown>).object;
      if (typeof obj === 'string' && targets.has(obj)) (inst as Record<string, unknown>).entity = targets.get(obj);
      else if (Array.isArray(obj)) {
        const list = obj.filter((o): o is string => typeof o === 'string' && targets.has(o)).map((o) => targets.get(o)!);
        if (list.length > 0) (inst as Record<string, unknown>).entity = list.length === 1 ? list[0] : list;
      }
    }
  }
  return out;
}
