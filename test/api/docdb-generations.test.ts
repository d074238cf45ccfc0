// Registrations on docdb seen by the entity requests that forward (ops/forward/sources.ts keeps a tenant's listing
// while the collection's generation stays, generations.ts): on a broker with two pipeline threads, a registration
// created or deleted is seen by the very next GET, whichever thread serves it; one created or deleted on another
// broker of the set is seen within CROSS_BROKER_MS.
import t from 'tap';
import { startBroker, call, NGSI, type Broker } from './helpers/broker.js';
import { docdbArgs, dropDatabases, freshDbName } from './helpers/docdb.js';
import { CROSS_BROKER_MS } from '../../src/plugins/store/docdb/generations.js';

const dbName = freshDbName();
let pooled: Broker;
let other: Broker;
let source: Broker;
t.before(async () => {
  source = await startBroker();
  pooled = await startBroker([...docdbArgs(dbName), '--connectionPoolSize', '2'], {}, { pool: true });
  other = await startBroker(docdbArgs(dbName));
});
t.teardown(async () => {
  await Promise.all([pooled.stop(), other.stop(), source.stop()]);
  await dropDatabases(dbName);
});

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const regId = (name: string): string => `urn:ngsi-ld:ContextSourceRegistration:${name}`;

/** An entity held by the source only, and a registration of its type at the source. */
async function sourced(name: string): Promise<{ path: string; reg: Record<string, unknown> }> {
  const id = `urn:ngsi-ld:Gen:${name}`;
  const type = `Gen${name}`;
  const created = await call(source, 'POST', `${NGSI}/entities`, { body: { id, type, p: { type: 'Property', value: name } } });
  if (created.status !== 201) throw new Error(`source: ${created.status} ${created.text}`);
  return {
    path: `${NGSI}/entities/${encodeURIComponent(id)}`,
    reg: { id: regId(name), type: 'ContextSourceRegistration', endpoint: source.url, information: [{ entities: [{ type }] }] },
  };
}

t.test('two pipeline threads: a registration created, then deleted, is seen by the next GET on either thread', async (t) => {
  // Warm both threads' listings of the (empty) collection, so a stale one would answer 404 below.
  for (let i = 0; i < 8; i++) t.equal((await call(pooled, 'GET', `${NGSI}/entities/urn:ngsi-ld:Gen:none`)).status, 404);
  for (let i = 0; i < 25; i++) {
    const { path, reg } = await sourced(`p${i}`);
    t.equal((await call(pooled, 'POST', `${NGSI}/csourceRegistrations`, { body: reg })).status, 201);
    // Two at once: while one thread serves one, the other thread serves the other.
    const got = await Promise.all([call(pooled, 'GET', path), call(pooled, 'GET', path)]);
    t.same(
      got.map((r) => [r.status, r.json?.p?.value]),
      [
        [200, `p${i}`],
        [200, `p${i}`],
      ],
      `${i}: forwarded at once`,
    );
    t.equal((await call(pooled, 'DELETE', `${NGSI}/csourceRegistrations/${regId(`p${i}`)}`)).status, 204);
    const gone = await Promise.all([call(pooled, 'GET', path), call(pooled, 'GET', path)]);
    t.same(
      gone.map((r) => r.status),
      [404, 404],
      `${i}: no longer forwarded once deleted`,
    );
  }
});

/** The status of GET `path` on `broker` once it is `want`, asked as a client would, up to the bound and a margin. */
async function statusWithin(broker: Broker, path: string, want: number): Promise<number> {
  // The margin is for a loaded machine: the test gives up there, it measures nothing.
  const deadline = Date.now() + CROSS_BROKER_MS + 10_000;
  for (;;) {
    const { status } = await call(broker, 'GET', path);
    if (status === want || Date.now() > deadline) return status;
    await sleep(50);
  }
}

t.test('a registration created, then deleted, on another broker of the set is seen within the bound', async (t) => {
  for (let i = 0; i < 3; i++) {
    const { path, reg } = await sourced(`o${i}`);
    t.equal((await call(pooled, 'GET', path)).status, 404, `${i}: not registered yet`);
    t.equal((await call(other, 'POST', `${NGSI}/csourceRegistrations`, { body: reg })).status, 201);
    t.equal(await statusWithin(pooled, path, 200), 200, `${i}: forwarded`);
    t.equal((await call(other, 'DELETE', `${NGSI}/csourceRegistrations/${regId(`o${i}`)}`)).status, 204);
    t.equal(await statusWithin(pooled, path, 404), 404, `${i}: no longer forwarded`);
  }
});
