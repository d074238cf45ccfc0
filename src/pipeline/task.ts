// What crosses the thread boundary between the front and a pipeline worker: plain data only, the body
// as a transferred ArrayBuffer each way (ARCHITECTURE.md steps 4 and 10).
import type { LdOp } from '../ngsild/operations.js';

/** Request headers the pipeline reads, picked by the front (lower-case names). */
export interface TaskHeaders {
  contentType?: string;
  accept?: string;
  link?: string;
  tenant?: string;
  /** NGSILD-Snapshot (CIM 009 v1.9.1 §6.3.22): the Snapshot whose entities an entity or temporal operation serves. */
  snapshot?: string;
  /** NGSILD-EntityMap (CIM 009 v1.9.1 §6.4.3.2): the EntityMap a query's later page is served from. */
  entityMap?: string;
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
  /** A HEAD request: `method` is the GET it mirrors for the operation, the auth plugin is told HEAD (seed 000 §5.6). */
  head?: boolean;
  /**
   * The front's own answer to a request it does not serve (404, 405, OPTIONS, a 400 or 415 of the head): given only
   * once authorize lets the request through, as the reference chain's gateway decides before anything else (seed
   * 000 §5.1). Only sent when the plugin authorizes before the @context.
   */
  answer?: PipelineResult;
  /** The WebSocket connection the request came on (`urn:ngsi-ld:WebSocket:<uuid>`, front/ws/). */
  connection?: string;
  /**
   * The broker's own request, not asked to the auth plugin (seed 000 §5.1 rule 3; seed 001 §1 for a bridge sample's
   * write). Only the broker sets it (the WebSocket front for a closed connection, the bridge host); never set from a
   * client's input.
   */
  internal?: true;
}

export interface PipelineResult {
  status: number;
  /** Flat list: name, value, name, value... */
  headers: string[];
  body: Uint8Array | null;
  /** OpResult.examined, for the split runner's choice of thread (front-queries.ts). */
  examined?: number;
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
  /** How long each ran on the thread, in milliseconds (the pipeline run of op-latency.ts). */
  runMs: number[];
}
