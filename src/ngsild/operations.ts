// The operation catalog: every operation of the NGSI-LD API (CIM 009 v1.8.1), once, with the facts the router, the
// front, the pipeline, the auth view and the handlers read: its LdOp, clause, routes, body, URL parameters and flags.
//
// LdOp numbers are an ABI: the auth contract carries them (seed 000 §2.4) and plugins compare them. Each is written
// out and pinned by test/unit/operations.test.ts; a new operation takes the next number at the end, never a gap or
// an existing one.

/** NGSI-LD operations. The number is the LdOp the auth contract carries; 0 is no operation. */
export enum LdOp {
  None = 0,
  CreateEntity = 1,
  QueryEntities = 2,
  PurgeEntities = 3,
  RetrieveEntity = 4,
  DeleteEntity = 5,
  MergeEntity = 6,
  ReplaceEntity = 7,
  AppendAttrs = 8,
  UpdateAttrs = 9,
  PartialAttrUpdate = 10,
  DeleteAttr = 11,
  ReplaceAttr = 12,
  BatchCreate = 13,
  BatchUpsert = 14,
  BatchUpdate = 15,
  BatchDelete = 16,
  BatchMerge = 17,
  QueryPost = 18,
  CreateSubscription = 19,
  QuerySubscriptions = 20,
  RetrieveSubscription = 21,
  UpdateSubscription = 22,
  DeleteSubscription = 23,
  CreateRegistration = 24,
  QueryRegistrations = 25,
  RetrieveRegistration = 26,
  UpdateRegistration = 27,
  DeleteRegistration = 28,
  CreateCsourceSubscription = 29,
  QueryCsourceSubscriptions = 30,
  RetrieveCsourceSubscription = 31,
  UpdateCsourceSubscription = 32,
  DeleteCsourceSubscription = 33,
  TemporalCreate = 34,
  TemporalQuery = 35,
  TemporalRetrieve = 36,
  TemporalDelete = 37,
  TemporalAppendAttrs = 38,
  TemporalDeleteAttr = 39,
  TemporalUpdateInstance = 40,
  TemporalDeleteInstance = 41,
  TemporalQueryPost = 42,
  TemporalMerge = 43,
  ListTypes = 44,
  RetrieveType = 45,
  ListAttributes = 46,
  RetrieveAttribute = 47,
  CreateContext = 48,
  ListContexts = 49,
  RetrieveContext = 50,
  DeleteContext = 51,
  RetrieveEntityMap = 52,
  UpdateEntityMap = 53,
  DeleteEntityMap = 54,
  SourceIdentity = 55,
  Conformance = 56,
  /** The broker's own route, no NGSI-LD operation: the auth plugin sees it as LdOp 0. */
  Version = 57,
  /** The broker's own request, no route: the subscriptions of a closed WebSocket connection deleted (front/ws/). */
  DeleteConnectionSubscriptions = 58,
  /** seed 001 §4.1: the bridges' Channels; an ordinary route, subject to the auth plugin (§5). */
  ListChannels = 59,
  // CIM 009 v1.9.1 §5.16 Snapshots (an optional API; beyond our v1.8 target, README "Snapshots").
  CreateSnapshot = 60,
  CloneSnapshot = 61,
  RetrieveSnapshot = 62,
  UpdateSnapshot = 63,
  DeleteSnapshot = 64,
  PurgeSnapshots = 65,
  /** CIM 009 v1.9.1 §5.14.4: GET or POST /entityMaps (an EntityMap of a query's matches; README "EntityMaps"). */
  CreateEntityMap = 66,
  /**
   * The broker's own route, no NGSI-LD operation: a source notifies a subordinate subscription the broker made on it
   * (§5.8 distributed behaviour; README "Distributed operations"). The auth plugin sees it as LdOp 0.
   */
  RelaySubordinateNotification = 67,
}

export const API_PREFIX = '/ngsi-ld/v1';

export type Method = 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';

/** What the request body is: none is read for 'none'; the operation checks the JSON shape it needs. */
export type BodyKind = 'none' | 'object' | 'array';

export interface OperationRoute {
  method: Method;
  /** Path below API_PREFIX (the whole path when `root`), `:name` for a parameter. */
  pattern: string;
  /** Served outside the NGSI-LD prefix (`/version`, where Orion and Orion-LD answer it). */
  root?: boolean;
}

