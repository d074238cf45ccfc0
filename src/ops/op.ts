// The shape every operation handler has: request view and thread context in, a result to serialize out.
import type { LdRequest } from '../pipeline/ld-request.js';
import type { WorkerContext } from '../pipeline/worker-context.js';

export interface OpResult {
  status: number;
  /** A value to serialize as JSON (rendered already: compact names). */
  body?: unknown;
  /** Extra headers, flat name/value list. */
  headers?: string[];
  /** The body carries context-dependent names: add Link (application/json) or @context (application/ld+json). */
  withContext?: boolean;
  /** The body is GeoJSON (application/geo+json): @context goes into each Feature's properties? no: into the top. */
  geoJson?: boolean;
}

export type OpHandler = (req: LdRequest, ctx: WorkerContext) => Promise<OpResult>;
