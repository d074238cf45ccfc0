// What crosses the thread boundary between the front and a pipeline worker: plain data only, the body
// as a transferred ArrayBuffer each way (ARCHITECTURE.md steps 4 and 10).
import type { LdOp } from '../ngsild/operations.js';

/** Request headers the pipeline reads, picked by the front (lower-case names). */
export interface TaskHeaders {
  contentType?: string;
  accept?: string;
  link?: string;
  tenant?: string;
  /** Host: URLs of the @contexts the broker serves are built from it (ops/contexts.ts). */
  host?: string;
  /** Via (RFC 9110 §7.6.3): the brokers a forwarded request went through (CIM 009 v1.8.1 §6.3.18 loop detection). */
  via?: string;
  /** Every header, only when an auth plugin may ask for any of them. */
  all?: Record<string, string>;
}

export interface PipelineTask {
  op: LdOp;
  route: string;
  method: string;
  path: string;
  /** Raw query string without '?'. */
  query: string;
  /** Decoded path parameters in route order. */
  params: string[];
  headers: TaskHeaders;
  body: ArrayBuffer | null;
  /** The auth plugin's identity from authenticate (structured clone). */
  identity?: unknown;
}

export interface PipelineResult {
  status: number;
  /** Flat list: name, value, name, value... */
  headers: string[];
  body: Uint8Array | null;
}

/** One request of a batch a pipeline thread is handed (src/pipeline/pool-runner.ts), with the front's id for it. */
export interface BatchEntry {
  id: number;
  task: PipelineTask;
}

/** What a pipeline thread sends back for a batch: request ids and their results, in the same order. */
export interface BatchReply {
  ids: number[];
  results: PipelineResult[];
}