export interface Operation {
  readonly op: LdOp;
  /** LdOp's name: what the auth contract gives as ldOpName and logs show. */
  readonly name: string;
  /** Where CIM 009 v1.8.1 defines it: the operation (§5) and its HTTP binding (§6). */
  readonly clause: string;
  readonly routes: readonly OperationRoute[];
  readonly body: BodyKind;
  /**
   * The URL parameters it takes; any other is 400 InvalidRequest (CIM 009 v1.8.1 §6.3.20), checked before its handler
   * runs. An operation without a handler answers 501 whatever its parameters.
   */
  readonly params: ReadonlySet<string>;
  /** The entity hook of the auth plugin is asked per entity (seed 000 §4.3). */
  readonly entityHook: boolean;
  /** It may create its tenant (CIM 009 §4.14: a tenant is created by a creating operation). */
  readonly createsTenant: boolean;
  /** It may answer application/geo+json (CIM 009 §6.3.15). */
  readonly geoJson: boolean;
  /** A registration may name it (CIM 009 table 4.20-1): a distributed broker forwards it to context sources. */
  readonly forwardable: boolean;
  /** A route of the broker, no NGSI-LD operation (GET /version): given to the auth plugin as LdOp 0. */
  readonly brokerOwn: boolean;
  /** No route: only the broker makes this request (seed 000 §5.1 rule 3), never asked to the auth plugin. */
  readonly internal: boolean;
  /**
   * Served on a Snapshot's entities when the request names one in NGSILD-Snapshot (CIM 009 v1.9.1 §5.5.15, §6.3.22:
   * the Core and Temporal operations run on the Snapshot's copy; README "Snapshots").
   */
  readonly inSnapshot: boolean;
  /**
   * It reads or writes one entity named by its id: work bounded by one entity's size, which `--frontOps cheap` runs on
   * the front thread rather than paying the hand-off to a pipeline thread (src/pipeline/split-runner.ts).
   */
  readonly oneEntity: boolean;
}

/** A set that cannot change: one instance per parameter list, shared by the operations that take it. */
function frozenSet(names: readonly string[]): ReadonlySet<string> {
  const set = new Set(names);
  const refuse = (): never => {
    throw new TypeError('a parameter set of the operation catalog cannot change');
  };
  Object.defineProperties(set, { add: { value: refuse }, delete: { value: refuse }, clear: { value: refuse } });
  return Object.freeze(set);
}

const NONE = frozenSet([]);
const LOCAL = frozenSet(['local']);
const OPTIONS_LOCAL = frozenSet(['options', 'local']);
const MERGE = frozenSet(['local', 'options', 'format']);
const DELETE_ATTR = frozenSet(['datasetId', 'deleteAll', 'local']);
const DISCOVERY_LIST = frozenSet(['details', 'local']);
/** CIM 009 §6.3.x: the temporal representation and its selection, common to temporal retrieve and query. */
const TEMPORAL = [
  'timerel',
  'timeAt',
  'endTimeAt',
  'timeproperty',
  'lastN',
  'aggrMethods',
  'aggrPeriodDuration',
  'options',
  'format',
  'lang',
  'attrs',
  'pick',
  'omit',
  'datasetId',
  'local',
];

/** Table 6.4.3.2-1: the URL parameters of Query Entities, which Create EntityMap for Query Entities takes too. */
const QUERY_ENTITIES = frozenSet([
  'id',
  'type',
  'idPattern',
  'attrs',
  'pick',
  'omit',
  'q',
  'csf',
  'georel',
  'geometry',
  'coordinates',
  'geoproperty',
  'geometryProperty',
  'lang',
  'scopeQ',
  'options',
  'format',
  'limit',
  'offset',
  'count',
  'local',
  'datasetId',
  'join',
  'joinLevel',
  'containedBy',
  'entityMap',
  'entityMapLifetime',
  'expandValues',
  'via',
  'orderBy',
]);
/** v1.9.1 §6.34.3.1: a map's query takes the parameters of Query Entities. */
const ENTITY_MAP_QUERY = QUERY_ENTITIES;

interface Entry {
  clause: string;
  routes: readonly OperationRoute[];
  body?: BodyKind;
  params: ReadonlySet<string>;
  entityHook?: boolean;
  createsTenant?: boolean;
  geoJson?: boolean;
  forwardable?: boolean;
  brokerOwn?: boolean;
  internal?: boolean;
  inSnapshot?: boolean;
}

