// Batch operations, distributed (CIM 009 v1.8.1 §4.3.6, §5.6.7 to §5.6.10, §5.6.20 "distributed" behaviour): the
// batch is split per registration: each source gets, in one request, the entries it covers (only the attributes
// an exclusive or redirect registration names, every entry's whole for an inclusive one); the broker keeps what no
// exclusive or redirect registration holds. The answers are merged into one: every part succeeded, the local answer
// (or the operation's success for entries sent elsewhere only); else 207 with the successes of all and the errors of
// each part, a source's errors carrying its registration and a source without an answer failing each of its entries
// (503, 504 when too slow).
import { LdError, RefusalError, problemOf, type ProblemDetails } from '../../ngsild/problem.js';
import { isUri } from '../../ngsild/entity/syntax.js';
import { writeTargets, type SourceTarget } from '../../ngsild/registration/match.js';
import type { RegistrationBody } from '../../ngsild/subscription/registration.js';
import { LdRequest } from '../../pipeline/ld-request.js';
import type { WorkerContext } from '../../pipeline/worker-context.js';
import type { OpHandler, OpResult } from '../../pipeline/handler.js';
import { checkLoop } from './via.js';
import { canonicalApiPath, fanOut, liveRegistrations, localOnly, queryWithout, sourceUrl } from './sources.js';
import { parseJson } from './entities-from-source.js';

const LOCAL_PARAM: ReadonlySet<string> = new Set(['local']);
const NON_ATTRIBUTE_MEMBERS = new Set(['id', 'type', '@context', 'scope', 'createdAt', 'modifiedAt', 'expiresAt']);

interface BatchError {
  entityId: string;
  registrationId?: string;
  error: ProblemDetails;
}

/** An entry's id, expanded types and attributes (compact key, IRI); undefined for an entry the local part refuses. */
async function entryShape(
  req: LdRequest,
  ctx: WorkerContext,
  entry: unknown,
): Promise<{ id: string; types: string[] | undefined; attrs: Array<{ key: string; iri: string }> | undefined } | undefined> {
  if (typeof entry === 'string') return isUri(entry) ? { id: entry, types: undefined, attrs: undefined } : undefined;
  if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) return undefined;
  const e = entry as Record<string, unknown>;
  if (typeof e.id !== 'string' || !isUri(e.id)) return undefined;
  // An entry of an application/ld+json batch carries its own @context (the batch handler resolves it the same way).
  let names = req.context;
  if (e['@context'] !== undefined) {
    try {
      names = await ctx.contexts.resolve(e['@context'], req.wait);
    } catch {
      return undefined;
    }
  }
  const raw = Array.isArray(e.type) ? e.type : e.type === undefined ? [] : [e.type];
  const types = raw.filter((x): x is string => typeof x === 'string').map((x) => names.expandTerm(x));
  const attrs = Object.keys(e)
    .filter((k) => !NON_ATTRIBUTE_MEMBERS.has(k))
    .map((key) => ({ key, iri: names.expandTerm(key) }));
  return { id: e.id, types: types.length > 0 ? types : undefined, attrs };
}

function withArrayBody(req: LdRequest, body: unknown[]): LdRequest {
  const bytes = new TextEncoder().encode(JSON.stringify(body));
  const sub = new LdRequest({ ...req.task, body: bytes.buffer as ArrayBuffer }, req.wait);
  sub.context = req.context;
  sub.tenant = req.tenant;
  sub.media = req.media;
  return sub;
}

function pickAttrs(entry: Record<string, unknown>, keep: (key: string) => boolean): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(entry)) if (NON_ATTRIBUTE_MEMBERS.has(k) || keep(k)) out[k] = v;
  return out;
}

const held = (t: SourceTarget): boolean => t.mode === 'exclusive' || t.mode === 'redirect';

