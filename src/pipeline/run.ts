// What a pipeline worker does for one request (ARCHITECTURE.md steps 5 to 10), in this order:
// authorize (before @context) → negotiate → @context → authorize (after) → tenant → operation → serialize.
import { LdError, ErrorType, problemOf } from '../ngsild/problem.js';
import { LdOp, ldOpName } from '../ngsild/operations.js';
import type { PipelineResult, PipelineTask } from './task.js';
import { LdRequest } from './ld-request.js';
import { negotiate, LD_JSON, GEO_JSON, JSON_TYPE } from './media.js';
import type { WorkerContext } from './worker-context.js';
import type { OpHandlers, OpResult } from './handler.js';
import { resolveRequestContext } from './context-step.js';
import { resolveTenant } from './tenant-step.js';
import { formatLinkHeader } from '../ngsild/context/link-header.js';
import { problemResult, refusalResult } from './problem-result.js';
import type { FetchWaiter } from '../ngsild/context/shared-build.js';
import { keepUsedContexts } from './contexts/kept-contexts.js';
import { servedUrl } from './contexts/served-url.js';
import { linkUrlIn } from '../ngsild/context/resolved.js';
import { bodyBytes } from './body-bytes.js';

/** Never rejects: every failure is a ProblemDetails result. `wait` hears of @contexts to fetch (context-wait.ts). */
export async function runPipeline(
  threadCtx: WorkerContext,
  task: PipelineTask,
  handlers: OpHandlers,
  wait?: FetchWaiter,
): Promise<PipelineResult> {
  // seed 001 §1: a bridge sample is the broker's own write, not asked to the auth plugin (no hook, no entity hook).
  const ctx = task.internal === true && threadCtx.auth !== undefined ? { ...threadCtx, auth: undefined } : threadCtx;
  // A subscription another thread changed before this request came is applied here first, then the store is read as
  // it is now: both before anything of the request is decided.
  const behind = ctx.changes?.caughtUp?.();
  if (behind !== undefined) await behind;
  ctx.store.freshen?.();
  const req = new LdRequest(task, wait);
  const result = await runSteps(ctx, req, task, handlers);
  if (task.headers.snapshot !== undefined) echoSnapshot(req, result);
  return result;
}

/**
 * CIM 009 v1.9.1 §6.3.22: an answer to a request with NGSILD-Snapshot carries it too, whatever the answer; only a
 * value that is a URI within the id limit (the request's 400 says why another is not) reaches the header.
 */
function echoSnapshot(req: LdRequest, result: PipelineResult): void {
  let id: string | undefined;
  try {
    id = req.snapshotId();
  } catch {
    return;
  }
  if (id !== undefined) result.headers.push('NGSILD-Snapshot', id);
}

async function runSteps(ctx: WorkerContext, req: LdRequest, task: PipelineTask, handlers: OpHandlers): Promise<PipelineResult> {
  try {
    // seed 000 §5.1 rule 3: the broker's own requests are not asked.
    const auth = task.internal === true ? undefined : ctx.auth;
    if (auth !== undefined && auth.beforeContext) {
      // seed 000 §5.1: right after authenticate, before anything of the request is judged (406 included)
      const refusal = await auth.authorize(req);
      if (refusal !== null) return refusalResult(refusal);
    }
    // The front's own answer to a request no operation serves, given once authorize let it through (dispatch.ts).
    if (task.answer !== undefined) return task.answer;
    req.media = negotiate(task.headers.accept, req.operation.geoJson);
    // CIM 009 §5.13.2: the body of POST /jsonldContexts is the @context to keep, not the request's own.
    await resolveRequestContext(req, ctx, req.operation.body !== 'none' && req.op !== LdOp.CreateContext);
    if (auth !== undefined && !auth.beforeContext) {
      const refusal = await auth.authorize(req);
      if (refusal !== null) return refusalResult(refusal);
    }
    await resolveTenant(req, ctx, req.operation.createsTenant);
    const handler = handlers.get(req.op);
    if (handler === undefined)
      throw new LdError('OperationNotSupported', `${ldOpName(req.op)} (${req.method} ${req.route}) is not implemented yet`);
    // CIM 009 v1.8.1 §6.3.20: a parameter the operation does not take is refused before it does anything.
    req.query.only(req.operation.params);
    const opResult = await handler(req, ctx);
    // CIM 009 §5.13.1: what the request used is kept in its tenant before the answer links it.
    if (opResult.status < 400) {
      const keeping = keepUsedContexts(req, ctx, req.context);
      if (keeping !== undefined) await keeping;
      for (const other of req.otherContexts) await keepUsedContexts(req, ctx, other);
    }
    const result = render(req, ctx, opResult);
    if (ctx.log.isLevelEnabled('debug')) ctx.log.debug({ op: ldOpName(req.op), path: req.path, status: result.status }, 'request');
    return result;
  } catch (error) {
    return failure(ctx, req, error);
  } finally {
    if (task.internal !== true) ctx.auth?.release(req);
  }
}

function render(req: LdRequest, ctx: WorkerContext, result: OpResult): PipelineResult {
  const headers = result.headers ?? [];
  if (result.body === undefined && result.encoded === undefined) return { status: result.status, headers, body: null };
  let contentType = JSON_TYPE;
  if (result.withContext) {
    if (req.media === LD_JSON) contentType = LD_JSON;
    else if (req.media === GEO_JSON && result.geoJson) contentType = GEO_JSON;
    // First: a client reading one Link finds the @context, as before pagination links (ops/page-links.ts) came.
    else headers.unshift('Link', formatLinkHeader(servedUrl(req, ctx.config, linkUrlIn(req.context, req.apiTenant))));
  }
  headers.push('Content-Type', contentType);
  const body = result.encoded ?? bodyBytes(req, result.body, result.withContext, result.geoJson);
  return { status: result.status, headers, body, examined: result.examined };
}

function failure(ctx: WorkerContext, req: LdRequest, error: unknown): PipelineResult {
  const problem = problemOf(error);
  if (problem !== undefined) {
    const retryAfter = error instanceof LdError ? error.retryAfter : undefined;
    return problemResult(problem, retryAfter === undefined ? [] : ['Retry-After', String(retryAfter)], req.task.headers.accept);
  }
  ctx.log.error({ err: error, op: ldOpName(req.op), path: req.path }, 'request failed');
  return problemResult(
    {
      type: ErrorType.InternalError,
      title: 'Internal error',
      status: 500,
      detail: 'the broker failed to process the request; see its log',
    },
    [],
    req.task.headers.accept,
  );
}