const get = (pattern: string): OperationRoute => ({ method: 'GET', pattern });
const post = (pattern: string): OperationRoute => ({ method: 'POST', pattern });
const patch = (pattern: string): OperationRoute => ({ method: 'PATCH', pattern });
const put = (pattern: string): OperationRoute => ({ method: 'PUT', pattern });
const del = (pattern: string): OperationRoute => ({ method: 'DELETE', pattern });

const ENTITY = '/entities/:entityId';
const ATTR = '/entities/:entityId/attrs/:attrId';
const T_ENTITY = '/temporal/entities/:entityId';
const SNAPSHOT = '/snapshots/:snapshotId';

/** Every operation by LdOp; the order of routes within a path is its Allow header's. */
const ENTRIES: Record<Exclude<LdOp, LdOp.None>, Entry> = {
  [LdOp.CreateEntity]: {
    clause: '§5.6.1 / §6.4.3.1',
    routes: [post('/entities')],
    body: 'object',
    params: LOCAL,
    entityHook: true,
    createsTenant: true,
    forwardable: true,
  },
  [LdOp.QueryEntities]: {
    clause: '§5.7.2 / §6.4.3.2',
    routes: [get('/entities')],
    params: QUERY_ENTITIES,
    entityHook: true,
    geoJson: true,
    forwardable: true,
  },
  [LdOp.PurgeEntities]: {
    clause: '§5.6.21 / §6.4.3.3',
    routes: [del('/entities')],
    params: frozenSet([
      'id',
      'type',
      'idPattern',
      'q',
      'scopeQ',
      'georel',
      'geometry',
      'coordinates',
      'geoproperty',
      'keep',
      'drop',
      'local',
    ]),
    // seed 000 §5.2: each entity a purge deletes is asked (ops/purge.ts), so the request is decided entity by entity.
    entityHook: true,
  },
  [LdOp.RetrieveEntity]: {
    clause: '§5.7.1 / §6.5.3.1',
    routes: [get(ENTITY)],
    params: frozenSet([
      'attrs',
      'pick',
      'omit',
      'options',
      'format',
      'lang',
      'geometryProperty',
      'datasetId',
      'local',
      'join',
      'joinLevel',
      'containedBy',
      'entityMap',
      'via',
      'type',
    ]),
    entityHook: true,
    geoJson: true,
    forwardable: true,
  },
  [LdOp.DeleteEntity]: {
    clause: '§5.6.6 / §6.5.3.2',
    routes: [del(ENTITY)],
    params: frozenSet(['local', 'type']),
    entityHook: true,
    forwardable: true,
  },
  [LdOp.MergeEntity]: {
    clause: '§5.6.17 / §6.5.3.3',
    routes: [patch(ENTITY)],
    body: 'object',
    params: MERGE,
    entityHook: true,
    forwardable: true,
  },
  [LdOp.ReplaceEntity]: {
    clause: '§5.6.18 / §6.5.3.4',
    routes: [put(ENTITY)],
    body: 'object',
    params: LOCAL,
    entityHook: true,
    forwardable: true,
  },
  [LdOp.AppendAttrs]: {
    clause: '§5.6.3 / §6.6.3.1',
    routes: [post('/entities/:entityId/attrs')],
    body: 'object',
    params: OPTIONS_LOCAL,
    entityHook: true,
    forwardable: true,
  },
  [LdOp.UpdateAttrs]: {
    clause: '§5.6.2 / §6.6.3.2',
    routes: [patch('/entities/:entityId/attrs')],
    body: 'object',
    params: LOCAL,
    entityHook: true,
    forwardable: true,
  },
  [LdOp.PartialAttrUpdate]: {
    clause: '§5.6.4 / §6.7.3.1',
    routes: [patch(ATTR)],
    body: 'object',
    params: LOCAL,
    entityHook: true,
    forwardable: true,
  },
  [LdOp.DeleteAttr]: {
    clause: '§5.6.5 / §6.7.3.2',
    routes: [del(ATTR)],
    params: DELETE_ATTR,
    entityHook: true,
    forwardable: true,
  },
  [LdOp.ReplaceAttr]: {
    clause: '§5.6.19 / §6.7.3.3',
    routes: [put(ATTR)],
    body: 'object',
    params: LOCAL,
    entityHook: true,
    forwardable: true,
  },
  [LdOp.BatchCreate]: {
    clause: '§5.6.7 / §6.14.3.1',
    routes: [post('/entityOperations/create')],
    body: 'array',
    params: LOCAL,
    entityHook: true,
    createsTenant: true,
    forwardable: true,
  },
  [LdOp.BatchUpsert]: {
    clause: '§5.6.8 / §6.15.3.1',
    routes: [post('/entityOperations/upsert')],
    body: 'array',
    params: OPTIONS_LOCAL,
    entityHook: true,
    createsTenant: true,
    forwardable: true,
  },
  [LdOp.BatchUpdate]: {
    clause: '§5.6.9 / §6.16.3.1',
    routes: [post('/entityOperations/update')],
    body: 'array',
    params: OPTIONS_LOCAL,
    entityHook: true,
    forwardable: true,
  },
  [LdOp.BatchDelete]: {
    clause: '§5.6.10 / §6.17.3.1',
    routes: [post('/entityOperations/delete')],
    body: 'array',
    params: LOCAL,
    entityHook: true,
    forwardable: true,
  },
  [LdOp.BatchMerge]: {
    clause: '§5.6.20 / §6.29.3.1',
    routes: [post('/entityOperations/merge')],
    body: 'array',
    params: MERGE,
    entityHook: true,
    forwardable: true,
  },
  [LdOp.QueryPost]: {
    clause: '§5.7.2 / §6.23.3.1',
    routes: [post('/entityOperations/query')],
    body: 'object',
    params: frozenSet([
      'options',
      'format',
      'limit',
      'offset',
      'count',
      'local',
      'lang',
      'geometryProperty',
      'join',
      'joinLevel',
      'containedBy',
      'entityMap',
      'expandValues',
      'pick',
      'omit',
      'datasetId',
      'via',
      'orderBy',
    ]),
    entityHook: true,
    geoJson: true,
    forwardable: true,
  },
  [LdOp.CreateSubscription]: {
    clause: '§5.8.1 / §6.10.3.1',
    routes: [post('/subscriptions')],
    body: 'object',
    params: NONE,
    createsTenant: true,
    forwardable: true,
  },
  [LdOp.QuerySubscriptions]: {
    clause: '§5.8.4 / §6.10.3.2',
    routes: [get('/subscriptions')],
    params: frozenSet(['limit', 'offset', 'count', 'options', 'local']),
    forwardable: true,
  },
  [LdOp.RetrieveSubscription]: {
    clause: '§5.8.3 / §6.11.3.1',
    routes: [get('/subscriptions/:subscriptionId')],
    params: OPTIONS_LOCAL,
    forwardable: true,
  },
  [LdOp.UpdateSubscription]: {
    clause: '§5.8.2 / §6.11.3.2',
    routes: [patch('/subscriptions/:subscriptionId')],
    body: 'object',
    params: NONE,
    forwardable: true,
  },
  [LdOp.DeleteSubscription]: {
    clause: '§5.8.5 / §6.11.3.3',
    routes: [del('/subscriptions/:subscriptionId')],
    params: NONE,
    forwardable: true,
  },
  [LdOp.CreateRegistration]: {
    clause: '§5.9.2 / §6.8.3.1',
    routes: [post('/csourceRegistrations')],
    body: 'object',
    params: NONE,
    createsTenant: true,
  },
  [LdOp.QueryRegistrations]: {
    clause: '§5.10.2 / §6.8.3.2',
    routes: [get('/csourceRegistrations')],
    params: frozenSet([
      'id',
      'type',
      'idPattern',
      'attrs',
      'q',
      'csf',
      'georel',
      'geometry',
      'coordinates',
      'geoproperty',
      'timeproperty',
      'timerel',
      'timeAt',
      'endTimeAt',
      'scopeQ',
      'limit',
      'offset',
      'count',
      'options',
      'local',
    ]),
  },
  [LdOp.RetrieveRegistration]: {
    clause: '§5.10.1 / §6.9.3.1',
    routes: [get('/csourceRegistrations/:registrationId')],
    params: OPTIONS_LOCAL,
  },
  [LdOp.UpdateRegistration]: {
    clause: '§5.9.3 / §6.9.3.2',
    routes: [patch('/csourceRegistrations/:registrationId')],
    body: 'object',
    params: NONE,
  },
  [LdOp.DeleteRegistration]: {
    clause: '§5.9.4 / §6.9.3.3',
    routes: [del('/csourceRegistrations/:registrationId')],
    params: NONE,
  },
  [LdOp.CreateCsourceSubscription]: {
    clause: '§5.11.2 / §6.12.3.1',
    routes: [post('/csourceSubscriptions')],
    body: 'object',
    params: NONE,
    createsTenant: true,
  },
  [LdOp.QueryCsourceSubscriptions]: {
    clause: '§5.11.5 / §6.12.3.2',
    routes: [get('/csourceSubscriptions')],
    params: frozenSet(['limit', 'offset', 'count', 'options']),
  },
  [LdOp.RetrieveCsourceSubscription]: {
    clause: '§5.11.4 / §6.13.3.1',
    routes: [get('/csourceSubscriptions/:subscriptionId')],
    params: frozenSet(['options']),
  },
  [LdOp.UpdateCsourceSubscription]: {
    clause: '§5.11.3 / §6.13.3.2',
    routes: [patch('/csourceSubscriptions/:subscriptionId')],
    body: 'object',
    params: NONE,
  },
  [LdOp.DeleteCsourceSubscription]: {
    clause: '§5.11.6 / §6.13.3.3',
    routes: [del('/csourceSubscriptions/:subscriptionId')],
    params: NONE,
  },
  [LdOp.TemporalCreate]: {
    clause: '§5.6.11 / §6.18.3.1',
    routes: [post('/temporal/entities')],
    body: 'object',
    params: LOCAL,
    entityHook: true,
    createsTenant: true,
    forwardable: true,
  },
  [LdOp.TemporalQuery]: {
    clause: '§5.7.4 / §6.18.3.2',
    routes: [get('/temporal/entities')],
    params: frozenSet([
      ...TEMPORAL,
      'id',
      'type',
      'idPattern',
      'q',
      'csf',
      'georel',
      'geometry',
      'coordinates',
      'geoproperty',
      'scopeQ',
      'limit',
      'offset',
      'count',
      'orderBy',
    ]),
    entityHook: true,
    forwardable: true,
  },
  [LdOp.TemporalRetrieve]: {
    clause: '§5.7.3 / §6.19.3.1',
    routes: [get(T_ENTITY)],
    params: frozenSet(TEMPORAL),
    entityHook: true,
    forwardable: true,
  },
  [LdOp.TemporalDelete]: {
    clause: '§5.6.16 / §6.19.3.2',
    routes: [del(T_ENTITY)],
    params: LOCAL,
    entityHook: true,
    forwardable: true,
  },
  [LdOp.TemporalAppendAttrs]: {
    clause: '§5.6.12 / §6.20.3.1',
    routes: [post('/temporal/entities/:entityId/attrs')],
    body: 'object',
    params: LOCAL,
    entityHook: true,
    forwardable: true,
  },
  [LdOp.TemporalDeleteAttr]: {
    clause: '§5.6.13 / §6.21.3.1',
    routes: [del('/temporal/entities/:entityId/attrs/:attrId')],
    params: DELETE_ATTR,
    entityHook: true,
    forwardable: true,
  },
  [LdOp.TemporalUpdateInstance]: {
    clause: '§5.6.14 / §6.22.3.1',
    routes: [patch('/temporal/entities/:entityId/attrs/:attrId/:instanceId')],
    body: 'object',
    params: LOCAL,
    entityHook: true,
    forwardable: true,
  },
  [LdOp.TemporalDeleteInstance]: {
    clause: '§5.6.15 / §6.22.3.2',
    routes: [del('/temporal/entities/:entityId/attrs/:attrId/:instanceId')],
    params: LOCAL,
    entityHook: true,
    forwardable: true,
  },
  [LdOp.TemporalQueryPost]: {
    clause: '§5.7.4 / §6.24.3.1',
    routes: [post('/temporal/entityOperations/query')],
    body: 'object',
    params: frozenSet([
      'options',
      'format',
      'lang',
      'limit',
      'offset',
      'count',
      'local',
      'aggrMethods',
      'aggrPeriodDuration',
      'lastN',
      'datasetId',
      'pick',
      'omit',
      'orderBy',
    ]),
    entityHook: true,
    forwardable: true,
  },
  [LdOp.TemporalMerge]: {
    clause: '§5.6.22 / §6.19.3.3',
    routes: [patch(T_ENTITY)],
    body: 'object',
    params: NONE,
    entityHook: true,
    forwardable: true,
  },
  [LdOp.ListTypes]: { clause: '§5.7.5, §5.7.6 / §6.25.3.1', routes: [get('/types')], params: DISCOVERY_LIST, forwardable: true },
  [LdOp.RetrieveType]: { clause: '§5.7.7 / §6.26.3.1', routes: [get('/types/:type')], params: LOCAL, forwardable: true },
  [LdOp.ListAttributes]: {
    clause: '§5.7.8, §5.7.9 / §6.27.3.1',
    routes: [get('/attributes')],
    params: DISCOVERY_LIST,
    forwardable: true,
  },
  [LdOp.RetrieveAttribute]: { clause: '§5.7.10 / §6.28.3.1', routes: [get('/attributes/:attrId')], params: LOCAL, forwardable: true },
  [LdOp.CreateContext]: {
    clause: '§5.13.2 / §6.30.3.1',
    routes: [post('/jsonldContexts')],
    body: 'object',
    params: NONE,
    forwardable: true,
  },
  [LdOp.ListContexts]: {
    clause: '§5.13.3 / §6.30.3.2',
    routes: [get('/jsonldContexts')],
    params: frozenSet(['details', 'kind']),
    forwardable: true,
  },
  [LdOp.RetrieveContext]: {
    clause: '§5.13.4 / §6.31.3.1',
    routes: [get('/jsonldContexts/:contextId')],
    params: frozenSet(['details']),
    forwardable: true,
  },
  [LdOp.DeleteContext]: {
    clause: '§5.13.5 / §6.31.3.2',
    routes: [del('/jsonldContexts/:contextId')],
    params: frozenSet(['reload']),
    forwardable: true,
  },
  [LdOp.RetrieveEntityMap]: {
    clause: '§5.14.1 / §6.32.3.1',
    routes: [get('/entityMaps/:entityMapId')],
    params: NONE,
    forwardable: true,
  },
  [LdOp.UpdateEntityMap]: {
    clause: '§5.14.2 / §6.32.3.2',
    routes: [patch('/entityMaps/:entityMapId')],
    body: 'object',
    params: NONE,
    forwardable: true,
  },
  [LdOp.DeleteEntityMap]: {
    clause: '§5.14.3 / §6.32.3.3',
    routes: [del('/entityMaps/:entityMapId')],
    params: NONE,
    forwardable: true,
  },
  [LdOp.SourceIdentity]: { clause: '§5.15.1 / §6.33.3.1', routes: [get('/info/sourceIdentity')], params: NONE },
  [LdOp.Conformance]: { clause: '§5.15.2 / §6.34.3.1', routes: [get('/info/conformance')], params: NONE },
  [LdOp.Version]: {
    clause: 'none: Orion and Orion-LD answer GET /version',
    routes: [get('/version'), { method: 'GET', pattern: '/version', root: true }],
    params: NONE,
    brokerOwn: true,
  },
  [LdOp.DeleteConnectionSubscriptions]: {
    clause: 'none: the broker deletes the subscriptions of a WebSocket connection that closed',
    routes: [],
    params: NONE,
    brokerOwn: true,
    internal: true,
  },
  [LdOp.ListChannels]: { clause: 'none: seed 001 §4.1 (bridges)', routes: [get('/channels')], params: NONE },
  [LdOp.CreateSnapshot]: {
    clause: 'v1.9.1 §5.16.1 / §6.36.3.1',
    routes: [post('/snapshots')],
    body: 'object',
    params: LOCAL,
    entityHook: true,
    inSnapshot: false,
  },
  [LdOp.CloneSnapshot]: {
    clause: 'v1.9.1 §5.16.2 / §6.38.3.1',
    routes: [post(SNAPSHOT + '/clone')],
    body: 'object',
    params: LOCAL,
    entityHook: true,
    inSnapshot: false,
  },
  [LdOp.RetrieveSnapshot]: { clause: 'v1.9.1 §5.16.3 / §6.37.3.1', routes: [get(SNAPSHOT)], params: LOCAL },
  [LdOp.UpdateSnapshot]: { clause: 'v1.9.1 §5.16.4 / §6.37.3.2', routes: [patch(SNAPSHOT)], body: 'object', params: LOCAL },
  [LdOp.DeleteSnapshot]: { clause: 'v1.9.1 §5.16.5 / §6.37.3.3', routes: [del(SNAPSHOT)], params: LOCAL },
  [LdOp.PurgeSnapshots]: { clause: 'v1.9.1 §5.16.7 / §6.36.3.2', routes: [del('/snapshots')], params: frozenSet(['q', 'local']) },
  [LdOp.CreateEntityMap]: {
    clause: 'v1.9.1 §5.14.4 / §6.34.3.1, §6.34.3.2',
    routes: [get('/entityMaps'), post('/entityMaps')],
    body: 'object',
    params: ENTITY_MAP_QUERY,
  },
  [LdOp.RelaySubordinateNotification]: {
    clause: 'none: §5.8 distributed behaviour, the notifications of the subordinate subscriptions the broker made',
    routes: [post('/subordinateNotifications/:notificationKey')],
    body: 'object',
    params: NONE,
    brokerOwn: true,
    // Creates none, but its NGSILD-Tenant is the source's own (the registration's tenant), which this broker need
    // not have: not checked. The subordinate's record names the original's tenant.
    createsTenant: true,
  },
};

