// The policy API (seed 000 §4.1): the PAP's `/policy` routes on a uWS app of its own, bound to --policyApiHost.
// No authentication and no authorization plugin here (rule 7), no NGSI-LD route, no WebSocket route.
import type { Logger } from '../logger.js';
import type { Store } from '../store/contract.js';
import { statusLine } from '../front/status-line.js';
import { readUwsBody } from '../front/uws-body.js';
import { ClientGone } from '../front/exchange.js';
import { safeHeaders } from '../front/header-safety.js';
import { PolicyBook, POLICY_COLLECTION, isPolicyId } from './policy-book.js';
import { parsePolicyBody } from './policy-body.js';
import { parsePaging } from './paging.js';
import { PolicyApiError, methodNotAllowed, notFound, badRequest, tooLarge, problemText } from './problem.js';

type UwsModule = typeof import('@trufflesuite/uws-js-unofficial');
type HttpResponse = import('@trufflesuite/uws-js-unofficial').HttpResponse;

export interface PolicyApiOptions {
  host: string;
  port: number;
  /** --maxBodySize: larger bodies are answered 413. */
  maxBodySize: number;
  log: Logger;
  /** Other brokers share the store (docdb): policies they change are seen here at the next request. */
  shared?: boolean;
}

export interface PolicyApiServer {
  readonly port: number;
  /** Stops listening and waits for the writes under way. */
  close(): Promise<void>;
  /** Closes every connection, at the end of the shutdown. */
  closeAll(): void;
}

type Route =
  { op: 'list' } | { op: 'create' } | { op: 'get' | 'put' | 'delete'; id: string } | { op: 'getByUid' | 'deleteByUid'; uid: string };

const PREFIX = '/policy/';
const UID_PREFIX = '/policy/odrl/';

/** The route of a request; a PolicyApiError (404, 405, 400) for anything the table of §4.1 does not have. */
function routeOf(method: string, path: string): Route {
  if (path === '/policy') {
    if (method === 'GET') return { op: 'list' };
    if (method === 'POST') return { op: 'create' };
    throw methodNotAllowed(method, 'GET, POST');
  }
  if (path.startsWith(UID_PREFIX) && path.length > UID_PREFIX.length) {
    let uid: string;
    try {
      uid = decodeURIComponent(path.slice(UID_PREFIX.length));
    } catch {
      throw badRequest('the odrl:uid in the path is not valid percent-encoding');
    }
    if (method === 'GET') return { op: 'getByUid', uid };
    if (method === 'DELETE') return { op: 'deleteByUid', uid };
    throw methodNotAllowed(method, 'GET, DELETE');
  }
  const id = path.slice(PREFIX.length);
  if (path.startsWith(PREFIX) && id !== '' && !id.includes('/')) {
    if (method === 'GET') return { op: 'get', id };
    if (method === 'DELETE') return { op: 'delete', id };
    if (method === 'PUT') {
      if (!isPolicyId(id)) throw badRequest(`a policy id is ten letters, not '${id}'`);
      return { op: 'put', id };
    }
    throw methodNotAllowed(method, 'GET, PUT, DELETE');
  }
  throw notFound(`no route for ${path}: this port serves the policy API (/policy) only`);
}

/** What a handler keeps of a request once uWS has taken `req` back. */
class PolicyExchange {
  open = true;
  /** Rejects the body being read when the client goes away, so nothing waits for it forever. */
  private abortBody: (() => void) | undefined;

  constructor(
    readonly res: HttpResponse,
    readonly problemType: string,
    private readonly log: Logger,
  ) {
    res.onAborted(() => {
      this.open = false;
      this.abortBody?.();
    });
  }

  /** The body, bounded by --maxBodySize (see readUwsBody); rejects with ClientGone when the client goes away. */
  body(contentLength: string, chunked: boolean, max: number): Promise<Uint8Array | null> {
    const reading = readUwsBody(this.res, contentLength, chunked, max, tooLarge);
    this.abortBody = reading.abort;
    return reading.body;
  }

  send(status: number, headers: ReadonlyArray<readonly [string, string]>, body?: string): void {
    if (!this.open) return;
    this.open = false;
    const flat = safeHeaders(headers.flat(), this.log);
    this.res.cork(() => {
      this.res.writeStatus(statusLine(status));
      for (let i = 0; i < flat.length; i += 2) this.res.writeHeader(flat[i]!, flat[i + 1]!);
      // RFC 9110 §8.6: no Content-Length on a 204.
      if (status === 204) this.res.endWithoutBody();
      else this.res.end(body);
    });
  }

