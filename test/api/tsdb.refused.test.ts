// A tenant whose tables QuestDB refuses (its DDL answered 400) must not hold back the others: its history rows are
// dropped with an error line, and every other tenant's rows are still written and read. QuestDB here is a stand-in
// HTTP server that refuses the tables of tenant `bad`.
import t from 'tap';
import { createServer, type IncomingMessage } from 'node:http';
import { startBroker, call, NGSI } from './helpers/broker.js';

t.test("one tenant's refused tables do not block the history of the others", async (t) => {
  const writes: string[] = [];
  const server = createServer((req: IncomingMessage, res) => {
    const url = new URL(req.url ?? '', 'http://x');
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      if (url.pathname === '/write') {
        writes.push(body);
        res.writeHead(204).end();
        return;
      }
      const query = url.searchParams.get('query') ?? '';
      if (query.startsWith('CREATE') && query.includes('_t_bad ')) {
        res.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'refused by the test' }));
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(query.startsWith('CREATE') ? { ddl: 'OK' } : { columns: [], dataset: [] }));
    });
  });
  await new Promise<void>((res) => server.listen(0, '127.0.0.1', res));
  t.teardown(() => new Promise<void>((res) => server.close(() => res())));
  const port = (server.address() as { port: number }).port;
  const broker = await startBroker(['--troe', 'tsdb', '--troePort', String(port), '--troeName', 'refused']);
  t.teardown(() => broker.stop());
  const body = { id: 'urn:ngsi-ld:T:1', type: 'T', v: { type: 'Property', value: 1 } };
  t.equal((await call(broker, 'POST', `${NGSI}/entities`, { headers: { 'NGSILD-Tenant': 'bad' }, body })).status, 201);
  t.equal((await call(broker, 'POST', `${NGSI}/entities`, { body })).status, 201);
  // The read syncs with the writer: answered (404, the stand-in keeps no rows), not 503 behind the refused tenant.
  const r = await call(broker, 'GET', `${NGSI}/temporal/entities/${body.id}`);
  t.equal(r.status, 404, r.text);
  t.ok(
    writes.some((w) => w.includes('refused_inst_v2_d')),
    "the default tenant's rows were written",
  );
  t.notOk(
    writes.some((w) => w.includes('_t_bad')),
    "the refused tenant's rows were not",
  );
  t.match(broker.logs.join('\n'), /"level":50.*"tenant":"bad".*QuestDB refuses the tables: history rows dropped/);
});
