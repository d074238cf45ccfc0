// The shape every operation handler has: request view and thread context in, a result to serialize out. The
// pipeline owns it: handlers (src/ops) implement it, and the runners are handed a map of them (LdOp → handler).
import type { LdRequest } from './ld-request.js';
import type { WorkerContext } from './worker-context.js';
import type { LdOp } from '../ngsild/operations.js';

export interface OpResult {
  status: number;
  /** A value to serialize as JSON (rendered already: compact names). */
  body?: unknown;
  /** The body already serialised as bodyBytes (body-bytes.ts) makes it for this request: sent as it is. */
  encoded?: Uint8Array;
  /** Extra headers, flat name/value list. */
  headers?: string[];
  /** The body carries context-dependent names: add Link (application/json) or @context (application/ld+json). */
  withContext?: boolean;
  /** The body is GeoJSON (application/geo+json): @context goes into each Feature's properties? no: into the top. */
  geoJson?: boolean;
  /** Entities a query read (store/contract.ts EntityPage.examined): what the split runner weighs (front-queries.ts). */
  examined?: number;
}

export type OpHandler = (req: LdRequest, ctx: WorkerContext) => Promise<OpResult>;

/** The handler of every implemented operation; an operation without one answers 501. */
export type OpHandlers = ReadonlyMap<LdOp, OpHandler>;
