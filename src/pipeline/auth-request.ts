// The AuthRequest view (seed 000 §2.4) over a pipeline request: built once per request, only when a plugin is loaded.
import type { AuthRequest } from '../auth/contract.js';
import { authLdOp, ldOpName } from '../ngsild/operations.js';
import type { LdRequest } from './ld-request.js';

export class PipelineAuthRequest implements AuthRequest {
  constructor(private readonly req: LdRequest, private readonly expandDefaultFn: (term: string) => string) {}

  get method(): string { return this.req.method; }
  get path(): string { return this.req.path; }
  get params(): ReadonlyArray<readonly [string, string]> { return this.req.query.list; }
  get ldOp(): number { return authLdOp(this.req.op); }
  get ldOpName(): string { return ldOpName(authLdOp(this.req.op)); }
  get route(): string { return this.req.route; }
  /** The tenant the request names (authorize runs before the tenant is looked up, so a refusal creates none). */
  get tenant(): string | null {
    try { return this.req.namedTenant(); } catch { return null; }
  }
  get entities(): boolean { return this.req.operation.entityHook; }
  header(name: string): string | undefined { return this.req.header(name); }
  body(): Uint8Array | null { return this.req.bodyBytes(); }
  expand(term: string): string | null {
    // Before step 6 the request's @context is not resolved: expand() answers null (seed 000 §5.1).
    return this.req.context === undefined ? null : this.req.context.expandTerm(term);
  }
  expandDefault(term: string): string { return this.expandDefaultFn(term); }
}