  json(status: number, value: unknown): void {
    this.send(status, [['Content-Type', 'application/json']], JSON.stringify(value));
  }

  problem(error: PolicyApiError): void {
    const headers: Array<[string, string]> = [['Content-Type', this.problemType]];
    if (error.allow !== undefined) headers.push(['Allow', error.allow]);
    this.send(error.status, headers, problemText(error));
  }
}

async function handle(book: PolicyBook, route: Route, ex: PolicyExchange, query: string, body: Promise<Uint8Array | null>): Promise<void> {
  switch (route.op) {
    case 'list': {
      const { offset, limit } = parsePaging(query);
      ex.json(200, await book.list(offset, limit));
      return;
    }
    case 'create': {
      const id = await book.create(parsePolicyBody(await body));
      // seed 000 §4.1 rule 5: a create answers with an empty body; the id is in Location.
      ex.send(200, [['Location', id]]);
      return;
    }
    case 'put': {
      await book.put(route.id, parsePolicyBody(await body));
      ex.send(200, [['Location', route.id]]);
      return;
    }
    case 'get': {
      const entry = isPolicyId(route.id) ? await book.get(route.id) : undefined;
      if (entry === undefined) throw notFound(`no policy with id '${route.id}'`);
      ex.json(200, entry);
      return;
    }
    case 'getByUid': {
      const entry = await book.getByUid(route.uid);
      if (entry === undefined) throw notFound(`no policy with odrl:uid '${route.uid}'`);
      ex.json(200, entry);
      return;
    }
    case 'delete': {
      // seed 000 §4.1: 204 whether the policy existed or not.
      if (isPolicyId(route.id)) await book.delete(route.id);
      ex.send(204, []);
      return;
    }
    case 'deleteByUid': {
      await book.deleteByUid(route.uid);
      ex.send(204, []);
      return;
    }
  }
}

export async function startPolicyApi(uws: UwsModule, store: Store, opts: PolicyApiOptions): Promise<PolicyApiServer> {
  const { log, maxBodySize } = opts;
  // seed 000 §4.1 rule 1: the default tenant's collection of the broker's store.
  const book = await PolicyBook.open(store.collection('', POLICY_COLLECTION), opts.shared === true);
  const app = uws.App();
  app.any('/*', (res, req) => {
    // Everything needed from `req` is read now: uWS invalidates it when this callback returns.
    const method = req.getCaseSensitiveMethod().toUpperCase();
    const path = req.getUrl();
    const query = req.getQuery() ?? '';
    const accept = req.getHeader('accept');
    const contentLength = req.getHeader('content-length');
    const chunked = req.getHeader('transfer-encoding') !== '';
    const ex = new PolicyExchange(res, accept.includes('application/problem+json') ? 'application/problem+json' : 'application/json', log);
    let route: Route;
    try {
      route = routeOf(method, path);
    } catch (e) {
      ex.problem(e as PolicyApiError);
      return;
    }
    const body = route.op === 'create' || route.op === 'put' ? ex.body(contentLength, chunked, maxBodySize) : Promise.resolve(null);
    handle(book, route, ex, query, body).catch((e: unknown) => {
      if (e instanceof PolicyApiError) {
        ex.problem(e);
      } else if (!(e instanceof ClientGone)) {
        log.error({ err: e, method, path }, 'policy API request failed');
        ex.problem(new PolicyApiError(500, 'Internal Server Error', 'the broker failed to process the request'));
      }
    });
  });
  const token = await new Promise<unknown>((resolve, reject) => {
    app.listen(opts.host, opts.port, (t) => {
      if (t) resolve(t);
      else reject(new Error(`the policy API cannot listen on ${opts.host}:${opts.port}`));
    });
  });
  const port = uws.us_socket_local_port(token as never);
  log.info({ port, host: opts.host, policies: book.size }, 'policy API listening');
  return {
    port,
    async close(): Promise<void> {
      uws.us_listen_socket_close(token as never);
      await book.drain();
    },
    closeAll(): void {
      // Kept-alive connections too (App.close, uWS 20.30, not in its typings): a broker in a program that goes on
      // (createBroker) leaves none open.
      (app as unknown as { close?: () => void }).close?.();
    },
  };
}
