// --troe tsdb: a client reads its own writes whichever thread serves the read (README "Writes never wait for
// QuestDB"). On a pool, one-entity writes run on the front, whose history rows wait there a few ms to go to the
// writer thread together (plugins/history/tsdb/link.ts HOLD_MS), while temporal reads run on a pipeline thread: the
// read's sync has the writer ask the front for the rows it holds first (writer-thread.ts flushHolder).
import t from 'tap';
import { startBroker, call, NGSI } from './helpers/broker.js';
import { tsdbArgs } from './helpers/troe.js';

t.test('each PATCH answered on the front is in the history read at once on a pipeline thread', async (t) => {
  const broker = await startBroker(tsdbArgs(), {}, { pool: true });
  t.teardown(() => broker.stop());
  const id = 'urn:ngsi-ld:Meter:own';
  const created = await call(broker, 'POST', `${NGSI}/entities`, { body: { id, type: 'Meter', n: { type: 'Property', value: 0 } } });
  t.equal(created.status, 201, created.text);
  let seen = 0;
  for (let i = 1; i <= 10; i++) {
    const p = await call(broker, 'PATCH', `${NGSI}/entities/${id}/attrs/n`, { body: { type: 'Property', value: i } });
    t.equal(p.status, 204, p.text);
    const h = await call(broker, 'GET', `${NGSI}/temporal/entities/${id}?lastN=1`);
    t.equal(h.status, 200, h.text);
    if (h.json.n?.[0]?.value === i) seen++;
  }
  t.equal(seen, 10, 'every read saw the write answered just before it');
});
