// Linked entity retrieval (CIM 009 v1.8 §4.5.23): join=flat adds linked entities to the answer, join=inline puts
// each Relationship's target under `entity`; joinLevel bounds the hops, containedBy and the chain stop cycles.
import t from 'tap';
import { startBroker, call, NGSI, type Broker } from './helpers/broker.js';

let broker: Broker;
const V = 'urn:ngsi-ld:Vehicle:L1';
const P = 'urn:ngsi-ld:Person:L1';
const C = 'urn:ngsi-ld:Company:L1';
const R = 'urn:ngsi-ld:Route:L1';
const S1 = 'urn:ngsi-ld:Stop:L1';
const S2 = 'urn:ngsi-ld:Stop:L2';
const rel = (object: string | string[]) => ({ type: 'Relationship', object });

t.before(async () => {
  broker = await startBroker();
  const body = [
    { id: V, type: 'Vehicle', speed: { type: 'Property', value: 50 }, owner: rel(P), parkedIn: rel('urn:ngsi-ld:Parking:missing') },
    { id: P, type: 'Person', name: { type: 'Property', value: 'Ann' }, employer: rel(C) },
    { id: C, type: 'Company', name: { type: 'Property', value: 'ACME' }, fleet: rel(V) },
    { id: 'urn:ngsi-ld:Vehicle:L2', type: 'Vehicle', speed: { type: 'Property', value: 10 }, owner: rel(P) },
    // A route through stops (ListRelationship, order matters) and a depot named by two sources (multi-attribute).
    {
      id: R,
      type: 'Route',
      stops: { type: 'ListRelationship', objectList: [{ object: S2 }, { object: S1 }, { object: 'urn:ngsi-ld:Stop:missing' }] },
      depot: [rel(S1), { type: 'Relationship', object: S2, datasetId: 'urn:ngsi-ld:Dataset:planned' }],
      location: {
        type: 'GeoProperty',
        value: {
          type: 'LineString',
          coordinates: [
            [2, 48],
            [2.1, 48.1],
          ],
        },
      },
    },
    {
      id: S1,
      type: 'Stop',
      name: { type: 'Property', value: 'North' },
      location: { type: 'GeoProperty', value: { type: 'Point', coordinates: [2, 48] } },
    },
    {
      id: S2,
      type: 'Stop',
      name: { type: 'Property', value: 'South' },
      next: rel(S1),
      location: { type: 'GeoProperty', value: { type: 'Point', coordinates: [2.1, 48.1] } },
    },
  ];
  const r = await call(broker, 'POST', `${NGSI}/entityOperations/create`, { body });
  if (r.status !== 201) throw new Error(r.text);
});
t.teardown(async () => {
  await broker.stop();
});

const get = (path: string) => call(broker, 'GET', `${NGSI}${path}`);

t.test('retrieve with join=flat answers the entity and the entities it links to, one hop by default', async (t) => {
  const r = await get(`/entities/${V}?join=flat`);
  t.equal(r.status, 200, r.text);
  t.same(
    r.json.map((e: any) => e.id),
    [V, P],
    'the missing target is left out, the Company is two hops away',
  );
  t.equal(r.json[1].name.value, 'Ann');
});

t.test('joinLevel=2 follows two hops; a cycle back to the entity adds nothing', async (t) => {
  const r = await get(`/entities/${V}?join=flat&joinLevel=2`);
  t.same(
    r.json.map((e: any) => e.id),
    [V, P, C],
  );
  const deep = await get(`/entities/${V}?join=flat&joinLevel=5`);
  t.same(
    deep.json.map((e: any) => e.id),
    [V, P, C],
    'the Company links back to the Vehicle: no repeat',
  );
});

t.test('join=inline puts the target under the Relationship as `entity`, recursively to joinLevel', async (t) => {
  const one = await get(`/entities/${V}?join=inline`);
  t.equal(one.status, 200, one.text);
  t.equal(one.json.owner.object, P);
  t.equal(one.json.owner.entity.id, P);
  t.equal(one.json.owner.entity.name.value, 'Ann');
  t.notOk('entity' in one.json.owner.entity.employer, 'one hop only by default');
  t.notOk('entity' in one.json.parkedIn, 'a missing target stays a plain reference');
  const two = await get(`/entities/${V}?join=inline&joinLevel=3`);
  t.equal(two.json.owner.entity.employer.entity.id, C);
  t.notOk('entity' in two.json.owner.entity.employer.entity.fleet, 'the chain never comes back to the Vehicle');
});

