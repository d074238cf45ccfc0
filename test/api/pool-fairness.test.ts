// One client must never slow another (README "Limits"): many clients' batch upserts queued on a pipeline thread must
// not hold a small request of another client behind all of them. Order of completion only, never timings: the
// machine may be as slow as it likes, a query sent after 100 batches completes while most of them are still queued.
import t from 'tap';
import { setImmediate as turn } from 'node:timers/promises';
import { mkdtempSync, readFileSync, rmSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { connect } from 'node:net';
import { join } from 'node:path';
import { startBroker, call, NGSI, type Broker } from './helpers/broker.js';
import { repoPath } from '../helpers/repo.js';
import { BATCHES_PER_THREAD } from '../../src/pipeline/pool-runner.js';

const PLUGIN = repoPath('test/fixtures/auth/contract-plugin.js');

const CLIENTS = 100;
const ENTITIES = 100;

let broker: Broker;
t.before(async () => {
  // One pipeline thread, as on the 2-core bench placement; the front's own share (--frontOps) is left as it is.
  broker = await startBroker(['--connectionPoolSize', '1', '--database', 'embdb'], {}, { pool: true });
  const seed = Array.from({ length: 10 }, (_, i) => ({ id: `urn:ngsi-ld:Probe:${i}`, type: 'Probe' }));
  const r = await call(broker, 'POST', `${NGSI}/entityOperations/upsert`, { body: seed });
  if (r.status !== 201 && r.status !== 204) throw new Error(r.text);
});
t.teardown(() => broker.stop());

const batchOf = (client: number, round: number): unknown[] =>
  Array.from({ length: ENTITIES }, (_, i) => ({
    id: `urn:ngsi-ld:Load:${client}-${i}`,
    type: 'Load',
    n: { type: 'Property', value: round * ENTITIES + i },
    name: { type: 'Property', value: `load ${client} ${i}` },
  }));

t.test("a query and a GET by id sent after 100 clients' batches complete before most of those batches", async (t) => {
  for (let round = 0; round < 3; round++) {
    let batchesDone = 0;
    const batches: Array<Promise<void>> = [];
    for (let c = 0; c < CLIENTS; c++) {
      batches.push(
        call(broker, 'POST', `${NGSI}/entityOperations/upsert`, { body: batchOf(c, round) }).then((r) => {
          t.ok(r.status === 201 || r.status === 204, r.text);
          batchesDone++;
        }),
      );
      // Each client's request comes in its own turn of the event loop, as from separate connections.
      await turn();
    }
    // A query string not run before (never on the front: front-queries.ts runs only measured ones there).
    const query = call(broker, 'GET', `${NGSI}/entities?type=Probe&limit=${5 + round}`).then((r) => {
      t.equal(r.status, 200, r.text);
      return batchesDone;
    });
    const byId = call(broker, 'GET', `${NGSI}/entities/urn:ngsi-ld:Probe:3`).then((r) => {
      t.equal(r.status, 200, r.text);
      return batchesDone;
    });
    const [atQuery, atById] = await Promise.all([query, byId]);
    await Promise.all(batches);
    t.equal(batchesDone, CLIENTS);
    // Four batches run at once on a thread (embdb batchesAtOnce) and a few more wait for a slot there; the rest wait
    // at the front, behind which the query does not.
    t.ok(atQuery < CLIENTS / 3, `round ${round}: the query completed after ${atQuery} of ${CLIENTS} batches`);
    t.ok(atById < CLIENTS / 3, `round ${round}: the GET by id completed after ${atById} of ${CLIENTS} batches`);
  }
});

// The batches waiting at the front keep every guarantee of a request handed to the pool: --requestTimeout answers one
// that waited too long 503 and it never runs, and the pool's room for batches comes back when those it held end,
// answered in time or not. The test auth plugin (x-delay-ms: authorize answers late, holding nothing) holds them.
t.test('batches waiting at the front: 503 at --requestTimeout and never run; the room comes back', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'ldbroker-fair-'));
  const file = join(dir, 'trace.txt');
  const slow = await startBroker(
    ['--auth', PLUGIN, '--testTrace', file, '--connectionPoolSize', '1', '--requestTimeout', '400'],
    {},
    { pool: true },
  );
  const upsert = `${NGSI}/entityOperations/upsert`;
  const lines = (): string[] => (existsSync(file) ? readFileSync(file, 'utf8').split('\n') : []);
  const started = (): number => lines().filter((l) => l.startsWith('authorize ') && l.endsWith(`path=${upsert}`)).length;
  try {
    const send = (user: string, delay: number): Promise<number> =>
      call(slow, 'POST', upsert, {
        body: [{ id: `urn:ngsi-ld:Held:${user}`, type: 'Held' }],
        headers: { 'x-user': user, 'x-delay-ms': String(delay) },
      }).then((r) => r.status);
    // BATCHES_PER_THREAD (8) are held by the thread past the deadline; the ninth waits at the front and expires.
    const held: Array<Promise<number>> = [];
    for (let i = 0; i < BATCHES_PER_THREAD; i++) {
      held.push(send(`held${i}`, 1500));
      await turn();
    }
    const queued = await call(slow, 'POST', upsert, {
      body: [{ id: 'urn:ngsi-ld:Held:queued', type: 'Held' }],
      headers: { 'x-user': 'queued' },
    });
    t.equal(queued.status, 503, queued.text);
    t.match(queued.json.detail, /not started and will not be/);
    t.same(await Promise.all(held), Array(BATCHES_PER_THREAD).fill(503), 'the held ones answered 503 at the deadline too');
    t.equal(started(), BATCHES_PER_THREAD, 'the queued one never ran');
    // Still held by the thread: a new batch waits at the front, past the deadline.
    t.equal(await send('early', 0), 503, 'no room while the thread holds them');
    // Once the thread ends the held ones (1.5 s), their room is free: a new batch runs.
    for (let i = 0; i < 500 && lines().filter((l) => l === `release POST ${upsert}`).length < BATCHES_PER_THREAD; i++)
      await new Promise((r) => setTimeout(r, 10));
    t.equal(await send('after', 0), 201, 'a batch runs again once the held ones end');
    t.equal(started(), BATCHES_PER_THREAD + 1);
    t.equal((await call(slow, 'GET', `${NGSI}/entities/urn:ngsi-ld:Held:queued`, { headers: { 'x-user': 'a' } })).status, 404);
  } finally {
    t.equal(await slow.stop(), 0, 'clean exit');
    rmSync(dir, { recursive: true, force: true });
  }
});

