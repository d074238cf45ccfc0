// The route table of the NGSI-LD API (CIM 009 v1.8 clause 6): every route with its LdOp, whether the entity
// hook is asked (seed 000 §4.3), and whether a later issue still has to implement it (501 until then).

/** NGSI-LD operations. The ordinal is the LdOp the auth contract carries; 0 is no operation. */
export enum LdOp {
  None = 0,
  CreateEntity, QueryEntities, PurgeEntities, RetrieveEntity, DeleteEntity, MergeEntity, ReplaceEntity,
  AppendAttrs, UpdateAttrs, PartialAttrUpdate, DeleteAttr, ReplaceAttr,
  BatchCreate, BatchUpsert, BatchUpdate, BatchDelete, BatchMerge, QueryPost,
  CreateSubscription, QuerySubscriptions, RetrieveSubscription, UpdateSubscription, DeleteSubscription,
  CreateRegistration, QueryRegistrations, RetrieveRegistration, UpdateRegistration, DeleteRegistration,
  CreateCsourceSubscription, QueryCsourceSubscriptions, RetrieveCsourceSubscription, UpdateCsourceSubscription,
  DeleteCsourceSubscription,
  TemporalCreate, TemporalQuery, TemporalRetrieve, TemporalDelete, TemporalAppendAttrs, TemporalDeleteAttr,
  TemporalUpdateInstance, TemporalDeleteInstance, TemporalQueryPost, TemporalMerge,
  ListTypes, RetrieveType, ListAttributes, RetrieveAttribute,
  CreateContext, ListContexts, RetrieveContext, DeleteContext,
  RetrieveEntityMap, UpdateEntityMap, DeleteEntityMap,
  SourceIdentity, Conformance,
  // Routes of the broker that are no NGSI-LD operation (BROKER_OPS); new ordinals only ever go at the end.
  Version,
}

export const ldOpName = (op: LdOp): string => (op === LdOp.None ? '' : LdOp[op]!);

/** The broker's own routes: run by the pipeline like any other, but no NGSI-LD operation. */
export const BROKER_OPS: ReadonlySet<LdOp> = new Set([LdOp.Version]);

/** The LdOp an auth plugin is given: 0 for a route that is no NGSI-LD operation (seed 000 §2.4). */
export const authLdOp = (op: LdOp): LdOp => (BROKER_OPS.has(op) ? LdOp.None : op);

export type Method = 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';

export interface RouteDef {
  /** Path below /ngsi-ld/v1 (the whole path in ROOT_ROUTES), `:name` for a parameter. */
  pattern: string;
  methods: Partial<Record<Method, LdOp>>;
}

/** Operations whose entity hook is asked per entity (seed 000 §4.3). */
export const ENTITY_HOOK_OPS: ReadonlySet<LdOp> = new Set([
  LdOp.CreateEntity, LdOp.RetrieveEntity, LdOp.DeleteEntity, LdOp.MergeEntity, LdOp.ReplaceEntity,
  LdOp.AppendAttrs, LdOp.UpdateAttrs, LdOp.PartialAttrUpdate, LdOp.DeleteAttr, LdOp.ReplaceAttr,
  LdOp.BatchCreate, LdOp.BatchUpsert, LdOp.BatchUpdate, LdOp.BatchDelete, LdOp.BatchMerge,
  LdOp.QueryEntities, LdOp.QueryPost,
  LdOp.TemporalCreate, LdOp.TemporalQuery, LdOp.TemporalRetrieve, LdOp.TemporalDelete, LdOp.TemporalAppendAttrs,
  LdOp.TemporalDeleteAttr, LdOp.TemporalUpdateInstance, LdOp.TemporalDeleteInstance, LdOp.TemporalQueryPost,
  LdOp.TemporalMerge,
]);

/** Operations that carry a request body. */
export const BODY_OPS: ReadonlySet<LdOp> = new Set([
  LdOp.CreateEntity, LdOp.MergeEntity, LdOp.ReplaceEntity, LdOp.AppendAttrs, LdOp.UpdateAttrs,
  LdOp.PartialAttrUpdate, LdOp.ReplaceAttr, LdOp.BatchCreate, LdOp.BatchUpsert, LdOp.BatchUpdate, LdOp.BatchDelete,
  LdOp.BatchMerge, LdOp.QueryPost, LdOp.CreateSubscription, LdOp.UpdateSubscription, LdOp.CreateRegistration,
  LdOp.UpdateRegistration, LdOp.CreateCsourceSubscription, LdOp.UpdateCsourceSubscription, LdOp.TemporalCreate,
  LdOp.TemporalAppendAttrs, LdOp.TemporalUpdateInstance, LdOp.TemporalQueryPost, LdOp.TemporalMerge,
  LdOp.CreateContext, LdOp.UpdateEntityMap,
]);

/** Operations that may create a tenant (CIM 009 §4.14: a tenant is created by a creating operation). */
export const CREATING_OPS: ReadonlySet<LdOp> = new Set([
  LdOp.CreateEntity, LdOp.BatchCreate, LdOp.BatchUpsert, LdOp.CreateSubscription, LdOp.CreateRegistration,
  LdOp.CreateCsourceSubscription, LdOp.TemporalCreate,
]);

