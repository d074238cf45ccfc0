// Requests handed to the pool that should not run or not be waited for (issues 17 and 24): a client that went away
// has its requests not yet started skipped, and their places under --maxPendingRequests freed; --requestTimeout
// answers 503 to a request the pool has not answered in time (a wedged thread, a lost reply), skips it if no thread
// started it and drops a late answer. Slow and late requests come from the test auth plugin (x-busy-ms, x-delay-ms),
// loaded by path with --auth: nothing a client reaches without it.
import t from 'tap';
import { connect, type Socket } from 'node:net';
import { mkdtempSync, readFileSync, rmSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startBroker, runBroker, call, NGSI, type Broker } from './helpers/broker.js';
import { repoPath } from '../helpers/repo.js';
import { WsClient } from './helpers/ws-client.js';

const PLUGIN = repoPath('test/fixtures/auth/contract-plugin.js');
const dir = mkdtempSync(join(tmpdir(), 'ldbroker-deadline-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));
let traces = 0;

/** A broker with the test plugin, its trace file, one pipeline thread that runs every operation. */
async function brokerWith(args: string[], http = false): Promise<{ broker: Broker; trace: () => string[] }> {
  const file = join(dir, `trace-${++traces}.txt`);
  const broker = await startBroker(
    ['--auth', PLUGIN, '--testTrace', file, '--frontOps', 'none', '--connectionPoolSize', '1', ...args],
    {},
    { pool: true, http },
  );
  return { broker, trace: () => (existsSync(file) ? readFileSync(file, 'utf8').trim().split('\n') : []) };
}

/** The authorize lines of the trace for `path`: each is a request a pipeline thread started. */
const ran = (lines: string[], path: string): number => lines.filter((l) => l.startsWith('authorize ') && l.endsWith(`path=${path}`)).length;

async function metric(broker: Broker, name: string): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${broker.healthPort}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  return line === undefined ? NaN : Number(line.split(' ')[1]);
}

async function inFlight(broker: Broker): Promise<number> {
  const health = (await (await fetch(`http://127.0.0.1:${broker.healthPort}/health`)).json()) as { pool: { inFlight: number } };
  return health.pool.inFlight;
}

async function until(check: () => boolean | Promise<boolean>, what: string, ms = 20_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting until ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** A request on a connection of its own, left unanswered by the caller (it destroys the socket). */
function openRequest(port: number, path: string, headers: Record<string, string>): Socket {
  const socket = connect(port, '127.0.0.1');
  const lines = Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`);
  socket.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n${lines.join('')}\r\n`);
  socket.on('error', () => undefined);
  return socket;
}

const FLOOD = `${NGSI}/types`;
const OTHER = `${NGSI}/attributes`;

for (const server of ['uws', 'node']) {
  t.test(
    `${server}: a client that goes away has its requests not started skipped, their places freed, and others served first`,
    async (t) => {
      const n = 20;
      // Every place is the flood's: before, the other client was refused 503 until the flood had run.
      const { broker, trace } = await brokerWith(['--maxPendingRequests', String(n), '--httpServer', server], true);
      try {
        const sockets = Array.from({ length: n }, () => openRequest(broker.port, FLOOD, { 'x-user': 'flood', 'x-busy-ms': '150' }));
        await until(() => ran(trace(), FLOOD) >= 1, 'the thread started the flood');
        for (const s of sockets) s.destroy();
        // Once the front heard of the clients leaving (before, a request left the pool's count only once run).
        await until(async () => (await inFlight(broker)) < n, 'the broker saw clients go');
        const other = await call(broker, 'GET', OTHER, { headers: { 'x-user': 'bob' } });
        t.equal(other.status, 200, "the other client's request is admitted and answered");
        const lines = trace();
        const before = lines.findIndex((l) => l.startsWith('authorize ') && l.endsWith(`path=${OTHER}`));
        t.ok(ran(lines.slice(0, before), FLOOD) < n / 2, `it ran before most of the flood (${ran(lines.slice(0, before), FLOOD)} of ${n})`);
        // What the thread had not started when the clients left is skipped, never run later: let the thread go through
        // its queue (one more request after it), then count.
        t.equal((await call(broker, 'GET', OTHER, { headers: { 'x-user': 'bob' } })).status, 200);
        const started = ran(trace(), FLOOD);
        t.ok(started < n / 2, `the thread ran ${started} of the ${n} requests of the client gone`);
        await until(async () => (await metric(broker, 'ldbroker_requests_skipped_total')) === n - started, 'the rest is counted skipped');
        t.pass('skipped = the requests not run');
        t.equal(await metric(broker, 'ldbroker_requests_abandoned_total'), n, 'every request of the clients gone is counted abandoned');
        t.notOk(
          broker.logs.some((l) => /"level":(50|60)/.test(l)),
          'no error logged',
        );
      } finally {
        t.equal(await broker.stop(), 0, 'clean exit');
      }
    },
  );
}

t.test('a WebSocket connection that closes has its requests not started skipped, as an HTTP client gone', async (t) => {
  const n = 20;
  const { broker, trace } = await brokerWith([], true);
  try {
    const c = await WsClient.open(broker.port);
    const headers = { 'x-user': 'flood', 'x-busy-ms': '150' };
    for (let i = 0; i < n; i++) void c.request({ method: 'GET', path: FLOOD, headers });
    await until(() => ran(trace(), FLOOD) >= 1, 'the thread started the flood');
    await c.close();
    // Before, the connection's running requests were all run, answering nowhere.
    await until(async () => (await inFlight(broker)) < n, 'the broker saw the connection go');
    t.equal((await call(broker, 'GET', OTHER, { headers: { 'x-user': 'bob' } })).status, 200, 'another client is answered');
    const started = ran(trace(), FLOOD);
    t.ok(started < n / 2, `the thread ran ${started} of the ${n} requests of the closed connection`);
    await until(async () => (await metric(broker, 'ldbroker_requests_skipped_total')) === n - started, 'the rest is counted skipped');
    t.pass('skipped = the requests not run');
    t.equal(await metric(broker, 'ldbroker_requests_abandoned_total'), n, 'every request of the connection is counted abandoned');
  } finally {
    t.equal(await broker.stop(), 0, 'clean exit');
  }
});

t.test('--requestTimeout: a request whose answer does not come is answered 503, its late answer dropped', async (t) => {
  const { broker, trace } = await brokerWith(['--requestTimeout', '300']);
  try {
    const late = await call(broker, 'GET', FLOOD, { headers: { 'x-user': 'secret-user', 'x-delay-ms': '1500' } });
    t.equal(late.status, 503);
    t.equal(late.json.type, 'https://uri.etsi.org/ngsi-ld/errors/Unavailable');
    t.match(late.json.detail, /requestTimeout \(300 ms\).*started and may still complete/);
    const warned = broker.logs.filter((l) => l.includes('--requestTimeout'));
    t.equal(warned.length, 1, 'one log line');
    t.match(
      JSON.parse(warned[0]!),
      { level: 40, op: 'ListTypes', pipelineThread: Number, requestTimeout: 300 },
      'with the operation and thread',
    );
    t.notOk(warned[0]!.includes('secret-user'), 'and nothing of the request');
    // The thread answers at 1.5 s: the broker drops it and goes on.
    await until(() => trace().some((l) => l === `release GET ${FLOOD}`), 'the thread finished the request');
    await new Promise((r) => setTimeout(r, 100));
    t.equal((await call(broker, 'GET', OTHER, { headers: { 'x-user': 'bob' } })).status, 200, 'the broker stays healthy');
    t.equal(await metric(broker, 'ldbroker_requests_expired_total'), 1);
    t.notOk(
      broker.logs.some((l) => /"level":(50|60)/.test(l)),
      'the late answer is dropped without error',
    );
  } finally {
    t.equal(await broker.stop(), 0, 'clean exit');
  }
});

t.test('--requestTimeout: a request queued behind a wedged thread is answered 503 and never run', async (t) => {
  const { broker, trace } = await brokerWith(['--requestTimeout', '300']);
  try {
    const wedge = call(broker, 'GET', FLOOD, { headers: { 'x-user': 'a', 'x-busy-ms': '1200' } });
    await until(() => ran(trace(), FLOOD) === 1, 'the thread is wedged');
    const queued = await call(broker, 'GET', OTHER, { headers: { 'x-user': 'b' } });
    t.equal(queued.status, 503);
    t.match(queued.json.detail, /not started and will not be/);
    t.equal((await wedge).status, 503, 'the wedging one too');
    await until(() => trace().includes(`release GET ${FLOOD}`), 'the thread is free');
    t.equal((await call(broker, 'GET', FLOOD, { headers: { 'x-user': 'c' } })).status, 200, 'the thread serves again');
    t.equal(ran(trace(), OTHER), 0, 'the queued request never ran');
    t.equal(await metric(broker, 'ldbroker_requests_skipped_total'), 1);
    t.equal(await metric(broker, 'ldbroker_requests_expired_total'), 2);
  } finally {
    t.equal(await broker.stop(), 0, 'clean exit');
  }
});

t.test('--requestTimeout: expired requests free their places under --maxPendingRequests at once', async (t) => {
  const { broker } = await brokerWith(['--requestTimeout', '300', '--maxPendingRequests', '2']);
  try {
    const held = [1, 2].map(() => call(broker, 'GET', FLOOD, { headers: { 'x-user': 'a', 'x-delay-ms': '3000' } }));
    t.same(
      (await Promise.all(held)).map((r) => r.status),
      [503, 503],
    );
    t.equal((await call(broker, 'GET', OTHER, { headers: { 'x-user': 'b' } })).status, 200, 'admitted while they still run');
  } finally {
    t.equal(await broker.stop(), 0, 'clean exit');
  }
});

t.test('--requestTimeout 0: no deadline', async (t) => {
  const { broker } = await brokerWith(['--requestTimeout', '0']);
  try {
    t.equal((await call(broker, 'GET', FLOOD, { headers: { 'x-user': 'a', 'x-delay-ms': '400' } })).status, 200);
  } finally {
    t.equal(await broker.stop(), 0, 'clean exit');
  }
});

t.test('--requestTimeout: bad values are refused at start; BROKER_REQUESTTIMEOUT; -u lists it', async (t) => {
  for (const bad of ['-1', 'abc', '1.5', '', '86400001'])
    await t.rejects(startBroker(['--requestTimeout', bad]), /requestTimeout/, JSON.stringify(bad));
  await t.rejects(startBroker([], { BROKER_REQUESTTIMEOUT: 'soon' }), /requestTimeout/, 'from the environment too');
  const u = await runBroker(['-u']);
  t.match(u.stdout, /--requestTimeout\s+int\s+.*\(default: 30000\)/);
});

t.test('--requestTimeout bounds the stop: a thread still wedged at shutdown is ended after it, the stop is clean', async (t) => {
  // Piscina waits 30 s for tasks in flight at close, then reports the timeout as an 'error' event nobody listened to.
  const { broker, trace } = await brokerWith(['--requestTimeout', '300']);
  // Busy for 20 s, less than Piscina's wait: waited for, the thread would finish and release the request.
  const wedge = call(broker, 'GET', FLOOD, { headers: { 'x-user': 'a', 'x-busy-ms': '20000' } });
  await until(() => ran(trace(), FLOOD) === 1, 'the thread is wedged');
  t.equal((await wedge).status, 503, 'answered at the deadline');
  t.equal(await broker.stop(), 0, 'clean exit');
  t.notOk(trace().includes(`release GET ${FLOOD}`), 'the wedged thread was ended, not waited for');
});
