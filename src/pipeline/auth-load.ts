// The auth plugin's instance in a pipeline thread: authorize, entity and release, as PipelineAuth.
import { AuthVerdict, type AuthAnswer, type AuthDriver, type AuthEntity } from '../auth/contract.js';
import { loadAuthModule, registerAuth } from '../auth/loader.js';
import type { Logger } from '../logger.js';
import type { ContextSource, WorkerInit } from './worker-context.js';
import type { AuthRefusal, PipelineAuth } from './auth-step.js';
import type { LdRequest } from './ld-request.js';
import { BrokerAuthRequest } from './auth-request.js';
import { refusalOf } from './auth-verdict.js';

export async function loadPipelineAuth(init: WorkerInit, contexts: ContextSource, log: Logger): Promise<PipelineAuth> {
  const mod = await loadAuthModule(init.config.auth!, init.config.pluginDir);
  const expandDefault = (term: string): string => contexts.defaultContext.expandTerm(term);
  const driver = await registerAuth(mod, { options: (init.authOptions ?? {}) as never, primary: false, log, expandDefault });
  return new DriverAuth(driver, expandDefault);
}

/** A hook's answer when it allows: one settled promise, no allocation per request. */
const ALLOWED: Promise<null> = Promise.resolve(null);

class DriverAuth implements PipelineAuth {
  readonly beforeContext: boolean;
  /**
   * The AuthRequest of each request in flight, so every hook of one request sees the same object (a plugin may key
   * its per-request state on it, seed 000 §2.4); dropped at release, which the pipeline always calls.
   */
  private readonly views = new Map<LdRequest, BrokerAuthRequest>();

  readonly keepsOwners: boolean;

  constructor(
    private readonly driver: AuthDriver,
    private readonly expandDefault: (term: string) => string,
  ) {
    this.beforeContext = driver.authorizeBeforeContext === true;
    this.keepsOwners = driver.identitySave !== undefined && driver.identityRestore !== undefined;
  }

  identitySave(req: LdRequest): string | null {
    if (this.driver.identitySave === undefined) return null;
    let text: unknown;
    try {
      text = this.driver.identitySave(req.task.identity);
    } catch {
      // a plugin that cannot save the sender keeps no owner: fail closed, never a 500 after the subscription is written
      return null;
    }
    // the contract says text or null: anything else is no owner, so the subscription's notifications carry nothing
    return typeof text === 'string' ? text : null;
  }

  private view(req: LdRequest): BrokerAuthRequest {
    let v = this.views.get(req);
    if (v === undefined) {
      v = BrokerAuthRequest.ofRequest(req, this.expandDefault);
      this.views.set(req, v);
    }
    return v;
  }

  authorize(req: LdRequest): Promise<AuthRefusal | null> {
    if (this.driver.authorize === undefined) return ALLOWED;
    const answer: AuthAnswer = {};
    try {
      const verdict = this.driver.authorize(this.view(req), req.task.identity, answer);
      // a plugin that decides at once (dsec) costs no extra turn of the microtask queue
      if (typeof verdict === 'number')
        return verdict === AuthVerdict.Allow ? ALLOWED : Promise.resolve(refusalOf(verdict, answer, 'authorize'));
      return verdict.then((v) => refusalOf(v, answer, 'authorize'));
    } catch (e) {
      return Promise.reject(e);
    }
  }

  entity(req: LdRequest, entity: AuthEntity): Promise<(AuthRefusal & { partial?: boolean }) | null | { partial: true }> {
    if (this.driver.entity === undefined) return ALLOWED;
    const answer: AuthAnswer = {};
    try {
      const verdict = this.driver.entity(this.view(req), req.task.identity, entity, answer);
      if (typeof verdict === 'number')
        return verdict === AuthVerdict.Allow && answer.partial !== true ? ALLOWED : Promise.resolve(this.entityRefusal(verdict, answer));
      return verdict.then((v) => this.entityRefusal(v, answer));
    } catch (e) {
      return Promise.reject(e);
    }
  }

  private entityRefusal(verdict: AuthVerdict, answer: AuthAnswer): (AuthRefusal & { partial?: boolean }) | null | { partial: true } {
    if (verdict === AuthVerdict.Allow && answer.partial === true && this.driver.abiVersion >= 4) return { partial: true };
    return refusalOf(verdict, answer, 'entity');
  }

  release(req: LdRequest): void {
    const v = this.views.get(req);
    this.views.delete(req);
    if (this.driver.release !== undefined)
      this.driver.release(v ?? BrokerAuthRequest.ofRequest(req, this.expandDefault), req.task.identity);
  }
}
