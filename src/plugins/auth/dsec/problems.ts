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

export function invalidToken(answer: AuthAnswer, reason: string): AuthVerdict {
  answer.title = PROBLEMS.badToken.title;
  answer.detail = PROBLEMS.badToken.detail + reason;
  answer.wwwAuthenticate = `Bearer error="invalid_token", error_description="${errorDescription(reason)}"`;
  return AuthVerdict.Unauthenticated;
}

/** Longest error_description sent: it names the fault, the ProblemDetails body has the rest. */
export const MAX_ERROR_DESCRIPTION = 200;

/**
 * RFC 6750 §3: error_description holds only %x20-21 / %x23-5B / %x5D-7E, so a quoted-string that needs no escape.
 * `"` and `\` become `'` and `/`, any other character outside the set (CR, LF, any control, non-ASCII) `?`, and the
 * text is cut at MAX_ERROR_DESCRIPTION characters: the reason may quote a token's header, which is client data.
 */
export function errorDescription(reason: string): string {
  const text = reason
    .replace(/"/g, "'")
    .replace(/\\/g, '/')
    .replace(/[^\x20-\x7e]/g, '?');
  return text.length > MAX_ERROR_DESCRIPTION ? text.slice(0, MAX_ERROR_DESCRIPTION - 3) + '...' : text;
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
