// bench/database-cpu.ts (issue 17): the database processes behind a docdb variant are found by their loopback port,
// with their children where asked (PostgreSQL's backends), and their CPU between two readings is what they spent,
// a process started between the readings counted from zero; the report's table splits a request's CPU from it.
import t from 'tap';
import { spawn } from 'node:child_process';
import { createServer, type AddressInfo } from 'node:net';
import { databaseSnapshot, databaseSpent, listeningPid, loopbackPort } from '../../bench/database-cpu.js';
import { databaseLines, type Row } from '../../bench/report.js';

t.test('loopbackPort: the port of a loopback URL only', async (t) => {
  t.equal(loopbackPort('mongodb://127.0.0.1:57018/'), 57018);
  t.equal(loopbackPort('postgres://postgres@127.0.0.1:55432/ferretdb'), 55432);
  t.equal(loopbackPort('mongodb://localhost:27017/?replicaSet=rs0'), 27017);
  t.equal(loopbackPort('mongodb://db.example.org:27017/'), undefined, 'a remote server: its CPU is not this machine’s');
  t.equal(loopbackPort('mongodb://127.0.0.1/'), undefined, 'no port');
  t.equal(loopbackPort('not a url'), undefined);
  t.equal(loopbackPort(undefined), undefined);
});

t.test('the listening process and its children, their CPU between two readings', async (t) => {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => server.close());
  const port = (server.address() as AddressInfo).port;
  t.equal(listeningPid(port), process.pid, 'this process listens on the port');

  const db = [{ name: 'db', port, pid: process.pid, children: true }];
  const before = databaseSnapshot(db);
  // A child started after the first reading, busy for a while: counted whole.
  const child = spawn(process.execPath, ['-e', 'const end = Date.now() + 400; while (Date.now() < end);'], { stdio: 'ignore' });
  await new Promise((r) => setTimeout(r, 250));
  const during = databaseSnapshot(db);
  t.ok(during.get('db')!.has(child.pid!), 'the child is read with its parent');
  await new Promise((r) => child.once('exit', r));
  const spent = databaseSpent(before, during);
  t.ok(spent['db']! > 0, `the child's CPU is counted (${spent['db']} µs)`);
  t.same(databaseSpent(during, during), { db: 0 }, 'nothing spent between one reading and itself');
});

t.test('the report: broker and database CPU per request side by side, only rows that have both', async (t) => {
  const row = (variant: string, databaseUs?: Record<string, number>): Row =>
    ({
      scenario: 'retrieve',
      variant,
      rounds: 1,
      notes: [],
      result: { requestsPerSecond: 1000, p50Ms: 1, p99Ms: 2, completed: 3000, errors: 0, timeouts: 0, non2xx: 0, statusCodes: {} },
      cpu: { frontUs: 200, pipelineUs: 50, otherUs: 50, pipelineThreads: 1, serverCores: 0.3, loadGeneratorCores: 0.1, databaseUs },
    }) as Row;
  t.equal(databaseLines([row('uws-pool')]), undefined, 'no database: no table');
  const table = databaseLines([row('uws-pool'), row('docdb-pg-pool', { FerretDB: 400, PostgreSQL: 300 })])!;
  t.same(table.head, ['scenario', 'variant', 'req/s', 'broker µs/req', 'FerretDB µs/req', 'PostgreSQL µs/req', 'broker share']);
  t.same(table.lines, [['retrieve', 'docdb-pg-pool', '1,000', '300', '400', '300', '30%']]);
});
