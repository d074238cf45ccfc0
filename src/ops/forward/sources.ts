// The context sources a request is forwarded to: the tenant's live registrations, the headers every forwarded
// request carries (CIM 009 v1.8.1 §5.2.9 tenant and contextSourceInfo, §6.3.18 Via), the URL of an operation at a
// source, its timeout, and the NGSILD-Warning of a source that gave no usable answer.
import { REGISTRATIONS, type RegistrationBody } from '../../ngsild/subscription/registration.js';
import { isLive, type SourceTarget } from '../../ngsild/registration/match.js';
import type { LdRequest } from '../../pipeline/ld-request.js';
import type { WorkerContext } from '../../pipeline/worker-context.js';
import type { DocCollection, Store } from '../../store/contract.js';
import { outgoingVia } from './via.js';
import { API_PREFIX } from '../../ngsild/operations.js';
import { pathSegment } from '../../ngsild/uri-encode.js';
import { registrationHeaders, SAFE_HEADER_VALUE } from '../../ngsild/registration/source-headers.js';
import { sendToSource, SourceFailure, type SourceReply } from '../../pipeline/source-http.js';

/** What a thread last listed of a tenant's registrations, with the collection's generation then. */
interface ListedRegistrations {
  collection: DocCollection;
  generation: number | undefined;
  bodies: RegistrationBody[];
}

/**
 * Per store, per tenant: every entity request asks for the tenant's live registrations (issue 24: a listing on each
 * GET and write, most often of an empty collection); while the collection's generation stays, the last listing
 * holds. Tenant names come from clients: past this many the map starts over rather than grow.
 */
const listed = new WeakMap<Store, Map<string, ListedRegistrations>>();
const MAX_LISTED_TENANTS = 1024;

/** The registrations of the request's tenant that have not expired, as stored (names expanded). */
export async function liveRegistrations(req: LdRequest, ctx: WorkerContext): Promise<RegistrationBody[]> {
  let tenants = listed.get(ctx.store);
  if (tenants === undefined) listed.set(ctx.store, (tenants = new Map()));
  let known = tenants.get(req.tenant);
  if (known === undefined) {
    if (tenants.size >= MAX_LISTED_TENANTS) tenants.clear();
    known = { collection: ctx.store.collection(req.tenant, REGISTRATIONS), generation: undefined, bodies: [] };
    tenants.set(req.tenant, known);
  }
  // Read before the listing: a listing newer than its number is only listed again, never kept past a change.
  const generation = known.collection.generation?.();
  if (generation === undefined || generation !== known.generation) {
    const bodies: RegistrationBody[] = [];
    for (const { doc } of await known.collection.list()) bodies.push((doc as { body: RegistrationBody }).body);
    known.bodies = bodies;
    known.generation = generation;
  }
  const out: RegistrationBody[] = [];
  if (known.bodies.length === 0) return out;
  const now = Date.now();
  for (const body of known.bodies) if (isLive(body, now)) out.push(body);
  return out;
}

/** Whether the request asks for local entities only (§6.3.18 `local=true`): nothing is forwarded. */
export function localOnly(req: LdRequest): boolean {
  return req.query.get('local') === 'true';
}

/**
 * The headers of a request to a source: Accept, the request's Link (the answer comes back in the request's terms),
 * Via, the registration's tenant (§5.2.9) and its contextSourceInfo pairs as headers, each only when it is a header
 * name and value that can be written as is.
 */
export function sourceHeaders(req: LdRequest, ctx: WorkerContext, body: RegistrationBody): Record<string, string> {
  const h: Record<string, string> = { accept: 'application/json', via: outgoingVia(req, ctx) };
  const link = req.header('link');
  if (link !== undefined && SAFE_HEADER_VALUE.test(link)) h.link = link;
  Object.assign(h, registrationHeaders(body));
  return h;
}

/**
 * The request's API path as its route writes it (`/entities/{id}/attrs/{attrId}` below /ngsi-ld/v1): each path
 * parameter encoded as one segment, no trailing slash, whatever spelling of the path the client sent.
 */
export function canonicalApiPath(req: LdRequest): string {
  let i = 0;
  const path = req.route.replace(/:[A-Za-z]+/g, () => pathSegment(req.params[i++] ?? ''));
  return (path.startsWith(API_PREFIX) ? path.slice(API_PREFIX.length) : path).replace(/\/+$/, '');
}

/**
 * The API path a write is forwarded to: the canonical one, but the attributes of an entity as the resource CIM 009
 * names them (§6.6.3.1, Table 6.1-1: `entities/{entityId}/attrs/`, with its slash). Sources routed by that table and
 * the ETSI suite's mock sources (D003, D004) expect it there; brokers that also take it without (this one does) take
 * it with it.
 */
export function forwardedApiPath(req: LdRequest): string {
  const path = canonicalApiPath(req);
  return /^\/entities\/[^/]+\/attrs$/.test(path) ? path + '/' : path;
}

