// A WebSocket message as an Exchange (exchange.ts): the dispatcher runs it as it runs an HTTP request (route, auth,
// body cap, pipeline) and its answer is framed as {metadata: {correlationId, status, headers}, body}.
import type { Exchange } from '../exchange.js';
import { BodyTooLarge } from '../exchange.js';
import type { LdError } from '../../ngsild/problem.js';
import type { WsRequest } from './message.js';

const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH']);
const encoder = new TextEncoder();
const decoder = new TextDecoder();
const SUFFIX = encoder.encode('}');

/**
 * The bytes of one answer. A JSON body (every NGSI-LD answer the broker writes) is spliced in as it was serialized,
 * not parsed again; anything else is carried as a JSON string.
 */
export function encodeAnswer(
  correlationId: string | null,
  status: number,
  headers: readonly string[],
  body: Uint8Array | null,
): Uint8Array {
  const fields: Record<string, string> = {};
  let contentType = '';
  for (let i = 0; i < headers.length; i += 2) {
    const name = headers[i]!;
    const value = headers[i + 1]!;
    const had = fields[name];
    fields[name] = had === undefined ? value : `${had}, ${value}`;
    if (name.toLowerCase() === 'content-type') contentType = value;
  }
  const meta = JSON.stringify({ correlationId, status, headers: fields });
  if (body === null || body.byteLength === 0) return encoder.encode(`{"metadata":${meta}}`);
  if (!/json/i.test(contentType)) return encoder.encode(`{"metadata":${meta},"body":${JSON.stringify(decoder.decode(body))}}`);
  const prefix = encoder.encode(`{"metadata":${meta},"body":`);
  const out = new Uint8Array(prefix.byteLength + body.byteLength + 1);
  out.set(prefix, 0);
  out.set(body, prefix.byteLength);
  out.set(SUFFIX, prefix.byteLength + body.byteLength);
  return out;
}

export class WsExchange implements Exchange {
  readonly method: string;
  readonly path: string;
  readonly query: string;
  readonly headProblem: LdError | undefined;
  open = true;
  /** The runner's listener for the client going away (Exchange.onGone): the connection closing before the answer. */
  private gone: (() => void) | undefined;

  constructor(
    private readonly request: WsRequest,
    /** The connection's identifier (Exchange.connection): subscriptions created on it may name it as endpoint. */
    readonly connection: string,
    private readonly maxBodySize: number,
    /** Takes the answer's bytes; the connection may have closed since (then it drops them). */
    private readonly answer: (bytes: Uint8Array) => void,
  ) {
    this.method = request.method;
    this.path = request.path;
    this.query = request.query;
    this.headProblem = request.headProblem;
  }

  get correlationId(): string {
    return this.request.correlationId;
  }

  header(name: string): string | undefined {
    return this.request.headers[name];
  }

  allHeaders(): Record<string, string> {
    return this.request.headers;
  }

  body(): Promise<ArrayBuffer | null> {
    const bytes = this.request.body;
    if (!BODY_METHODS.has(this.method) || bytes === null) return Promise.resolve(null);
    if (bytes.byteLength > this.maxBodySize) return Promise.reject(new BodyTooLarge(this.maxBodySize));
    // The encoder's own buffer, whole: the pool transfers it to a pipeline thread.
    return Promise.resolve(
      bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength ? (bytes.buffer as ArrayBuffer) : bytes.slice().buffer,
    );
  }

  onGone(listener: () => void): void {
    this.gone = listener;
  }

  /** The connection closed before this request was answered: what the pool has not started is skipped. */
  closed(): void {
    if (!this.open) return;
    this.open = false;
    const gone = this.gone;
    this.gone = undefined;
    gone?.();
  }

  respond(status: number, headers: readonly string[], body: Uint8Array | null): void {
    if (!this.open) return;
    this.open = false;
    this.gone = undefined;
    // RFC 9110 §9.3.2 as over HTTP: HEAD answers the headers of the GET and no body; 204 and 304 have none.
    const sent = this.method === 'HEAD' || status === 204 || status === 304 ? null : body;
    this.answer(encodeAnswer(this.request.correlationId, status, headers, sent));
  }
}
