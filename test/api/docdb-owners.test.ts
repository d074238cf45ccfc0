// Subscription owners across two brokers of one docdb (issue 16 with issue 17; seed 000 §3, §5.8, §8), with
// `--auth dsec --dsecNgsild`: a subscription made through broker A by one identity is notified by broker B, which
// handled the writes, with only what that owner may read (B restores the owner from the shared `subscriptionOwners`);
// a PATCH through A by another identity makes it the owner, and B follows within the owner cache's 30 s.
import t from 'tap';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startBroker, call, NGSI, type Broker } from './helpers/broker.js';
import { ISSUER, bearer, credential, makeSigner, typePolicy, type Signer } from './helpers/dsec.js';
import { startReceiver, type Receiver } from './helpers/receiver.js';
import { docdbArgs, dropDatabases, freshDbName } from './helpers/docdb.js';
import { ORG } from '../fixtures/dsec/harness.js';

const A = 'did:web:a.example';
const B = 'did:web:b.example';
const WRITER = 'did:web:writer.example';
const IVAL_S = 1;

const dir = mkdtempSync(join(tmpdir(), 'ldbroker-docdb-owners-'));
const policiesFile = join(dir, 'policies.json');
writeFileSync(
  policiesFile,
  JSON.stringify([
    typePolicy('urn:p:sub-create', 'ngsild:create', 'Subscription'),
    typePolicy('urn:p:sub-modify', 'odrl:modify', 'Subscription'),
    typePolicy('urn:p:sub-read', 'odrl:read', 'Subscription'),
    typePolicy('urn:p:writer-building', 'odrl:use', 'Building', WRITER),
    typePolicy('urn:p:writer-car', 'odrl:use', 'Car', WRITER),
    typePolicy('urn:p:a-reads-building', 'odrl:read', 'Building', A),
    typePolicy('urn:p:b-reads-car', 'odrl:read', 'Car', B),
  ]),
);

const dbName = freshDbName();
let signer: Signer;
let receiver: Receiver;
let brokerA: Broker;
let brokerB: Broker;
const tokens: Record<string, string> = {};

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

async function dsecBroker(): Promise<Broker> {
  return startBroker([
    ...docdbArgs(dbName),
    '--subCacheIval',
    String(IVAL_S),
    '--auth',
    'dsec',
    '--dsecJwks',
    signer.jwksFile,
    '--dsecIssuer',
    ISSUER,
    '--dsecPolicies',
    policiesFile,
    '--dsecOrganization',
    ORG,
    '--dsecNgsild',
  ]);
}

t.before(async () => {
  signer = await makeSigner(dir);
  tokens.a = await signer.token(credential(A));
  tokens.b = await signer.token(credential(B));
  tokens.writer = await signer.token(credential(WRITER));
  receiver = await startReceiver();
  brokerA = await dsecBroker();
  brokerB = await dsecBroker();
});
t.teardown(async () => {
  await brokerA?.stop();
  await brokerB?.stop();
  receiver.close();
  await dropDatabases(dbName);
  rmSync(dir, { recursive: true, force: true });
});

async function subscribe(token: string, id: string, path: string): Promise<void> {
  const r = await call(brokerA, 'POST', `${NGSI}/subscriptions`, {
    headers: bearer(token),
    body: {
      id,
      type: 'Subscription',
      entities: [{ type: 'Building' }, { type: 'Car' }],
      notification: { endpoint: { uri: receiver.url + path } },
    },
  });
  if (r.status !== 201) throw new Error(`subscription: ${r.status} ${r.text}`);
}

/** A write of `id` through broker B (the one that did not take the subscription). */
async function writeOnB(id: string, type: string, value: number): Promise<void> {
  const r = await call(brokerB, 'POST', `${NGSI}/entityOperations/upsert`, {
    headers: bearer(tokens.writer!),
    body: [{ id, type, value: { type: 'Property', value } }],
  });
  if (r.status >= 300) throw new Error(`upsert ${id}: ${r.status} ${r.text}`);
}