export const ROUTES: readonly RouteDef[] = [
  { pattern: '/entities', methods: { POST: LdOp.CreateEntity, GET: LdOp.QueryEntities, DELETE: LdOp.PurgeEntities } },
  { pattern: '/entities/:entityId', methods: { GET: LdOp.RetrieveEntity, DELETE: LdOp.DeleteEntity, PATCH: LdOp.MergeEntity, PUT: LdOp.ReplaceEntity } },
  { pattern: '/entities/:entityId/attrs', methods: { POST: LdOp.AppendAttrs, PATCH: LdOp.UpdateAttrs } },
  { pattern: '/entities/:entityId/attrs/:attrId', methods: { PATCH: LdOp.PartialAttrUpdate, DELETE: LdOp.DeleteAttr, PUT: LdOp.ReplaceAttr } },
  { pattern: '/entityOperations/create', methods: { POST: LdOp.BatchCreate } },
  { pattern: '/entityOperations/upsert', methods: { POST: LdOp.BatchUpsert } },
  { pattern: '/entityOperations/update', methods: { POST: LdOp.BatchUpdate } },
  { pattern: '/entityOperations/delete', methods: { POST: LdOp.BatchDelete } },
  { pattern: '/entityOperations/merge', methods: { POST: LdOp.BatchMerge } },
  { pattern: '/entityOperations/query', methods: { POST: LdOp.QueryPost } },
  { pattern: '/subscriptions', methods: { POST: LdOp.CreateSubscription, GET: LdOp.QuerySubscriptions } },
  { pattern: '/subscriptions/:subscriptionId', methods: { GET: LdOp.RetrieveSubscription, PATCH: LdOp.UpdateSubscription, DELETE: LdOp.DeleteSubscription } },
  { pattern: '/csourceRegistrations', methods: { POST: LdOp.CreateRegistration, GET: LdOp.QueryRegistrations } },
  { pattern: '/csourceRegistrations/:registrationId', methods: { GET: LdOp.RetrieveRegistration, PATCH: LdOp.UpdateRegistration, DELETE: LdOp.DeleteRegistration } },
  { pattern: '/csourceSubscriptions', methods: { POST: LdOp.CreateCsourceSubscription, GET: LdOp.QueryCsourceSubscriptions } },
  { pattern: '/csourceSubscriptions/:subscriptionId', methods: { GET: LdOp.RetrieveCsourceSubscription, PATCH: LdOp.UpdateCsourceSubscription, DELETE: LdOp.DeleteCsourceSubscription } },
  { pattern: '/temporal/entities', methods: { POST: LdOp.TemporalCreate, GET: LdOp.TemporalQuery } },
  { pattern: '/temporal/entities/:entityId', methods: { GET: LdOp.TemporalRetrieve, DELETE: LdOp.TemporalDelete, PATCH: LdOp.TemporalMerge } },
  { pattern: '/temporal/entities/:entityId/attrs', methods: { POST: LdOp.TemporalAppendAttrs } },
  { pattern: '/temporal/entities/:entityId/attrs/:attrId', methods: { DELETE: LdOp.TemporalDeleteAttr } },
  { pattern: '/temporal/entities/:entityId/attrs/:attrId/:instanceId', methods: { PATCH: LdOp.TemporalUpdateInstance, DELETE: LdOp.TemporalDeleteInstance } },
  { pattern: '/temporal/entityOperations/query', methods: { POST: LdOp.TemporalQueryPost } },
  { pattern: '/types', methods: { GET: LdOp.ListTypes } },
  { pattern: '/types/:type', methods: { GET: LdOp.RetrieveType } },
  { pattern: '/attributes', methods: { GET: LdOp.ListAttributes } },
  { pattern: '/attributes/:attrId', methods: { GET: LdOp.RetrieveAttribute } },
  { pattern: '/jsonldContexts', methods: { POST: LdOp.CreateContext, GET: LdOp.ListContexts } },
  { pattern: '/jsonldContexts/:contextId', methods: { GET: LdOp.RetrieveContext, DELETE: LdOp.DeleteContext } },
  { pattern: '/entityMaps/:entityMapId', methods: { GET: LdOp.RetrieveEntityMap, PATCH: LdOp.UpdateEntityMap, DELETE: LdOp.DeleteEntityMap } },
  { pattern: '/info/sourceIdentity', methods: { GET: LdOp.SourceIdentity } },
  { pattern: '/info/conformance', methods: { GET: LdOp.Conformance } },
  { pattern: '/version', methods: { GET: LdOp.Version } },
];

/** Routes outside the NGSI-LD prefix, `pattern` the whole path: `/version`, where Orion and Orion-LD answer it. */
export const ROOT_ROUTES: readonly RouteDef[] = [
  { pattern: '/version', methods: { GET: LdOp.Version } },
];

export const API_PREFIX = '/ngsi-ld/v1';
