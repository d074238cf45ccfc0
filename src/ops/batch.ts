// Batch entity operations (CIM 009 v1.8 §5.6.7 to §5.6.11, §5.6.20; §6.14 to §6.17, §6.29), each in one of its
// thread's slots (batch-slots.ts, ops/index.ts): every entry is validated first; valid entries run in one store
// transaction where a failing entry never changes another's outcome; the answer is 201/204 when all succeed, else
// 207 with a BatchOperationResult.
import { LdError, badRequest, notFound, problemOf, type ProblemDetails } from '../ngsild/problem.js';
import type { StoredEntity } from '../ngsild/entity/model.js';
import { expandEntity } from '../ngsild/entity/expand.js';
import { appendAttributes, mergeEntity, replaceChanges, replacedEntity } from '../ngsild/entity/merge.js';
import type { ResolvedContext } from '../ngsild/context/resolved.js';
import type { LdRequest } from '../pipeline/ld-request.js';
import type { WorkerContext } from '../pipeline/worker-context.js';
import type { Mutation, BatchItem } from '../store/contract.js';
import type { OpHandler, OpResult } from '../pipeline/handler.js';
import { checkEntity } from './entity-auth.js';
import { LD_JSON } from '../pipeline/media.js';
import { isUri } from '../ngsild/entity/syntax.js';
import { checkIdSize } from '../ngsild/entity/limits.js';
import { attrNames } from './entities.js';
import { writeEntities } from './changes.js';
import { changeOf } from '../ngsild/entity/write-change.js';
import { giveSlot, takeSlot } from './batch-slots.js';
import { nowIso } from './now-iso.js';

interface BatchError {
  entityId: string;
  error: ProblemDetails;
}

/** The entries that passed validation, in body order, each with the entity (or id) it names. */
interface Prepared<T> {
  id: string;
  value: T;
}

type Outcome = 'created' | 'updated' | 'deleted';

function entryId(entry: unknown): string {
  if (typeof entry === 'object' && entry !== null && typeof (entry as { id?: unknown }).id === 'string')
    return (entry as { id: string }).id;
  return typeof entry === 'string' ? entry : '';
}

function errorEntry(id: string, error: unknown): BatchError {
  const problem = problemOf(error);
  if (problem === undefined) throw error;
  return { entityId: id, error: problem };
}

const CONTEXT_IN_JSON = '@context is not allowed in an application/json body: send it in a Link header or use application/ld+json';

/** The @context of one entry of an application/ld+json batch: the entry's own. */
async function entryContext(req: LdRequest, ctx: WorkerContext, entry: Record<string, unknown>): Promise<ResolvedContext> {
  const given = entry['@context'];
  if (given === undefined) throw badRequest('an application/ld+json batch entry must carry @context');
  const resolved = await ctx.contexts.resolve(given, req.wait);
  if (!req.otherContexts.includes(resolved)) req.otherContexts.push(resolved);
  return resolved;
}

/**
 * application/json: every entry takes the request's @context (one it carries itself is 400), known already, so no
 * promise per entry (a batch of 100 made 100 async calls and settled them for nothing).
 */
function requestContexts(req: LdRequest, list: unknown[]): PromiseSettledResult<ResolvedContext | undefined>[] {
  const same: PromiseFulfilledResult<ResolvedContext> = { status: 'fulfilled', value: req.context };
  return list.map((entry) =>
    isEntryObject(entry) && '@context' in entry ? { status: 'rejected', reason: badRequest(CONTEXT_IN_JSON) } : same,
  );
}

function isEntryObject(entry: unknown): entry is Record<string, unknown> {
  return typeof entry === 'object' && entry !== null && !Array.isArray(entry);
}

function stripContext(entry: Record<string, unknown>): Record<string, unknown> {
  if (!('@context' in entry)) return entry;
  const { ['@context']: _ignored, ...rest } = entry;
  return rest;
}

function entries(req: LdRequest): unknown[] {
  const list = req.jsonArray();
  if (list.length === 0) throw badRequest('the batch is empty');
  return list;
}

/** Expands each entity entry; a bad entry becomes its error, the others go on. */
async function prepareEntities(
  req: LdRequest,
  ctx: WorkerContext,
  now: string,
  errors: BatchError[],
  allowNull = false,
): Promise<Prepared<StoredEntity>[]> {
  const list = entries(req);
  // Every entry's @context at once: distinct remote ones are fetched side by side rather than one deadline after
  // another, and one that many entries name is fetched once (issue 13). The handler runs in a slot (batch-slots.ts),
  // given up while remote @contexts may be fetched, so a slow context server holds no other client's batch.
  const ldJson = req.bodyMediaType === LD_JSON;
  let contexts: PromiseSettledResult<ResolvedContext | undefined>[];
  if (ldJson) {
    giveSlot();
    try {
      contexts = await Promise.allSettled(list.map((entry) => (isEntryObject(entry) ? entryContext(req, ctx, entry) : undefined)));
    } finally {
      await takeSlot(ctx.store);
    }
  } else contexts = requestContexts(req, list);
  const prepared: Prepared<StoredEntity>[] = [];
  for (let i = 0; i < list.length; i++) {
    const entry = list[i];
    const id = entryId(entry);
    try {
      if (!isEntryObject(entry)) throw badRequest('a batch entry must be a JSON object');
      const settled = contexts[i]!;
      if (settled.status === 'rejected') throw settled.reason;
      const context = settled.value!;
      const body = stripContext(entry);
      const entity = expandEntity(body, context, { now, allowNull });
      prepared.push({ id: entity.id, value: entity });
    } catch (error) {
      errors.push(errorEntry(id, error));
    }
  }
  return prepared;
}

