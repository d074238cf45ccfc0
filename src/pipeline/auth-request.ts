// The AuthRequest view (seed 000 §2.4) every hook is given, one class for all: authenticate's on the front, over the
// request head (no tenant, no @context, no body yet, seed 000 §5.1), and the pipeline's over its LdRequest. Built
// once per request, only when a plugin is loaded.
import type { AuthRequest } from '../auth/contract.js';
import { LdOp, authLdOp, ldOpName, operationOf } from '../ngsild/operations.js';
import type { LdRequest } from './ld-request.js';

/** The head of a request as the front holds it (its Exchange): what authenticate may read. */
export interface RequestHead {
  readonly method: string;
  readonly path: string;
  /** Raw query string without '?'. */
  readonly query: string;
  /** A request header by lower-case name. */
  header(name: string): string | undefined;
}

export class BrokerAuthRequest implements AuthRequest {
  readonly method: string;
  readonly path: string;
  readonly route: string;
  readonly ldOp: number;
  readonly ldOpName: string;
  readonly entities: boolean;
  /** authenticate's URL parameters, decoded when first asked. */
  private headParams: Array<readonly [string, string]> | undefined = undefined;

  private constructor(
    op: LdOp,
    method: string,
    path: string,
    route: string,
    private readonly head: RequestHead | undefined,
    private readonly req: LdRequest | undefined,
    private readonly expandDefaultFn: (term: string) => string,
  ) {
    const given = authLdOp(op);
    this.method = method;
    this.path = path;
    this.route = route;
    this.ldOp = given;
    this.ldOpName = ldOpName(given);
    this.entities = op !== LdOp.None && operationOf(op).entityHook;
  }

  /** authenticate's view, on the front, right after route lookup (`op` None where no route matched). */
  static ofHead(head: RequestHead, op: LdOp, route: string, expandDefault: (term: string) => string): BrokerAuthRequest {
    return new BrokerAuthRequest(op, head.method, head.path, route, head, undefined, expandDefault);
  }

  /** The view of authorize, entity and release, over the pipeline's request. */
  static ofRequest(req: LdRequest, expandDefault: (term: string) => string): BrokerAuthRequest {
    // seed 000 §5.6: HEAD is no read; the plugin is told the method the client sent
    const method = req.task.head === true ? 'HEAD' : req.method;
    return new BrokerAuthRequest(req.op, method, req.path, req.route, undefined, req, expandDefault);
  }

  get params(): ReadonlyArray<readonly [string, string]> {
    if (this.req !== undefined) return this.req.query.list;
    if (this.headParams === undefined) {
      this.headParams = [];
      for (const [k, v] of new URLSearchParams(this.head!.query)) this.headParams.push([k, v]);
    }
    return this.headParams;
  }

  /** The tenant the request names (authorize runs before the tenant is looked up, so a refusal creates none). */
  get tenant(): string | null {
    if (this.req === undefined) return null;
    try {
      return this.req.namedTenant();
    } catch {
      return null;
    }
  }

  header(name: string): string | undefined {
    return this.req !== undefined ? this.req.header(name) : this.head!.header(name.toLowerCase());
  }

  body(): Uint8Array | null {
    return this.req === undefined ? null : this.req.bodyBytes();
  }

  expand(term: string): string | null {
    // Before step 6 the request's @context is not resolved: expand() answers null (seed 000 §5.1).
    const context = this.req?.context;
    return context === undefined ? null : context.expandTerm(term);
  }

  expandDefault(term: string): string {
    return this.expandDefaultFn(term);
  }
}
