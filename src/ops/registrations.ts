// Context source registrations, registry only (CIM 009 v1.8 §5.9, §6.8, §6.9): create, query by type/id/idPattern/
// attrs/q/geoQ and a temporal query, retrieve, update, delete, kept in the tenant's `csourceRegistrations`
// collection; exclusive and redirect registrations are refused with 409 Conflict where they collide with each other
// or with local entities (§4.3.6.3). Every change is told to the csource subscriptions (csource-subscriptions.ts);
// requests are forwarded to the sources by ops/forward/.
import { LdError, badRequest, notFound } from '../ngsild/problem.js';
import { isUri } from '../ngsild/entity/syntax.js';
import { checkIdSize } from '../ngsild/entity/limits.js';
import { pathSegment } from '../ngsild/uri-encode.js';
import type { StoredEntity } from '../ngsild/entity/model.js';
import type { Store } from '../store/contract.js';
import type { ResolvedContext } from '../ngsild/context/resolved.js';
import {
  REGISTRATIONS,
  validateRegistration,
  patchRegistration,
  claimsOf,
  claimsOverlap,
  type Claim,
  type RegistrationBody,
  type RegistrationDoc,
} from '../ngsild/subscription/registration.js';
import { mapRegistrationNames } from '../ngsild/subscription/names.js';
import { anyTypeOf, parseTypeExpression, compileTypeExpression } from '../ngsild/query/type-expression.js';
import { compileIdPattern } from '../ngsild/query/id-pattern.js';
import { parseQ } from '../ngsild/query/q-parser.js';
import { compileQ } from '../ngsild/query/q-eval.js';
import { parseGeoQuery, compileGeoQuery } from '../ngsild/query/geoq.js';
import { infoCovers, intervalMeets, type DiscoverySelection } from '../ngsild/query/registration-match.js';
import { parseTemporalQuery } from '../ngsild/temporal/temporal-query.js';
import { API_PREFIX } from '../ngsild/operations.js';
import type { LdRequest } from '../pipeline/ld-request.js';
import type { WorkerContext } from '../pipeline/worker-context.js';
import type { OpHandler } from '../pipeline/handler.js';
import { DEFAULT_LIMIT, MAX_LIMIT } from './query.js';
import { pageLinks } from './page-links.js';
import { registrationChanged } from './csource-subscriptions.js';

function registrationIdParam(req: LdRequest): string {
  const id = req.params[0]!;
  if (!isUri(id)) throw badRequest(`registration id '${String(id).slice(0, 200)}' is not a URI`);
  return checkIdSize(id, 'registration id');
}

async function contextOf(ctx: WorkerContext, doc: RegistrationDoc): Promise<ResolvedContext> {
  return ctx.contexts.resolve(doc.context);
}

/** What a conflict check reads: the tenant's store, the @context of the registration, and that of a stored one. */
export interface ConflictView {
  store: Store;
  tenant: string;
  context: ResolvedContext;
  contextOf(doc: RegistrationDoc): Promise<ResolvedContext>;
}

function checkConflicts(req: LdRequest, ctx: WorkerContext, body: RegistrationBody): Promise<void> {
  return registrationConflicts(
    { store: ctx.store, tenant: req.tenant, context: req.context, contextOf: (doc) => contextOf(ctx, doc) },
    body,
  );
}

/**
 * §4.3.6.3: an exclusive or redirect registration may not claim what another one, or a local entity, holds (409
 * Conflict). The importer asks it too (seed 001, importer behaviour 2).
 */