/** Asks the entity hook for each entry (seed 000 §5.2): the body's types for a new entity, the stored ones else. */
async function authorizeEntries<T>(
  req: LdRequest,
  ctx: WorkerContext,
  prepared: Prepared<T>[],
  errors: BatchError[],
  describe: (
    p: Prepared<T>,
    stored: string[] | undefined,
  ) => { types: readonly string[]; storedTypes: boolean; attrsWritten?: string[]; creates?: boolean; newTypes?: readonly string[] } | null,
): Promise<Prepared<T>[]> {
  if (ctx.auth === undefined) return prepared;
  const allowed: Prepared<T>[] = [];
  for (const p of prepared) {
    try {
      const stored = await ctx.store.getEntityTypes(req.tenant, p.id);
      const d = describe(p, stored);
      if (d !== null) {
        const { newTypes, ...asked } = d;
        await checkEntity(req, ctx, { id: p.id, ...asked, read: false });
        // seed 000 §5.2: an entry that gives types is also asked about those it adds (adding a type needs its right)
        const added = asked.storedTypes ? newTypes?.filter((t) => !asked.types.includes(t)) : undefined;
        if (added !== undefined && added.length > 0)
          await checkEntity(req, ctx, {
            id: p.id,
            types: added,
            storedTypes: false,
            attrsWritten: asked.attrsWritten,
            creates: false,
            read: false,
          });
      }
      allowed.push(p);
    } catch (error) {
      errors.push(errorEntry(p.id, error));
    }
  }
  return allowed;
}

async function run<T>(
  req: LdRequest,
  ctx: WorkerContext,
  prepared: Prepared<T>[],
  errors: BatchError[],
  mutate: (p: Prepared<T>) => Mutation<Outcome>,
  creating: boolean,
  /** Every entry is a create (Store MutateOptions.expectAbsent). */
  createsOnly = false,
): Promise<Array<{ id: string; outcome: Outcome }>> {
  const items: BatchItem<Outcome>[] = prepared.map((p) => ({ id: p.id, mutation: mutate(p) }));
  const outcomes =
    items.length === 0 ? [] : await writeEntities(ctx, req.tenant, items, { createTenant: creating, expectAbsent: createsOnly });
  const done: Array<{ id: string; outcome: Outcome }> = [];
  outcomes.forEach((o, i) => {
    if (o.ok) done.push({ id: items[i]!.id, outcome: o.result });
    else errors.push(errorEntry(items[i]!.id, o.error));
  });
  return done;
}

function answer(done: Array<{ id: string; outcome: Outcome }>, errors: BatchError[], whenAllOk: OpResult): OpResult {
  if (errors.length === 0) return whenAllOk;
  return { status: 207, body: { success: done.map((d) => d.id), errors } };
}

export const batchCreate: OpHandler = async (req, ctx) => {
  const errors: BatchError[] = [];
  const now = nowIso();
  let prepared = await prepareEntities(req, ctx, now, errors);
  prepared = await authorizeEntries(req, ctx, prepared, errors, (p) => ({
    types: p.value.type,
    storedTypes: false,
    attrsWritten: attrNames(p.value),
  }));
  const done = await run(
    req,
    ctx,
    prepared,
    errors,
    (p) => (current) => {
      if (current !== undefined) throw new LdError('AlreadyExists', `entity '${p.id}' already exists`);
      return { next: p.value, result: 'created' };
    },
    true,
    true,
  );
  return answer(done, errors, { status: 201, body: done.map((d) => d.id) });
};

export const batchUpsert: OpHandler = async (req, ctx) => {
  const words = req.query.options(['replace', 'update']);
  if (words.has('replace') && words.has('update')) throw badRequest('options: replace and update cannot be asked together');
  const update = words.has('update');
  const errors: BatchError[] = [];
  const now = nowIso();
  let prepared = await prepareEntities(req, ctx, now, errors);
  prepared = await authorizeEntries(req, ctx, prepared, errors, (p, stored) =>
    stored === undefined
      ? { types: p.value.type, storedTypes: false, attrsWritten: attrNames(p.value), creates: true }
      : { types: stored, storedTypes: true, attrsWritten: attrNames(p.value), creates: false, newTypes: p.value.type },
  );
  const done = await run(
    req,
    ctx,
    prepared,
    errors,
    (p) => (current) => {
      if (current === undefined) return { next: p.value, result: 'created' };
      if (!update) {
        // The change only when an event or a history takes it (MutationOutcome.change): most batches have none.
        return {
          next: replacedEntity(current, p.value, now),
          result: 'updated',
          change: () => changeOf('replace', replaceChanges(current, p.value)),
        };
      }
      const attrs: Record<string, unknown> = {};
      for (const name of attrNames(p.value)) attrs[name] = p.value[name];
      const r = appendAttributes(current, attrs as never, { noOverwrite: false, now });
      const appended = r.entity;
      for (const t of p.value.type) if (!appended.type.includes(t)) appended.type = [...appended.type, t];
      return { next: appended, result: 'updated', change: changeOf('append', r) };
    },
    true,
  );
  const created = done.filter((d) => d.outcome === 'created').map((d) => d.id);
  return answer(done, errors, created.length > 0 ? { status: 201, body: created } : { status: 204 });
};

