// Subscription owners and the notifications they may read (seed 000 §2.6, §3 owner rows, §5.3, §5.8, §8; issue 16 C),
// end to end with `--auth dsec --dsecNgsild`: real JWTs, policies from a file, a real HTTP receiver. The sender of a
// POST or PATCH of a subscription is its owner; each entity of each notification (linked ones too) is decided as a
// retrieve of it by the owner; a notification left empty is not sent and counts nowhere; an owner past its
// credential's lifetime reads nothing. The reference mode decides no notification.
import t from 'tap';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startBroker, call, NGSI, type Broker } from './helpers/broker.js';
import { ISSUER, bearer, credential, makeSigner, typePolicy, type Signer } from './helpers/dsec.js';
import { startReceiver, type Receiver } from './helpers/receiver.js';
import { ORG } from '../fixtures/dsec/harness.js';

const A = 'did:web:a.example';
const B = 'did:web:b.example';
const WRITER = 'did:web:writer.example';
const OPERATOR_ROLE = {
  '@context': { odrl: 'http://www.w3.org/ns/odrl/2/' },
  '@type': 'odrl:Policy',
  'odrl:uid': 'urn:p:operators-read-park',
  'odrl:permission': {
    'odrl:action': { '@id': 'odrl:read' },
    'odrl:assignee': {
      '@type': 'odrl:PartyCollection',
      'odrl:refinement': { 'odrl:leftOperand': 'vc:role', 'odrl:operator': { '@id': 'odrl:hasPart' }, 'odrl:rightOperand': 'OPERATOR' },
    },
    'odrl:target': {
      '@type': 'odrl:AssetCollection',
      'odrl:refinement': { 'odrl:leftOperand': 'ngsi-ld:entityType', 'odrl:operator': { '@id': 'odrl:eq' }, 'odrl:rightOperand': 'Park' },
    },
  },
};

