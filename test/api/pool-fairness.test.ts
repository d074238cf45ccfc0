// One client must never slow another (README "Limits"): many clients' batch upserts queued on a pipeline thread must
// not hold a small request of another client behind all of them. Order of completion only, never timings: the
// machine may be as slow as it likes, a query sent after 100 batches completes while most of them are still queued.
import t from 'tap';
import { setImmediate as turn } from 'node:timers/promises';
import { startBroker, call, NGSI, type Broker } from './helpers/broker.js';

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