t.test('join=inline with keyValues replaces the reference by the entity', async (t) => {
  const r = await get(`/entities/${V}?join=inline&options=keyValues`);
  t.same(r.json.owner, { id: P, type: 'Person', name: 'Ann', employer: C });
});

t.test('containedBy lists ids that are never joined', async (t) => {
  const r = await get(`/entities/${V}?join=flat&containedBy=${P}`);
  t.same(
    r.json.map((e: any) => e.id),
    [V],
  );
  const inline = await get(`/entities/${V}?join=inline&containedBy=${P}`);
  t.notOk('entity' in inline.json.owner);
});

t.test('query with join=flat adds each linked entity once after the page', async (t) => {
  const r = await get('/entities?type=Vehicle&join=flat');
  t.equal(r.status, 200, r.text);
  t.same(r.json.map((e: any) => e.id).sort(), [P, V, 'urn:ngsi-ld:Vehicle:L2'].sort());
  const post = await call(broker, 'POST', `${NGSI}/entityOperations/query`, {
    body: { type: 'Query', entities: [{ type: 'Vehicle' }], join: 'inline', joinLevel: 2 },
  });
  t.equal(post.status, 200, post.text);
  for (const e of post.json) t.equal(e.owner.entity.employer.entity.id, C, `${e.id} joined two hops inline`);
});

t.test('join=@none and no join answer the entity alone', async (t) => {
  t.equal((await get(`/entities/${V}?join=@none`)).json.id, V);
  t.notOk('entity' in (await get(`/entities/${V}`)).json.owner);
});

t.test('bad join parameters answer 400 BadRequestData', async (t) => {
  for (const q of [
    'join=deep',
    'join=flat&joinLevel=0',
    'join=flat&joinLevel=-1',
    'join=flat&joinLevel=two',
    'join=flat&joinLevel=99',
    'joinLevel=2',
    'join=flat&containedBy=not%20a%20uri',
  ]) {
    const r = await get(`/entities/${V}?${q}`);
    t.equal(r.status, 400, `${q}: ${r.text}`);
    t.equal(r.json.type, 'https://uri.etsi.org/ngsi-ld/errors/BadRequestData', q);
    t.equal((await get(`/entities?type=Vehicle&${q}`)).status, 400, `query ${q}`);
  }
  const post = await call(broker, 'POST', `${NGSI}/entityOperations/query`, {
    body: { type: 'Query', entities: [{ type: 'Vehicle' }], join: 'flat', joinLevel: 'x' },
  });
  t.equal(post.status, 400);
});

t.test("join=flat follows a ListRelationship's objectList and every instance of a multi-attribute Relationship", async (t) => {
  const r = await get(`/entities/${R}?join=flat`);
  t.equal(r.status, 200, r.text);
  t.same(r.json.map((e: any) => e.id).sort(), [R, S1, S2].sort(), 'both stops, each once; the missing one is left out');
  const q = await get('/entities?type=Route&join=flat&joinLevel=2');
  t.same(q.json.map((e: any) => e.id).sort(), [R, S1, S2].sort());
});

t.test("join=inline puts a ListRelationship's entities in entityList (objectList order) and joins each datasetId instance", async (t) => {
  const r = await get(`/entities/${R}?join=inline`);
  t.equal(r.status, 200, r.text);
  t.same(
    r.json.stops.objectList.map((o: any) => o.object),
    [S2, S1, 'urn:ngsi-ld:Stop:missing'],
    'the list is kept as it is',
  );
  t.same(
    r.json.stops.entityList.map((e: any) => e.id),
    [S2, S1],
    'its entities in order, the missing one left out',
  );
  t.equal(r.json.stops.entityList[0].name.value, 'South');
  t.ok(Array.isArray(r.json.depot), 'the multi-attribute stays an array of instances');
  const byDataset = Object.fromEntries(r.json.depot.map((i: any) => [i.datasetId ?? '@none', i.entity?.id]));
  t.same(byDataset, { '@none': S1, 'urn:ngsi-ld:Dataset:planned': S2 }, 'each instance carries its own target');
  const one = await get(`/entities/${R}?join=inline&datasetId=${encodeURIComponent('urn:ngsi-ld:Dataset:planned')}&attrs=depot`);
  t.same(one.json.depot.entity.id, S2, 'datasetId keeps one instance, joined');
  const concise = await get(`/entities/${R}?join=inline&format=concise&attrs=stops`);
  t.same(
    concise.json.stops.entityList.map((e: any) => e.id),
    [S2, S1],
    'concise too',
  );
});

