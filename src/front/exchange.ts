// What the front needs from an HTTP server library for one request, so uWS and node:http share one dispatcher.
import type { LdError } from '../ngsild/problem.js';

export interface Exchange {
  /** Upper-case method. */
  readonly method: string;
  readonly path: string;
  /** Raw query string without '?'. */
  readonly query: string;
  /** Why the request head is refused before anything else (request-head.ts), found while the server read it. */
  readonly headProblem: LdError | undefined;
  /** A request header by lower-case name. */
  header(name: string): string | undefined;
  /** Every request header (lower-case names); costs a copy, only asked when an auth plugin is loaded. */
  allHeaders(): Record<string, string>;
  /**
   * The body, read through the server's data callbacks up to `maxBodySize` bytes; null when empty.
   * Rejects with BodyTooLarge past the cap (checked against Content-Length first).
   */
  body(): Promise<ArrayBuffer | null>;
  /** The WebSocket connection a message came on (front/ws/); undefined over HTTP. */
  readonly connection?: string;
  /** False once the client went away: nothing may be written then. */
  readonly open: boolean;
  /**
   * `listener` is called once if the client goes away before the answer is written (the pool then skips the request
   * if no thread has started it). One listener per request; absent where the transport cannot tell.
   */
  onGone?(listener: () => void): void;
  /**
   * Writes the answer. The headers have passed safeHeaders. To a HEAD request the server sends the status and headers
   * with the Content-Length of `body` and no body (RFC 9110 §9.3.2); a 204 or 304 has neither (§8.6).
   */
  respond(status: number, headers: readonly string[], body: Uint8Array | null): void;
}

export class BodyTooLarge extends Error {
  constructor(readonly limit: number) {
    super(`the request body is larger than ${limit} bytes`);
  }
}

/** The rejection of a body whose client went away before it was read: nothing to answer, nothing to log. */
export class ClientGone extends Error {
  constructor() {
    super('the client went away');
  }
}
