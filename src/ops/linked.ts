// Linked entity retrieval (CIM 009 v1.8 §4.5.23) on the retrieval routes: the `join`, `joinLevel` and
// `containedBy` parameters of a request, and the join core (ngsild/entity/linked-join.ts) reading the linked entities
// from the store as the request's auth allows each one (a refused or missing entity stays a plain reference).
import { badRequest, RefusalError } from '../ngsild/problem.js';
import type { StoredEntity } from '../ngsild/entity/model.js';
import type { GeoJsonFeature } from '../ngsild/entity/geojson.js';
import { isUri } from '../ngsild/entity/syntax.js';
import * as core from '../ngsild/entity/linked-join.js';
import type { JoinOptions } from '../ngsild/entity/linked-join.js';
import type { LdRequest } from '../pipeline/ld-request.js';
import type { WorkerContext } from '../pipeline/worker-context.js';
import type { RenderOptions } from './render-options.js';
import { readableEntity } from './entity-auth.js';

export { MAX_JOIN_LEVEL, MAX_JOINED, type JoinOptions } from '../ngsild/entity/linked-join.js';

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
    if (!/^\d{1,3}$/.test(levelText) || Number(levelText) < 1)
      throw badRequest(`joinLevel: '${levelText.slice(0, 80)}' is not a positive integer`);
    level = Number(levelText);
    if (level > core.MAX_JOIN_LEVEL) throw badRequest(`joinLevel: ${level} is above the maximum ${core.MAX_JOIN_LEVEL}`);
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

/** The linked entities of one answer: read from the request's tenant, each as the entity hook lets the request see it. */
function requestSource(req: LdRequest, ctx: WorkerContext): core.JoinSource {
  return new core.JoinSource(
    req.tenant,
    async (tenant, ids) => {
      // One store read for the level's ids (a docdb round trip, not one per id: issue 17, no N+1).
      const page = await ctx.store.queryEntities(tenant, { ids, limit: ids.length, offset: 0, count: false });
      const found = await Promise.all(
        page.entities.map(async (entity) => {
          try {
            return await readableEntity(req, ctx, entity);
          } catch (e) {
            if (!(e instanceof RefusalError)) throw e;
            return undefined;
          }
        }),
      );
      return found.filter((e): e is StoredEntity => e !== undefined);
    },
    req.context,
  );
}

/** join=flat: the entities linked from `primaries` (linked-join.ts flatLinked). */
export function flatLinked(
  req: LdRequest,
  ctx: WorkerContext,
  primaries: readonly StoredEntity[],
  join: JoinOptions,
  opts: RenderOptions,
): Promise<Record<string, unknown>[]> {
  return core.flatLinked(requestSource(req, ctx), primaries, join, opts);
}

/** The Features of a GeoJSON answer with a join (linked-join.ts joinedFeatures). */
export function joinedFeatures(
  req: LdRequest,
  ctx: WorkerContext,
  primaries: readonly StoredEntity[],
  join: JoinOptions,
  opts: RenderOptions & { geometryProperty?: string },
): Promise<GeoJsonFeature[]> {
  return core.joinedFeatures(requestSource(req, ctx), primaries, join, opts);
}

/** join=inline: `entity` with its linked entities under its Relationships (linked-join.ts renderInline). */
export function renderInline(
  req: LdRequest,
  ctx: WorkerContext,
  entity: StoredEntity,
  join: JoinOptions,
  opts: RenderOptions,
): Promise<Record<string, unknown>> {
  return core.renderInline(requestSource(req, ctx), entity, join, opts);
}