/** Served on a Snapshot's entities besides every operation with the entity hook: the discovery of what it holds. */
const SNAPSHOT_SERVED: ReadonlySet<LdOp> = new Set([LdOp.ListTypes, LdOp.RetrieveType, LdOp.ListAttributes, LdOp.RetrieveAttribute]);

/** The operations of one entity by id (Operation.oneEntity). */
const ONE_ENTITY: ReadonlySet<LdOp> = new Set([
  LdOp.CreateEntity,
  LdOp.RetrieveEntity,
  LdOp.DeleteEntity,
  LdOp.MergeEntity,
  LdOp.ReplaceEntity,
  LdOp.AppendAttrs,
  LdOp.UpdateAttrs,
  LdOp.PartialAttrUpdate,
  LdOp.DeleteAttr,
  LdOp.ReplaceAttr,
]);

/** Every operation, index LdOp - 1 (in LdOp order). */
export const OPERATIONS: readonly Operation[] = Object.freeze(
  Object.entries(ENTRIES).map(([number, e]): Operation => {
    const op = Number(number) as LdOp;
    return Object.freeze({
      op,
      name: LdOp[op]!,
      clause: e.clause,
      routes: Object.freeze(e.routes.map((r) => Object.freeze({ ...r }))),
      body: e.body ?? 'none',
      params: e.params,
      entityHook: e.entityHook ?? false,
      createsTenant: e.createsTenant ?? false,
      geoJson: e.geoJson ?? false,
      forwardable: e.forwardable ?? false,
      brokerOwn: e.brokerOwn ?? false,
      internal: e.internal ?? false,
      inSnapshot: e.inSnapshot ?? (SNAPSHOT_SERVED.has(op) || e.entityHook === true),
      oneEntity: ONE_ENTITY.has(op),
    });
  }),
);

