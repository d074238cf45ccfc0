// Subscription owners on the disk store (seed 000 §2.6, §3, §8; issue 16 C): a restarted broker on one --dbDir
// restores each owner from the store's `subscriptionOwners` collection (per tenant) and notifies as before; a
// DELETE of the subscription removes its owner record; a store that lost an owner record notifies that
// subscription nothing (fail closed) while the others go on.
import t from 'tap';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnBroker, startBroker, call, NGSI, type Broker } from './helpers/broker.js';
import { ISSUER, bearer, credential, makeSigner, typePolicy } from './helpers/dsec.js';
import { startReceiver, type Receiver } from './helpers/receiver.js';
import { storeOpen } from '../../src/plugins/store/embdb/index.js';
import { SUBSCRIPTION_OWNERS } from '../../src/ngsild/subscription/model.js';

const A = 'did:web:a.example';
const WRITER = 'did:web:writer.example';
const dir = mkdtempSync(join(tmpdir(), 'ldbroker-owners-restart-'));
const dbDir = join(dir, 'db');
t.teardown(() => rmSync(dir, { recursive: true, force: true }));
writeFileSync(
  join(dir, 'policies.json'),
  JSON.stringify([
    typePolicy('urn:p:sub-create', 'ngsild:create', 'Subscription'),
    typePolicy('urn:p:sub-read', 'odrl:read', 'Subscription'),
    typePolicy('urn:p:sub-delete', 'odrl:delete', 'Subscription'),
    typePolicy('urn:p:writer-building', 'odrl:use', 'Building', WRITER),
    typePolicy('urn:p:a-reads-building', 'odrl:read', 'Building', A),
  ]),
);

let receiver: Receiver;
let tokenA = '';
let tokenWriter = '';
let jwksFile = '';
t.before(async () => {
  const signer = await makeSigner(dir);
  jwksFile = signer.jwksFile;
  tokenA = await signer.token(credential(A));
  tokenWriter = await signer.token(credential(WRITER));
  receiver = await startReceiver();
});
t.teardown(() => receiver.close());

/** The broker on dbDir: a process (`spawnBroker`, stopped by SIGTERM), or one in this process (`startBroker`). */
async function start(run: (args: string[]) => Promise<Broker> = spawnBroker): Promise<Broker> {
  const b = await run([
    '--dbDir',
    dbDir,
    '--auth',
    'dsec',
    '--dsecJwks',
    jwksFile,
    '--dsecIssuer',
    ISSUER,
    '--dsecPolicies',
    join(dir, 'policies.json'),
    '--dsecNgsild',
  ]);
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    const r = await call(b, 'GET', `${NGSI}/subscriptions/urn:ngsi-ld:Subscription:none`, { headers: bearer(tokenA) });
    if (r.status !== 503) break;
    await new Promise((res) => setTimeout(res, 50));
  }
  return b;
}

const TENANTS = ['', 'site2'];
const tenantHeader = (tenant: string): Record<string, string> => (tenant === '' ? {} : { 'NGSILD-Tenant': tenant });

async function subscribe(b: Broker, tenant: string, name: string): Promise<string> {
  const id = `urn:ngsi-ld:Subscription:${name}`;
  const r = await call(b, 'POST', `${NGSI}/subscriptions`, {
    headers: { ...bearer(tokenA), ...tenantHeader(tenant) },
    body: {
      id,
      type: 'Subscription',
      entities: [{ type: 'Building' }],
      notification: { endpoint: { uri: `${receiver.url}/${tenant}/${name}` } },
    },
  });
  if (r.status !== 201) throw new Error(r.text);
  return id;
}

async function write(b: Broker, tenant: string, value: number): Promise<void> {
  const r = await call(b, 'POST', `${NGSI}/entityOperations/upsert`, {
    headers: { ...bearer(tokenWriter), ...tenantHeader(tenant) },
    body: [{ id: 'urn:ngsi-ld:Building:1', type: 'Building', value: { type: 'Property', value } }],
  });
  if (r.status >= 300) throw new Error(r.text);
}

/** The owner collection of each tenant as the store has it, read while no broker runs. */
async function withOwners(
  use: (owners: (tenant: string) => ReturnType<Awaited<ReturnType<typeof storeOpen>>['collection']>) => Promise<void>,
): Promise<void> {
  const quiet = { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} };
  const store = await storeOpen({ options: { dbPath: join(dbDir, 'embdb'), ram: false }, primary: false, log: quiet as never });
  try {
    await use((tenant) => store.collection(tenant, SUBSCRIPTION_OWNERS));
  } finally {
    await store.flush();
    await store.close();
  }
}

t.test('owners survive a restart, go with their subscription, and a lost one leaves its subscription silent', async (t) => {
  let broker = await start();
  for (const tenant of TENANTS) {
    await subscribe(broker, tenant, 'kept');
    await subscribe(broker, tenant, 'lost');
    const gone = await subscribe(broker, tenant, 'deleted');
    await write(broker, tenant, 1);
    for (const name of ['kept', 'lost', 'deleted']) await receiver.at(`/${tenant}/${name}`, 1);
    const d = await call(broker, 'DELETE', `${NGSI}/subscriptions/${gone}`, { headers: { ...bearer(tokenA), ...tenantHeader(tenant) } });
    t.equal(d.status, 204);
  }
  t.equal(await broker.stop(), 0);

  await withOwners(async (owners) => {
    for (const tenant of TENANTS) {
      const kept = await owners(tenant).get('urn:ngsi-ld:Subscription:kept');
      t.type(kept?.['owner'], 'string', `tenant '${tenant}': the owner record is kept beside the subscription`);
      t.match(String(kept?.['owner']), /did:web:a\.example/, 'it holds the maker credential');
      t.equal(await owners(tenant).get('urn:ngsi-ld:Subscription:deleted'), undefined, 'removed with its subscription');
      t.ok(await owners(tenant).delete('urn:ngsi-ld:Subscription:lost'), 'the store loses this one');
    }
  });

  // Restarted in this process on the files the stopped process left.
  broker = await start(startBroker);
  t.teardown(() => broker.stop());
  for (const tenant of TENANTS) {
    await write(broker, tenant, 2);
    await receiver.at(`/${tenant}/kept`, 2);
    await write(broker, tenant, 3);
    await receiver.at(`/${tenant}/kept`, 3);
    t.equal(receiver.idsAt(`/${tenant}/kept`).length, 3, `tenant '${tenant}': the restored owner reads Building`);
    t.equal(receiver.idsAt(`/${tenant}/lost`).length, 1, 'no owner: nothing after the restart');
    t.equal(receiver.idsAt(`/${tenant}/deleted`).length, 1);
    const lost = await call(broker, 'GET', `${NGSI}/subscriptions/urn:ngsi-ld:Subscription:lost`, {
      headers: { ...bearer(tokenA), ...tenantHeader(tenant) },
    });
    t.equal(lost.json.notification.timesSent, 1, 'its counters did not move');
    t.notOk(lost.json.notification.status === 'failed', 'not a failure either');
  }
});
