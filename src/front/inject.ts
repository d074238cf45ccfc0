// A request handed to the dispatcher from memory (Broker.inject): the head checks, body cap and answer framing of
// the uWS server (server-uws.ts), without a socket. For tests and embedding programs; the broker's path is the same.
import type { Exchange } from './exchange.js';
import { BodyTooLarge } from './exchange.js';
import { MAX_HEAD_BYTES, headTooLarge, headerValueProblem } from './request-head.js';
import type { RequestHandler } from './http-server.js';
import type { LdError } from '../ngsild/problem.js';

export interface InjectRequest {
  method: string;
  /** The request target as it would stand in the request line: path, then `?` and the query string. */
  url: string;
  /**
   * Header names in any case; a value is taken as it is. (uWS, unlike this, trims bytes from 0x80 up at both ends of
   * a value before the broker sees it: front/request-head.ts.)
   */
  headers?: Record<string, string>;
  body?: string | Uint8Array | null;
}

export interface InjectReply {
  status: number;
  /** Header fields as written, in order (names as the broker wrote them), Content-Length last unless 204 or 304. */
  headers: Array<[string, string]>;
  /** Empty for HEAD, 204 and 304. */
  body: Uint8Array;
}

const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH']);
const encoder = new TextEncoder();

export class InjectExchange implements Exchange {
  readonly method: string;
  readonly path: string;
  readonly query: string;
  readonly headProblem: LdError | undefined;
  open = true;
  private readonly headers: Record<string, string> = {};
  private readonly bodyPromise: Promise<ArrayBuffer | null>;
  private answered: ((reply: InjectReply) => void) | undefined;

  /**
   * Runs one request through `handler` and resolves with its answer. The handler runs in a turn of the event loop of
   * its own, as a request read from a socket does: never inside the caller's turn, where the store's read snapshot
   * of that turn could still be the one from before the caller's last write.
   */
  static run(request: InjectRequest, maxBodySize: number, handler: RequestHandler): Promise<InjectReply> {
    return new Promise((resolve) => {
      const ex = new InjectExchange(request, maxBodySize);
      ex.answered = resolve;
      setImmediate(handler, ex);
    });
  }

  private constructor(request: InjectRequest, maxBodySize: number) {
    this.method = request.method.toUpperCase();
    const q = request.url.indexOf('?');
    this.path = q < 0 ? request.url : request.url.slice(0, q);
    this.query = q < 0 ? '' : request.url.slice(q + 1);
    // As server-uws.ts measures and checks the head it read.
    let size = this.method.length + this.path.length + this.query.length + 12;
    let problem: LdError | undefined;
    for (const [name, value] of Object.entries(request.headers ?? {})) {
      const lower = name.toLowerCase();
      size += lower.length + value.length + 4;
      problem ??= headerValueProblem(lower, value);
      const had = this.headers[lower];
      this.headers[lower] = had === undefined ? value : `${had}, ${value}`;
    }
    this.headProblem = size > MAX_HEAD_BYTES ? headTooLarge() : problem;
    const bytes =
      request.body === undefined || request.body === null
        ? null
        : typeof request.body === 'string'
          ? encoder.encode(request.body)
          : request.body;
    if (!BODY_METHODS.has(this.method) || bytes === null || bytes.byteLength === 0) this.bodyPromise = Promise.resolve(null);
    else if (bytes.byteLength > maxBodySize) this.bodyPromise = Promise.reject(new BodyTooLarge(maxBodySize));
    // A copy of its own: the pool transfers the body to a pipeline thread.
    else this.bodyPromise = Promise.resolve(bytes.slice().buffer as ArrayBuffer);
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
    const fields: Array<[string, string]> = [];
    for (let i = 0; i < headers.length; i += 2) fields.push([headers[i]!, headers[i + 1]!]);
    // RFC 9110 §8.6: no Content-Length on a 204 or 304; §9.3.2: HEAD gets the length of the body it does not get.
    const length = body === null ? 0 : body.byteLength;
    if (status !== 204 && status !== 304) fields.push(['Content-Length', String(length)]);
    const sent = status === 204 || status === 304 || this.method === 'HEAD' || body === null ? new Uint8Array(0) : body.slice();
    this.answered?.({ status, headers: fields, body: sent });
  }
}
