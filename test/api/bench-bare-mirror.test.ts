// The benchmark's bare server (bench/bare-server.ts) answers what it is told to mirror: the runner sets it to the
// broker's answer to a scenario's first request, so a query row's bare server receives the same URL and sends back
// as many bytes as the broker. And the per-thread CPU reader (bench/thread-cpu.ts) finds this process's main thread.
import t from 'tap';
import { existsSync } from 'node:fs';
import { startServer } from '../../bench/server-process.js';
import { REPLY_PATH } from '../../bench/bare-reply.js';
import { CPU_TICK_US, cpuSnapshot, cpuSpent } from '../../bench/thread-cpu.js';
import { repoPath } from '../helpers/repo.js';

const BARE = repoPath('dist/bench/bare-server.js');

t.test('the bare server answers its defaults, then the mirrored answer to any method and path, then its defaults again', async (t) => {
  const bare = await startServer('bare', BARE, ['127.0.0.1', '0']);
  t.teardown(() => bare.stop());
  const query = `${bare.url}/ngsi-ld/v1/entities?type=QBench&q=${encodeURIComponent('temperature>=38')}&limit=20`;

  const byDefault = await fetch(query);
  t.equal(byDefault.status, 200);
  t.equal((await byDefault.text()).length, 200, 'the fixed 200-byte entity');
  t.equal((await fetch(bare.url + '/x', { method: 'PATCH', body: '{}' })).status, 204);

  const body = JSON.stringify(Array.from({ length: 20 }, (_, i) => ({ id: `urn:ngsi-ld:QBench:${i}`, type: 'QBench' })));
  const headers: Array<[string, string]> = [
    ['content-type', 'application/ld+json'],
    ['link', '<https://example.org/ctx.jsonld>; rel="http://www.w3.org/ns/json-ld#context"'],
  ];
  t.equal((await fetch(bare.url + REPLY_PATH, { method: 'PUT', body: JSON.stringify({ status: '200 OK', headers, body }) })).status, 204);
  const mirrored = await fetch(query);
  t.equal(mirrored.status, 200);
  t.equal(mirrored.headers.get('content-type'), 'application/ld+json');
  t.equal(mirrored.headers.get('link'), headers[1]![1]);
  t.equal(await mirrored.text(), body, 'the same bytes as the broker sent');
  const write = await fetch(bare.url + '/ngsi-ld/v1/entityOperations/upsert', { method: 'POST', body: '[{"id":"a"}]' });
  t.equal(write.status, 200, 'a write answers the mirrored answer too');
  t.equal(await write.text(), body);

  t.equal((await fetch(bare.url + REPLY_PATH, { method: 'PUT', body: '{not json' })).status, 400, 'a bad reply is refused');
  t.equal(await (await fetch(query)).text(), body, 'and the mirrored answer kept');

  t.equal((await fetch(bare.url + REPLY_PATH, { method: 'PUT', body: 'null' })).status, 204);
  t.equal((await (await fetch(query)).text()).length, 200, 'null puts the defaults back');
  t.equal((await fetch(bare.url + '/x', { method: 'POST', body: '{}' })).status, 201);
});

t.test(
  'the CPU reader finds the main thread of a process and counts CPU it spends',
  { skip: !existsSync('/proc/self/task') && 'no /proc' },
  async (t) => {
    const before = cpuSnapshot(process.pid);
    t.ok(before?.threads.has(process.pid), 'the main thread (tid = pid) is read');
    const usage = process.cpuUsage();
    // Busy until the reading moves (10 ms ticks), however slowly a shared machine gives this thread the CPU.
    let spent = cpuSpent(before!, cpuSnapshot(process.pid)!);
    let x = 0;
    for (const end = Date.now() + 30_000; spent.front === 0 && Date.now() < end; spent = cpuSpent(before!, cpuSnapshot(process.pid)!))
      for (let i = 0; i < 1e6; i++) x += Math.sqrt(i + x);
    const processUs = process.cpuUsage(usage);
    t.ok(spent.front > 0, `the main thread's CPU counted (${spent.front} µs)`);
    t.ok(spent.front <= processUs.user + processUs.system + CPU_TICK_US, "no more than the whole process's", { x });
    t.equal(spent.pipeline, 0, 'no pipeline thread in a test process without a broker');
    t.equal(cpuSnapshot(2 ** 22 + 1), undefined, 'a process that does not exist reads as undefined');
  },
);
