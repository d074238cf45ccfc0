// The NGSI-LD front on node:http: the same dispatcher as uWS, for --httpServer node or where uWS cannot load.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Exchange } from './exchange.js';
import { BodyTooLarge, ClientGone } from './exchange.js';
import type { HttpServer, RequestHandler } from './http-server.js';
import { MAX_HEAD_BYTES, headerValueProblem, missingHost } from './request-head.js';
import { statusLine } from './status-line.js';
import { LdError } from '../ngsild/problem.js';
import { WS_PATH } from './ws/path.js';

class NodeExchange implements Exchange {
  readonly method: string;
  readonly path: string;
  readonly query: string;
  readonly headProblem: LdError | undefined;
  private readonly bodyPromise: Promise<ArrayBuffer | null>;

  constructor(
    private readonly req: IncomingMessage,
    private readonly res: ServerResponse,
    maxBodySize: number,
  ) {
    this.method = (req.method ?? 'GET').toUpperCase();
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    this.path = q < 0 ? url : url.slice(0, q);
    this.query = q < 0 ? '' : url.slice(q + 1);
    this.headProblem = headProblemOf(req);
    this.bodyPromise = this.readBody(maxBodySize);
    this.bodyPromise.catch(() => undefined);
  }

  get open(): boolean {
    return !this.res.headersSent && !this.res.destroyed;
  }

  header(name: string): string | undefined {
    const v = this.req.headers[name];
    return Array.isArray(v) ? v.join(', ') : v;
  }

  allHeaders(): Record<string, string> {
    const out: Record<string, string> = {};
    for (const [k, v] of Object.entries(this.req.headers)) if (v !== undefined) out[k] = Array.isArray(v) ? v.join(', ') : v;
    return out;
  }

  body(): Promise<ArrayBuffer | null> {
    return this.bodyPromise;
  }

  onGone(listener: () => void): void {
    // 'close' also ends an answered response: only one closed before its end is a client gone.
    this.res.once('close', () => {
      if (!this.res.writableEnded) listener();
    });
  }

  private readBody(max: number): Promise<ArrayBuffer | null> {
    const declared = Number(this.req.headers['content-length'] ?? -1);
    if (declared > max) {
      this.req.resume();
      return Promise.reject(new BodyTooLarge(max));
    }
    return new Promise((resolve, reject) => {
      const chunks: Buffer[] = [];
      let length = 0;
      let ended = false;
      this.req.on('data', (chunk: Buffer) => {
        length += chunk.byteLength;
        if (length > max) {
          this.req.removeAllListeners('data');
          this.req.resume();
          reject(new BodyTooLarge(max));
          return;
        }
        chunks.push(chunk);
      });
      this.req.on('end', () => {
        ended = true;
        if (length === 0) return resolve(null);
        const all = Buffer.concat(chunks, length);
        resolve(all.buffer.slice(all.byteOffset, all.byteOffset + all.byteLength) as ArrayBuffer);
      });
      // The client went away mid-body: nothing waits for the rest, and it is not a broker failure.
      this.req.on('error', () => reject(new ClientGone()));
      this.req.on('close', () => {
        if (!ended) reject(new ClientGone());
      });
    });
  }

  respond(status: number, headers: readonly string[], body: Uint8Array | null): void {
    if (!this.open) return;
    // The flat list as it is: a name may come twice (an object would keep the last one only).
    const out = headers.slice();
    // RFC 9110 §8.6: no Content-Length on a 204 or 304; otherwise it is given (node would chunk the body instead).
    if (status !== 204 && status !== 304) out.push('Content-Length', String(body === null ? 0 : body.byteLength));
    this.res.writeHead(status, out);
    // node:http sends no body to a HEAD request whatever is written (RFC 9110 §9.3.2)
    this.res.end(body === null || this.method === 'HEAD' ? undefined : body);
  }
}

/** request-head.ts's checks; node:http measured the head itself (maxHeaderSize) and refused the CTLs it knows. */
function headProblemOf(req: IncomingMessage): LdError | undefined {
  if (req.httpVersionMajor === 1 && req.httpVersionMinor === 1 && req.headers.host === undefined) return missingHost();
  const raw = req.rawHeaders;
  for (let i = 0; i < raw.length; i += 2) {
    const problem = headerValueProblem(raw[i]!, raw[i + 1]!);
    if (problem !== undefined) return problem;
  }
  return undefined;
}

/**
 * A request node:http's parser refused (malformed, head over MAX_HEAD_BYTES, head not complete in time): answered with
 * a ProblemDetails and the connection closed (RFC 9112 §2.2, §9.6), as node:http would but with a body that says why.
 * Nothing is written while a response to an earlier request of the connection is under way: it would be cut in two.
 */
function onClientError(error: NodeJS.ErrnoException, socket: Duplex): void {
  const busy = (socket as Duplex & { _httpMessage?: unknown })._httpMessage;
  if (socket.writable && !busy && error.code !== 'ECONNRESET') {
    const status = error.code === 'HPE_HEADER_OVERFLOW' ? 431 : error.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : 400;
    const detail =
      status === 431
        ? `the request head is larger than ${MAX_HEAD_BYTES} bytes`
        : status === 408
          ? 'the request head did not arrive in time'
          : 'the request is not valid HTTP/1.1';
    const body = JSON.stringify(new LdError('BadRequestData', detail, status).toProblem());
    // RFC 9110 §9.3.2: a HEAD gets the head only, even refused (a client would read the body as a next answer).
    const head = (error as { rawPacket?: Buffer }).rawPacket?.subarray(0, 5).toString('latin1') === 'HEAD ';
    socket.once('finish', () => socket.destroy());
    socket.end(
      `HTTP/1.1 ${statusLine(status)}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${head ? '' : body}`,
    );
    return;
  }
  socket.destroy();
}

function refuseWebSocket(res: ServerResponse): void {
  const body = JSON.stringify(
    new LdError('OperationNotSupported', 'the WebSocket transport needs the uWebSockets.js server (--httpServer uws)', 501).toProblem(),
  );
  res.writeHead(501, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) });
  res.end(body);
}

export function createNodeServer(handler: RequestHandler, opts: { maxBodySize: number }): HttpServer {
  // requireHostHeader off: the front answers a missing Host itself, with a ProblemDetails (request-head.ts).
  const server = createServer({ keepAliveTimeout: 65_000, maxHeaderSize: MAX_HEAD_BYTES, requireHostHeader: false }, (req, res) => {
    // The WebSocket transport is served by the uWS front only (README "WebSocket"): its upgrade is refused in words here.
    if (req.headers.upgrade !== undefined && (req.url ?? '').split('?')[0] === WS_PATH) return refuseWebSocket(res);
    handler(new NodeExchange(req, res, opts.maxBodySize));
  });
  server.on('clientError', onClientError);
  return {
    kind: 'node',
    listen(host: string, port: number): Promise<number> {
      return new Promise((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, host, () => {
          const addr = server.address();
          resolve(typeof addr === 'object' && addr !== null ? addr.port : port);
        });
      });
    },
    close(): void {
      server.close();
      server.closeIdleConnections();
    },
    closeAll(): void {
      server.closeAllConnections();
    },
  };
}
