// The generations of docdb's document collections (generations.ts), on the tests' MongoDB-wire server: a write by one
// thread of a broker (a store sharing the broker's buffer) moves the number every other thread reads at once; a write
// by another broker of the set (a store with a buffer of its own) moves it within CROSS_BROKER_MS; and the
// registrations an entity request asks for (ops/forward/sources.ts liveRegistrations) are not listed again while
// nothing changed: the commands are counted with the driver's command monitoring on the store's own client.
import t, { type Test } from 'tap';
import type { CommandStartedEvent, MongoClient } from 'mongodb';
import { storeOpen, storePrepare } from '../../src/plugins/store/docdb/index.js';
import { CROSS_BROKER_MS } from '../../src/plugins/store/docdb/generations.js';
import type { DocCollection, Store } from '../../src/store/contract.js';
import { REGISTRATIONS, type RegistrationBody } from '../../src/ngsild/subscription/registration.js';
import { liveRegistrations } from '../../src/ops/forward/sources.js';
import type { LdRequest } from '../../src/pipeline/ld-request.js';
import type { WorkerContext } from '../../src/pipeline/worker-context.js';
import { dropDatabases, freshDbName, mongoUrl } from '../api/helpers/docdb.js';

const log = { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} };
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Stores on one fresh database: `threads` sharing one broker's buffer, and one of another broker. */
async function open(t: Test, threads: number, monitor = false): Promise<{ broker: Store[]; other: Store }> {
  const dbName = freshDbName();
  const url = new URL(mongoUrl());
  if (monitor) url.searchParams.set('monitorCommands', 'true');
  const options = { dbURI: url.toString(), dbName, ...(await storePrepare()) };
  const broker: Store[] = [];
  for (let i = 0; i < threads; i++) broker.push(await storeOpen({ options, primary: i === 0, log }));
  const other = await storeOpen({ options: { dbURI: mongoUrl(), dbName, ...(await storePrepare()) }, primary: false, log });
  t.teardown(async () => {
    for (const s of [...broker, other]) await s.close();
    await dropDatabases(dbName);
  });
  return { broker, other };
}

/** The collection's generation once a read of its token vouches for it (the first reads are numbers never seen). */
async function vouched(coll: DocCollection): Promise<number> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const a = coll.generation!();
    await sleep(20);
    if (coll.generation!() === a) return a;
    if (Date.now() > deadline) throw new Error('no read of the token answered');
  }
}

const registration = (id: string): Record<string, unknown> => ({
  body: { id, type: 'ContextSourceRegistration', endpoint: 'http://127.0.0.1:9/', information: [{ entities: [{ type: 'T' }] }] },
});

t.test("a document written on one thread of a broker moves the generation the broker's other threads read, at once", async (t) => {
  const { broker } = await open(t, 2);
  const [one, two] = broker.map((s) => s.collection('', REGISTRATIONS)) as [DocCollection, DocCollection];
  let before = await vouched(two);
  for (let i = 0; i < 20; i++) {
    const id = `urn:ngsi-ld:ContextSourceRegistration:${i}`;
    for (const [what, write] of [
      ['insert', () => one.insert(id, registration(id))],
      ['put', () => one.put(id, registration(id))],
      ['delete', () => one.delete(id)],
    ] as const) {
      await write();
      const after = two.generation!();
      if (after === before) {
        t.fail(`${what} ${i}: the other thread reads the generation it read before`);
        return;
      }
      before = await vouched(two);
    }
  }
  t.pass('each insert, put and delete moved it');
  t.equal(two.generation!(), two.generation!(), 'nothing written: it stays');
  const counters = broker[0]!.collection('', 'subscriptionCounters');
  t.equal(counters.generation, undefined, 'the notification counters have none (written each second, listed by no cache)');
});

t.test('a document written by another broker of the set moves the generation within CROSS_BROKER_MS', async (t) => {
  const { broker, other } = await open(t, 1);
  const mine = broker[0]!.collection('', REGISTRATIONS);
  const theirs = other.collection('', REGISTRATIONS);
  for (let i = 0; i < 3; i++) {
    const before = await vouched(mine);
    const id = `urn:ngsi-ld:ContextSourceRegistration:other${i}`;
    await theirs.insert(id, registration(id));
    // Asked as requests ask (each read may send the token read that is due); the bound, with time to spare for a
    // loaded machine, is where the test gives up, not what it measures.
    const deadline = Date.now() + CROSS_BROKER_MS + 10_000;
    while (mine.generation!() === before && Date.now() < deadline) await sleep(20);
    t.not(mine.generation!(), before, `write ${i}: seen`);
    t.ok(
      (await mine.list()).some((d) => d.id === id),
      `write ${i}: the listing at the new generation holds it`,
    );
  }
});

/** The commands the store sends, as `<command> <collection>`, while `fn` runs. */
async function commands(store: Store, fn: () => Promise<unknown>): Promise<string[]> {
  // The client is the store's own (private): the test listens on it, the product never monitors.
  const client = (store as unknown as { client: MongoClient }).client;
  const seen: string[] = [];
  const listen = (e: CommandStartedEvent): void => {
    if (['find', 'aggregate', 'count'].includes(e.commandName)) seen.push(`${e.commandName} ${String(e.command[e.commandName])}`);
  };
  client.on('commandStarted', listen);
  try {
    await fn();
  } finally {
    client.off('commandStarted', listen);
  }
  return seen;
}

t.test("an entity request's registrations: not listed again while nothing changed, listed at once after a write", async (t) => {
  const { broker } = await open(t, 2, true);
  const [one, two] = broker as [Store, Store];
  const req = { tenant: '' } as LdRequest;
  const ctx = { store: one } as WorkerContext;
  await vouched(one.collection('', REGISTRATIONS));
  t.same(await liveRegistrations(req, ctx), [], 'none yet');
  const quiet = await commands(one, async () => {
    for (let i = 0; i < 50; i++) t.same(await liveRegistrations(req, ctx), []);
  });
  t.same(
    quiet.filter((c) => c.endsWith(REGISTRATIONS)),
    [],
    `50 requests, the registrations never listed (${quiet.length} reads of the change token)`,
  );
  t.ok(
    quiet.every((c) => c === 'find docCounters'),
    'only the token is read',
  );

  const id = 'urn:ngsi-ld:ContextSourceRegistration:written';
  await two.collection('', REGISTRATIONS).insert(id, registration(id));
  const listed = await commands(one, async () => {
    const regs = await liveRegistrations(req, ctx);
    t.same(
      regs.map((r: RegistrationBody) => r.id),
      [id],
      'the next request on the other thread has it',
    );
  });
  t.same(
    listed.filter((c) => c.endsWith(REGISTRATIONS)),
    [`find ${REGISTRATIONS}`],
    'listed once',
  );
});
