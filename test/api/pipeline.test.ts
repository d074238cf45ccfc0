// The pipeline: two workers serve requests concurrently on one store; the inline front-thread mode and the
// node:http server answer the same.
import t from 'tap';
import { startBroker, call, NGSI } from './helpers/broker.js';

t.test('two pipeline workers serve requests concurrently on one LMDB store', async (t) => {
  const broker = await startBroker(['--connectionPoolSize', '8', '--logLevel', 'debug']);
  try {
    const ids = Array.from({ length: 200 }, (_, i) => `urn:ngsi-ld:Sensor:${i}`);
    const created = await Promise.all(ids.map((id) => call(broker, 'POST', `${NGSI}/entities`, { body: { id, type: 'Sensor', v: { type: 'Property', value: 1 } } })));
    t.ok(created.every((r) => r.status === 201), 'all created');
    const read = await Promise.all(ids.map((id) => call(broker, 'GET', `${NGSI}/entities/${id}`)));
    t.ok(read.every((r) => r.status === 200), 'every entity is read back whatever thread wrote it');
    const threads = new Set<string>();
    for (const line of broker.logs) {
      try {
        const rec = JSON.parse(line) as { msg?: string; thread?: string };
        if (rec.msg === 'request' && rec.thread?.startsWith('pipeline-')) threads.add(rec.thread);
      } catch { /* not JSON */ }
    }
    t.ok(threads.size >= 2, `requests were served by ${threads.size} pipeline threads: ${[...threads].join(', ')}`);
  } finally {
    await broker.stop();
  }
});

for (const [name, args] of [['inline (--connectionPoolSize 0)', ['--connectionPoolSize', '0']], ['node:http (--httpServer node)', ['--httpServer', 'node']]] as const) {
  t.test(`${name} serves the same API`, async (t) => {
    const broker = await startBroker([...args]);
    try {
      const c = await call(broker, 'POST', `${NGSI}/entities`, { body: { id: 'urn:ngsi-ld:X:1', type: 'X', a: { type: 'Property', value: 1 } } });
      t.equal(c.status, 201);
      const r = await call(broker, 'GET', `${NGSI}/entities/urn:ngsi-ld:X:1?options=keyValues`);
      t.same(r.json, { id: 'urn:ngsi-ld:X:1', type: 'X', a: 1 });
      t.equal((await call(broker, 'PUT', `${NGSI}/entities`)).status, 405);
      const big = await call(broker, 'POST', `${NGSI}/entities`, { raw: new Uint8Array(9 * 1024 * 1024).fill(32), headers: { 'content-type': 'application/json' } });
      t.equal(big.status, 413);
    } finally {
      t.equal(await broker.stop(), 0, 'clean exit');
    }
  });
}
