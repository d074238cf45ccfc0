// --troeUser/--troePwd: every request of the tsdb history to QuestDB, the ILP writes of its writer thread and the SQL
// of its reads, carries HTTP basic authentication, whatever the password holds (';', ':'), and the password is never
// logged. QuestDB here is a stand-in HTTP server that records what it is sent.
import t from 'tap';
import { createServer, type IncomingMessage } from 'node:http';
import { startBroker, call, NGSI } from './helpers/broker.js';

interface Seen {
  path: string;
  auth: string | undefined;
}

t.test('ILP writes and SQL reads both send the credentials', async (t) => {
  const seen: Seen[] = [];
  const server = createServer((req: IncomingMessage, res) => {
    const path = (req.url ?? '').split('?')[0]!;
    seen.push({ path, auth: req.headers.authorization });
    req.resume();
    req.on('end', () => {
      if (path === '/write') {
        res.writeHead(204).end();
        return;
      }
      const query = new URL(req.url ?? '', 'http://x').searchParams.get('query') ?? '';
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(query.startsWith('CREATE') ? { ddl: 'OK' } : { columns: [], dataset: [] }));
    });
  });
  await new Promise<void>((res) => server.listen(0, '127.0.0.1', res));
  t.teardown(() => new Promise<void>((res) => server.close(() => res())));
  const port = (server.address() as { port: number }).port;
  const user = 'ldb';
  const pwd = 'p;w:d=1';
  const broker = await startBroker([
    '--troe',
    'tsdb',
    '--troePort',
    String(port),
    '--troeName',
    'cred',
    '--troeUser',
    user,
    '--troePwd',
    pwd,
  ]);
  t.teardown(() => broker.stop());
  const id = 'urn:ngsi-ld:T:cred';
  t.equal((await call(broker, 'POST', `${NGSI}/entities`, { body: { id, type: 'T', v: { type: 'Property', value: 1 } } })).status, 201);
  // The read syncs with the writer (its ILP write and the tables' DDL), then asks in SQL; the stand-in has no rows.
  const r = await call(broker, 'GET', `${NGSI}/temporal/entities/${id}`);
  t.equal(r.status, 404, r.text);
  const expected = `Basic ${Buffer.from(`${user}:${pwd}`).toString('base64')}`;
  t.ok(
    seen.some((s) => s.path === '/write'),
    'an ILP write was sent',
  );
  t.ok(
    seen.some((s) => s.path === '/exec'),
    'SQL was sent',
  );
  t.same(
    seen.filter((s) => s.auth !== expected),
    [],
    'every request carried the credentials',
  );
  t.notMatch(broker.logs.join('\n'), /p;w:d=1/, 'the password is never logged');
});
