// The NGSI-LD front on uWebSockets.js: everything a request needs from the socket is read synchronously in the
// handler (uWS invalidates `req` after it returns), the body through onData, the response written corked.
import { createRequire } from 'node:module';
import type { Exchange } from './exchange.js';
import { BodyTooLarge } from './exchange.js';
import { statusLine } from './status-line.js';
import { readUwsBody, wholeBuffer } from './uws-body.js';
import type { HttpServer, RequestHandler } from './http-server.js';
import { MAX_HEAD_BYTES, headTooLarge, headerValueProblem } from './request-head.js';
import type { LdError } from '../ngsild/problem.js';

type UwsModule = typeof import('@trufflesuite/uws-js-unofficial');
type HttpResponse = import('@trufflesuite/uws-js-unofficial').HttpResponse;
type HttpRequest = import('@trufflesuite/uws-js-unofficial').HttpRequest;

const require = createRequire(import.meta.url);

/** uWS, or the reason it cannot be loaded on this platform. */
export function loadUws(): { uws?: UwsModule; reason?: string } {
  try {
    return { uws: require('@trufflesuite/uws-js-unofficial') as UwsModule };
  } catch (e) {
    return { reason: e instanceof Error ? e.message.split('\n')[0] : String(e) };
  }
}

const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH']);
/** The body of a request whose method has none: one settled promise for all of them, never rejected. */
const NO_BODY: Promise<ArrayBuffer | null> = Promise.resolve(null);

/**
 * The headers of the request being read, filled by `collect` inside the synchronous handler (uWS takes `req` back
 * when it returns): one reused callback rather than a closure per request.
 */
const scan = { headers: {} as Record<string, string>, size: 0, problem: undefined as LdError | undefined };

function collect(name: string, value: string): void {
  // name, ': ', value, CRLF as they stood in the head
  scan.size += name.length + value.length + 4;
  if (scan.problem === undefined) scan.problem = headerValueProblem(name, value);
  const had = scan.headers[name];
  scan.headers[name] = had === undefined ? value : `${had}, ${value}`;
}

class UwsExchange implements Exchange {
  readonly method: string;
  readonly path: string;
  readonly query: string;
  readonly headProblem: LdError | undefined;
  open = true;
  private readonly headers: Record<string, string>;
  private readonly bodyPromise: Promise<ArrayBuffer | null>;
  private gone: (() => void) | undefined;

  constructor(
    private readonly res: HttpResponse,
    req: HttpRequest,
    maxBodySize: number,
  ) {
    this.method = req.getCaseSensitiveMethod().toUpperCase();
    this.path = req.getUrl();
    this.query = req.getQuery() ?? '';
    // Every header is read (not only those the pipeline uses): each value is checked and the head measured, which
    // uWS's parser does not do (it holds up to 4 KiB of an unfinished head, but takes a larger one arriving at once).
    scan.headers = {};
    scan.size = this.method.length + this.path.length + this.query.length + 12;
    scan.problem = undefined;
    req.forEach(collect);
    const headers = scan.headers;
    this.headers = headers;
    this.headProblem = scan.size > MAX_HEAD_BYTES ? headTooLarge() : scan.problem;
    const reading = BODY_METHODS.has(this.method)
      ? readUwsBody(res, headers['content-length'], headers['transfer-encoding'] !== undefined, maxBodySize, (max) => new BodyTooLarge(max))
      : undefined;
    res.onAborted(() => {
      this.open = false;
      reading?.abort();
      this.gone?.();
    });
    if (reading === undefined) {
      this.bodyPromise = NO_BODY;
    } else {
      this.bodyPromise = reading.body.then((bytes) => (bytes === null ? null : wholeBuffer(bytes)));
      this.bodyPromise.catch(() => undefined);
    }
  }

  header(name: string): string | undefined {
    return this.headers[name];
  }

  allHeaders(): Record<string, string> {
    return this.headers;
  }

  body(): Promise<ArrayBuffer | null> {
    return this.bodyPromise;
  }

  onGone(listener: () => void): void {
    this.gone = listener;
  }

  respond(status: number, headers: readonly string[], body: Uint8Array | null): void {
    if (!this.open) return;
    this.open = false;
    this.res.cork(() => {
      this.res.writeStatus(statusLine(status));
      for (let i = 0; i < headers.length; i += 2) this.res.writeHeader(headers[i]!, headers[i + 1]!);
      // RFC 9110 §8.6: no Content-Length on a 204 or 304; §9.3.2: HEAD gets the length of the body it does not get,
      // written as a header: uWS 20.43's endWithoutBody(length) leaves the response waiting for that many bytes, and
      // the connection then serves nothing more.
      if (status === 204 || status === 304) this.res.endWithoutBody();
      else if (this.method === 'HEAD') this.res.writeHeader('Content-Length', String(body === null ? 0 : body.byteLength)).endWithoutBody();
      else if (body === null) this.res.end();
      else this.res.end(body);
    });
  }
}

export function createUwsServer(
  uws: UwsModule,
  handler: RequestHandler,
  opts: { maxBodySize: number; websocket?: (app: import('@trufflesuite/uws-js-unofficial').TemplatedApp) => void },
): HttpServer {
  const app = uws.App();
  // The WebSocket route (front/ws/) takes only upgrade requests on its path; every other request is the handler's.
  opts.websocket?.(app);
  app.any('/*', (res, req) => {
    handler(new UwsExchange(res, req, opts.maxBodySize));
  });
  let token: unknown;
  return {
    kind: 'uws',
    listen(host: string, port: number): Promise<number> {
      return new Promise((resolve, reject) => {
        app.listen(host, port, (t) => {
          if (!t) return reject(new Error(`cannot listen on ${host}:${port}`));
          token = t;
          resolve(uws.us_socket_local_port(t));
        });
      });
    },
    close(): void {
      if (token) uws.us_listen_socket_close(token as never);
      token = undefined;
    },
    closeAll(): void {
      // Every connection, kept-alive ones too: a broker in a program that goes on (createBroker) leaves none open.
      // uWS 20.30 has App.close() (its typings do not say so yet).
      (app as unknown as { close?: () => void }).close?.();
    },
  };
}