export async function registrationConflicts(view: ConflictView, body: RegistrationBody): Promise<void> {
  const mode = body.mode ?? 'inclusive';
  if (mode !== 'exclusive' && mode !== 'redirect') return;
  const claims = claimsOf(body, view.context.expandTerm.bind(view.context));
  for (const { id, doc } of await view.store.collection(view.tenant, REGISTRATIONS).list()) {
    if (id === body.id) continue;
    const other = doc as unknown as RegistrationDoc;
    const otherMode = other.body.mode ?? 'inclusive';
    // Exclusive collides with exclusive and redirect; redirect with exclusive.
    if (!(otherMode === 'exclusive' || (mode === 'exclusive' && otherMode === 'redirect'))) continue;
    const otherCtx = await view.contextOf(other);
    const theirs = claimsOf(other.body, otherCtx.expandTerm.bind(otherCtx));
    for (const a of claims)
      for (const b of theirs)
        if (claimsOverlap(a, b))
          throw new LdError('Conflict', `registration '${id}' (${otherMode}) already registers ${describe(a, view.context)}`);
  }
  for (const claim of claims) {
    const local = await localHolder(view, claim);
    if (local !== undefined)
      throw new LdError(
        'Conflict',
        `${mode === 'exclusive' ? 'an' : 'a'} ${mode} registration cannot register ${describe(claim, view.context)}: entity '${local}' holds it locally`,
      );
  }
}

function describe(c: Claim, ctx: ResolvedContext): string {
  const attrs = c.attrIris === undefined ? 'every attribute' : [...c.attrIris].map((a) => ctx.compactIri(a)).join(', ');
  return `${attrs} of ${c.id ?? `entities of type ${ctx.compactIri(c.typeIri)}`}`;
}

/** The id of a local entity holding what a claim names (the entity, and one of the attributes when it names some). */
async function localHolder(view: ConflictView, claim: Claim): Promise<string | undefined> {
  const holds = (e: StoredEntity): boolean => {
    if (!e.type.includes(claim.typeIri)) return false;
    if (claim.attrIris === undefined) return true;
    for (const a of claim.attrIris) if (e[a] !== undefined) return true;
    return false;
  };
  if (claim.id !== undefined) {
    const e = await view.store.getEntity(view.tenant, claim.id);
    return e !== undefined && holds(e) ? e.id : undefined;
  }
  const page = await view.store.queryEntities(view.tenant, {
    type: anyTypeOf([claim.typeIri]),
    attrs: claim.attrIris === undefined ? undefined : [...claim.attrIris],
    limit: 1,
    offset: 0,
    count: false,
  });
  return page.entities[0]?.id;
}

export const createRegistration: OpHandler = async (req, ctx) => {
  const body = mapRegistrationNames(validateRegistration(req.jsonObject(), Date.now()), req.context.expandTerm.bind(req.context));
  await checkConflicts(req, ctx, body);
  const now = new Date().toISOString();
  const doc: RegistrationDoc = { body, context: req.context.contextValue, createdAt: now, modifiedAt: now };
  // CIM 009 v1.8 §4.14: a creating request creates its tenant; a tenant that holds only registrations exists too.
  if (
    !(await ctx.store
      .collection(req.tenant, REGISTRATIONS)
      .insert(body.id, doc as unknown as Record<string, unknown>, { createTenant: true }))
  )
    throw new LdError('AlreadyExists', `registration '${body.id}' already exists`);
  registrationChanged(ctx, req.tenant, undefined, body);
  return { status: 201, headers: ['Location', `${API_PREFIX}/csourceRegistrations/${pathSegment(body.id)}`] };
};

/** The registration as GET shows it: its information names compacted with the @context of the request (names.ts). */
function render(doc: RegistrationDoc, sysAttrs: boolean, rctx: ResolvedContext): Record<string, unknown> {
  const out: Record<string, unknown> = mapRegistrationNames(doc.body, rctx.compactIri.bind(rctx));
  if (sysAttrs) {
    out.createdAt = doc.createdAt;
    out.modifiedAt = doc.modifiedAt;
  }
  return out;
}

