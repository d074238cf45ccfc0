// The operation catalog (src/ngsild/operations.ts): LdOp numbers are the auth ABI (seed 000 §2.4), so each is pinned
// here; a new operation appends the next number, and changing any of these lines breaks every plugin that compares them.
import t from 'tap';
import { LdOp, OPERATIONS, authLdOp, ldOpName, operationOf } from '../../src/ngsild/operations.js';

const PINNED: Record<string, number> = {
  None: 0,
  CreateEntity: 1,
  QueryEntities: 2,
  PurgeEntities: 3,
  RetrieveEntity: 4,
  DeleteEntity: 5,
  MergeEntity: 6,
  ReplaceEntity: 7,
  AppendAttrs: 8,
  UpdateAttrs: 9,
  PartialAttrUpdate: 10,
  DeleteAttr: 11,
  ReplaceAttr: 12,
  BatchCreate: 13,
  BatchUpsert: 14,
  BatchUpdate: 15,
  BatchDelete: 16,
  BatchMerge: 17,
  QueryPost: 18,
  CreateSubscription: 19,
  QuerySubscriptions: 20,
  RetrieveSubscription: 21,
  UpdateSubscription: 22,
  DeleteSubscription: 23,
  CreateRegistration: 24,
  QueryRegistrations: 25,
  RetrieveRegistration: 26,
  UpdateRegistration: 27,
  DeleteRegistration: 28,
  CreateCsourceSubscription: 29,
  QueryCsourceSubscriptions: 30,
  RetrieveCsourceSubscription: 31,
  UpdateCsourceSubscription: 32,
  DeleteCsourceSubscription: 33,
  TemporalCreate: 34,
  TemporalQuery: 35,
  TemporalRetrieve: 36,
  TemporalDelete: 37,
  TemporalAppendAttrs: 38,
  TemporalDeleteAttr: 39,
  TemporalUpdateInstance: 40,
  TemporalDeleteInstance: 41,
  TemporalQueryPost: 42,
  TemporalMerge: 43,
  ListTypes: 44,
  RetrieveType: 45,
  ListAttributes: 46,
  RetrieveAttribute: 47,
  CreateContext: 48,
  ListContexts: 49,
  RetrieveContext: 50,
  DeleteContext: 51,
  RetrieveEntityMap: 52,
  UpdateEntityMap: 53,
  DeleteEntityMap: 54,
  SourceIdentity: 55,
  Conformance: 56,
  Version: 57,
  DeleteConnectionSubscriptions: 58,
  ListChannels: 59,
  CreateSnapshot: 60,
  CloneSnapshot: 61,
  RetrieveSnapshot: 62,
  UpdateSnapshot: 63,
  DeleteSnapshot: 64,
  PurgeSnapshots: 65,
  CreateEntityMap: 66,
  RelaySubordinateNotification: 67,
};

t.test('every LdOp keeps its number: the auth ABI carries it', async (t) => {
  for (const [name, number] of Object.entries(PINNED))
    t.equal((LdOp as unknown as Record<string, number>)[name], number, `LdOp.${name} is ${number}`);
  const names = Object.keys(LdOp).filter((k) => Number.isNaN(Number(k)));
  t.same(names.sort(), Object.keys(PINNED).sort(), 'no LdOp is added or removed without being pinned here');
});

t.test('the catalog holds every operation once, in LdOp order, each with its name', async (t) => {
  t.equal(OPERATIONS.length, Object.keys(PINNED).length - 1, 'one entry per LdOp but None');
  OPERATIONS.forEach((o, i) => {
    t.equal(o.op, i + 1, `${o.name} sits at its LdOp`);
    t.equal(o.name, LdOp[o.op], `${o.name} is its LdOp's name`);
    t.equal(operationOf(o.op), o, `operationOf finds ${o.name}`);
    t.ok(o.routes.length > 0 || o.internal, `${o.name} has a route, or is the broker's own request`);
    t.match(o.clause, /§|none/, `${o.name} names its clause`);
  });
  t.throws(() => operationOf(LdOp.None), RangeError, 'LdOp.None is no operation');
  t.throws(() => operationOf(99 as LdOp), RangeError, 'an unknown number is no operation');
});

t.test('each route (method and path) belongs to one operation', async (t) => {
  const seen = new Map<string, string>();
  for (const o of OPERATIONS) {
    for (const r of o.routes) {
      const key = `${r.root === true ? 'root' : 'api'} ${r.method} ${r.pattern}`;
      t.notOk(seen.has(key), `${key} is ${o.name}'s only${seen.has(key) ? `, not also ${seen.get(key)}'s` : ''}`);
      seen.set(key, o.name);
    }
  }
});

t.test("an operation's URL parameters cannot be changed at run time", async (t) => {
  const params = operationOf(LdOp.CreateEntity).params;
  t.ok(Object.isFrozen(params), 'frozen');
  t.throws(() => (params as Set<string>).add('q'), TypeError, 'add refused');
  t.throws(() => (params as Set<string>).delete('local'), TypeError, 'delete refused');
  t.throws(() => (params as Set<string>).clear(), TypeError, 'clear refused');
  t.same([...params], ['local'], 'unchanged');
  t.ok(Object.isFrozen(operationOf(LdOp.CreateEntity)), 'entries are frozen too');
});

t.test('flags the pipeline and the auth view read', async (t) => {
  t.same(
    OPERATIONS.filter((o) => o.geoJson).map((o) => o.name),
    ['QueryEntities', 'RetrieveEntity', 'QueryPost'],
    'GeoJSON-capable',
  );
  t.same(
    OPERATIONS.filter((o) => o.createsTenant).map((o) => o.name),
    [
      'CreateEntity',
      'BatchCreate',
      'BatchUpsert',
      'CreateSubscription',
      'CreateRegistration',
      'CreateCsourceSubscription',
      'TemporalCreate',
      // Creates none: its NGSILD-Tenant is a context source's, which this broker need not have (not checked).
      'RelaySubordinateNotification',
    ],
    'creating operations (CIM 009 §4.14), and the relay whose tenant is not checked',
  );
  t.equal(operationOf(LdOp.BatchCreate).body, 'array', 'a batch body is an array');
  t.equal(operationOf(LdOp.CreateEntity).body, 'object', 'an entity body is an object');
  t.equal(operationOf(LdOp.RetrieveEntity).body, 'none', 'a retrieve reads no body');
  t.equal(authLdOp(LdOp.Version), LdOp.None, '/version is no NGSI-LD operation for the auth plugin');
  t.equal(authLdOp(LdOp.RetrieveEntity), LdOp.RetrieveEntity, 'an NGSI-LD operation is given as it is');
  t.equal(ldOpName(LdOp.None), '', 'no name for no operation');
  t.equal(ldOpName(LdOp.QueryPost), 'QueryPost');
});

t.test('NGSILD-Snapshot selects a Snapshot for the entity, temporal and discovery operations only (CIM 009 v1.9.1 §6.3.22)', async (t) => {
  const served = OPERATIONS.filter((o) => o.inSnapshot).map((o) => o.name);
  for (const name of [
    'RetrieveEntity',
    'QueryEntities',
    'QueryPost',
    'CreateEntity',
    'BatchUpsert',
    'PurgeEntities',
    'TemporalQuery',
    'ListTypes',
  ])
    t.ok(served.includes(name), `${name} is served on a Snapshot`);
  for (const name of ['CreateSubscription', 'CreateRegistration', 'CreateContext', 'CreateSnapshot', 'CloneSnapshot', 'Version'])
    t.notOk(served.includes(name), `${name} is not served on a Snapshot`);
});
