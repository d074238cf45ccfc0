// --frontOps (issue 24): the operations on one entity by id run on the front thread, everything else in the pool, and
// nothing a client sees depends on which ran it.
import t from 'tap';
import { createServer } from 'node:http';
import { startBroker, call, NGSI, type Broker } from './helpers/broker.js';
import { startReceiver } from './helpers/receiver.js';

interface PoolHealth {
  mode: string;
  completed: number;
  onFront?: number;
}

async function poolOf(broker: Broker): Promise<PoolHealth> {
  const health = (await fetch(`http://127.0.0.1:${broker.healthPort}/health`).then((r) => r.json())) as { pool: PoolHealth };
  return health.pool;
}

/** Where one request ran: the front thread's count and the pool's, before and after it. */
async function placeOf(broker: Broker, send: () => Promise<{ status: number }>, status: number): Promise<'front' | 'pool'> {
  const before = await poolOf(broker);
  const reply = await send();
  if (reply.status !== status) throw new Error(`expected ${status}, got ${reply.status}`);
  const after = await poolOf(broker);
  const front = (after.onFront ?? 0) - (before.onFront ?? 0);
  const pool = after.completed - before.completed - front;
  if (front + pool !== 1) throw new Error(`one request counted ${front} times on the front and ${pool} in the pool`);
  return front === 1 ? 'front' : 'pool';
}

const entity = (id: string, extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  id,
  type: 'Room',
  temperature: { type: 'Property', value: 20 },
  ...extra,
});

t.test('--frontOps cheap: one entity by id on the front thread, queries, batches, joins and big bodies in the pool', async (t) => {
  const broker = await startBroker(['--frontOps', 'cheap'], {}, { pool: true });
  try {
    t.equal((await poolOf(broker)).mode, 'split');
    const id = 'urn:ngsi-ld:Room:1';
    const cases: Array<[string, () => Promise<{ status: number }>, number, 'front' | 'pool']> = [
      ['create', () => call(broker, 'POST', `${NGSI}/entities`, { body: entity(id) }), 201, 'front'],
      ['retrieve', () => call(broker, 'GET', `${NGSI}/entities/${id}`), 200, 'front'],
      [
        'PATCH attrs',
        () => call(broker, 'PATCH', `${NGSI}/entities/${id}/attrs`, { body: { temperature: { type: 'Property', value: 21 } } }),
        204,
        'front',
      ],
      ['retrieve with join', () => call(broker, 'GET', `${NGSI}/entities/${id}?join=inline`), 200, 'pool'],
      ['retrieve with joinLevel', () => call(broker, 'GET', `${NGSI}/entities/${id}?joinLevel=2&join=flat`), 200, 'pool'],
      ['query', () => call(broker, 'GET', `${NGSI}/entities?type=Room`), 200, 'pool'],
      [
        'batch upsert',
        () => call(broker, 'POST', `${NGSI}/entityOperations/upsert`, { body: [entity('urn:ngsi-ld:Room:2')] }),
        201,
        'pool',
      ],
      ['types', () => call(broker, 'GET', `${NGSI}/types`), 200, 'pool'],
      [
        'a create above 16 KiB',
        () =>
          call(broker, 'POST', `${NGSI}/entities`, {
            body: entity('urn:ngsi-ld:Room:big', { note: { type: 'Property', value: 'x'.repeat(17 * 1024) } }),
          }),
        201,
        'pool',
      ],
      ['delete', () => call(broker, 'DELETE', `${NGSI}/entities/urn:ngsi-ld:Room:2`), 204, 'front'],
      ['a 404 of a one-entity operation', () => call(broker, 'GET', `${NGSI}/entities/urn:ngsi-ld:Room:none`), 404, 'front'],
    ];
    for (const [what, send, status, where] of cases) t.equal(await placeOf(broker, send, status), where, what);
  } finally {
    t.equal(await broker.stop(), 0, 'clean exit');
  }
});

