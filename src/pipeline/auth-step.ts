// The auth hooks as the pipeline calls them (seed 000 §5.1): authorize before or after the @context,
// always before the tenant; entity per entity. Absent entirely when no plugin is loaded.
import type { LdRequest } from './ld-request.js';
import type { AuthEntity } from '../auth/contract.js';

/** A hook's refusal (auth-verdict.ts maps verdicts to it; problem-result.ts answers it). */
export interface AuthRefusal {
  status: number;
  title: string;
  detail: string;
  /** The WWW-Authenticate value of a 401. */
  wwwAuthenticate?: string;
}

export interface PipelineAuth {
  readonly beforeContext: boolean;
  /** null: allowed. */
  authorize(req: LdRequest): Promise<AuthRefusal | null>;
  /** null: allowed; `partial` set when only some attributes may be read. */
  entity(req: LdRequest, entity: AuthEntity): Promise<(AuthRefusal & { partial?: boolean }) | null | { partial: true }>;
  release(req: LdRequest): void;
  /** The plugin keeps subscription owners (identitySave and identityRestore, ABI 2; seed 000 §2.6). */
  readonly keepsOwners: boolean;
  /** The owner record's text of the request's sender (identitySave); null: no one to keep. */
  identitySave(req: LdRequest): string | null;
}
