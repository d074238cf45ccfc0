// The front's request path (ARCHITECTURE.md steps 1 to 4 and 12): head checks, route lookup, authenticate,
// 404/405/415, OPTIONS, body read (bounded), hand-off to the pipeline runner, response. Never parses JSON, never
// touches the store. Every answer leaves through `respond`, where its headers pass safeHeaders.
import { lookupRoute, type RouteMatch } from './router.js';
import { LdOp, operationOf } from '../ngsild/operations.js';
import type { Exchange } from './exchange.js';
import { BodyTooLarge, ClientGone } from './exchange.js';
import { Overloaded, type PipelineRunner } from '../pipeline/runner.js';
import type { PipelineResult, PipelineTask } from '../pipeline/task.js';
import { problemResult } from '../pipeline/problem-result.js';
import { LdError, ErrorType } from '../ngsild/problem.js';
import { checkContentType } from '../pipeline/media.js';
import type { FrontAuth } from './front-auth.js';
import { safeHeaders } from './header-safety.js';
import type { Logger } from '../logger.js';
import type { CorsPolicy } from './cors.js';
import type { RequestCounts } from './request-counts.js';

/** What each path parameter of the catalog names, for the 400 of an empty segment. */
const PARAM_LABELS: Readonly<Record<string, string>> = {
  entityId: 'entity id',
  attrId: 'attribute name',
  instanceId: 'instance id',
  subscriptionId: 'subscription id',
  registrationId: 'registration id',
  contextId: '@context id',
  type: 'entity type',
  entityMapId: 'entity map id',
  snapshotId: 'snapshot id',
};

export interface FrontDeps {
  runner: PipelineRunner;
  auth: FrontAuth | undefined;
  /** --corsOrigin: absent, no CORS header is written. */
  cors: CorsPolicy | undefined;
  log: Logger;
  /** Requests currently being handled (for a clean shutdown). */
  inFlight: { count: number };
  /** Answers counted by operation and status (README "Metrics"); undefined with --metrics false. */
  counts: RequestCounts | undefined;
}

export async function dispatch(ex: Exchange, deps: FrontDeps): Promise<void> {
  deps.inFlight.count++;
  let op = LdOp.None;
  // 0: nothing was written (the client went away).
  let status = 0;
  try {
    // A head the server read but the broker cannot take as sent: refused before anything reads it.
    if (ex.headProblem !== undefined) throw ex.headProblem;
    const match = lookupRoute(ex.method, ex.path);
    if (match.kind === 'op') op = match.op;
    status = await handle(ex, deps, match);
  } catch (error) {
    if (error instanceof ClientGone) return;
    if (error instanceof BodyTooLarge) {
      status = respond(ex, problemOf(new LdError('PayloadTooLarge', error.message)), deps);
    } else if (error instanceof Overloaded) {
      const result = problemOf(error);
      result.headers.push('Retry-After', String(error.retryAfterSeconds));
      status = respond(ex, result, deps);
    } else if (error instanceof LdError) {
      status = respond(ex, problemOf(error), deps);
    } else {
      deps.log.error({ err: error, path: ex.path }, 'front failed');
      status = respond(
        ex,
        problemResult(
          { type: ErrorType.InternalError, title: 'Internal error', status: 500, detail: 'the broker failed to process the request' },
          [],
        ),
        deps,
      );
    }
  } finally {
    deps.inFlight.count--;
    if (status !== 0) deps.counts?.count(op, status);
  }
}

