// Refusals of the policy API (seed 000 §4.1, §7): ProblemDetails with `type` about:blank (RFC 9457 §4.2.1),
// thrown as values by the book and the body check, turned into a response once, in the server.

export class PolicyApiError extends Error {
  constructor(
    readonly status: number,
    readonly title: string,
    readonly detail: string,
    readonly allow?: string,
  ) {
    super(detail);
  }
}

export const badRequest = (detail: string): PolicyApiError => new PolicyApiError(400, 'Bad Request', detail);
export const notFound = (detail: string): PolicyApiError => new PolicyApiError(404, 'Not Found', detail);
export const methodNotAllowed = (method: string, allow: string): PolicyApiError =>
  new PolicyApiError(405, 'Method Not Allowed', `${method} is not served on this path (allowed: ${allow})`, allow);
export const tooLarge = (limit: number): PolicyApiError =>
  new PolicyApiError(413, 'Content Too Large', `the request body is larger than ${limit} bytes (--maxBodySize)`);
export const conflict = (detail: string): PolicyApiError => new PolicyApiError(409, 'Conflict', detail);

/** The ProblemDetails text of an error. */
export function problemText(error: PolicyApiError): string {
  return JSON.stringify({ type: 'about:blank', title: error.title, status: error.status, detail: error.detail });
}