/** Until broker B matches the subscription (its --subCacheIval reload), ids written there and notified. */
async function waitMatchedOnB(path: string): Promise<void> {
  const deadline = Date.now() + 20_000;
  for (let i = 0; Date.now() < deadline; i++) {
    await writeOnB('urn:ngsi-ld:Building:probe', 'Building', i);
    await writeOnB('urn:ngsi-ld:Car:probe', 'Car', i);
    await sleep(300);
    if (receiver.idsAt(path).length > 0) return;
  }
}

t.test('a write on B notifies only what the owner, who subscribed through A, may read', async (t) => {
  await subscribe(tokens.a!, 'urn:ngsi-ld:Subscription:owner-a', '/a');
  await subscribe(tokens.b!, 'urn:ngsi-ld:Subscription:owner-b', '/b');
  await waitMatchedOnB('/a');
  await waitMatchedOnB('/b');
  const count = (path: string): number => receiver.idsAt(path).length;
  const [beforeA, beforeB] = [count('/a'), count('/b')];
  await writeOnB('urn:ngsi-ld:Car:1', 'Car', 1);
  await writeOnB('urn:ngsi-ld:Building:1', 'Building', 1);
  // probes of the wait above may still arrive: the write's notification is looked for among what follows
  const notified = async (path: string, before: number, id: string): Promise<boolean> => {
    for (let i = 0; i < 100; i++) {
      if (receiver.idsAt(path).slice(before).includes(id)) return true;
      await sleep(100);
    }
    return false;
  };
  t.ok(await notified('/a', beforeA, 'urn:ngsi-ld:Building:1'), "A's subscription: the Building written on B");
  t.ok(await notified('/b', beforeB, 'urn:ngsi-ld:Car:1'), "B's subscription: the Car written on B");
  t.same(
    [...new Set(receiver.idsAt('/a'))].filter((id) => id.includes(':Car:')),
    [],
    "A's subscription: never a Car (A may not read Cars)",
  );
  t.same(
    [...new Set(receiver.idsAt('/b'))].filter((id) => id.includes(':Building:')),
    [],
    "B's subscription: never a Building",
  );
});

t.test("a PATCH through A by another identity: B notifies with the new owner's rights within 30 s", async (t) => {
  const before = receiver.received.filter((n) => n.path === '/a').length;
  const p = await call(brokerA, 'PATCH', `${NGSI}/subscriptions/urn:ngsi-ld:Subscription:owner-a`, {
    headers: bearer(tokens.b!),
    body: { description: 'now owned by B' },
  });
  t.equal(p.status, 204, p.text);
  // seed 000 §8: a broker that did not take the change sees the new owner within 30 s (its owner cache); B also
  // forgets the owner when its --subCacheIval reload sees the subscription changed, which is sooner.
  const deadline = Date.now() + 40_000;
  let switched = false;
  for (let i = 0; !switched && Date.now() < deadline; i++) {
    await writeOnB('urn:ngsi-ld:Car:2', 'Car', i);
    await sleep(500);
    switched = receiver.received
      .slice()
      .filter((n) => n.path === '/a')
      .slice(before)
      .some((n) => (n.body.data as Array<{ id: string }>).some((e) => e.id === 'urn:ngsi-ld:Car:2'));
  }
  t.ok(switched, "a Car reaches the subscription: B's rights");
  const after = receiver.received.filter((n) => n.path === '/a').length;
  await writeOnB('urn:ngsi-ld:Building:2', 'Building', 1);
  await writeOnB('urn:ngsi-ld:Car:2', 'Car', 1000);
  // the Car's notification comes after the Building's would have (one subscription's notifications keep their order)
  const carSeen = (): boolean =>
    receiver.received
      .filter((n) => n.path === '/a')
      .slice(after)
      .some((n) => (n.body.data as Array<{ id: string; value?: { value?: unknown } }>).some((e) => e.value?.value === 1000));
  for (let i = 0; i < 100 && !carSeen(); i++) await sleep(100);
  t.ok(carSeen(), 'the last Car is notified');
  const last = receiver.received.filter((n) => n.path === '/a').slice(after);
  t.same(
    [...new Set(last.flatMap((n) => (n.body.data as Array<{ id: string }>).map((e) => e.id)))],
    ['urn:ngsi-ld:Car:2'],
    'and no longer the Building A could read',
  );
});
