// Snapshots under `--auth dsec --dsecNgsild` (seed 000 §5.2: a Snapshot's entities asked with their own types): a
// capture and a clone copy only what the entity hook lets the requester read (a refused entity left out, refused
// attributes trimmed), and the entity routes on a Snapshot (NGSILD-Snapshot) decide each entity as on the tenant, a
// purge of its entities included. Real JWTs, policies through the broker's own policy API.
import t from 'tap';
import { FakeVerifier, ORG, makeKey, signToken } from '../fixtures/dsec/harness.js';
import { startBroker, call, NGSI, type Broker, type Reply } from './helpers/broker.js';
import { constraint, pathPolicy, policy, typePolicy } from '../../bench/odrl-policy.js';
import { freePort } from './helpers/ports.js';

const persona = (as: string): string => `did:web:${as}`;
const POLICIES = [
  pathPolicy('urn:p:admin', 'odrl:use', NGSI, persona('admin')),
  typePolicy('urn:p:reader', 'odrl:read', 'Building', persona('reader')),
  policy('urn:p:attr', 'odrl:read', persona('attr'), [
    constraint('ngsi-ld:entityType', 'odrl:eq', 'Building'),
    constraint('ngsi-ld:attribute', 'odrl:eq', 'name'),
  ]),
  typePolicy('urn:p:deleter', 'odrl:delete', 'Building', persona('deleter')),
];

const key = await makeKey('k-snap', 'ES256');
const tokens = new Map<string, string>();
async function tokenOf(persona: string): Promise<string> {
  let tk = tokens.get(persona);
  if (tk === undefined) {
    const credential = { type: ['VerifiableCredential'], issuer: `did:web:${persona}`, credentialSubject: { type: 'gx:LegalParticipant' } };
    tokens.set(persona, (tk = await signToken(key, { verifiableCredential: credential })));
  }
  return tk;
}

const verifier = await new FakeVerifier().start();
verifier.keys = [key.publicJwk];
t.teardown(() => verifier.served.close());

let broker: Broker;
const as = async (persona: string, method: string, path: string, body?: unknown, snapshot?: string): Promise<Reply> => {
  const headers: Record<string, string> = { authorization: `Bearer ${await tokenOf(persona)}` };
  if (snapshot !== undefined) headers['NGSILD-Snapshot'] = snapshot;
  return call(broker, method, NGSI + path, { body, headers });
};
const snap = (id: string) => `/snapshots/${encodeURIComponent(id)}`;
const ids = (r: Reply): string[] => (Array.isArray(r.json) ? (r.json as Array<{ id: string }>).map((e) => e.id).sort() : []);
const prop = (value: unknown) => ({ type: 'Property', value });
const ALL = [{ type: 'Query', entities: [{ type: 'Building' }, { type: 'Car' }] }];

t.before(async () => {
  const papPort = await freePort();
  broker = await startBroker(
    [
      '--troe',
      'embdb',
      '--policyApiPort',
      String(papPort),
      '--auth',
      'dsec',
      '--dsecDiscovery',
      verifier.discovery,
      '--dsecPap',
      `http://127.0.0.1:${papPort}`,
      '--dsecOrganization',
      ORG,
      '--dsecRefresh',
      '1',
      '--dsecNgsild',
    ],
    {},
    { http: true },
  );
  for (const p of POLICIES) {
    const r = await call(`http://127.0.0.1:${papPort}`, 'POST', '/policy', { body: p });
    if (r.status !== 200) throw new Error(`policy: ${r.status} ${r.text}`);
  }
  const deadline = Date.now() + 15_000;
  while (Date.now() < deadline && (await as('admin', 'GET', '/entities?type=Nothing')).status !== 200)
    await new Promise((res) => setTimeout(res, 100));
  // The admin's answer comes from one thread; each thread (the pool's and, with --frontOps cheap, the front's) reloads
  // the policies every --dsecRefresh second on its own: two of them, and every thread holds all of them.
  await new Promise((res) => setTimeout(res, 2500));
  const made = await as('admin', 'POST', '/entityOperations/create', [
    { id: 'urn:ngsi-ld:Building:b1', type: 'Building', name: prop('b1'), secret: prop('s') },
    { id: 'urn:ngsi-ld:Building:b2', type: 'Building', name: prop('b2') },
    { id: 'urn:ngsi-ld:Car:c1', type: 'Car', name: prop('c1') },
  ]);
  if (made.status !== 201) throw new Error(made.text);
});
t.teardown(() => broker?.stop());