t.test('join=inline with keyValues replaces references in lists and in dataset maps', async (t) => {
  const r = await get(`/entities/${R}?join=inline&options=keyValues`);
  t.equal(r.status, 200, r.text);
  t.same(
    r.json.stops.map((e: any) => (typeof e === 'string' ? e : e.id)),
    [S2, S1, 'urn:ngsi-ld:Stop:missing'],
  );
  t.equal(r.json.stops[0].name, 'South', 'a joined stop is the entity in keyValues');
  t.equal(r.json.depot.dataset['@none'].id, S1);
  t.equal(r.json.depot.dataset['urn:ngsi-ld:Dataset:planned'].id, S2);
});

t.test('GeoJSON with join=flat: the linked entities are Features of the same FeatureCollection', async (t) => {
  const accept = { accept: 'application/geo+json' };
  const one = await call(broker, 'GET', `${NGSI}/entities/${R}?join=flat`, { headers: accept });
  t.equal(one.status, 200, one.text);
  t.equal(one.json.type, 'FeatureCollection', 'a retrieve with join=flat answers several entities');
  t.same(one.json.features.map((f: any) => f.id).sort(), [R, S1, S2].sort());
  const stop = one.json.features.find((f: any) => f.id === S1);
  t.same(stop.geometry, { type: 'Point', coordinates: [2, 48] }, 'each Feature has its own geometry');
  t.equal(stop.properties.name.value, 'North');
  const q = await call(broker, 'GET', `${NGSI}/entities?type=Route&join=flat`, { headers: accept });
  t.equal(q.json.type, 'FeatureCollection');
  t.equal(q.json.features.length, 3);
});

t.test("GeoJSON with join=inline: the Feature's properties carry the linked entities", async (t) => {
  const accept = { accept: 'application/geo+json' };
  const one = await call(broker, 'GET', `${NGSI}/entities/${R}?join=inline`, { headers: accept });
  t.equal(one.status, 200, one.text);
  t.equal(one.json.type, 'Feature');
  t.equal(one.json.geometry.type, 'LineString');
  t.notOk('id' in one.json.properties, "the id is the Feature's own member");
  t.same(
    one.json.properties.stops.entityList.map((e: any) => e.id),
    [S2, S1],
  );
  const q = await call(broker, 'GET', `${NGSI}/entities?type=Route&join=inline`, { headers: accept });
  t.equal(q.json.features.length, 1, 'inline adds no Feature');
  t.same(
    q.json.features[0].properties.stops.entityList.map((e: any) => e.id),
    [S2, S1],
  );
});

t.test('join=flat follows only the Relationships the answer shows (attrs, pick, omit, datasetId)', async (t) => {
  const ids = async (q: string) => (await get(`/entities/${R}?join=flat&${q}`)).json.map((e: any) => e.id).sort();
  t.same(await ids('attrs=depot&datasetId=urn:ngsi-ld:Dataset:planned'), [R, S2], 'only the planned depot');
  t.same(await ids('attrs=depot'), [R, S1, S2].sort(), 'both depot instances');
  t.same(await ids('pick=id,type'), [R], 'no Relationship shown, none followed');
  t.same(await ids('omit=stops,depot'), [R]);
  t.same(
    await ids('attrs=depot&datasetId=@none&joinLevel=2'),
    [R, S1].sort(),
    'the linked entities are followed whole: North links nowhere',
  );
  t.same(await ids('attrs=depot&datasetId=urn:ngsi-ld:Dataset:planned&joinLevel=2'), [R, S1, S2].sort(), 'South links on to North');
});
