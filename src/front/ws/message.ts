// One WebSocket message of the NGSI-LD transport read into a request (README "WebSocket"): a JSON object
// {metadata: {method, path, query?, headers?, correlationId}, body?}. Everything in it is checked here as the HTTP
// servers check a request line and head (request-head.ts), so the dispatcher sees the same kinds of values from both.
import { LdError } from '../../ngsild/problem.js';
import { MAX_HEAD_BYTES, headTooLarge, headerValueProblem } from '../request-head.js';

export interface WsRequest {
  correlationId: string;
  method: string;
  path: string;
  query: string;
  /** Lower-case names; values checked as header values (request-head.ts). */
  headers: Record<string, string>;
  /** The body re-serialized as JSON bytes; null when the message has none (or null). */
  body: Uint8Array | null;
  /** Why the request is refused before anything reads it (as Exchange.headProblem). */
  headProblem: LdError | undefined;
  /** Bytes of the message as received (what it holds while it waits for its turn). */
  size: number;
}

/** A message that is no request: answered with its correlation id when one could be read (null otherwise). */
export interface WsRejected {
  correlationId: string | null;
  problem: LdError;
}

/** The longest correlation id taken: it is echoed in the answer, so it is bounded like a header value. */
export const MAX_CORRELATION_ID = 256;
const METHOD = /^[A-Za-z]{1,16}$/;
/** A request target as it may stand in an HTTP request line (RFC 9112 §3.2): visible ASCII, no space. */
const TARGET = /^[\x21-\x7e]*$/;
/** A header name (RFC 9110 §5.1 token). */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const decoder = new TextDecoder('utf-8', { fatal: true });
const encoder = new TextEncoder();

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

const bad = (correlationId: string | null, detail: string): WsRejected => ({
  correlationId,
  problem: new LdError('BadRequestData', detail),
});

/** Reads one message; `maxBodySize` caps the re-serialized body (413 past it, as over HTTP). */
export function readWsMessage(bytes: ArrayBuffer, maxBodySize: number): WsRequest | WsRejected {
  let parsed: unknown;
  try {
    parsed = JSON.parse(decoder.decode(bytes));
  } catch {
    return bad(null, 'a WebSocket message must be a JSON object in UTF-8: {"metadata": {...}, "body": ...}');
  }
  if (!isObject(parsed) || !isObject(parsed.metadata))
    return bad(null, 'a WebSocket message must be a JSON object with a "metadata" object');
  const meta = parsed.metadata;
  const cid = meta.correlationId;
  if (typeof cid !== 'string' || cid.length === 0 || cid.length > MAX_CORRELATION_ID)
    return bad(null, `metadata.correlationId must be a string of 1 to ${MAX_CORRELATION_ID} characters`);
  for (const key of Object.keys(parsed))
    if (key !== 'metadata' && key !== 'body')
      return bad(cid, `a WebSocket message holds only "metadata" and "body" (not ${JSON.stringify(key.slice(0, 64))})`);
  const { method, path } = meta;
  const query = meta.query ?? '';
  if (typeof method !== 'string' || !METHOD.test(method)) return bad(cid, 'metadata.method must be an HTTP method name');
  if (typeof path !== 'string' || !path.startsWith('/') || !TARGET.test(path) || path.includes('?'))
    return bad(cid, 'metadata.path must be a path beginning with / in visible ASCII, without the query');
  if (typeof query !== 'string' || !TARGET.test(query))
    return bad(cid, 'metadata.query must be a query string (without ?) in visible ASCII');
  const upper = method.toUpperCase();
  // As the servers measure a request line and head (server-uws.ts): 431 past MAX_HEAD_BYTES.
  let size = upper.length + path.length + query.length + 12;
  let problem: LdError | undefined;
  // No prototype: a header named like a member of Object.prototype (`__proto__`, `toString`) is a header like any other.
  const headers: Record<string, string> = Object.create(null) as Record<string, string>;
  if (meta.headers !== undefined) {
    if (!isObject(meta.headers)) return bad(cid, 'metadata.headers must be an object of header names to string values');
    for (const [name, value] of Object.entries(meta.headers)) {
      if (typeof value !== 'string') return bad(cid, 'metadata.headers must be an object of header names to string values');
      if (!TOKEN.test(name)) return bad(cid, 'a header name in metadata.headers is not an HTTP token');
      const lower = name.toLowerCase();
      size += lower.length + value.length + 4;
      problem ??= headerValueProblem(lower, value);
      const had = headers[lower];
      headers[lower] = had === undefined ? value : `${had}, ${value}`;
    }
  }
  let body: Uint8Array | null = null;
  if (parsed.body !== undefined && parsed.body !== null) {
    let text: string;
    try {
      text = JSON.stringify(parsed.body);
    } catch {
      return bad(cid, 'the body of the message is nested too deeply');
    }
    body = encoder.encode(text);
    if (body.byteLength > maxBodySize)
      return { correlationId: cid, problem: new LdError('PayloadTooLarge', `the request body is larger than ${maxBodySize} bytes`) };
    // The body is JSON by construction: a message that names no media type sends it as application/json.
    headers['content-type'] ??= 'application/json';
  }
  return {
    correlationId: cid,
    method: upper,
    path,
    query,
    headers,
    body,
    headProblem: size > MAX_HEAD_BYTES ? headTooLarge() : problem,
    size: bytes.byteLength,
  };
}

export function isRejected(m: WsRequest | WsRejected): m is WsRejected {
  return (m as WsRejected).problem !== undefined;
}
