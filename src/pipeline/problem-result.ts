// A refusal as the answer the front writes: a ProblemDetails body (CIM 009 §6.3.x, seed 000 §2.2 for the auth
// plugin's), application/problem+json when the client accepts it, else application/json.
import type { ProblemDetails } from '../ngsild/problem.js';
import type { PipelineResult } from './task.js';
import type { AuthRefusal } from './auth-step.js';
import { JSON_TYPE } from './media.js';

const encoder = new TextEncoder();

export function problemResult(problem: ProblemDetails, headers: string[], accept?: string): PipelineResult {
  const contentType = accept !== undefined && accept.includes('application/problem+json') ? 'application/problem+json' : JSON_TYPE;
  headers.push('Content-Type', contentType);
  return { status: problem.status, headers, body: encoder.encode(JSON.stringify(problem)) };
}

/** The auth plugin's refusal (401, 403 or 503, seed 000 §2.2): about:blank, with WWW-Authenticate on a 401. */
export function refusalResult(r: AuthRefusal): PipelineResult {
  return problemResult(
    { type: 'about:blank', title: r.title, status: r.status, detail: r.detail },
    r.wwwAuthenticate === undefined ? [] : ['WWW-Authenticate', r.wwwAuthenticate],
  );
}