export const retrieveRegistration: OpHandler = async (req, ctx) => {
  const sysAttrs = req.query.options(['sysAttrs']).has('sysAttrs');
  const id = registrationIdParam(req);
  const doc = (await ctx.store.collection(req.tenant, REGISTRATIONS).get(id)) as RegistrationDoc | undefined;
  if (doc === undefined) throw notFound(`registration '${id}' does not exist`);
  return { status: 200, body: render(doc, sysAttrs, req.context), withContext: true };
};

export const updateRegistration: OpHandler = async (req, ctx) => {
  const id = registrationIdParam(req);
  const regs = ctx.store.collection(req.tenant, REGISTRATIONS);
  const current = (await regs.get(id)) as RegistrationDoc | undefined;
  if (current === undefined) throw notFound(`registration '${id}' does not exist`);
  // The kept names are IRIs already (expanding an IRI leaves it as it is); the fragment's are terms of this request.
  const body = mapRegistrationNames(
    patchRegistration(current.body, req.jsonObject(), Date.now()),
    req.context.expandTerm.bind(req.context),
  );
  const context = req.context === ctx.contexts.defaultContext ? current.context : req.context.contextValue;
  await checkConflicts(req, ctx, body);
  await regs.put(id, {
    body,
    context,
    createdAt: current.createdAt,
    modifiedAt: new Date().toISOString(),
  } satisfies RegistrationDoc as unknown as Record<string, unknown>);
  registrationChanged(ctx, req.tenant, current.body, body);
  return { status: 204 };
};

export const deleteRegistration: OpHandler = async (req, ctx) => {
  const id = registrationIdParam(req);
  const regs = ctx.store.collection(req.tenant, REGISTRATIONS);
  const current = (await regs.get(id)) as RegistrationDoc | undefined;
  if (current === undefined || !(await regs.delete(id))) throw notFound(`registration '${id}' does not exist`);
  registrationChanged(ctx, req.tenant, current.body, undefined);
  return { status: 204 };
};

/**
 * §5.10.2 discovery: registrations whose information covers the entities and attributes asked about, whose
 * properties meet q and geo-query, and whose intervals meet the temporal query.
 */
