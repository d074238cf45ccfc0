// The pipeline's view of one request: what the front sent, parsed lazily, plus what the steps add
// (@context, tenant, response media type). One instance per request, one shape.
import type { PipelineTask } from './task.js';
import type { ResolvedContext } from '../ngsild/context/resolved.js';
import type { FetchWaiter } from '../ngsild/context/shared-build.js';
import { QueryParams } from './query-params.js';
import { badRequest, invalidRequest, type LdError } from '../ngsild/problem.js';
import { parseTenant } from '../ngsild/tenant.js';
import { isUri } from '../ngsild/entity/syntax.js';
import { checkIdSize } from '../ngsild/entity/limits.js';
import { baseMediaType, JSON_TYPE, type ResponseMedia } from './media.js';
import { MAX_BODY_NESTING, mayNestDeeper, tooDeepAt } from '../ngsild/entity/depth.js';
import { illFormedString } from '../ngsild/entity/well-formed.js';
import { LdOp, NO_OPERATION, operationOf, type Operation } from '../ngsild/operations.js';

const NO_BODY = Symbol('no body');

export class LdRequest {
  readonly op: LdOp;
  /** The operation's catalog entry: its parameters and flags. */
  readonly operation: Operation;
  readonly method: string;
  readonly path: string;
  readonly route: string;
  readonly params: string[];
  readonly task: PipelineTask;
  /** Told when a @context this request needs is to come over the network (src/pipeline/context-wait.ts). */
  readonly wait: FetchWaiter | undefined;
  /** Set by the context step. */
  context!: ResolvedContext;
  /** Other @contexts the operation resolved (those of batch entries): kept with `context` when it succeeds. */
  readonly otherContexts: ResolvedContext[] = [];
  /**
   * Set by the tenant step: where the operation's entities are, '' for the default tenant. With a Snapshot selected
   * (`/snapshots/{snapshotId}/...`), the Snapshot's entity space (ngsild/snapshot/snapshot-store.ts).
   */
  tenant = '';
  /** Set by the tenant step: the tenant the client named, whose @contexts the request keeps and links. */
  apiTenant = '';
  /** Set by negotiation. */
  media: ResponseMedia = JSON_TYPE;
  private parsedQuery: QueryParams | undefined;
  private parsedBody: unknown = NO_BODY;
  /** The NGSILD-Tenant value parsed, or why it is no tenant name; undefined until asked. */
  private parsedTenant: string | LdError | undefined = undefined;

  constructor(task: PipelineTask, wait?: FetchWaiter) {
    this.task = task;
    this.wait = wait;
    this.op = task.op;
    this.operation = task.op === LdOp.None ? NO_OPERATION : operationOf(task.op);
    this.method = task.method;
    this.path = task.path;
    this.route = task.route;
    this.params = task.params;
  }

  get query(): QueryParams {
    return (this.parsedQuery ??= new QueryParams(this.task.query));
  }

  /**
   * The tenant the request names (NGSILD-Tenant), parsed once however often it is asked (the auth view asks before
   * the tenant step); 400 when the value is no tenant name. Whether it exists is the tenant step's question.
   */
  namedTenant(): string {
    let tenant = this.parsedTenant;
    if (tenant === undefined) {
      try {
        tenant = parseTenant(this.task.headers.tenant);
      } catch (e) {
        tenant = e as LdError;
      }
      this.parsedTenant = tenant;
    }
    if (typeof tenant !== 'string') throw tenant;
    return tenant;
  }

  /**
   * NGSILD-Snapshot (CIM 009 v1.9.1 §6.3.22): the Snapshot the request names, undefined when none; 400 BadRequestData
   * for a value that is no URI within the id size limit (nothing else is echoed in the answer's header, run.ts).
   */
  snapshotId(): string | undefined {
    const value = this.task.headers.snapshot;
    if (value === undefined) return undefined;
    if (!isUri(value)) throw badRequest(`NGSILD-Snapshot: '${String(value).slice(0, 200)}' is not a URI`);
    return checkIdSize(value, 'NGSILD-Snapshot');
  }

  get bodyMediaType(): string {
    return baseMediaType(this.task.headers.contentType);
  }

  bodyBytes(): Uint8Array | null {
    return this.task.body === null ? null : new Uint8Array(this.task.body);
  }

  /** The body parsed as JSON: 400 when absent, empty or not JSON. */
  json(): unknown {
    if (this.parsedBody !== NO_BODY) return this.parsedBody;
    const body = this.task.body;
    if (body === null || body.byteLength === 0) throw invalidRequest('the request needs a JSON body');
    let text: string;
    try {
      text = new TextDecoder('utf-8', { fatal: true }).decode(body);
    } catch {
      throw invalidRequest('the body is not valid UTF-8');
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (e) {
      throw invalidRequest(`the body is not valid JSON: ${e instanceof Error ? e.message : String(e)}`);
    }
    // JSON.parse takes any depth; the walks after it (expansion, @context processing and digests, rendering,
    // serialization) may recurse: bounded once here, before any of them.
    const deep = mayNestDeeper(text, MAX_BODY_NESTING) ? tooDeepAt(parsed, MAX_BODY_NESTING) : undefined;
    if (deep !== undefined) throw badRequest(`${deep}: the body is nested deeper than ${MAX_BODY_NESTING} levels`);
    // The bytes are valid UTF-8, so only a \u escape can make a lone surrogate.
    if (text.includes('\\u')) {
      const bad = illFormedString(parsed);
      if (bad !== undefined) throw badRequest(`${JSON.stringify(bad.slice(0, 80))}: not well-formed Unicode (a lone surrogate escape)`);
    }
    this.parsedBody = parsed;
    return parsed;
  }

  /**
   * The body as a JSON object. Anything else is not the structure the operation takes: 400 InvalidRequest, as a body
   * that is no JSON at all (CIM 009 v1.8 table 5.5.2-1; BadRequestData is for the content of a well-formed request).
   */
  jsonObject(): Record<string, unknown> {
    const v = this.json();
    if (typeof v !== 'object' || v === null || Array.isArray(v)) throw invalidRequest('the body must be a JSON object');
    return v as Record<string, unknown>;
  }

  /** The body as a JSON array (400 InvalidRequest otherwise, as jsonObject). */
  jsonArray(): unknown[] {
    const v = this.json();
    if (!Array.isArray(v)) throw invalidRequest('the body must be a JSON array');
    return v;
  }

  header(name: string): string | undefined {
    const h = this.task.headers;
    switch (name.toLowerCase()) {
      case 'content-type':
        return h.contentType;
      case 'accept':
        return h.accept;
      case 'link':
        return h.link;
      case 'ngsild-tenant':
        return h.tenant;
      case 'ngsild-entitymap':
        return h.entityMap;
      case 'host':
        return h.host ?? h.all?.host;
      case 'via':
        return h.via ?? h.all?.via;
      default:
        return h.all?.[name.toLowerCase()];
    }
  }
}