const dir = mkdtempSync(join(tmpdir(), 'ldbroker-owners-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));
const policiesFile = join(dir, 'policies.json');
writeFileSync(
  policiesFile,
  JSON.stringify([
    typePolicy('urn:p:sub-create', 'ngsild:create', 'Subscription'),
    typePolicy('urn:p:sub-modify', 'odrl:modify', 'Subscription'),
    typePolicy('urn:p:sub-read', 'odrl:read', 'Subscription'),
    typePolicy('urn:p:sub-delete', 'odrl:delete', 'Subscription'),
    typePolicy('urn:p:writer-building', 'odrl:use', 'Building', WRITER),
    typePolicy('urn:p:writer-car', 'odrl:use', 'Car', WRITER),
    typePolicy('urn:p:writer-park', 'odrl:use', 'Park', WRITER),
    typePolicy('urn:p:a-reads-building', 'odrl:read', 'Building', A),
    typePolicy('urn:p:b-reads-car', 'odrl:read', 'Car', B),
    OPERATOR_ROLE,
  ]),
);

let signer: Signer;
let broker: Broker;
let receiver: Receiver;
const tokens: Record<string, string> = {};
const brokers: Broker[] = [];

async function dsecBroker(extra: string[] = [], policies = policiesFile, ngsild = true): Promise<Broker> {
  const b = await startBroker([
    '--auth',
    'dsec',
    '--dsecJwks',
    signer.jwksFile,
    '--dsecIssuer',
    ISSUER,
    '--dsecPolicies',
    policies,
    '--dsecOrganization',
    ORG,
    ...(ngsild ? ['--dsecNgsild'] : []),
    ...extra,
  ]);
  brokers.push(b);
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    const r = await call(b, 'GET', `${NGSI}/subscriptions/urn:ngsi-ld:Subscription:none`, { headers: bearer(tokens.a!) });
    if (r.status !== 503) break;
    await new Promise((res) => setTimeout(res, 50));
  }
  return b;
}

t.before(async () => {
  signer = await makeSigner(dir);
  tokens.a = await signer.token(credential(A));
  tokens.b = await signer.token(credential(B));
  tokens.writer = await signer.token(credential(WRITER));
  receiver = await startReceiver();
  broker = await dsecBroker();
});
t.teardown(async () => {
  for (const b of brokers) await b.stop();
  receiver.close();
});

let n = 0;
/** A subscription to `types` notifying `path`, made by the holder of `token`; its id. */
async function subscribe(b: Broker, token: string, path: string, types: string[], extra: Record<string, unknown> = {}): Promise<string> {
  const id = `urn:ngsi-ld:Subscription:${path.slice(1)}-${++n}`;
  const { notification, ...rest } = extra as { notification?: Record<string, unknown> };
  const r = await call(b, 'POST', `${NGSI}/subscriptions`, {
    headers: bearer(token),
    body: {
      id,
      type: 'Subscription',
      entities: types.map((type) => ({ type })),
      notification: { ...notification, endpoint: { uri: receiver.url + path } },
      ...rest,
    },
  });
  if (r.status !== 201) throw new Error(`subscription: ${r.status} ${r.text}`);
  return id;
}

async function write(b: Broker, id: string, type: string, value: unknown, extra: Record<string, unknown> = {}): Promise<void> {
  const r = await call(b, 'POST', `${NGSI}/entityOperations/upsert`, {
    headers: bearer(tokens.writer!),
    body: [{ id, type, value: { type: 'Property', value }, ...extra }],
  });
  if (r.status >= 300) throw new Error(`upsert ${id}: ${r.status} ${r.text}`);
}

async function timesSent(b: Broker, token: string, id: string): Promise<number | undefined> {
  const r = await call(b, 'GET', `${NGSI}/subscriptions/${id}`, { headers: bearer(token) });
  return r.json.notification.timesSent as number | undefined;
}

t.test('each entity is decided for the owner: what it may not read is left out, and an empty notification is not sent', async (t) => {
  const sa = await subscribe(broker, tokens.a!, '/a', ['Building', 'Car']);
  // B reads Car: its notification of the same writes says when they have been delivered
  await subscribe(broker, tokens.b!, '/b', ['Building', 'Car']);
  await write(broker, 'urn:ngsi-ld:Car:1', 'Car', 1);
  await write(broker, 'urn:ngsi-ld:Building:1', 'Building', 1);
  await receiver.at('/a', 1);
  await receiver.at('/b', 1);
  // one more write of each: the notifications of the first ones were built before these
  await write(broker, 'urn:ngsi-ld:Car:1', 'Car', 2);
  await write(broker, 'urn:ngsi-ld:Building:1', 'Building', 2);
  await receiver.at('/a', 2);
  await receiver.at('/b', 2);
  t.same(receiver.idsAt('/a'), ['urn:ngsi-ld:Building:1', 'urn:ngsi-ld:Building:1'], 'A reads Building only');
  t.same(receiver.idsAt('/b'), ['urn:ngsi-ld:Car:1', 'urn:ngsi-ld:Car:1'], 'B reads Car only');
  t.equal(await timesSent(broker, tokens.a!, sa), 2, 'a notification not sent is not counted');
  const rendered = await call(broker, 'GET', `${NGSI}/subscriptions/${sa}`, { headers: bearer(tokens.a!) });
  t.notMatch(rendered.text, /a\.example|owner|credential/i, 'the owner is never rendered');
});

t.test('the reference mode decides no notification (seed 000 §5.8): everything the subscription selects is sent', async (t) => {
  const reference = await dsecBroker([], policiesFile, false);
  const sa = await subscribe(reference, tokens.a!, '/reference-a', ['Building', 'Car']);
  await write(reference, 'urn:ngsi-ld:Car:r1', 'Car', 1);
  await write(reference, 'urn:ngsi-ld:Building:r1', 'Building', 1);
  const got = await receiver.at('/reference-a', 2);
  t.same(
    got.flatMap((n) => (n.body.data as Array<{ id: string }>).map((e) => e.id)).sort(),
    ['urn:ngsi-ld:Building:r1', 'urn:ngsi-ld:Car:r1'],
    'A gets the Car it may not GET',
  );
  t.equal(await timesSent(reference, tokens.a!, sa), 2);
});

t.test('linked entities of a join are decided one by one for the owner', async (t) => {
  await write(broker, 'urn:ngsi-ld:Car:9', 'Car', 9);
  await subscribe(broker, tokens.a!, '/join-a', ['Building'], { notification: { join: 'flat' } });
  await write(broker, 'urn:ngsi-ld:Building:9', 'Building', 9, {
    parkedCar: { type: 'Relationship', object: 'urn:ngsi-ld:Car:9' },
  });
  const [got] = await receiver.at('/join-a', 1);
  t.same(
    (got!.body.data as Array<{ id: string }>).map((e) => e.id),
    ['urn:ngsi-ld:Building:9'],
    'the Car it links to is left out: A may not read it',
  );
});

t.test('a PATCH by someone else makes that sender the owner (seed 000 §3)', async (t) => {
  const id = await subscribe(broker, tokens.a!, '/patched', ['Building', 'Car']);
  const p = await call(broker, 'PATCH', `${NGSI}/subscriptions/${id}`, {
    headers: bearer(tokens.b!),
    body: { notification: { endpoint: { uri: `${receiver.url}/patched-by-b` } } },
  });
  t.equal(p.status, 204, p.text);
  await subscribe(broker, tokens.a!, '/patched-control', ['Building']);
  await write(broker, 'urn:ngsi-ld:Building:3', 'Building', 3);
  await write(broker, 'urn:ngsi-ld:Car:3', 'Car', 3);
  await receiver.at('/patched-by-b', 1);
  await receiver.at('/patched-control', 1);
  await write(broker, 'urn:ngsi-ld:Car:3', 'Car', 4);
  await receiver.at('/patched-by-b', 2);
  t.same(receiver.idsAt('/patched-by-b'), ['urn:ngsi-ld:Car:3', 'urn:ngsi-ld:Car:3'], "B's rights now: Car, no Building");
  t.same(receiver.idsAt('/patched'), [], 'nothing to the endpoint B replaced');
});

t.test('a credential without roles satisfies no role policy: its subscription is sent nothing', async (t) => {
  const withRoles = await signer.token(credential(A, { credentialSubject: { roles: [{ target: ORG, names: ['OPERATOR'] }] } }));
  const noRoles = await signer.token(credential(A, { credentialSubject: { type: 'gx:LegalParticipant' } }));
  const emptyRoles = await signer.token(credential(A, { credentialSubject: { roles: [] } }));
  const badRoles = await signer.token(credential(A, { credentialSubject: { roles: 'OPERATOR' } }));
  await subscribe(broker, withRoles, '/roles', ['Park']);
  const none = await subscribe(broker, noRoles, '/no-roles', ['Park']);
  await subscribe(broker, emptyRoles, '/no-roles', ['Park']);
  await subscribe(broker, badRoles, '/no-roles', ['Park']);
  await write(broker, 'urn:ngsi-ld:Park:1', 'Park', 1);
  await receiver.at('/roles', 1);
  await write(broker, 'urn:ngsi-ld:Park:1', 'Park', 2);
  await receiver.at('/roles', 2);
  t.same(receiver.idsAt('/roles'), ['urn:ngsi-ld:Park:1', 'urn:ngsi-ld:Park:1']);
  t.same(receiver.idsAt('/no-roles'), []);
  t.equal(await timesSent(broker, noRoles, none), undefined, 'never sent, never counted');
});

t.test('a huge credential is kept as the owner as any other; one past the request head limit is refused 431', async (t) => {
  const padding = 'x'.repeat(9000);
  const big = await signer.token(credential(A, { credentialSubject: { type: 'gx:LegalParticipant', note: padding } }));
  t.ok(big.length > 12_000, 'the token is large');
  await subscribe(broker, big, '/huge', ['Building']);
  await write(broker, 'urn:ngsi-ld:Building:4', 'Building', 4);
  const [got] = await receiver.at('/huge', 1);
  t.same(
    (got?.body.data as Array<{ id: string }> | undefined)?.map((e) => e.id),
    ['urn:ngsi-ld:Building:4'],
  );
  const tooBig = await signer.token(credential(A, { credentialSubject: { note: 'x'.repeat(20_000) } }));
  const r = await call(broker, 'POST', `${NGSI}/subscriptions`, {
    headers: bearer(tooBig),
    body: {
      id: 'urn:ngsi-ld:Subscription:too-big',
      type: 'Subscription',
      entities: [{ type: 'Building' }],
      notification: { endpoint: { uri: `${receiver.url}/too-big` } },
    },
  });
  t.equal(r.status, 431);
  const after = await call(broker, 'GET', `${NGSI}/subscriptions/urn:ngsi-ld:Subscription:too-big`, { headers: bearer(tokens.a!) });
  t.equal(after.status, 404, 'nothing was made');
});

t.test("an owner whose credential's lifetime ended reads nothing: expirationDate (VC 1.1) and validUntil", async (t) => {
  const soon = new Date(Date.now() + 3000).toISOString();
  const vc11 = await signer.token(credential(A, { expirationDate: soon }));
  const vc20 = await signer.token(credential(A, { validUntil: soon }));
  const s11 = await subscribe(broker, vc11, '/short', ['Building']);
  const s20 = await subscribe(broker, vc20, '/short', ['Building']);
  await subscribe(broker, tokens.a!, '/short-control', ['Building']);
  await write(broker, 'urn:ngsi-ld:Building:5', 'Building', 5);
  await receiver.at('/short', 2);
  await receiver.at('/short-control', 1);
  t.same(receiver.idsAt('/short'), ['urn:ngsi-ld:Building:5', 'urn:ngsi-ld:Building:5'], 'both sent while the credentials hold');
  await new Promise((r) => setTimeout(r, Math.max(0, Date.parse(soon) - Date.now() + 200)));
  await write(broker, 'urn:ngsi-ld:Building:5', 'Building', 6);
  await receiver.at('/short-control', 2);
  await write(broker, 'urn:ngsi-ld:Building:5', 'Building', 7);
  await receiver.at('/short-control', 3);
  t.equal(receiver.idsAt('/short').length, 2, 'nothing once they ended');
  t.equal(await timesSent(broker, tokens.a!, s11), 1);
  t.equal(await timesSent(broker, tokens.a!, s20), 1);
  // seed 000 §3: an update is how an owner takes the subscription back
  const p = await call(broker, 'PATCH', `${NGSI}/subscriptions/${s11}`, { headers: bearer(tokens.a!), body: { description: 'renewed' } });
  t.equal(p.status, 204);
  await write(broker, 'urn:ngsi-ld:Building:5', 'Building', 8);
  await receiver.at('/short', 3);
  t.equal(receiver.idsAt('/short').length, 3, 'sent again once a holder of a valid credential updated it');
});

t.test('--dsecOwnerMaxAge: an owner holds that many seconds after it made or updated the subscription', async (t) => {
  const b = await dsecBroker(['--dsecOwnerMaxAge', '2']);
  const id = await subscribe(b, tokens.a!, '/max-age', ['Building']);
  await write(b, 'urn:ngsi-ld:Building:6', 'Building', 1);
  await receiver.at('/max-age', 1);
  await new Promise((r) => setTimeout(r, 2300));
  await subscribe(b, tokens.a!, '/max-age-control', ['Building']);
  await write(b, 'urn:ngsi-ld:Building:6', 'Building', 2);
  await receiver.at('/max-age-control', 1);
  await write(b, 'urn:ngsi-ld:Building:6', 'Building', 3);
  await receiver.at('/max-age-control', 2);
  t.equal(receiver.idsAt('/max-age').length, 1, 'not sent past the maximum age');
  const p = await call(b, 'PATCH', `${NGSI}/subscriptions/${id}`, { headers: bearer(tokens.a!), body: { description: 'renewed' } });
  t.equal(p.status, 204);
  await write(b, 'urn:ngsi-ld:Building:6', 'Building', 4);
  await receiver.at('/max-age', 2);
  t.equal(receiver.idsAt('/max-age').length, 2, 'an update renews it');
});

t.test('with --dsecAnonymous a subscription made or updated without a token has no owner: it is sent nothing', async (t) => {
  const file = join(dir, 'anyone-reads-building.json');
  writeFileSync(
    file,
    JSON.stringify([
      typePolicy('urn:p:sub-create', 'ngsild:create', 'Subscription'),
      typePolicy('urn:p:sub-read', 'odrl:read', 'Subscription'),
      typePolicy('urn:p:sub-modify', 'odrl:modify', 'Subscription'),
      typePolicy('urn:p:anyone-reads-building', 'odrl:read', 'Building'),
      typePolicy('urn:p:writer-building', 'odrl:use', 'Building', WRITER),
    ]),
  );
  const b = await dsecBroker(['--dsecAnonymous'], file);
  const anonymous = 'urn:ngsi-ld:Subscription:anonymous';
  const r = await call(b, 'POST', `${NGSI}/subscriptions`, {
    body: {
      id: anonymous,
      type: 'Subscription',
      entities: [{ type: 'Building' }],
      notification: { endpoint: { uri: `${receiver.url}/anonymous` } },
    },
  });
  t.equal(r.status, 201, 'anyone may make it (vc:any)');
  const read = await call(b, 'GET', `${NGSI}/entities/urn:ngsi-ld:Building:7`);
  t.equal(read.status, 404, 'and anyone may read a Building: a request without a token gets past the policies');
  await subscribe(b, tokens.a!, '/anonymous-control', ['Building']);
  const taken = await subscribe(b, tokens.a!, '/taken', ['Building']);
  await write(b, 'urn:ngsi-ld:Building:7', 'Building', 1);
  await receiver.at('/anonymous-control', 1);
  await receiver.at('/taken', 1);
  // an anonymous PATCH of A's subscription leaves it without an owner: A's rights do not follow the new endpoint
  const p = await call(b, 'PATCH', `${NGSI}/subscriptions/${taken}`, {
    body: { notification: { endpoint: { uri: `${receiver.url}/taken-anonymously` } } },
  });
  t.equal(p.status, 204, p.text);
  await write(b, 'urn:ngsi-ld:Building:7', 'Building', 2);
  await receiver.at('/anonymous-control', 2);
  await write(b, 'urn:ngsi-ld:Building:7', 'Building', 3);
  await receiver.at('/anonymous-control', 3);
  t.same(receiver.idsAt('/anonymous'), [], 'no one was authenticated: no owner, nothing sent (seed 000 §3)');
  t.same(receiver.idsAt('/taken-anonymously'), [], 'nothing after an anonymous PATCH either');
});
