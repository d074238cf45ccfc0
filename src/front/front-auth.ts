// The auth plugin's front instance as the dispatcher calls it: authenticate only (seed 000 §5.1).
import type { Exchange } from './exchange.js';
import type { PipelineResult } from '../pipeline/task.js';
import type { LdOp } from '../ngsild/operations.js';
import { AuthVerdict, type AuthAnswer, type AuthDriver, type AuthIdentityOut } from '../auth/contract.js';
import { BrokerAuthRequest } from '../pipeline/auth-request.js';
import { refusalOf } from '../pipeline/auth-verdict.js';
import { refusalResult } from '../pipeline/problem-result.js';

export interface AuthenticateOutcome {
  identity?: unknown;
  /** Set when the request is refused (401 with WWW-Authenticate, or 503). */
  refusal?: PipelineResult;
}

export interface FrontAuth {
  /**
   * The plugin authorizes before the @context (seed 000 §5.1, ABI 3): every request, routed or not, is then
   * authorized before the front gives an answer of its own (404, 405, OPTIONS, 415).
   */
  readonly authorizesFirst: boolean;
  authenticate(ex: Exchange, op: LdOp, route: string, params: string[]): Promise<AuthenticateOutcome>;
  close(): Promise<void>;
}

/** The outcome of an allowed request without identity (anonymous access). */
const ANONYMOUS: AuthenticateOutcome = { identity: null };

export function createFrontAuth(driver: AuthDriver, expandDefault: (t: string) => string, shutdown: () => Promise<void>): FrontAuth {
  return {
    authorizesFirst: driver.authorize !== undefined && driver.authorizeBeforeContext === true,
    authenticate(ex, op, route): Promise<AuthenticateOutcome> {
      if (driver.authenticate === undefined) return Promise.resolve(ANONYMOUS);
      const out = { identity: null as unknown };
      const answer: AuthAnswer = {};
      try {
        const verdict = driver.authenticate(BrokerAuthRequest.ofHead(ex, op, route, expandDefault), out, answer);
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
  const refusal = refusalOf(verdict, answer, 'authenticate');
  if (refusal === null) return out.identity === null ? ANONYMOUS : { identity: out.identity };
  return { refusal: refusalResult(refusal) };
}
