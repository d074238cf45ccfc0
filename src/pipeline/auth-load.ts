// The auth plugin's instance in a pipeline thread: authorize, entity and release, as PipelineAuth.
import { AuthVerdict, type AuthAnswer, type AuthDriver, type AuthEntity } from '../auth/contract.js';
import { loadAuthModule, registerAuth } from '../auth/loader.js';
import type { Logger } from '../logger.js';
import type { ContextSource, WorkerInit } from './worker-context.js';
import type { AuthRefusal, PipelineAuth } from './auth-step.js';
import type { LdRequest } from './ld-request.js';
import { PipelineAuthRequest } from './auth-request.js';

export async function loadPipelineAuth(init: WorkerInit, contexts: ContextSource, log: Logger): Promise<PipelineAuth> {
  const mod = await loadAuthModule(init.config.auth!, init.config.pluginDir);
  const expandDefault = (term: string): string => contexts.defaultContext.expandTerm(term);
  const driver = await registerAuth(mod, { options: (init.authOptions ?? {}) as never, primary: false, log, expandDefault });
  return new DriverAuth(driver, expandDefault);
}

const views = new WeakMap<LdRequest, PipelineAuthRequest>();

class DriverAuth implements PipelineAuth {
  readonly beforeContext: boolean;
  constructor(private readonly driver: AuthDriver, private readonly expandDefault: (term: string) => string) {
    this.beforeContext = driver.authorizeBeforeContext === true;
  }

  private view(req: LdRequest): PipelineAuthRequest {
    let v = views.get(req);
    if (v === undefined) {
      v = new PipelineAuthRequest(req, this.expandDefault);
      views.set(req, v);
    }
    return v;
  }

  async authorize(req: LdRequest): Promise<AuthRefusal | null> {
    if (this.driver.authorize === undefined) return null;
    const answer: AuthAnswer = {};
    const verdict = await this.driver.authorize(this.view(req), req.task.identity, answer);
    return refusalOf(verdict, answer, 'authorize');
  }

  async entity(req: LdRequest, entity: AuthEntity): Promise<(AuthRefusal & { partial?: boolean }) | null | { partial: true }> {
    if (this.driver.entity === undefined) return null;
    const answer: AuthAnswer = {};
    const verdict = await this.driver.entity(this.view(req), req.task.identity, entity, answer);
    if (verdict === AuthVerdict.Allow && answer.partial === true && this.driver.abiVersion >= 4) return { partial: true };
    return refusalOf(verdict, answer, 'entity');
  }

  release(req: LdRequest): void {
    this.driver.release?.(this.view(req), req.task.identity);
  }
}

function refusalOf(verdict: AuthVerdict, answer: AuthAnswer, hook: string): AuthRefusal | null {
  switch (verdict) {
    case AuthVerdict.Allow:
      return null;
    case AuthVerdict.Deny:
      return { status: 403, title: answer.title ?? 'Forbidden', detail: answer.detail ?? 'the request is not allowed' };
    case AuthVerdict.Unavailable:
      return { status: 503, title: answer.title ?? 'Service Unavailable', detail: answer.detail ?? 'the authorization plugin cannot decide yet' };
    default:
      // Unauthenticated is an answer of authenticate only; from a later hook it refuses as a denial.
      return { status: 403, title: answer.title ?? 'Forbidden', detail: answer.detail ?? `the ${hook} hook refused the request` };
  }
}
