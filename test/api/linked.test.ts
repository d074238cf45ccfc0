// Linked entity retrieval (CIM 009 v1.8 §4.5.23): join=flat adds linked entities to the answer, join=inline puts
// each Relationship's target under `entity`; joinLevel bounds the hops, containedBy and the chain stop cycles.
import t from 'tap';
import { startBroker, call, NGSI, type Broker } from './helpers/broker.js';

let broker: Broker;
const V = 'urn:ngsi-ld:Vehicle:L1';
const P = 'urn:ngsi-ld:Person:L1';
const C = 'urn:ngsi-ld:Company:L1';
const rel = (object: string | string[]) => ({ type: 'Relationship', object });

t.before(async () => {
  broker = await startBroker();
  const body = [
    { id: V, type: 'Vehicle', speed: { type: 'Property', value: 50 }, owner: rel(P), parkedIn: rel('urn:ngsi-ld:Parking:missing') },
    { id: P, type: 'Person', name: { type: 'Property', value: 'Ann' }, employer: rel(C) },
    { id: C, type: 'Company', name: { type: 'Property', value: 'ACME' }, fleet: rel(V) },
    { id: 'urn:ngsi-ld:Vehicle:L2', type: 'Vehicle', speed: { type: 'Property', value: 10 }, owner: rel(P) },
  ];
  const r = await call(broker, 'POST', `${NGSI}/entityOperations/create`, { body });
  if (r.status !== 201) throw new Error(r.text);
});
t.teardown(async () => { await broker.stop(); });

const get = (path: string) => call(broker, 'GET', `${NGSI}${path}`);

t.test('retrieve with join=flat answers the entity and the entities it links to, one hop by default', async (t) => {
  const r = await get(`/entities/${V}?join=flat`);
  t.equal(r.status, 200, r.text);
  t.same(r.json.map((e: any) => e.id), [V, P], 'the missing target is left out, the Company is two hops away');
  t.equal(r.json[1].name.value, 'Ann');
});

t.test('joinLevel=2 follows two hops; a cycle back to the entity adds nothing', async (t) => {
  const r = await get(`/entities/${V}?join=flat&joinLevel=2`);
  t.same(r.json.map((e: any) => e.id), [V, P, C]);
  const deep = await get(`/entities/${V}?join=flat&joinLevel=5`);
  t.same(deep.json.map((e: any) => e.id), [V, P, C], 'the Company links back to the Vehicle: no repeat');
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
  t.same(r.json.map((e: any) => e.id), [V]);
  const inline = await get(`/entities/${V}?join=inline&containedBy=${P}`);
  t.notOk('entity' in inline.json.owner);
});

t.test('query with join=flat adds each linked entity once after the page', async (t) => {
  const r = await get('/entities?type=Vehicle&join=flat');
  t.equal(r.status, 200, r.text);
  t.same(r.json.map((e: any) => e.id).sort(), [P, V, 'urn:ngsi-ld:Vehicle:L2'].sort());
  const post = await call(broker, 'POST', `${NGSI}/entityOperations/query`, { body: { type: 'Query', entities: [{ type: 'Vehicle' }], join: 'inline', joinLevel: 2 } });
  t.equal(post.status, 200, post.text);
  for (const e of post.json) t.equal(e.owner.entity.employer.entity.id, C, `${e.id} joined two hops inline`);
});

t.test('join=@none and no join answer the entity alone', async (t) => {
  t.equal((await get(`/entities/${V}?join=@none`)).json.id, V);
  t.notOk('entity' in (await get(`/entities/${V}`)).json.owner);
});

t.test('bad join parameters answer 400 BadRequestData', async (t) => {
  for (const q of ['join=deep', 'join=flat&joinLevel=0', 'join=flat&joinLevel=-1', 'join=flat&joinLevel=two', 'join=flat&joinLevel=99', 'joinLevel=2', 'join=flat&containedBy=not%20a%20uri']) {
    const r = await get(`/entities/${V}?${q}`);
    t.equal(r.status, 400, `${q}: ${r.text}`);
    t.equal(r.json.type, 'https://uri.etsi.org/ngsi-ld/errors/BadRequestData', q);
    t.equal((await get(`/entities?type=Vehicle&${q}`)).status, 400, `query ${q}`);
  }
  const post = await call(broker, 'POST', `${NGSI}/entityOperations/query`, { body: { type: 'Query', entities: [{ type: 'Vehicle' }], join: 'flat', joinLevel: 'x' } });
  t.equal(post.status, 400);
});
