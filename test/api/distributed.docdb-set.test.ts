// Subordinate subscriptions on a high-availability set (issue 22 with issue 17, README "Deployment on docdb"): three
// brokers on one database share the subscriptions, the registrations and the records of the subordinate
// subscriptions, so one broker of the set makes each subordinate on its source, whichever broker took the original
// or the registration (the live brokers are those with a fresh presence lease, `brokerPresence`). The source is a
// plain HTTP mock that answers every subscription request and records it.
import t from 'tap';
import { startBroker, call, NGSI, type Broker } from './helpers/broker.js';
import { MongoClient } from 'mongodb';
import { docdbArgs, dropDatabases, freshDbName, mongoUrl } from './helpers/docdb.js';
import { startMockSource, type MockSource } from './helpers/mock-source.js';

const IVAL_S = 1;
let brokers: Broker[] = [];
let source: MockSource;
const dbName = freshDbName();

t.before(async () => {
  source = await startMockSource((r) => ({ status: r.method === 'POST' ? 201 : 204 }));
  // Each broker knows its own address (--brokerUrl), as the brokers of a set behind a load balancer may.
  for (let i = 0; i < 3; i++)
    brokers.push(
      await startBroker([...docdbArgs(dbName), '--subCacheIval', String(IVAL_S), '--brokerUrl', `http://127.0.0.1:${10010 + i}`]),
    );
});
t.teardown(async () => {
  for (const b of brokers) await b.stop();
  brokers = [];
  await source.stop();
  await dropDatabases(dbName);
});

const S = `${NGSI}/subscriptions`;
const R = `${NGSI}/csourceRegistrations`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
let n = 0;
const uid = (kind: string): string => `urn:ngsi-ld:${kind}:${process.pid}-${++n}`;

/** The subscription requests the source received for the type (made by any broker of the set). */
const madeFor = (type: string) =>
  source.received.filter((r) => r.url.startsWith('/ngsi-ld/v1/subscriptions') && r.method === 'POST' && r.body.includes(`"${type}"`));
const requestsTo = (method: string, sourceId: string) =>
  source.received.filter((r) => r.method === method && decodeURIComponent(r.url) === `/ngsi-ld/v1/subscriptions/${sourceId}`);

/** Waits (at most ~10 s) until at least one subordinate for the type was made, then long enough for any duplicate. */
async function settle(type: string): Promise<void> {
  for (let i = 0; i < 200 && madeFor(type).length === 0; i++) await sleep(50);
  // every broker has read the subscriptions and registrations again (two reloads) before we count
  await sleep(IVAL_S * 1000 * 3 + 500);
}

async function register(on: Broker, type: string): Promise<string> {
  const id = uid('ContextSourceRegistration');
  const r = await call(on, 'POST', R, {
    body: { id, type: 'ContextSourceRegistration', endpoint: source.url, information: [{ entities: [{ type }] }] },
  });
  if (r.status !== 201) throw new Error(`registration: ${r.status} ${r.text}`);
  return id;
}

async function subscribe(on: Broker, type: string): Promise<string> {
  const id = uid('Subscription');
  const r = await call(on, 'POST', S, {
    body: { id, type: 'Subscription', entities: [{ type }], notification: { endpoint: { uri: 'http://127.0.0.1:9/notify' } } },
  });
  if (r.status !== 201) throw new Error(`subscription: ${r.status} ${r.text}`);
  return id;
}

t.test('a subscription over a registered source: one subordinate subscription for the whole set, not one per broker', async (t) => {
  const [a, b] = brokers as [Broker, Broker, Broker];
  const type = `Car${++n}`;
  await register(a, type);
  const sub = await subscribe(b, type);
  await settle(type);
  const made = madeFor(type);
  t.equal(made.length, 1, 'the source received one subscription');
  const sourceId = JSON.parse(made[0]!.body).id as string;
  t.equal(requestsTo('PATCH', sourceId).length, 0, 'and no broker moved it to its own address');
  // Its delete on another broker deletes the one subordinate, once.
  t.equal((await call(brokers[2]!, 'DELETE', `${S}/${sub}`)).status, 204);
  for (let i = 0; i < 200 && requestsTo('DELETE', sourceId).length === 0; i++) await sleep(50);
  await sleep(IVAL_S * 1000 * 3 + 500);
  t.equal(requestsTo('DELETE', sourceId).length, 1, 'deleted on the source once');
  t.equal(madeFor(type).length, 1, 'and not made again by another broker');
});

t.test('a registration made on another broker than the subscription: the subordinate is still made, once', async (t) => {
  const [a, , c] = brokers as [Broker, Broker, Broker];
  const type = `Van${++n}`;
  const sub = await subscribe(a, type);
  await sleep(IVAL_S * 1000 * 2 + 300);
  const reg = await register(c, type);
  await settle(type);
  t.equal(madeFor(type).length, 1, 'the source received one subscription');
  await call(a, 'DELETE', `${S}/${sub}`);
  await call(a, 'DELETE', `${R}/${reg}`);
});

t.test('a broker of the set stops: an update of the original still reaches the source, once', async (t) => {
  const type = `Bus${++n}`;
  await register(brokers[0]!, type);
  const sub = await subscribe(brokers[0]!, type);
  await settle(type);
  t.equal(madeFor(type).length, 1);
  const sourceId = JSON.parse(madeFor(type)[0]!.body).id as string;
  // Stopped cleanly, a broker removes its lease: the others take over what it kept at once.
  for (const stopped of brokers.splice(0, 1)) await stopped.stop();
  const p = await call(brokers[0]!, 'PATCH', `${S}/${sub}`, { body: { watchedAttributes: ['speed'] } });
  t.equal(p.status, 204, p.text);
  for (let i = 0; i < 200 && requestsTo('PATCH', sourceId).length === 0; i++) await sleep(50);
  await sleep(IVAL_S * 1000 * 3 + 500);
  t.equal(requestsTo('PATCH', sourceId).length, 1, 'the update made on the source once');
  t.equal(madeFor(type).length, 1, 'no second subordinate');
});

t.test('brokers of a set starting at once on a subscription whose subordinate is not made yet (an import): made once', async (t) => {
  const db = freshDbName();
  t.teardown(() => dropDatabases(db));
  const type = `Tram${++n}`;
  const first = await startBroker([...docdbArgs(db), '--subCacheIval', String(IVAL_S)]);
  await register(first, type);
  const sub = await subscribe(first, type);
  await settle(type);
  await first.stop();
  // What an import leaves: the original and the registration, no record of a subordinate subscription.
  const client = new MongoClient(mongoUrl());
  try {
    await client.db(db).collection('subordinateSubscriptions').deleteMany({});
  } finally {
    await client.close();
  }
  const before = madeFor(type).length;
  const set = await Promise.all([0, 1, 2].map(() => startBroker([...docdbArgs(db), '--subCacheIval', String(IVAL_S)])));
  t.teardown(async () => {
    for (const b of set) await b.stop();
  });
  for (let i = 0; i < 200 && madeFor(type).length === before; i++) await sleep(50);
  await sleep(IVAL_S * 1000 * 3 + 500);
  const ids = new Set(
    madeFor(type)
      .slice(before)
      .map((r) => JSON.parse(r.body).id as string),
  );
  t.equal(ids.size, 1, 'one subordinate subscription made on the source, not one per broker');
  t.ok(sub);
});