t.test('a capture copies what the requester may read, each entity decided on its own types', async (t) => {
  t.equal((await as('admin', 'POST', '/snapshots', { id: 'urn:x:admin', type: 'Snapshot', snapshotQueries: ALL })).status, 201);
  t.same(ids(await as('admin', 'GET', '/entities?type=Building,Car', undefined, 'urn:x:admin')), [
    'urn:ngsi-ld:Building:b1',
    'urn:ngsi-ld:Building:b2',
    'urn:ngsi-ld:Car:c1',
  ]);

  const byReader = await as('reader', 'POST', '/snapshots', { id: 'urn:x:reader', type: 'Snapshot', snapshotQueries: ALL });
  t.equal(byReader.status, 201, byReader.text);
  t.same(
    ids(await as('admin', 'GET', '/entities?type=Building,Car', undefined, 'urn:x:reader')),
    ['urn:ngsi-ld:Building:b1', 'urn:ngsi-ld:Building:b2'],
    'the Car the reader may not read was not captured',
  );

  const byAttr = await as('attr', 'POST', '/snapshots', { id: 'urn:x:attr', type: 'Snapshot', snapshotQueries: ALL });
  t.equal(byAttr.status, 201, byAttr.text);
  const b1 = await as('admin', 'GET', '/entities/urn:ngsi-ld:Building:b1', undefined, 'urn:x:attr');
  t.ok('name' in b1.json, 'the attribute allowed is captured');
  t.notOk('secret' in b1.json, 'the attribute refused is not');
});

t.test('the entity routes on a Snapshot decide each entity as on the tenant', async (t) => {
  const page = await as('reader', 'GET', '/entities?type=Building,Car', undefined, 'urn:x:admin');
  t.equal(page.status, 200);
  t.same(ids(page), ['urn:ngsi-ld:Building:b1', 'urn:ngsi-ld:Building:b2'], 'the Car is left out of the page');
  t.equal((await as('reader', 'GET', '/entities/urn:ngsi-ld:Car:c1', undefined, 'urn:x:admin')).status, 403, 'the Car itself: 403');
  t.equal((await as('reader', 'GET', '/entities/urn:ngsi-ld:Building:b1', undefined, 'urn:x:admin')).status, 200);
  const write = await as('reader', 'PATCH', '/entities/urn:ngsi-ld:Building:b1/attrs', { name: prop('x') }, 'urn:x:admin');
  t.equal(write.status, 403, 'a reader does not write into a Snapshot either');
});

t.test('a clone copies what the requester may read', async (t) => {
  const r = await as('reader', 'POST', `${snap('urn:x:admin')}/clone`, { id: 'urn:x:clone' });
  t.equal(r.status, 201, r.text);
  t.same(ids(await as('admin', 'GET', '/entities?type=Building,Car', undefined, 'urn:x:clone')), [
    'urn:ngsi-ld:Building:b1',
    'urn:ngsi-ld:Building:b2',
  ]);
});

t.test("a purge of a Snapshot's entities removes what the requester may delete, and keeps the rest", async (t) => {
  const r = await as('deleter', 'DELETE', '/entities?type=Building,Car', undefined, 'urn:x:admin');
  t.equal(r.status, 204, r.text);
  t.same(ids(await as('admin', 'GET', '/entities?type=Building,Car', undefined, 'urn:x:admin')), ['urn:ngsi-ld:Car:c1']);
});

t.test('a purge of the tenant (DELETE /entities) is decided entity by entity too', async (t) => {
  const tenant = { 'NGSILD-Tenant': 'p1' };
  const made = await call(broker, 'POST', `${NGSI}/entityOperations/create`, {
    body: [
      { id: 'urn:ngsi-ld:Building:p1', type: 'Building' },
      { id: 'urn:ngsi-ld:Car:p1', type: 'Car' },
    ],
    headers: { ...tenant, authorization: `Bearer ${await tokenOf('admin')}` },
  });
  t.equal(made.status, 201, made.text);
  const purge = await call(broker, 'DELETE', `${NGSI}/entities?type=Building,Car`, {
    headers: { ...tenant, authorization: `Bearer ${await tokenOf('deleter')}` },
  });
  t.equal(purge.status, 204, `a right to delete Buildings is enough to purge them: ${purge.text}`);
  const left = await call(broker, 'GET', `${NGSI}/entities?type=Building,Car`, {
    headers: { ...tenant, authorization: `Bearer ${await tokenOf('admin')}` },
  });
  t.same(ids(left), ['urn:ngsi-ld:Car:p1'], 'the Building purged, the Car kept');
});

t.test('a temporal capture copies the evolutions of what the requester may read', async (t) => {
  const r = await as('reader', 'POST', '/snapshots', {
    id: 'urn:x:temporal',
    type: 'Snapshot',
    snapshotTemporalQueries: [{ ...ALL[0], temporalQ: { timerel: 'after', timeAt: '2000-01-01T00:00:00Z', timeproperty: 'createdAt' } }],
  });
  t.equal(r.status, 201, r.text);
  const held = await as('admin', 'GET', '/temporal/entities?type=Building,Car', undefined, 'urn:x:temporal');
  t.equal(held.status, 200, held.text);
  t.same(ids(held), ['urn:ngsi-ld:Building:b1', 'urn:ngsi-ld:Building:b2'], 'the Car the reader may not read was not copied');
});
