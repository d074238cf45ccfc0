// PurgeEntities (CIM 009 v1.9.1 §5.6.21, §6.4.3.3; beyond our v1.8 target): DELETE /entities deletes every entity a
// selection matches, or with `drop` / `keep` removes attributes from each. Each entity goes through the same write
// path as a one-entity delete, in transactions of at most PURGE_CHUNK entities, so no purge holds one long write.
import { LdError, RefusalError, badRequest } from '../ngsild/problem.js';
import type { StoredEntity } from '../ngsild/entity/model.js';
import { ENTITY_CORE_MEMBERS } from '../ngsild/entity/model.js';
import { deleteAttribute } from '../ngsild/entity/merge.js';
import { checkNameSize } from '../ngsild/entity/limits.js';
import { parseProjection } from '../ngsild/query/projection.js';
import type { BatchItem, Mutation } from '../store/contract.js';
import { entityQueryPredicate } from '../store/kit/entity-query.js';
import type { LdRequest } from '../pipeline/ld-request.js';
import type { WorkerContext } from '../pipeline/worker-context.js';
import type { OpHandler } from '../pipeline/handler.js';
import { selectionQuery } from './query.js';
import { selectionFromParams } from './selection.js';
import { checkEntity } from './entity-auth.js';
import { boolParam } from './types.js';
import { writeEntities } from './changes.js';
import { noChanges, type WriteChange } from '../ngsild/entity/write-change.js';

/** Entities written per transaction: a purge of any size is a series of short writes (README "PurgeEntities"). */
export const PURGE_CHUNK = 500;
/** Matches read per pass over the selection: what one pass holds in memory before it writes them away. */
export const PURGE_ROUND = 5_000;

/** What a purge does to each entity it matches: delete it, or remove attributes. */
type Action = { kind: 'delete' } | { kind: 'drop'; attrIris: ReadonlySet<string> } | { kind: 'keep'; attrIris: ReadonlySet<string> };

function actionOf(req: LdRequest): Action {
  const keep = req.query.get('keep');
  const drop = req.query.get('drop');
  // §5.6.21: keep and drop are alternatives.
  if (keep !== undefined && drop !== undefined) throw badRequest('keep and drop cannot be given together');
  if (keep === undefined && drop === undefined) return { kind: 'delete' };
  const param = keep !== undefined ? 'keep' : 'drop';
  const p = parseProjection((keep ?? drop)!, param);
  if (p.linked.size > 0) throw badRequest(`${param}: names attributes; braces (linked entities) have no meaning here`);
  const attrIris = new Set<string>();
  for (const name of p.names) {
    const iri = checkNameSize(req.context.expandTerm(name), param);
    if (ENTITY_CORE_MEMBERS.has(name) || ENTITY_CORE_MEMBERS.has(iri)) throw badRequest(`${param}: '${name}' is not an attribute`);
    attrIris.add(iri);
  }
  return keep !== undefined ? { kind: 'keep', attrIris } : { kind: 'drop', attrIris };
}

/**
 * The next state of a matched entity (null deletes, undefined leaves it as it is: nothing to remove) and, for drop or
 * keep, what that changes (a delete's change is the whole entity's, which the store derives).
 */
function apply(action: Action, current: StoredEntity, now: string): { next: StoredEntity | null | undefined; change?: WriteChange } {
  if (action.kind === 'delete') return { next: null };
  let next: StoredEntity | undefined;
  const change: WriteChange = { kind: 'update', ...noChanges() };
  for (const key in current) {
    if (ENTITY_CORE_MEMBERS.has(key)) continue;
    if (action.attrIris.has(key) !== (action.kind === 'drop')) continue;
    const r = deleteAttribute(next ?? current, key, { deleteAll: true, now });
    next = r.entity;
    change.deleted.push(key);
    change.previous[key] = r.previous[key]!;
  }
  return { next, change };
}

export const purgeEntities: OpHandler = async (req, ctx) => {
  const action = actionOf(req);
  const sel = selectionFromParams(req);
  const local = boolParam(req, 'local');
  // §6.4.3.3: a purge names what it purges; local=true alone purges every local entity of the tenant.
  if (sel.selectors.length === 0 && sel.q === undefined && sel.scopeQ === undefined && sel.geo === undefined && !local)
    throw badRequest(
      'PurgeEntities needs at least one of id, type, idPattern, q, scopeQ, a geo-query, or local=true to purge every entity',
    );
  const selected = selectionQuery(sel, req.context);
  // The whole selection as one predicate, for the re-check inside each entity's write (the store chose the candidates).
  const matches = entityQueryPredicate(selected);
  const now = new Date().toISOString();
  // Passes over the selection, in the store's stable order: the matches a pass writes are deleted or changed;
  // those that still match (refused by the entity hook, or kept by drop/keep) are skipped by the next pass.
  let skip = 0;
  for (;;) {
    const { entities } = await ctx.store.queryEntities(req.tenant, { ...selected, limit: PURGE_ROUND, offset: skip, count: false });
    for (let i = 0; i < entities.length; i += PURGE_CHUNK)
      skip += await purgeChunk(req, ctx, entities.slice(i, i + PURGE_CHUNK), action, matches, now);
    if (entities.length < PURGE_ROUND) break;
  }
  return { status: 204 };
};

/** Writes one chunk in one transaction; answers how many of its entities still match the selection afterwards. */
async function purgeChunk(
  req: LdRequest,
  ctx: WorkerContext,
  entities: readonly StoredEntity[],
  action: Action,
  matches: (e: StoredEntity) => boolean,
  now: string,
): Promise<number> {
  let stillMatching = 0;
  const items: BatchItem<boolean>[] = [];
  for (const e of entities) {
    if (ctx.auth !== undefined) {
      try {
        await checkEntity(req, ctx, { id: e.id, types: e.type, storedTypes: true, read: false });
      } catch (error) {
        // seed 000 §5.2: an entity the hook refuses is left as it is, as a query leaves it out.
        if (!(error instanceof RefusalError)) throw error;
        stillMatching++;
        continue;
      }
    }
    // Judged again on the state the transaction reads: what changed since the pass read it is purged only if it
    // still matches. The result: does the entity match after the write.
    const mutation: Mutation<boolean> = (current) => {
      if (current === undefined || !matches(current)) return { next: undefined, result: false };
      const { next, change } = apply(action, current, now);
      return { next, result: next !== null && matches(next ?? current), change };
    };
    items.push({ id: e.id, mutation });
  }
  if (items.length === 0) return stillMatching;
  const outcomes = await writeEntities(ctx, req.tenant, items);
  for (const o of outcomes) {
    if (!o.ok) throw o.error instanceof LdError ? o.error : new LdError('InternalError', 'a purge write failed');
    if (o.result) stillMatching++;
  }
  return stillMatching;
}
