// The front end: route table, 404/405/415/413/406/501, health port, options and start-up errors.
import t from 'tap';
import { connect } from 'node:net';
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { repoPath } from '../helpers/repo.js';
import { startBroker, spawnBroker, runBroker, runBrokerHere, call, NGSI, type Broker } from './helpers/broker.js';

let broker: Broker;
t.before(async () => {
  broker = await startBroker([], {}, { http: true });
});
t.teardown(async () => {
  await broker.stop();
});

t.test('an unknown path answers 404 with a ProblemDetails', async (t) => {
  const r = await call(broker, 'GET', '/nothing/here');
  t.equal(r.status, 404);
  t.match(r.json, { status: 404, type: /^https:\/\/uri\.etsi\.org\/ngsi-ld\/errors\// });
  const r2 = await call(broker, 'GET', `${NGSI}/entitiez`);
  t.equal(r2.status, 404);
});

t.test('a wrong method answers 405 with Allow', async (t) => {
  const r = await call(broker, 'PUT', `${NGSI}/entities`);
  t.equal(r.status, 405);
  t.equal(r.headers.get('allow'), 'POST, GET, HEAD, DELETE, OPTIONS');
  t.equal(r.json.status, 405);
});

t.test('a route a later issue implements answers 501 OperationNotSupported', async (t) => {
  const r = await call(broker, 'GET', `${NGSI}/info/conformance`);
  t.equal(r.status, 501);
  t.equal(r.json.type, 'https://uri.etsi.org/ngsi-ld/errors/OperationNotSupported');
});

t.test('a body of another media type answers 415', async (t) => {
  const r = await call(broker, 'POST', `${NGSI}/entities`, { raw: '<entity/>', headers: { 'content-type': 'application/xml' } });
  t.equal(r.status, 415);
  t.equal(r.json.status, 415);
  const none = await call(broker, 'POST', `${NGSI}/entities`, { raw: '{}', headers: { 'content-type': '' } });
  t.equal(none.status, 415, 'no Content-Type at all');
});

t.test('an Accept the broker cannot produce answers 406', async (t) => {
  const r = await call(broker, 'GET', `${NGSI}/entities/urn:ngsi-ld:T:1`, { headers: { accept: 'text/html' } });
  t.equal(r.status, 406);
  t.equal(r.json.type, 'https://uri.etsi.org/ngsi-ld/errors/NotAcceptable');
});

t.test('a body over --maxBodySize answers 413 and the broker keeps serving', async (t) => {
  const big = new Uint8Array(10 * 1024 * 1024).fill(0x20);
  const r = await call(broker, 'POST', `${NGSI}/entities`, { raw: big, headers: { 'content-type': 'application/json' } }).catch(
    (e) => ({ status: -1, error: e }) as never,
  );
  t.equal(r.status, 413);
  const after = await call(broker, 'GET', `${NGSI}/nothing`);
  t.equal(after.status, 404, 'still serving');
});

for (const server of ['uws', 'node']) {
  t.test(`a client that goes away mid-body leaves no request behind (${server}): the shutdown drains at once`, async (t) => {
    const b = await startBroker(['--httpServer', server]);
    const sock = connect(b.port, '127.0.0.1');
    await new Promise<void>((r) => sock.once('connect', () => r()));
    sock.write(`POST ${NGSI}/entities HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"id":`);
    await new Promise((r) => setTimeout(r, 200));
    sock.destroy();
    const after = await call(b, 'GET', `${NGSI}/nothing`);
    t.equal(after.status, 404, 'still serving');
    t.equal(await b.stop(), 0, 'exits 0');
    t.notOk(
      b.logs.some((l) => l.includes('requests still in flight at the shutdown deadline')),
      'no request was left waiting for its body',
    );
    t.notOk(
      b.logs.some((l) => l.includes('front failed')),
      'a client going away is not a broker failure',
    );
  });
}

t.test('the health port answers /live, /ready and /health', async (t) => {
  const base = `http://127.0.0.1:${broker.healthPort}`;
  t.equal((await call(base, 'GET', '/live')).status, 200);
  t.equal((await call(base, 'GET', '/ready')).status, 200);
  const h = await call(base, 'GET', '/health');
  t.equal(h.status, 200);
  t.equal(h.json.status, 'ready');
  t.type(h.json.uptimeSeconds, 'number');
  t.type(h.json.pool.threads, 'number');
  t.type(h.json.pool.queued, 'number');
  t.equal(h.json.store.open, true);
  t.equal((await call(base, 'GET', '/nope')).status, 404);
});

t.test('-u prints every option with its default and exits 0', async (t) => {
  const r = await runBroker(['-u']);
  t.equal(r.code, 0);
  for (const name of [
    '--port',
    '--host',
    '--database, -db',
    '--dbDir',
    '--dbSync',
    '--dbCompress',
    '--dbLockPrefer',
    '--dbPageCache',
    '--connectionPoolSize',
    '--healthPort',
    '--logLevel',
    '--defaultUserContext',
    '--contextDir',
    '--maxBodySize',
    '--maxPendingRequests',
    '--pluginDir',
    '-fg',
    '-u ',
  ])
    t.match(r.stdout, name, `lists ${name}`);
  t.match(r.stdout, '(default: 1026)');
});

t.test('an unknown option or a bad value is a one-line message and exit status 1', async (t) => {
  for (const args of [
    ['--nope'],
    ['--port', 'abc'],
    ['--dbSync', 'sometimes'],
    ['--dbLockPrefer', 'both'],
    ['--dbPageCache', '-1'],
    ['--port', '-5'],
    ['--maxPendingRequests', '0'],
    ['--maxPendingRequests', 'many'],
  ]) {
    const r = await runBrokerHere(args); // -u above is the spawned command; these as main.ts runs them, in this process
    t.equal(r.code, 1, args.join(' '));
    t.equal(r.stderr.trim().split('\n').length, 1, `one line for ${args.join(' ')}`);
  }
});

t.test('options read BROKER_<OPTION> from the environment and the command line wins', async (t) => {
  const bad = await runBrokerHere([], { BROKER_DBLOCKPREFER: 'sideways' });
  t.equal(bad.code, 1, 'the environment value is checked');
  t.match(bad.stderr, /dbLockPrefer/);
  const b = await startBroker(['--dbLockPrefer', 'writes'], { BROKER_DBLOCKPREFER: 'sideways' });
  t.match(b.logs.join('\n'), /"lockPrefer":"writes"/);
  t.equal(await b.stop(), 0);
});

t.test('a SIGTERM during the start stops the broker cleanly once it is up (status 0), never by the signal', async (t) => {
  // Sent at its first log line: the broker is starting (createBroker has not returned). Before the fix its handlers
  // came after the start, so the signal killed it (status null): a supervisor's SIGTERM right after 'listening' too.
  const proc = spawn(process.execPath, [repoPath('dist/src/main.js'), '--port', '0', '--host', '127.0.0.1', '--healthPort', '0'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: string[] = [];
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    proc.on('exit', (code, signal) => resolve({ code, signal })),
  );
  createInterface({ input: proc.stdout! }).on('line', (line) => {
    if (lines.push(line) === 1) proc.kill('SIGTERM');
  });
  const { code, signal } = await exited;
  t.equal(signal, null, 'not ended by the signal');
  t.equal(code, 0, 'status 0');
  t.ok(
    lines.some((l) => l.includes('"msg":"listening"')),
    'it finished starting first',
  );
});

t.test('-fg is accepted', async (t) => {
  const b = await spawnBroker(['-fg']);
  t.equal(await b.stop(), 0, 'SIGTERM ends it with status 0');
});
