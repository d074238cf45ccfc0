// The one map from an auth plugin's verdict to the broker's refusal (seed 000 §2.2, §5.1), for every hook: 401 from
// authenticate, 403 and 503 from any, with the plugin's title and detail when it gave them.
import { AuthVerdict, type AuthAnswer } from '../auth/contract.js';
import type { AuthRefusal } from './auth-step.js';

export type AuthHook = 'authenticate' | 'authorize' | 'entity';

/** null: allowed. */
export function refusalOf(verdict: AuthVerdict, answer: AuthAnswer, hook: AuthHook): AuthRefusal | null {
  if (verdict === AuthVerdict.Allow) return null;
  // 401 is authenticate's answer only; from a later hook it refuses as a verdict the hook may not give does.
  if (verdict === AuthVerdict.Unauthenticated && hook === 'authenticate')
    return {
      status: 401,
      title: answer.title ?? 'Unauthorized',
      detail: answer.detail ?? 'authentication is required',
      wwwAuthenticate: answer.wwwAuthenticate ?? 'Bearer',
    };
  if (verdict === AuthVerdict.Unavailable)
    return {
      status: 503,
      title: answer.title ?? 'Service Unavailable',
      detail: answer.detail ?? 'the authorization plugin cannot decide yet',
    };
  // Deny, and any verdict the hook may not give: a denial, never a way in.
  const detail =
    verdict === AuthVerdict.Deny || hook === 'authenticate' ? 'the request is not allowed' : `the ${hook} hook refused the request`;
  return { status: 403, title: answer.title ?? 'Forbidden', detail: answer.detail ?? detail };
}