export const queryRegistrations: OpHandler = async (req, ctx) => {
  const q = req.query;
  const sysAttrs = q.options(['sysAttrs']).has('sysAttrs');
  const limit = intParam(req, 'limit', DEFAULT_LIMIT);
  const offset = intParam(req, 'offset', 0);
  if (limit > MAX_LIMIT) throw new LdError('TooManyResults', `limit ${limit} is above the maximum ${MAX_LIMIT}`);
  const count = q.count();
  const rctx = req.context;
  const expand = rctx.expandTerm.bind(rctx);
  const ids = q.csv('id');
  for (const id of ids ?? []) if (!isUri(id)) throw badRequest(`id: '${String(id).slice(0, 200)}' is not a URI`);
  const typeText = q.get('type');
  const types = typeText === undefined ? undefined : compileTypeExpression(parseTypeExpression(typeText), expand);
  const idPatternText = q.get('idPattern');
  const idPattern = idPatternText === undefined ? undefined : compileIdPattern(idPatternText);
  const attrs = q.csv('attrs')?.map(expand);
  const qText = q.get('q');
  // §5.10.2.4: a query or geo-query that is not valid is BadRequestData (as a subscription's, validate.ts).
  const qPred = qText === undefined ? undefined : asBadRequest(() => compileQ(parseQ(qText), expand));
  const geo = parseGeoQuery(
    { georel: q.get('georel'), geometry: q.get('geometry'), coordinates: q.get('coordinates'), geoproperty: q.get('geoproperty') },
    expand,
  );
  const geoPred = geo === undefined ? undefined : compileGeoQuery(geo);
  // §5.10.2.4: an incomplete or malformed temporal query is BadRequestData; csourceRegistrations have no deletedAt.
  const tq = parseTemporalQuery({
    timerel: q.get('timerel'),
    timeAt: q.get('timeAt'),
    endTimeAt: q.get('endTimeAt'),
    timeproperty: q.get('timeproperty'),
  });
  if (tq.timeproperty === 'deletedAt')
    throw badRequest('timeproperty: a registration has observedAt (observationInterval), createdAt and modifiedAt (managementInterval)');
  // §5.10.2.4: discovery names what it looks for: entity types or attributes, or (as §5.7.2.4 has them for entities)
  // a q or geo-query; ids and idPatterns as an entity query takes them alone (README "Tolerances for real clients").
  if (
    types === undefined &&
    attrs === undefined &&
    ids === undefined &&
    idPattern === undefined &&
    qPred === undefined &&
    geoPred === undefined
  )
    throw badRequest('a context source discovery needs at least one of type, attrs, id, idPattern, q or a geo-query');
  const selection: DiscoverySelection = { types: types?.matches, ids, idPattern, attrs };
  const matched: RegistrationDoc[] = [];
  for (const { doc } of await ctx.store.collection(req.tenant, REGISTRATIONS).list()) {
    const reg = doc as unknown as RegistrationDoc;
    const regCtx = await contextOf(ctx, reg);
    const regExpand = regCtx.expandTerm.bind(regCtx);
    if (!reg.body.information.some((info) => infoCovers(info, selection, regExpand))) continue;
    if (!intervalMeets(reg.body, tq)) continue;
    if (qPred !== undefined || geoPred !== undefined) {
      const pseudo = registrationAsEntity(reg.body, regExpand);
      if (qPred !== undefined && !qPred(pseudo)) continue;
      if (geoPred !== undefined && !geoPred(pseudo)) continue;
    }
    matched.push(reg);
  }
  const headers: string[] = [];
  if (count) headers.push('NGSILD-Results-Count', String(matched.length));
  headers.push(...pageLinks(req, limit, offset, matched.length > offset + limit));
  return {
    status: 200,
    body: matched.slice(offset, offset + limit).map((d) => render(d, sysAttrs, req.context)),
    headers,
    withContext: true,
  };
};

function asBadRequest<T>(build: () => T): T {
  try {
    return build();
  } catch (e) {
    if (e instanceof LdError && e.kind === 'InvalidRequest') throw badRequest(e.detail);
    throw e;
  }
}

const GEO_MEMBERS = ['location', 'observationSpace', 'operationSpace'] as const;
const REGISTRATION_MEMBERS = new Set([
  'id',
  'type',
  'registrationName',
  'description',
  'information',
  'tenant',
  'observationInterval',
  'managementInterval',
  'location',
  'observationSpace',
  'operationSpace',
  'expiresAt',
  'endpoint',
  'contextSourceInfo',
  'scope',
  'mode',
  'operations',
  'refreshRate',
  'management',
]);

/** A registration seen as an entity, so q reads its registration properties and geoQ its geo members. */
export function registrationAsEntity(body: RegistrationBody, expand: (term: string) => string): StoredEntity {
  const e: StoredEntity = { id: body.id, type: ['ContextSourceRegistration'], createdAt: '', modifiedAt: '' };
  for (const g of GEO_MEMBERS) if (body[g] !== undefined) e[expand(g)] = [{ type: 'GeoProperty', value: body[g] }];
  for (const [k, v] of Object.entries(body)) {
    if (REGISTRATION_MEMBERS.has(k)) continue;
    const isProperty = typeof v === 'object' && v !== null && (v as { type?: unknown }).type === 'Property' && 'value' in v;
    e[expand(k)] = [isProperty ? { type: 'Property', value: (v as { value: unknown }).value } : { type: 'Property', value: v }];
  }
  return e;
}

function intParam(req: LdRequest, name: string, dflt: number): number {
  const text = req.query.get(name);
  if (text === undefined) return dflt;
  if (!/^\d{1,9}$/.test(text)) throw badRequest(`${name}: '${text}' is not a non-negative integer`);
  return Number(text);
}