export const batchUpdate: OpHandler = async (req, ctx) => {
  const noOverwrite = req.query.options(['noOverwrite']).has('noOverwrite');
  const errors: BatchError[] = [];
  const now = nowIso();
  let prepared = await prepareEntities(req, ctx, now, errors);
  prepared = await authorizeEntries(req, ctx, prepared, errors, (p, stored) => {
    if (stored === undefined) throw notFound(`entity '${p.id}' does not exist`);
    return { types: stored, storedTypes: true, attrsWritten: attrNames(p.value), newTypes: p.value.type };
  });
  // What an entry could not apply (with noOverwrite: the attributes it kept), by entity id.
  const kept = new Map<string, string[]>();
  const done = await run(
    req,
    ctx,
    prepared,
    errors,
    (p) => (current) => {
      if (current === undefined) throw notFound(`entity '${p.id}' does not exist`);
      const attrs: Record<string, unknown> = {};
      for (const name of attrNames(p.value)) attrs[name] = p.value[name];
      // §4.16, §4.18: the entry's types are added and its scope applied, as Append Entity Attributes does.
      const r = appendAttributes(current, attrs as never, { noOverwrite, now, types: p.value.type, scope: p.value.scope });
      if (r.notUpdated.length > 0)
        kept.set(
          p.id,
          r.notUpdated.map((n) => req.context.compactIri(n.attrName)),
        );
      else kept.delete(p.id);
      if (r.notUpdated.length > 0 && r.updated.length === 0 && noOverwrite) return { next: undefined, result: 'updated' };
      return { next: r.entity, result: 'updated', change: changeOf('append', r) };
    },
    false,
  );
  // §5.6.9: an entry whose attributes were not all applied is reported in the 207 as the one-entity append reports
  // them (§5.6.3); what it could apply is written.
  const applied = done.filter((d) => !kept.has(d.id));
  for (const d of done) {
    const names = kept.get(d.id);
    if (names !== undefined)
      errors.push({
        entityId: d.id,
        error: badRequest(`not updated: ${names.join(', ')}${noOverwrite ? ' (they exist and noOverwrite was asked)' : ''}`).toProblem(),
      });
  }
  return answer(applied, errors, { status: 204 });
};

export const batchDelete: OpHandler = async (req, ctx) => {
  const errors: BatchError[] = [];
  let prepared: Prepared<null>[] = [];
  for (const entry of entries(req)) {
    if (typeof entry !== 'string' || !isUri(entry)) {
      errors.push({
        entityId: typeof entry === 'string' ? entry : (JSON.stringify(entry)?.slice(0, 200) ?? ''),
        error: badRequest('a batch delete entry must be an entity id (a URI)').toProblem(),
      });
      continue;
    }
    try {
      checkIdSize(entry, 'id');
    } catch (error) {
      errors.push(errorEntry(entry, error));
      continue;
    }
    prepared.push({ id: entry, value: null });
  }
  prepared = await authorizeEntries(req, ctx, prepared, errors, (p, stored) => {
    if (stored === undefined) throw notFound(`entity '${p.id}' does not exist`);
    return { types: stored, storedTypes: true };
  });
  const done = await run(
    req,
    ctx,
    prepared,
    errors,
    (p) => (current) => {
      if (current === undefined) throw notFound(`entity '${p.id}' does not exist`);
      return { next: null, result: 'deleted' };
    },
    false,
  );
  return answer(done, errors, { status: 204 });
};

export const batchMerge: OpHandler = async (req, ctx) => {
  const errors: BatchError[] = [];
  const now = nowIso();
  let prepared = await prepareEntities(req, ctx, now, errors, true);
  prepared = await authorizeEntries(req, ctx, prepared, errors, (p, stored) => {
    if (stored === undefined) throw notFound(`entity '${p.id}' does not exist`);
    return { types: stored, storedTypes: true, attrsWritten: attrNames(p.value), newTypes: p.value.type };
  });
  const done = await run(
    req,
    ctx,
    prepared,
    errors,
    (p) => (current) => {
      if (current === undefined) throw notFound(`entity '${p.id}' does not exist`);
      const r = mergeEntity(current, p.value, now);
      return { next: r.entity, result: 'updated', change: changeOf('merge', r) };
    },
    false,
  );
  return answer(done, errors, { status: 204 });
};
