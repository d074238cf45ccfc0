// NGSI-LD error types (CIM 009 v1.8 §5.5.2) and the typed error the domain throws.
// The front maps an LdError to an HTTP ProblemDetails once; nothing else builds error bodies.

export const ErrorType = {
  InvalidRequest: 'https://uri.etsi.org/ngsi-ld/errors/InvalidRequest',
  BadRequestData: 'https://uri.etsi.org/ngsi-ld/errors/BadRequestData',
  AlreadyExists: 'https://uri.etsi.org/ngsi-ld/errors/AlreadyExists',
  OperationNotSupported: 'https://uri.etsi.org/ngsi-ld/errors/OperationNotSupported',
  ResourceNotFound: 'https://uri.etsi.org/ngsi-ld/errors/ResourceNotFound',
  InternalError: 'https://uri.etsi.org/ngsi-ld/errors/InternalError',
  TooComplexQuery: 'https://uri.etsi.org/ngsi-ld/errors/TooComplexQuery',
  TooManyResults: 'https://uri.etsi.org/ngsi-ld/errors/TooManyResults',
  LdContextNotAvailable: 'https://uri.etsi.org/ngsi-ld/errors/LdContextNotAvailable',
  NoMultiTenantSupport: 'https://uri.etsi.org/ngsi-ld/errors/NoMultiTenantSupport',
  NonexistentTenant: 'https://uri.etsi.org/ngsi-ld/errors/NonexistentTenant',
  Conflict: 'https://uri.etsi.org/ngsi-ld/errors/Conflict',
  NotAcceptable: 'https://uri.etsi.org/ngsi-ld/errors/NotAcceptable',
  UnsupportedMediaType: 'https://uri.etsi.org/ngsi-ld/errors/UnsupportedMediaType',
  PayloadTooLarge: 'https://uri.etsi.org/ngsi-ld/errors/PayloadTooLarge',
  MethodNotAllowed: 'https://uri.etsi.org/ngsi-ld/errors/MethodNotAllowed',
  Unavailable: 'https://uri.etsi.org/ngsi-ld/errors/Unavailable',
  LoopDetected: 'https://uri.etsi.org/ngsi-ld/errors/LoopDetected',
} as const;

export type ErrorTypeName = keyof typeof ErrorType;

/** HTTP status of each NGSI-LD error type (CIM 009 v1.8 table 5.5.2-1, plus the HTTP-level ones). */
export const ErrorStatus: Record<ErrorTypeName, number> = {
  InvalidRequest: 400,
  BadRequestData: 400,
  AlreadyExists: 409,
  OperationNotSupported: 501,
  ResourceNotFound: 404,
  InternalError: 500,
  TooComplexQuery: 403,
  TooManyResults: 403,
  LdContextNotAvailable: 503,
  NoMultiTenantSupport: 501,
  NonexistentTenant: 404,
  Conflict: 409,
  NotAcceptable: 406,
  UnsupportedMediaType: 415,
  PayloadTooLarge: 413,
  MethodNotAllowed: 405,
  Unavailable: 503,
  LoopDetected: 508,
};

export interface ProblemDetails {
  type: string;
  title: string;
  status: number;
  detail?: string;
  instance?: string;
}

export class LdError extends Error {
  readonly kind: ErrorTypeName;
  readonly status: number;
  readonly detail: string;
  /** Seconds after which the same request may succeed, answered as Retry-After (RFC 9110 §10.2.3); set on some 503s. */
  retryAfter: number | undefined;
  constructor(kind: ErrorTypeName, detail: string, status?: number) {
    super(detail);
    this.kind = kind;
    this.status = status ?? ErrorStatus[kind];
    this.detail = detail;
    this.retryAfter = undefined;
  }
  toProblem(): ProblemDetails {
    return { type: ErrorType[this.kind], title: titleOf(this.kind), status: this.status, detail: this.detail };
  }
}

const titles: Partial<Record<ErrorTypeName, string>> = {
  InvalidRequest: 'Invalid request',
  BadRequestData: 'Bad request data',
  AlreadyExists: 'Already exists',
  OperationNotSupported: 'Operation not supported',
  ResourceNotFound: 'Resource not found',
  InternalError: 'Internal error',
  TooManyResults: 'Too many results',
  LdContextNotAvailable: 'JSON-LD @context not available',
  NonexistentTenant: 'Nonexistent tenant',
  NotAcceptable: 'Not acceptable',
  UnsupportedMediaType: 'Unsupported media type',
  PayloadTooLarge: 'Payload too large',
  MethodNotAllowed: 'Method not allowed',
  LoopDetected: 'Loop detected',
};

export function titleOf(kind: ErrorTypeName): string {
  return titles[kind] ?? kind;
}

export const badRequest = (detail: string): LdError => new LdError('BadRequestData', detail);
export const invalidRequest = (detail: string): LdError => new LdError('InvalidRequest', detail);
export const notFound = (detail: string): LdError => new LdError('ResourceNotFound', detail);

/** A refusal whose ProblemDetails is given whole (the auth plugin's `about:blank` answers, seed 000 §2.10). */
export class RefusalError extends Error {
  constructor(readonly problem: ProblemDetails) {
    super(problem.detail ?? problem.title);
  }
}

/** The ProblemDetails of any error a domain function throws; undefined for an unexpected one. */
export function problemOf(error: unknown): ProblemDetails | undefined {
  if (error instanceof LdError) return error.toProblem();
  if (error instanceof RefusalError) return error.problem;
  return undefined;
}
