// Entity writes, distributed (CIM 009 v1.8.1 §4.3.6, §5.6 "distributed" behaviour of each operation): a write on an
// entity that registrations cover is sent to their sources as well as (inclusive), or instead of (exclusive,
// redirect: for what they register), the local store, all at once. Every part succeeds: the operation's own answer.
// Some part fails: 207 with the entity's outcome per part ({success, errors}: each error a ProblemDetails, with the
// registration of a source's), so a client knows what was written where. Auxiliary sources take no writes.
import { LdError, RefusalError, problemOf, type ProblemDetails } from '../../ngsild/problem.js';
import { writeTargets, type SourceTarget } from '../../ngsild/registration/match.js';
import { API_PREFIX } from '../../ngsild/operations.js';
import { pathSegment } from '../../ngsild/uri-encode.js';
import { LdRequest } from '../../pipeline/ld-request.js';
import type { WorkerContext } from '../../pipeline/worker-context.js';
import type { OpHandler, OpResult } from '../../pipeline/handler.js';
import { checkLoop } from './via.js';
import { fanOut, forwardedApiPath, liveRegistrations, localOnly, queryWithout, sourceUrl } from './sources.js';
import { parseJson } from './entities-from-source.js';

/** What a write names: its entity, the entity's types when the body gives them, the attributes written. */
export interface WriteShape {
  id: string;
  /** Expanded types of the body (a create); undefined: the stored ones, when the entity is local. */
  types?: string[];
  /** Body members that are attributes (compact, as given) with their expanded names; undefined: the whole entity. */
  attrs?: Array<{ key: string; iri: string }>;
  /** The write has a JSON object body, split per part by attribute. */
  hasBody: boolean;
  /** The body is one attribute (the .../attrs/{attrId} routes): sent whole, never split. */
  bodyIsAttribute?: boolean;
}

const LOCAL_PARAM: ReadonlySet<string> = new Set(['local']);
const NON_ATTRIBUTE_MEMBERS = new Set(['id', 'type', '@context', 'scope', 'createdAt', 'modifiedAt', 'expiresAt']);

/** The attributes of a JSON entity or fragment body, expanded with the request's @context. */
export function bodyAttrs(req: LdRequest): Array<{ key: string; iri: string }> {
  const body = req.jsonObject();
  const out: Array<{ key: string; iri: string }> = [];
  for (const key of Object.keys(body)) if (!NON_ATTRIBUTE_MEMBERS.has(key)) out.push({ key, iri: req.context.expandTerm(key) });
  return out;
}

/** A copy of the request whose body is `body` (the part of the write that stays local). */
function withBody(req: LdRequest, body: Record<string, unknown>): LdRequest {
  const bytes = new TextEncoder().encode(JSON.stringify(body));
  const sub = new LdRequest({ ...req.task, body: bytes.buffer as ArrayBuffer }, req.wait);
  sub.context = req.context;
  sub.tenant = req.tenant;
  sub.media = req.media;
  return sub;
}

function pick(body: Record<string, unknown>, keep: (key: string) => boolean): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(body)) if (NON_ATTRIBUTE_MEMBERS.has(k) || keep(k)) out[k] = v;
  return out;
}

interface PartError {
  entityId: string;
  registrationId?: string;
  error: ProblemDetails;
}

/**
 * The handler `local` made distributed for the registration operation `operation`; `shape` reads what the request
 * writes (it may throw the request's 400 first, before anything is sent anywhere).
 */
