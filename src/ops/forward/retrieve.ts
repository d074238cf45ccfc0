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
import { fanOut, liveRegistrations, localOnly, queryEncode, queryWithout, sourceUrl, sourceWarning } from './sources.js';
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
  'entityMapLifetime',
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
  // §5.7.1.4: a source offering no retrieveEntity but queryEntity or queryBatch is asked for the entity by id.
  const direct = retrieveTargets(regs, 'retrieveEntity', id, local?.type, attrs);
  const byRetrieve = new Set(direct.map((t) => t.body.id));
  const viaQuery = retrieveTargets(regs, 'queryEntity', id, local?.type, attrs).filter((t) => !byRetrieve.has(t.body.id));
  const byQuery = new Set(viaQuery.map((t) => t.body.id));
  const viaBatch = retrieveTargets(regs, 'queryBatch', id, local?.type, attrs).filter(
    (t) => !byRetrieve.has(t.body.id) && !byQuery.has(t.body.id),
  );
  const targets = [...direct, ...viaQuery, ...viaBatch];
  if (targets.length === 0) return none;
  checkLoop(req, ctx);
  const query = queryWithout(req.task.query, NOT_FORWARDED);
  const outcomes = await fanOut(req, ctx, targets, (t) => {
    if (byRetrieve.has(t.body.id)) return { method: 'GET', url: sourceUrl(t.body, `/entities/${pathSegment(id)}`, query) };
    if (byQuery.has(t.body.id))
      return { method: 'GET', url: sourceUrl(t.body, '/entities', ['id=' + queryEncode(id), query].filter((q) => q !== '').join('&')) };
    const attrsAsked = req.query.csv('attrs');
    const type = typeOf(req, t);
    const body: Record<string, unknown> = { type: 'Query', entities: [type === undefined ? { id } : { id, type }] };
    if (attrsAsked !== undefined) body.attrs = attrsAsked;
    return {
      method: 'POST',
      url: sourceUrl(t.body, '/entityOperations/query', ''),
      body: JSON.stringify(body),
      contentType: 'application/json',
    };
  });
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
    let answer = parseJson(o.reply.body);
    // A query's answer is a list: the entity asked for, or nothing.
    if (Array.isArray(answer)) {
      if (!byRetrieve.has(o.target.body.id) && answer.length === 0) continue;
      answer = answer.find((x) => typeof x === 'object' && x !== null && (x as { id?: unknown }).id === id);
    }
    const e = entityFromSource(req, answer, now);
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

/** The entity type a query by id names: the registration's, compacted; undefined when it registers none. */
function typeOf(req: LdRequest, t: SourceTarget): string | undefined {
  const type = t.infos.flatMap((i) => i.entities ?? [])[0]?.type;
  return type === undefined ? undefined : req.context.compactIri(type);
}