/** The batch handler `local` made distributed for the registration operation `operation` (createBatch, ...). */
export function distributedBatch(operation: string, local: OpHandler): OpHandler {
  return async (req, ctx) => {
    if (localOnly(req)) return local(req, ctx);
    const regs: RegistrationBody[] = await liveRegistrations(req, ctx);
    if (regs.length === 0) return local(req, ctx);
    const entries = req.jsonArray();
    const localEntries: unknown[] = [];
    const perSource = new Map<string, { target: SourceTarget; entries: unknown[]; ids: string[] }>();
    /** Whether an entry kept here lost attributes to a source (the local batch is then a new body). */
    let split = false;
    for (const entry of entries) {
      const s = await entryShape(req, ctx, entry);
      if (s === undefined) {
        localEntries.push(entry);
        continue;
      }
      const types = s.types ?? (await ctx.store.getEntityTypes(req.tenant, s.id));
      const targets = writeTargets(
        regs,
        operation,
        s.id,
        types,
        s.attrs?.map((a) => a.iri),
      );
      const heldAttrs = new Set<string>();
      let wholeElsewhere = false;
      for (const t of targets) {
        if (held(t) && t.attrs === undefined) wholeElsewhere = true;
        if (held(t) && t.attrs !== undefined) for (const a of t.attrs) heldAttrs.add(a);
        let part: unknown = entry;
        if (t.attrs !== undefined && s.attrs !== undefined && typeof entry === 'object')
          part = pickAttrs(entry as Record<string, unknown>, (k) => s.attrs!.some((a) => a.key === k && t.attrs!.has(a.iri)));
        const slot = perSource.get(t.body.id) ?? { target: t, entries: [], ids: [] };
        slot.entries.push(part);
        slot.ids.push(s.id);
        perSource.set(t.body.id, slot);
      }
      if (wholeElsewhere) continue;
      if (heldAttrs.size > 0 && s.attrs !== undefined && typeof entry === 'object') {
        const kept = s.attrs.filter((a) => !heldAttrs.has(a.iri));
        if (kept.length === 0) continue;
        localEntries.push(pickAttrs(entry as Record<string, unknown>, (k) => kept.some((a) => a.key === k)));
        split = true;
      } else localEntries.push(entry);
    }
    if (perSource.size === 0) return local(req, ctx);
    checkLoop(req, ctx);
    const localReq =
      localEntries.length === 0 ? undefined : !split && localEntries.length === entries.length ? req : withArrayBody(req, localEntries);
    // seed 000 §5.2: with an auth plugin the local part runs first, so a refused batch is sent nowhere.
    let early: unknown;
    if (ctx.auth !== undefined && localReq !== undefined) {
      early = await local(localReq, ctx).catch((e: unknown) => e);
      if (early instanceof RefusalError) throw early;
    }
    const apiPath = canonicalApiPath(req);
    const query = queryWithout(req.task.query, LOCAL_PARAM);
    const slots = [...perSource.values()];
    const [localOutcome, outcomes] = await Promise.all([
      early !== undefined ? early : localReq === undefined ? undefined : local(localReq, ctx).catch((e: unknown) => e),
      fanOut(
        req,
        ctx,
        slots.map((s) => s.target),
        (t) => ({
          method: req.method,
          url: sourceUrl(t.body, apiPath, query),
          body: JSON.stringify(perSource.get(t.body.id)!.entries),
          contentType: req.header('content-type') ?? 'application/json',
        }),
      ),
    ]);
    const success = new Set<string>();
    const errors: BatchError[] = [];
    let localResult: OpResult | undefined;
    if (localOutcome !== undefined) {
      if (isResult(localOutcome)) {
        localResult = localOutcome;
        readBatchAnswer(localOutcome.status, localOutcome.body, success, errors, undefined, localIds(localEntries));
      } else {
        const problem = problemOf(localOutcome);
        if (problem === undefined) throw localOutcome;
        for (const id of localIds(localEntries)) errors.push({ entityId: id, error: problem });
      }
    }
    for (const o of outcomes) {
      const ids = perSource.get(o.target.body.id)!.ids;
      if ('failure' in o) {
        const status = o.failure.reason === 'timeout' ? 504 : 503;
        for (const id of ids)
          errors.push({
            entityId: id,
            registrationId: o.target.body.id,
            error: new LdError('Unavailable', `context source ${o.failure.reason}`, status).toProblem(),
          });
      } else if (o.reply.status !== 508) readBatchAnswer(o.reply.status, parseJson(o.reply.body), success, errors, o.target.body.id, ids);
    }
    for (const e of errors) success.delete(e.entityId);
    if (errors.length === 0) {
      if (localResult !== undefined && !split && localEntries.length === entries.length) return localResult;
      if (operation === 'createBatch') return { status: 201, body: [...success] };
      return { status: 204 };
    }
    return { status: 207, body: { success: [...success], errors } };
  };
}

function isResult(v: unknown): v is OpResult {
  return typeof v === 'object' && v !== null && typeof (v as OpResult).status === 'number' && !(v instanceof Error);
}

function localIds(entries: unknown[]): string[] {
  const ids: string[] = [];
  for (const e of entries) {
    const id = typeof e === 'string' ? e : typeof e === 'object' && e !== null ? (e as { id?: unknown }).id : undefined;
    if (typeof id === 'string') ids.push(id);
  }
  return ids;
}

/** One part's batch answer read into the merged one: 2xx (every entry it was given), 207 (its own lists), else failed. */
function readBatchAnswer(
  status: number,
  body: unknown,
  success: Set<string>,
  errors: BatchError[],
  registrationId: string | undefined,
  ids: string[],
): void {
  const tag = (e: BatchError): BatchError => (registrationId === undefined ? e : { ...e, registrationId });
  if (status === 207 && typeof body === 'object' && body !== null) {
    const b = body as { success?: unknown; errors?: unknown };
    if (Array.isArray(b.success)) for (const id of b.success) if (typeof id === 'string') success.add(id);
    if (Array.isArray(b.errors))
      for (const e of b.errors as Array<{ entityId?: unknown; error?: unknown }>) {
        if (typeof e?.entityId !== 'string') continue;
        const p = e.error as Partial<ProblemDetails> | undefined;
        const error: ProblemDetails =
          typeof p?.type === 'string' && typeof p.status === 'number'
            ? {
                type: p.type.slice(0, 200),
                title: String(p.title ?? '').slice(0, 200),
                status: p.status,
                detail: typeof p.detail === 'string' ? p.detail.slice(0, 1000) : undefined,
              }
            : { type: 'https://uri.etsi.org/ngsi-ld/errors/InternalError', title: 'Context source error', status: 500 };
        errors.push(tag({ entityId: e.entityId.slice(0, 1024), error }));
      }
    return;
  }
  if (status >= 200 && status < 300) {
    for (const id of ids) success.add(id);
    return;
  }
  const p = body as Partial<ProblemDetails> | undefined;
  const error: ProblemDetails =
    typeof p === 'object' && p !== null && typeof p.type === 'string'
      ? {
          type: p.type.slice(0, 200),
          title: String(p.title ?? 'Context source error').slice(0, 200),
          status,
          detail: typeof p.detail === 'string' ? p.detail.slice(0, 1000) : undefined,
        }
      : {
          type: 'https://uri.etsi.org/ngsi-ld/errors/InternalError',
          title: 'Context source error',
          status,
          detail: `the context source answered ${status}`,
        };
  for (const id of ids) errors.push(tag({ entityId: id, error }));
}
