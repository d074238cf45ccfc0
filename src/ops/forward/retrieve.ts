// Retrieve Entity, distributed (CIM 009 v1.8.1 §5.7.1.4, §4.3.6): the entity's local copy merged with what the
// sources registered for it answer, asked in parallel. A source that fails or times out leaves its part out and
// the answer carries an NGSILD-Warning naming its registration; when nothing holds the entity it is 404.
import type { StoredEntity } from '../../ngsild/entity/model.js';
import { mergeEntityInto, restrictEntity } from '../../ngsild/registration/merge-entity.js';
import { retrieveTargets, type SourceTarget } from '../../ngsild/registration/match.js';
import { pathSegment } from '../../ngsild/uri-encode.js';
import type { LdRequest } from '../../pipeline/ld-request.js';
import type { WorkerContext } from '../../pipeline/worker-context.js';
import { checkLoop } from './via.js';
import { fanOut, liveRegistrations, localOnly, queryWithout, sourceUrl, sourceWarning } from './sources.js';
import { entityFromSource, parseJson } from './entities-from-source.js';

/**
 * URL parameters a source is not asked with: the answer is merged in the normalized form and rendered here (format,
 * options, projections, join), and `local` is this broker's.
 */
export const NOT_FORWARDED: ReadonlySet<string> = new Set([
  'local',
  'options',
  'format',
  'pick',
  'omit',
  'join',
  'joinLevel',
  'geometryProperty',
  'lang',
  'limit',
  'offset',
  'count',
  'csf',
  'entityMap',
  'orderBy',
]);

export interface Distributed<T> {
  value: T;
  /** NGSILD-Warning values, one per source without a usable answer. */
  warnings: string[];
}

/** Order of merging: local first, then sources that hold their part, inclusive ones, auxiliary ones last (§4.3.6). */
const RANK = { redirect: 0, exclusive: 0, inclusive: 1, auxiliary: 2 } as const;

export async function retrieveWithSources(
  req: LdRequest,
  ctx: WorkerContext,
  id: string,
  local: StoredEntity | undefined,
  attrs: ReadonlySet<string> | undefined,
): Promise<Distributed<StoredEntity | undefined>> {
  const none = { value: local, warnings: [] };
  if (localOnly(req)) return none;
  const regs = await liveRegistrations(req, ctx);
  if (regs.length === 0) return none;
  const targets = retrieveTargets(regs, 'retrieveEntity', id, local?.type, attrs);
  if (targets.length === 0) return none;
  checkLoop(req, ctx);
  const query = queryWithout(req.task.query, NOT_FORWARDED);
  const outcomes = await fanOut(req, ctx, targets, (t) => ({
    method: 'GET',
    url: sourceUrl(t.body, `/entities/${pathSegment(id)}`, query),
  }));
  const warnings: string[] = [];
  const parts: Array<{ target: SourceTarget; entity: StoredEntity }> = [];
  const now = new Date().toISOString();
  for (const o of outcomes) {
    if ('failure' in o) {
      warnings.push(sourceWarning(ctx, o.target, o.failure.reason));
      continue;
    }
    // 508: the source is where this request came from (its Via names it), not a failure.
    if (o.reply.status === 404 || o.reply.status === 508) continue;
    if (o.reply.status !== 200) {
      warnings.push(sourceWarning(ctx, o.target, `answered ${o.reply.status}`));
      continue;
    }
    const e = entityFromSource(req, parseJson(o.reply.body), now);
    if (e === undefined || e.id !== id) {
      warnings.push(sourceWarning(ctx, o.target, 'answered no entity it was asked for'));
      continue;
    }
    parts.push({ target: o.target, entity: o.target.attrs === undefined ? e : restrictEntity(e, o.target.attrs) });
  }
  parts.sort((a, b) => RANK[a.target.mode] - RANK[b.target.mode]);
  let merged: StoredEntity | undefined = local === undefined ? undefined : { ...local, type: [...local.type] };
  for (const p of parts) {
    if (merged === undefined) merged = { ...p.entity, type: [...p.entity.type] };
    else mergeEntityInto(merged, p.entity, { weight: p.target.mode, only: p.target.attrs });
  }
  return { value: merged, warnings };
}