t.test('a batch waiting at the front whose client goes away frees its place at once and never runs', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'ldbroker-fair-'));
  const file = join(dir, 'trace.txt');
  const slow = await startBroker(['--auth', PLUGIN, '--testTrace', file, '--connectionPoolSize', '1'], {}, { pool: true, http: true });
  const upsert = `${NGSI}/entityOperations/upsert`;
  const lines = (): string[] => (existsSync(file) ? readFileSync(file, 'utf8').split('\n') : []);
  const started = (): number => lines().filter((l) => l.startsWith('authorize ') && l.endsWith(`path=${upsert}`)).length;
  const inFlight = async (): Promise<number> =>
    ((await (await fetch(`http://127.0.0.1:${slow.healthPort}/health`)).json()) as { pool: { inFlight: number } }).pool.inFlight;
  try {
    const held = Array.from({ length: BATCHES_PER_THREAD }, (_, i) =>
      call(slow, 'POST', upsert, {
        body: [{ id: `urn:ngsi-ld:Held:${i}`, type: 'Held' }],
        headers: { 'x-user': `held${i}`, 'x-delay-ms': '1000' },
      }),
    );
    for (let i = 0; i < 500 && started() < BATCHES_PER_THREAD; i++) await new Promise((r) => setTimeout(r, 10));
    t.equal(started(), BATCHES_PER_THREAD, 'the thread holds its share of batches');
    const body = JSON.stringify([{ id: 'urn:ngsi-ld:Held:gone', type: 'Held' }]);
    const socket = connect(slow.port, '127.0.0.1');
    socket.on('error', () => undefined);
    socket.write(
      `POST ${upsert} HTTP/1.1\r\nHost: 127.0.0.1\r\nx-user: gone\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n${body}`,
    );
    for (let i = 0; i < 500 && (await inFlight()) <= BATCHES_PER_THREAD; i++) await new Promise((r) => setTimeout(r, 10));
    t.equal(await inFlight(), BATCHES_PER_THREAD + 1, 'the ninth batch waits at the front');
    socket.destroy();
    for (let i = 0; i < 500 && (await inFlight()) > BATCHES_PER_THREAD; i++) await new Promise((r) => setTimeout(r, 10));
    t.equal(await inFlight(), BATCHES_PER_THREAD, 'its place is free once its client is gone');
    t.same(
      (await Promise.all(held)).map((r) => r.status),
      Array(BATCHES_PER_THREAD).fill(201),
    );
    t.equal(
      (await call(slow, 'GET', `${NGSI}/entities/urn:ngsi-ld:Held:gone`, { headers: { 'x-user': 'a' } })).status,
      404,
      'never written',
    );
    // A batch after it (FIFO among batches) runs: the one of the client gone never did.
    const last = await call(slow, 'POST', upsert, { body: [{ id: 'urn:ngsi-ld:Held:last', type: 'Held' }], headers: { 'x-user': 'last' } });
    t.equal(last.status, 201, last.text);
    t.equal(started(), BATCHES_PER_THREAD + 1, 'never run');
  } finally {
    t.equal(await slow.stop(), 0, 'clean exit');
    rmSync(dir, { recursive: true, force: true });
  }
});
