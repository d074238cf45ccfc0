// The auth plugin's front instance as the dispatcher calls it: authenticate only (seed 000 §5.1).
import type { Exchange } from './exchange.js';
import type { PipelineResult } from '../pipeline/task.js';
import { authLdOp, ldOpName, operationOf, LdOp } from '../ngsild/operations.js';

export interface AuthenticateOutcome {
  identity?: unknown;
  /** Set when the request is refused (401 with WWW-Authenticate, or 503). */
  refusal?: PipelineResult;
}

export interface FrontAuth {
  authenticate(ex: Exchange, op: LdOp, route: string, params: string[]): Promise<AuthenticateOutcome>;
  close(): Promise<void>;
}

import { AuthVerdict, type AuthAnswer, type AuthDriver, type AuthIdentityOut, type AuthRequest } from '../auth/contract.js';
import { problemResult } from '../pipeline/run.js';

/** The AuthRequest of authenticate: no tenant, no @context, no body yet (seed 000 §5.1). */
class FrontAuthRequest implements AuthRequest {
  readonly tenant = null;
  private paramList: Array<readonly [string, string]> | undefined;
  constructor(private readonly ex: Exchange, readonly ldOp: number, readonly route: string, private readonly expandDefaultFn: (t: string) => string) {}
  get method(): string { return this.ex.method; }
  get path(): string { return this.ex.path; }
  get params(): ReadonlyArray<readonly [string, string]> {
    if (this.paramList === undefined) {
      this.paramList = [];
      for (const [k, v] of new URLSearchParams(this.ex.query)) this.paramList.push([k, v]);
    }
    return this.paramList;
  }
  get ldOpName(): string { return ldOpName(this.ldOp); }
  get entities(): boolean { return this.ldOp !== LdOp.None && operationOf(this.ldOp).entityHook; }
  header(name: string): string | undefined { return this.ex.header(name.toLowerCase()); }
  body(): Uint8Array | null { return null; }
  expand(): string | null { return null; }
  expandDefault(term: string): string { return this.expandDefaultFn(term); }
}

/** The outcome of an allowed request without identity (anonymous access). */
const ANONYMOUS: AuthenticateOutcome = { identity: null };

export function createFrontAuth(driver: AuthDriver, expandDefault: (t: string) => string, shutdown: () => Promise<void>): FrontAuth {
  return {
    authenticate(ex, op, route): Promise<AuthenticateOutcome> {
      if (driver.authenticate === undefined) return Promise.resolve(ANONYMOUS);
      const out = { identity: null as unknown };
      const answer: AuthAnswer = {};
      try {
        const verdict = driver.authenticate(new FrontAuthRequest(ex, authLdOp(op), route, expandDefault), out, answer);
        // a cached token is decided at once: no extra turn of the microtask queue on the front thread
        if (typeof verdict === 'number') return Promise.resolve(outcomeOf(verdict, out, answer));
        return verdict.then((v) => outcomeOf(v, out, answer));
      } catch (e) {
        return Promise.reject(e);
      }
    },
    close: shutdown,
  };
}

function outcomeOf(verdict: AuthVerdict, out: AuthIdentityOut, answer: AuthAnswer): AuthenticateOutcome {
  if (verdict === AuthVerdict.Allow) return out.identity === null ? ANONYMOUS : { identity: out.identity };
  if (verdict === AuthVerdict.Unauthenticated) {
    return {
      refusal: problemResult({ type: 'about:blank', title: answer.title ?? 'Unauthorized', status: 401, detail: answer.detail ?? 'authentication is required' },
        ['WWW-Authenticate', answer.wwwAuthenticate ?? 'Bearer']),
    };
  }
  if (verdict === AuthVerdict.Unavailable) {
    return { refusal: problemResult({ type: 'about:blank', title: answer.title ?? 'Service Unavailable', status: 503, detail: answer.detail ?? 'the authorization plugin cannot decide yet' }, []) };
  }
  return { refusal: problemResult({ type: 'about:blank', title: answer.title ?? 'Forbidden', status: 403, detail: answer.detail ?? 'the request is not allowed' }, []) };
}