/** The status written (0: none, the client went away). */
async function handle(ex: Exchange, deps: FrontDeps, match: RouteMatch): Promise<number> {
  const op = match.kind === 'op' ? match.op : LdOp.None;
  let identity: unknown;
  if (deps.auth !== undefined) {
    // seed 000 §5.1: authenticate right after route lookup, before any 404/405/415 and before the body is read.
    const outcome = await deps.auth.authenticate(ex, op, match.kind === 'op' ? match.route : '', match.kind === 'op' ? match.params : []);
    if (outcome.refusal !== undefined) return respond(ex, outcome.refusal, deps);
    identity = outcome.identity;
  }
  // seed 000 §5.1: a plugin that authorizes before the @context decides every request before the broker answers
  // one it does not serve, as the reference chain's gateway does before its upstream sees the request.
  const authorizesFirst = deps.auth?.authorizesFirst === true;
  const contentType = ex.header('content-type');
  let answer: PipelineResult | undefined;
  if (match.kind !== 'op') {
    answer = unroutedAnswer(ex, match, deps);
    if (!authorizesFirst) return respond(ex, answer, deps);
  }
  let body: ArrayBuffer | null = null;
  // An unrouted request's body is read only for authorize (http:bodyValue reads it, seed 000 §5.6).
  if (answer !== undefined || operationOf(op).body !== 'none') {
    body = await ex.body();
    if (body !== null && answer === undefined) {
      try {
        checkContentType(contentType, ex.method === 'PATCH');
      } catch (e) {
        if (!authorizesFirst || !(e instanceof LdError)) throw e;
        answer = problemOf(e);
      }
    }
  }
  const task: PipelineTask = {
    op,
    route: match.kind === 'op' ? match.route : '',
    // RFC 9110 §9.3.2: HEAD is GET without the body; the operation sees the GET, the auth plugin the HEAD (task.head).
    // An unrouted request keeps its method: only the auth plugin sees it.
    method: ex.method === 'HEAD' && answer === undefined ? 'GET' : ex.method,
    path: ex.path,
    query: ex.query,
    params: match.kind === 'op' ? match.params : [],
    headers: {
      contentType,
      accept: ex.header('accept'),
      link: ex.header('link'),
      tenant: ex.header('ngsild-tenant'),
      snapshot: ex.header('ngsild-snapshot'),
      entityMap: ex.header('ngsild-entitymap'),
      host: ex.header('host'),
      via: ex.header('via'),
      all: deps.auth !== undefined ? ex.allHeaders() : undefined,
    },
    body,
    identity,
    head: ex.method === 'HEAD',
    answer,
  };
  if (ex.connection !== undefined) task.connection = ex.connection;
  // A client that left while the request was authenticated or its body read gets nothing run for it.
  if (!ex.open) return 0;
  return respond(ex, await deps.runner.run(task, ex), deps);
}

/** The front's answer to a request no operation serves: 404, 400 (an empty path segment), 405 with Allow, OPTIONS. */
function unroutedAnswer(ex: Exchange, match: Exclude<RouteMatch, { kind: 'op' }>, deps: FrontDeps): PipelineResult {
  switch (match.kind) {
    case 'notFound':
      // CIM 009 v1.8 table 5.5.2-1: an unknown route names no resource of the API, so ResourceNotFound.
      return problemOf(new LdError('ResourceNotFound', `no NGSI-LD route for ${ex.method} ${ex.path}`));
    case 'emptyParam':
      return problemOf(
        new LdError('BadRequestData', `the ${PARAM_LABELS[match.name] ?? match.name} is missing from the path (an empty segment)`),
      );
    case 'badMethod': {
      const result = problemOf(new LdError('MethodNotAllowed', `${ex.method} is not allowed on ${ex.path}: ${match.allow}`));
      result.headers.push('Allow', match.allow);
      return result;
    }
    case 'options': {
      // RFC 9110 §9.3.7: OPTIONS tells the methods of the path; no body, so 204. A CORS preflight (Fetch §3.2.2) is
      // one, reached only once authenticated (and authorized) like any request (seed 000 §5.5 rule 1).
      const headers = ['Allow', match.allow];
      if (deps.cors !== undefined && ex.header('access-control-request-method') !== undefined)
        deps.cors.preflight(ex.header('origin'), match.allow, headers);
      return { status: 204, headers, body: null };
    }
  }
}

function problemOf(error: LdError): PipelineResult {
  return problemResult(error.toProblem(), []);
}

/**
 * The one way out: CORS headers added to every answer, and whatever built the headers, made safe to write here
 * (header-safety.ts). Returns the status written, 0 when the client is gone.
 */
function respond(ex: Exchange, result: PipelineResult, deps: FrontDeps): number {
  if (!ex.open) return 0;
  deps.cors?.answer(ex.header('origin'), result.headers);
  ex.respond(result.status, safeHeaders(result.headers, deps.log), result.body);
  return result.status;
}