export function distributedWrite(
  operation: string,
  local: OpHandler,
  shape: (req: LdRequest, ctx: WorkerContext) => Promise<WriteShape>,
): OpHandler {
  return async (req, ctx) => {
    if (localOnly(req)) return local(req, ctx);
    const regs = await liveRegistrations(req, ctx);
    if (regs.length === 0) return local(req, ctx);
    const s = await shape(req, ctx);
    const types = s.types ?? (await ctx.store.getEntityTypes(req.tenant, s.id));
    const targets = writeTargets(
      regs,
      operation,
      s.id,
      types,
      s.attrs?.map((a) => a.iri),
    );
    if (targets.length === 0) return local(req, ctx);
    checkLoop(req, ctx);
    // §4.3.6.3, §4.3.6.4: what an exclusive or redirect registration names is written there only.
    const held = (t: SourceTarget): boolean => t.mode === 'exclusive' || t.mode === 'redirect';
    const wholeElsewhere = targets.some((t) => held(t) && t.attrs === undefined);
    const heldAttrs = new Set<string>();
    for (const t of targets) if (held(t) && t.attrs !== undefined) for (const a of t.attrs) heldAttrs.add(a);
    const body = s.hasBody ? req.jsonObject() : undefined;
    let localReq: LdRequest | undefined = req;
    if (wholeElsewhere) localReq = undefined;
    else if (heldAttrs.size > 0 && s.attrs !== undefined && s.bodyIsAttribute === true) {
      if (s.attrs.every((a) => heldAttrs.has(a.iri))) localReq = undefined;
    } else if (heldAttrs.size > 0 && s.attrs !== undefined) {
      const kept = s.attrs.filter((a) => !heldAttrs.has(a.iri));
      if (kept.length === 0) localReq = undefined;
      else if (body !== undefined)
        localReq = withBody(
          req,
          pick(body, (k) => kept.some((a) => a.key === k)),
        );
    }
    const apiPath = forwardedApiPath(req);
    const query = queryWithout(req.task.query, LOCAL_PARAM);
    const sourceBody = (t: SourceTarget): string | undefined => {
      if (body === undefined) return undefined;
      if (t.attrs === undefined || s.attrs === undefined || s.bodyIsAttribute === true) return JSON.stringify(body);
      return JSON.stringify(pick(body, (k) => s.attrs!.some((a) => a.key === k && t.attrs!.has(a.iri))));
    };
    // seed 000 §5.2: with an auth plugin the local part runs first, so a refused write is sent nowhere.
    let early: unknown;
    if (ctx.auth !== undefined && localReq !== undefined) {
      early = await local(localReq, ctx).catch((e: unknown) => e);
      if (early instanceof RefusalError) throw early;
    }
    const [localOutcome, outcomes] = await Promise.all([
      early !== undefined ? early : localReq === undefined ? undefined : local(localReq, ctx).catch((e: unknown) => e),
      fanOut(req, ctx, targets, (t) => ({
        method: req.method,
        url: sourceUrl(t.body, apiPath, query),
        body: sourceBody(t),
        contentType: body === undefined ? undefined : (req.header('content-type') ?? 'application/json'),
      })),
    ]);
    const errors: PartError[] = [];
    if (localOutcome !== undefined && !isResult(localOutcome)) {
      const problem = problemOf(localOutcome);
      if (problem === undefined) throw localOutcome;
      errors.push({ entityId: s.id, error: problem });
    }
    for (const o of outcomes) {
      if ('failure' in o) {
        const timeout = o.failure.reason === 'timeout';
        errors.push({
          entityId: s.id,
          registrationId: o.target.body.id,
          error: new LdError('Unavailable', `context source ${o.failure.reason}`, timeout ? 504 : 503).toProblem(),
        });
      } else if (o.reply.status === 508) {
        // The source is where this request came from (its Via names it): it has the write already.
        continue;
      } else if (o.reply.status >= 300)
        errors.push({ entityId: s.id, registrationId: o.target.body.id, error: sourceProblem(o.reply.status, o.reply.body) });
    }
    if (errors.length === 0) {
      if (isResult(localOutcome)) return localOutcome;
      if (operation === 'createEntity') return { status: 201, headers: ['Location', `${API_PREFIX}/entities/${pathSegment(s.id)}`] };
      return { status: 204 };
    }
    // Only the local part ran, and failed: the operation's own error, as without registrations.
    if (outcomes.length === 0 && localOutcome !== undefined) throw localOutcome;
    const succeeded =
      (localOutcome !== undefined && isResult(localOutcome)) || outcomes.some((o) => !('failure' in o) && o.reply.status < 300);
    return { status: 207, body: { success: succeeded ? [s.id] : [], errors } };
  };
}

function isResult(v: unknown): v is OpResult {
  return typeof v === 'object' && v !== null && typeof (v as OpResult).status === 'number' && !(v instanceof Error);
}

/** A source's error answer as a ProblemDetails: its own when it gave one, else one naming its status. */
function sourceProblem(status: number, text: string): ProblemDetails {
  const p = parseJson(text) as Partial<ProblemDetails> | undefined;
  const clean = (s: unknown, max: number): string | undefined => (typeof s === 'string' ? s.slice(0, max) : undefined);
  if (p !== undefined && typeof p === 'object' && p !== null && typeof p.type === 'string')
    return { type: clean(p.type, 200)!, title: clean(p.title, 200) ?? 'Context source error', status, detail: clean(p.detail, 1000) };
  return {
    type: 'https://uri.etsi.org/ngsi-ld/errors/InternalError',
    title: 'Context source error',
    status,
    detail: `the context source answered ${status}`,
  };
}
