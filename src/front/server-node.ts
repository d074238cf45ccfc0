// The NGSI-LD front on node:http: the same dispatcher as uWS, for --httpServer node or where uWS cannot load.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Exchange } from './exchange.js';
import { BodyTooLarge, ClientGone } from './exchange.js';
import type { HttpServer, RequestHandler } from './http-server.js';

class NodeExchange implements Exchange {
  readonly method: string;
  readonly path: string;
  readonly query: string;
  private readonly bodyPromise: Promise<ArrayBuffer | null>;

  constructor(private readonly req: IncomingMessage, private readonly res: ServerResponse, maxBodySize: number) {
    this.method = (req.method ?? 'GET').toUpperCase();
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    this.path = q < 0 ? url : url.slice(0, q);
    this.query = q < 0 ? '' : url.slice(q + 1);
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
      this.req.on('close', () => { if (!ended) reject(new ClientGone()); });
    });
  }

  respond(status: number, headers: readonly string[], body: Uint8Array | null): void {
    if (!this.open) return;
    // The flat list as it is: a name may come twice (an object would keep the last one only).
    const out = headers.slice();
    // RFC 9110 §8.6: no Content-Length on a 204 or 304; otherwise it is given (node would chunk the body instead).
    if (status !== 204 && status !== 304) out.push('Content-Length', String(body === null ? 0 : body.byteLength));
    this.res.writeHead(status, out);
    this.res.end(body ?? undefined);
  }
}

export function createNodeServer(handler: RequestHandler, opts: { maxBodySize: number }): HttpServer {
  const server = createServer({ keepAliveTimeout: 65_000 }, (req, res) => handler(new NodeExchange(req, res, opts.maxBodySize)));
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
