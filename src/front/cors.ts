// CORS for browser dashboards (--corsOrigin, --corsMaxAge, Orion's and Orion-LD's names): the Access-Control-*
// headers of the Fetch standard (§3.2) on answers to an allowed origin, and the preflight's answer.
//
// Not the `cors` npm package: it is Connect middleware that reads node's IncomingMessage and writes a ServerResponse,
// which the uWS front has neither of, and it would answer a preflight itself, before the dispatcher has
// authenticated it (seed 000 §5.5 rule 1: no exception for a preflight). What is left is a few header values.
import { OptionError } from '../config.js';

/**
 * Request headers a client of the NGSI-LD API sends beyond the CORS-safelisted ones (CIM 009 v1.8 §6.3): the body
 * and answer types, the @context Link, the tenant, a path (accepted, not read) and a bearer token.
 */
export const CORS_ALLOW_HEADERS =
  'Content-Type, Accept, Link, NGSILD-Tenant, NGSILD-Snapshot, NGSILD-EntityMap, NGSILD-Path, Authorization';

/** Response headers a script needs to read, beyond the safelisted ones (Content-Type, Content-Length, ...). */
export const CORS_EXPOSE_HEADERS =
  'Location, Link, NGSILD-Results-Count, NGSILD-Tenant, NGSILD-Snapshot, NGSILD-EntityMap, Content-Range, Allow, Retry-After, WWW-Authenticate';

/** Orion's -corsOrigin value for any origin. */
const ANY = '__ALL';

/** An origin as a browser serializes it (RFC 6454 §6.2): scheme, host (a name, IPv4 or [IPv6]) and a port. */
const ORIGIN = /^(https?):\/\/([a-z0-9.-]+|\[[0-9a-f:.]+\])(?::(\d{1,5}))?\/?$/;
const DEFAULT_PORT: Record<string, string> = { http: '80', https: '443' };

/**
 * The --corsOrigin value as the broker answers it: `*` for `__ALL` or `*`, else the origin as a browser sends it in
 * `Origin` (lower case, no default port, no trailing slash), which a request's Origin must equal.
 */
export function parseCorsOrigin(text: string): string {
  if (text === ANY || text === '*') return '*';
  const m = ORIGIN.exec(text.toLowerCase());
  const port = m?.[3];
  if (m === null || (port !== undefined && Number(port) > 65535))
    throw new OptionError(`--corsOrigin: '${text.slice(0, 100)}' is not an origin (http[s]://host[:port]) nor ${ANY}`);
  return `${m[1]}://${m[2]}${port === undefined || port === DEFAULT_PORT[m[1]!] ? '' : ':' + port}`;
}

export class CorsPolicy {
  private readonly maxAge: string;

  /** `origin`: `*` or one origin, as parseCorsOrigin gives it. */
  constructor(
    private readonly origin: string,
    maxAgeSeconds: number,
  ) {
    this.maxAge = String(maxAgeSeconds);
  }

  /**
   * Adds to an answer the headers of its CORS mode: Access-Control-Allow-Origin and -Expose-Headers when the request's
   * Origin is allowed. The value is the configured origin or `*`, never the request's text. With one origin the answer
   * depends on Origin, so every answer says `Vary: Origin` (a cache must not hand one origin's answer to another).
   */
  answer(requestOrigin: string | undefined, headers: string[]): void {
    if (this.origin !== '*') headers.push('Vary', 'Origin');
    if (!this.allows(requestOrigin)) return;
    headers.push('Access-Control-Allow-Origin', this.origin, 'Access-Control-Expose-Headers', CORS_EXPOSE_HEADERS);
  }

  /**
   * The headers of a preflight's answer (an OPTIONS with Access-Control-Request-Method) from an allowed origin: the
   * path's methods (`allow`, the router's), the request headers the API reads, how long to keep the answer. Nothing
   * for another origin: the browser then refuses the request.
   */
  preflight(requestOrigin: string | undefined, allow: string, headers: string[]): void {
    if (!this.allows(requestOrigin)) return;
    headers.push(
      'Access-Control-Allow-Methods',
      allow,
      'Access-Control-Allow-Headers',
      CORS_ALLOW_HEADERS,
      'Access-Control-Max-Age',
      this.maxAge,
    );
  }

  private allows(requestOrigin: string | undefined): boolean {
    return requestOrigin !== undefined && (this.origin === '*' || requestOrigin === this.origin);
  }
}