/** The source's URL of an API path (`/entities/...`), below its endpoint (which may have a path of its own). */
export function sourceUrl(body: RegistrationBody, apiPath: string, query: string): URL {
  const base = body.endpoint.replace(/\/+$/, '');
  return new URL(`${base}/ngsi-ld/v1${apiPath}${query === '' ? '' : '?' + query}`);
}

/** The registration's management.timeout (ms, §5.2.9 RegistrationManagementInfo), else --forwardTimeout. */
export function timeoutOf(body: RegistrationBody, ctx: WorkerContext): number {
  const t = (body.management as { timeout?: unknown } | undefined)?.timeout;
  return typeof t === 'number' && t > 0 && t <= 600_000 ? t : ctx.config.forwardTimeout;
}

/** The registration's management.cooldown (ms, §5.2.9): how long after a failure its source is not asked. */
function cooldownOf(body: RegistrationBody): number {
  const c = (body.management as { cooldown?: unknown } | undefined)?.cooldown;
  return typeof c === 'number' && c > 0 ? Math.min(c, 86_400_000) : 0;
}

/** Per thread: when each registration's source last failed (registration id → ms), for its cooldown. */
const lastFailure = new Map<string, number>();
const MAX_REMEMBERED = 10_000;

function coolingDown(body: RegistrationBody, now: number): boolean {
  const cooldown = cooldownOf(body);
  if (cooldown === 0) return false;
  const at = lastFailure.get(body.id);
  return at !== undefined && now - at < cooldown;
}

function failed(body: RegistrationBody, now: number): void {
  if (cooldownOf(body) === 0) return;
  if (lastFailure.size >= MAX_REMEMBERED) lastFailure.delete(lastFailure.keys().next().value as string);
  lastFailure.set(body.id, now);
}

/** One source's outcome: its answer, or why there is none. */
export type SourceOutcome = { target: SourceTarget; reply: SourceReply } | { target: SourceTarget; failure: SourceFailure };

/** Sends one request per target at once and waits for all (each bounded by its timeout). */
export async function fanOut(
  req: LdRequest,
  ctx: WorkerContext,
  targets: readonly SourceTarget[],
  build: (t: SourceTarget) => { method: string; url: URL; body?: string | Uint8Array; contentType?: string },
): Promise<SourceOutcome[]> {
  return Promise.all(
    targets.map(async (target): Promise<SourceOutcome> => {
      try {
        // §5.2.9 cooldown: a source that failed is not asked again until its cooldown has passed.
        if (coolingDown(target.body, Date.now())) throw new SourceFailure('cooling down', 'the source failed within its cooldown');
        const r = build(target);
        const headers = sourceHeaders(req, ctx, target.body);
        if (r.contentType !== undefined) headers['content-type'] = r.contentType;
        const reply = await sendToSource({ method: r.method, url: r.url, headers, body: r.body, timeoutMs: timeoutOf(target.body, ctx) });
        return { target, reply };
      } catch (e) {
        const failure = e instanceof SourceFailure ? e : new SourceFailure('unreachable', e instanceof Error ? e.message : String(e));
        if (failure.reason !== 'cooling down') failed(target.body, Date.now());
        ctx.log.warn({ registration: target.body.id, reason: failure.reason, err: failure.message }, 'context source gave no answer');
        return { target, failure };
      }
    }),
  );
}

/**
 * An NGSILD-Warning value for a source without a usable answer (warn-code 199, RFC 7234 §5.5 form, as CIM 009
 * v1.8.1 §6.3.17 has it for partial answers): the registration id (a URI, no quote in it) and a reason of ours.
 */
export function sourceWarning(ctx: WorkerContext, target: SourceTarget, reason: string): string {
  const id = target.body.id.replace(/[^\x21-\x7e]|["\\]/g, '');
  return `199 ${ctx.config.contextSourceAlias} "context source of registration ${id}: ${reason.replace(/[^\x20-\x7e]|["\\]/g, '')}"`;
}

/**
 * The query string of the request without the parameters named, the others in their order, each written anew:
 * decoded, then encoded leaving ':' and ',' as they are (ids and name lists read as the request wrote them).
 */
export function queryWithout(raw: string, drop: ReadonlySet<string>): string {
  if (raw === '') return '';
  const out: string[] = [];
  for (const kv of raw.split('&')) {
    if (kv === '') continue;
    const eq = kv.indexOf('=');
    const name = decodeSafe(eq < 0 ? kv : kv.slice(0, eq));
    if (drop.has(name)) continue;
    out.push(eq < 0 ? queryEncode(name) : `${queryEncode(name)}=${queryEncode(decodeSafe(kv.slice(eq + 1)))}`);
  }
  return out.join('&');
}

/** A URL query value: percent-encoded except ':' and ',', which a query may hold as they are (RFC 3986 §3.4). */
export function queryEncode(s: string): string {
  return encodeURIComponent(s).replace(/%3A/gi, ':').replace(/%2C/gi, ',');
}

function decodeSafe(s: string): string {
  try {
    return decodeURIComponent(s.replace(/\+/g, ' '));
  } catch {
    return s;
  }
}
