// The request a notification's entity is decided as (seed 000 §5.3 rule 2): a retrieve of that entity by the
// subscription's owner, in the subscription's tenant. In the reference mode of dsec it gets the decision a
// `GET /ngsi-ld/v1/entities/{id}` of that owner gets; the entity hook then decides on the stored entity.
import type { AuthRequest } from '../auth/contract.js';
import { API_PREFIX, LdOp, ldOpName } from '../ngsild/operations.js';
import { pathSegment } from '../ngsild/uri-encode.js';

const ROUTE = `${API_PREFIX}/entities/:entityId`;
const NO_PARAMS: ReadonlyArray<readonly [string, string]> = [];

export class OwnerRetrieve implements AuthRequest {
  readonly method = 'GET';
  readonly path: string;
  readonly params = NO_PARAMS;
  readonly ldOp = LdOp.RetrieveEntity;
  readonly ldOpName = ldOpName(LdOp.RetrieveEntity);
  readonly route = ROUTE;
  readonly entities = true;

  constructor(
    readonly tenant: string,
    entityId: string,
    private readonly expandDefaultFn: (term: string) => string,
  ) {
    // the path a client sends for it: `urn:ngsi-ld:T:1` as it is, anything a segment cannot hold percent-encoded
    this.path = `${API_PREFIX}/entities/${pathSegment(entityId)}`;
  }

  /** Only the tenant's header: a notification has no other (seed 000 §5.8: its subscription's tenant). */
  header(name: string): string | undefined {
    return name.toLowerCase() === 'ngsild-tenant' && this.tenant !== '' ? this.tenant : undefined;
  }

  body(): Uint8Array | null {
    return null;
  }

  /** The notification has no request @context of its own. */
  expand(): string | null {
    return null;
  }

  expandDefault(term: string): string {
    return this.expandDefaultFn(term);
  }
}