/**
 * What a request the catalog does not route is (an unknown path, a method the path does not serve, OPTIONS): no
 * operation, no parameters, nothing decided entity by entity. The pipeline sees it only to have it authorized
 * (seed 000 §5.1) before the front's own answer.
 */
export const NO_OPERATION: Operation = Object.freeze({
  op: LdOp.None,
  name: '',
  clause: '',
  routes: [],
  body: 'none',
  params: NONE,
  entityHook: false,
  createsTenant: false,
  geoJson: false,
  forwardable: false,
  brokerOwn: false,
  internal: false,
  inSnapshot: false,
  oneEntity: false,
});

/** The catalog entry of an operation (LdOp.None has none). */
export function operationOf(op: LdOp): Operation {
  const entry = OPERATIONS[op - 1];
  if (entry === undefined || entry.op !== op) throw new RangeError(`LdOp ${op} is not in the operation catalog`);
  return entry;
}

export const ldOpName = (op: LdOp): string => (op === LdOp.None ? '' : LdOp[op]!);

/** The LdOp an auth plugin is given: 0 for a route that is no NGSI-LD operation (seed 000 §2.4). */
export const authLdOp = (op: LdOp): LdOp => (op !== LdOp.None && operationOf(op).brokerOwn ? LdOp.None : op);
