// The NGSI-LD front on uWebSockets.js: everything a request needs from the socket is read synchronously in the
// handler (uWS invalidates `req` after it returns), the body through onData, the response written corked.
import { createRequire } from 'node:module';
import type { Exchange } from './exchange.js';
import { BodyTooLarge } from './exchange.js';
import { statusLine } from './status-line.js';
import { readUwsBody, wholeBuffer } from './uws-body.js';
import type { HttpServer, RequestHandler } from './http-server.js';

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

class UwsExchange implements Exchange {
  readonly method: string;
  readonly path: string;
  readonly query: string;
  open = true;
  private readonly headers: Record<string, string>;
  private readonly bodyPromise: Promise<ArrayBuffer | null>;

  constructor(private readonly res: HttpResponse, req: HttpRequest, allHeaders: boolean, maxBodySize: number) {
    this.method = req.getCaseSensitiveMethod().toUpperCase();
    this.path = req.getUrl();
    this.query = req.getQuery() ?? '';
    const headers: Record<string, string> = {};
    if (allHeaders) {
      req.forEach((k, v) => { headers[k] = headers[k] === undefined ? v : `${headers[k]}, ${v}`; });
    } else {
      for (const name of ['content-type', 'accept', 'link', 'ngsild-tenant', 'host', 'content-length', 'transfer-encoding']) {
        const v = req.getHeader(name);
        if (v !== '') headers[name] = v;
      }
    }
    this.headers = headers;
    const reading = BODY_METHODS.has(this.method)
      ? readUwsBody(res, headers['content-length'], headers['transfer-encoding'] !== undefined, maxBodySize, (max) => new BodyTooLarge(max))
      : undefined;
    res.onAborted(() => {
      this.open = false;
      reading?.abort();
    });
    this.bodyPromise = reading === undefined ? Promise.resolve(null) : reading.body.then((bytes) => (bytes === null ? null : wholeBuffer(bytes)));
    this.bodyPromise.catch(() => undefined);
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

  respond(status: number, headers: readonly string[], body: Uint8Array | null): void {
    if (!this.open) return;
    this.open = false;
    this.res.cork(() => {
      this.res.writeStatus(statusLine(status));
      for (let i = 0; i < headers.length; i += 2) this.res.writeHeader(headers[i]!, headers[i + 1]!);
      if (body === null) this.res.end();
      else this.res.end(body);
    });
  }
}

export function createUwsServer(uws: UwsModule, handler: RequestHandler, opts: { allHeaders: boolean; maxBodySize: number }): HttpServer {
  const app = uws.App();
  app.any('/*', (res, req) => {
    handler(new UwsExchange(res, req, opts.allHeaders, opts.maxBodySize));
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
      // uWS closes its remaining connections when the listen socket is gone and the loop has nothing left.
    },
  };
}
