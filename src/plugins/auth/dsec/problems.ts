// The plugin's refusals (seed 000 §2.10, §7): title and detail of each, rendered by the broker as ProblemDetails
// with type about:blank; a 401 also carries its WWW-Authenticate challenge (RFC 6750 §3).

import { AuthVerdict, type AuthAnswer } from '../../../auth/contract.js';

export const PROBLEMS = {
  noToken: { title: 'Unauthorized', detail: 'an access token is required (Authorization: Bearer <token>)' },
  badToken: { title: 'Unauthorized', detail: 'the access token does not hold: ' },
  noKeys: { title: 'Service Unavailable', detail: "the verifier's keys are not loaded yet" },
  noIssuer: { title: 'Service Unavailable', detail: 'the discovery document names no issuer, so no token can be checked' },
  noPolicies: { title: 'Service Unavailable', detail: 'the policies are not loaded yet' },
  roleConflict: { title: 'Service Unavailable', detail: 'the credential holds two different role lists for the organisation' },
  denied: { title: 'Forbidden', detail: 'no policy allows this request' },
} as const;

export function unauthenticated(answer: AuthAnswer): AuthVerdict {
  answer.title = PROBLEMS.noToken.title;
  answer.detail = PROBLEMS.noToken.detail;
  answer.wwwAuthenticate = 'Bearer';
  return AuthVerdict.Unauthenticated;
}

/** A quoted-string of RFC 7230 holds neither `"` nor `\`. */
export function invalidToken(answer: AuthAnswer, reason: string): AuthVerdict {
  answer.title = PROBLEMS.badToken.title;
  answer.detail = PROBLEMS.badToken.detail + reason;
  answer.wwwAuthenticate = `Bearer error="invalid_token", error_description="${reason.replace(/["\\]/g, "'")}"`;
  return AuthVerdict.Unauthenticated;
}

export function unavailable(answer: AuthAnswer, problem: { title: string; detail: string }): AuthVerdict {
  answer.title = problem.title;
  answer.detail = problem.detail;
  return AuthVerdict.Unavailable;
}

export function denied(answer: AuthAnswer): AuthVerdict {
  answer.title = PROBLEMS.denied.title;
  answer.detail = PROBLEMS.denied.detail;
  return AuthVerdict.Deny;
}