t.test('--frontOps cheap: a write on the front thread is read by the pool at once and notifies as any other', async (t) => {
  const receiver = await startReceiver();
  const broker = await startBroker(['--frontOps', 'cheap'], {}, { pool: true });
  try {
    const sub = await call(broker, 'POST', `${NGSI}/subscriptions`, {
      body: {
        type: 'Subscription',
        entities: [{ type: 'Counter' }],
        watchedAttributes: ['n'],
        notification: { endpoint: { uri: `${receiver.url}/n`, accept: 'application/json' }, format: 'keyValues' },
      },
    });
    t.equal(sub.status, 201);
    const id = 'urn:ngsi-ld:Counter:1';
    t.equal(
      (await call(broker, 'POST', `${NGSI}/entities`, { body: { id, type: 'Counter', n: { type: 'Property', value: 0 } } })).status,
      201,
    );
    for (let n = 1; n <= 20; n++) {
      const patched = await call(broker, 'PATCH', `${NGSI}/entities/${id}/attrs/n`, { body: { type: 'Property', value: n } });
      t.equal(patched.status, 204);
      // A query runs in the pool: it sees the front thread's commit of the line above.
      const q = await call(broker, 'GET', `${NGSI}/entities?type=Counter&options=keyValues`);
      t.same(q.json, [{ id, type: 'Counter', n }], `the pool reads n=${n} right after the front wrote it`);
    }
    const values = (): number[] => receiver.received.flatMap((r) => (r.body as { data: Array<{ n: number }> }).data.map((d) => d.n));
    for (const deadline = Date.now() + 10_000; !values().includes(20) && Date.now() < deadline;)
      await new Promise((r) => setTimeout(r, 20));
    t.ok(values().includes(20), 'the last write made on the front thread is notified');
  } finally {
    t.equal(await broker.stop(), 0, 'clean exit');
    receiver.close();
  }
});

t.test('--frontOps none runs everything in the pool', async (t) => {
  const broker = await startBroker(['--frontOps', 'none'], {}, { pool: true });
  try {
    const pool = await poolOf(broker);
    t.equal(pool.mode, 'pool');
    t.equal(pool.onFront, undefined);
    t.equal((await call(broker, 'POST', `${NGSI}/entities`, { body: entity('urn:ngsi-ld:Room:1') })).status, 201);
    t.equal((await poolOf(broker)).completed, pool.completed + 1);
  } finally {
    t.equal(await broker.stop(), 0, 'clean exit');
  }
});

t.test('--frontOps takes auto, none or cheap only', async (t) => {
  await t.rejects(startBroker(['--frontOps', 'some'], {}, { pool: true }), /frontOps/);
});

t.test('a write right after a subscription is created is matched against it, whichever thread runs each', async (t) => {
  // The subscription's jsonldContext is slow to fetch: each thread that applies the subscription fetches it first, so
  // the thread that runs the write (the front, with --frontOps cheap) must wait until it has applied it.
  const ctxServer = createServer((_req, res) => {
    setTimeout(
      () =>
        res
          .writeHead(200, { 'content-type': 'application/ld+json' })
          .end(JSON.stringify({ '@context': { kilograms: 'https://example.org/weight' } })),
      300,
    );
  });
  await new Promise<void>((r) => ctxServer.listen(0, '127.0.0.1', r));
  const ctxUrl = `http://127.0.0.1:${(ctxServer.address() as { port: number }).port}/ctx.jsonld`;
  const receiver = await startReceiver();
  const broker = await startBroker(['--frontOps', 'cheap'], {}, { pool: true });
  try {
    for (let i = 0; i < 3; i++) {
      const sub = await call(broker, 'POST', `${NGSI}/subscriptions`, {
        body: {
          type: 'Subscription',
          entities: [{ type: `Hive${i}` }],
          jsonldContext: ctxUrl,
          notification: { endpoint: { uri: `${receiver.url}/hive${i}`, accept: 'application/json' } },
        },
      });
      t.equal(sub.status, 201);
      const created = await call(broker, 'POST', `${NGSI}/entities`, {
        body: { id: `urn:ngsi-ld:Hive${i}:1`, type: `Hive${i}`, weight: { type: 'Property', value: 31 } },
      });
      t.equal(created.status, 201);
      const got = await receiver.at(`/hive${i}`, 1);
      t.equal(got.length, 1, `the create right after subscription ${i + 1} is notified`);
    }
  } finally {
    t.equal(await broker.stop(), 0, 'clean exit');
    receiver.close();
    ctxServer.close();
  }
});
