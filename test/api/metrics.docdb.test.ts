// /metrics on a docdb store (README "Metrics"): entities per tenant from the server's collection counts, no size.
import t from 'tap';
import { startBroker, call, NGSI } from './helpers/broker.js';
import { docdbArgs, dropDatabases, freshDbName } from './helpers/docdb.js';

t.test('entities per tenant on docdb; no store size series', async (t) => {
  const dbName = freshDbName();
  const broker = await startBroker(docdbArgs(dbName));
  t.teardown(async () => {
    await broker.stop();
    await dropDatabases(dbName);
  });
  const entity = (id: string): object => ({ id, type: 'Probe', n: { type: 'Property', value: 1 } });
  t.equal((await call(broker, 'POST', `${NGSI}/entities`, { body: entity('urn:ngsi-ld:Probe:d0') })).status, 201);
  for (const id of ['urn:ngsi-ld:Probe:d1', 'urn:ngsi-ld:Probe:d2'])
    t.equal((await call(broker, 'POST', `${NGSI}/entities`, { body: entity(id), headers: { 'NGSILD-Tenant': 'acme' } })).status, 201);
  const res = await fetch(`http://127.0.0.1:${broker.healthPort}/metrics`);
  t.equal(res.status, 200);
  const text = await res.text();
  t.match(text, /^ldbroker_store_entities\{tenant="<default>"\} 1$/m);
  t.match(text, /^ldbroker_store_entities\{tenant="acme"\} 2$/m);
  t.notMatch(text, /^ldbroker_store_size_bytes /m, 'the data is the server’s: no size');
});
