// What the front needs from an HTTP server library for one request, so uWS and node:http share one dispatcher.

export interface Exchange {
  /** Upper-case method. */
  readonly method: string;
  readonly path: string;
  /** Raw query string without '?'. */
  readonly query: string;
  /** A request header by lower-case name. */
  header(name: string): string | undefined;
  /** Every request header (lower-case names); costs a copy, only asked when an auth plugin is loaded. */
  allHeaders(): Record<string, string>;
  /**
   * The body, read through the server's data callbacks up to `maxBodySize` bytes; null when empty.
   * Rejects with BodyTooLarge past the cap (checked against Content-Length first).
   */
  body(): Promise<ArrayBuffer | null>;
  /** False once the client went away: nothing may be written then. */
  readonly open: boolean;
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
