// --frontOps cheap, queries (pipeline/front-queries.ts, issue 24): a GET /entities bounded by its parameters runs on the
// front thread once its runs were measured cheap; a new query string, an unbounded one (count, orderBy, a large
// limit, a join) and a slow one run in the pool, so one client's slow query never holds another's GET by id.
import t from 'tap';
import { startBroker, call, NGSI, type Broker } from './helpers/broker.js';

interface PoolHealth {
  mode: string;
  completed: number;
  onFront?: number;
}

async function poolOf(broker: Broker): Promise<PoolHealth> {
  const health = (await fetch(`http://127.0.0.1:${broker.healthPort}/health`).then((r) => r.json())) as { pool: PoolHealth };
  return health.pool;
}

/** Where one request ran, from the front thread's count and the pool's before and after it. */
async function placeOf(broker: Broker, path: string): Promise<'front' | 'pool'> {
  const before = await poolOf(broker);
  const reply = await call(broker, 'GET', path);
  if (reply.status !== 200) throw new Error(`${path}: ${reply.status} ${reply.text}`);
  const after = await poolOf(broker);
  const front = (after.onFront ?? 0) - (before.onFront ?? 0);
  const pool = after.completed - before.completed - front;
  if (front + pool !== 1) throw new Error(`one request counted ${front} times on the front and ${pool} in the pool`);
  return front === 1 ? 'front' : 'pool';
}

const N = 20_000;
let broker: Broker;
t.before(async () => {
  // embdb, which says how many entities a query read (EntityPage.examined); a store that does not (docdb) leaves
  // every query to the pool.
  broker = await startBroker(['--frontOps', 'cheap', '--database', 'embdb'], {}, { pool: true });
  for (let s = 0; s < N; s += 2000) {
    const body = Array.from({ length: 2000 }, (_, j) => ({
      id: `urn:ngsi-ld:Lot:${s + j}`,
      type: 'Lot',
      n: { type: 'Property', value: (s + j) % 40 },
      name: { type: 'Property', value: `lot ${s + j}` },
    }));
    const r = await call(broker, 'POST', `${NGSI}/entityOperations/upsert`, { body });
    if (r.status !== 201 && r.status !== 204) throw new Error(r.text);
  }
});
t.teardown(() => broker.stop());

t.test('a bounded query runs in the pool until measured cheap, then on the front, and answers the same', async (t) => {
  const path = `${NGSI}/entities?type=Lot&limit=5`;
  t.equal(await placeOf(broker, path), 'pool', 'a query string not measured yet: the pool');
  const first = await call(broker, 'GET', path);
  let place: 'front' | 'pool' = 'pool';
  for (let i = 0; i < 20 && place === 'pool'; i++) place = await placeOf(broker, path);
  t.equal(place, 'front', 'measured cheap: the front');
  const again = await call(broker, 'GET', path);
  t.same(again.json, first.json);
  t.equal(again.headers.get('link'), first.headers.get('link'));
});

t.test('count, orderBy, a large limit and a join run in the pool however cheap they were', async (t) => {
  for (const q of ['count=true', 'options=count', 'orderBy=n', 'limit=500', 'limit=0100', 'join=flat']) {
    const path = `${NGSI}/entities?type=Lot&${q}`;
    const places = new Set<string>();
    for (let i = 0; i < 8; i++) places.add(await placeOf(broker, path));
    t.same([...places], ['pool'], q);
  }
});

t.test("a slow query from one client: another client's GET by id answers first, every time", async (t) => {
  // A string comparison no index serves: every entity of the type is read and tested.
  const slow = `${NGSI}/entities?type=Lot&q=${encodeURIComponent('name=="none"')}&limit=5`;
  for (let round = 0; round < 4; round++) {
    const done: string[] = [];
    const query = call(broker, 'GET', slow).then((r) => {
      t.equal(r.status, 200);
      done.push('query');
    });
    const byId = call(broker, 'GET', `${NGSI}/entities/urn:ngsi-ld:Lot:7`).then((r) => {
      t.equal(r.status, 200);
      done.push('by id');
    });
    await Promise.all([query, byId]);
    t.same(done, ['by id', 'query'], `round ${round}`);
  }
  t.equal(await placeOf(broker, slow), 'pool', 'measured slow: still the pool');
});
