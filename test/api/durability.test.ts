// embdb on disk: a kill -9 with --dbSync request loses no acknowledged write; a clean restart keeps everything.
// The broker that writes is a process (killed, or stopped by SIGTERM as main.ts handles it); the one that reads what
// it left opens the same files in this process.
import t from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnBroker, startBroker, call, NGSI } from './helpers/broker.js';

t.test('kill -9 with --dbSync request loses no acknowledged write', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'ldbroker-dur-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const broker = await spawnBroker(['--dbDir', dir, '--dbSync', 'request']);
  const acknowledged: string[] = [];
  // Writes keep going while the process is killed: every one answered 201 before the kill must survive.
  const writer = (async () => {
    for (let i = 0; i < 100000; i++) {
      const id = `urn:ngsi-ld:Meter:${i}`;
      try {
        const r = await call(broker, 'POST', `${NGSI}/entities`, { body: { id, type: 'Meter', kwh: { type: 'Property', value: i } } });
        if (r.status === 201) acknowledged.push(id);
      } catch {
        return;
      }
    }
  })();
  await new Promise((r) => setTimeout(r, 1500));
  broker.proc.kill('SIGKILL');
  await writer;
  t.ok(acknowledged.length > 10, `${acknowledged.length} writes acknowledged before the kill`);
  const again = await startBroker(['--dbDir', dir, '--dbSync', 'request']);
  try {
    let lost = 0;
    for (const id of acknowledged) if ((await call(again, 'GET', `${NGSI}/entities/${id}`)).status !== 200) lost++;
    t.equal(lost, 0, 'every acknowledged write is there after the restart');
  } finally {
    await again.stop();
  }
});

t.test('a clean restart on --dbDir keeps entities and tenants; --dbCompress round-trips', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'ldbroker-dur-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const big = 'x'.repeat(5000);
  let broker = await spawnBroker(['--dbDir', dir, '--dbCompress']);
  await call(broker, 'POST', `${NGSI}/entities`, {
    body: { id: 'urn:ngsi-ld:Doc:1', type: 'Doc', text: { type: 'Property', value: big } },
    headers: { 'NGSILD-Tenant': 'archive' },
  });
  t.equal(await broker.stop(), 0);
  broker = await startBroker(['--dbDir', dir, '--dbCompress']);
  try {
    const r = await call(broker, 'GET', `${NGSI}/entities/urn:ngsi-ld:Doc:1`, { headers: { 'NGSILD-Tenant': 'archive' } });
    t.equal(r.status, 200);
    t.equal(r.json.text.value, big);
  } finally {
    await broker.stop();
  }
});

t.test('a RAM store left by a killed broker is removed when the next broker starts (tmpfs is memory)', async (t) => {
  const { readdirSync, readFileSync, existsSync } = await import('node:fs');
  const root = existsSync('/dev/shm') ? '/dev/shm' : tmpdir();
  const ownedBy = (pid: number): string | undefined =>
    readdirSync(root)
      .filter((n) => n.startsWith('ldbroker-'))
      .find((n) => {
        try {
          return readFileSync(join(root, n, 'owner'), 'utf8').startsWith(`${pid} `);
        } catch {
          return false;
        }
      });
  const killed = await spawnBroker(['--database', 'embdb']);
  const pid = killed.proc!.pid!;
  const dir = ownedBy(pid);
  t.ok(dir, 'the RAM store names its owner');
  killed.proc!.kill('SIGKILL');
  await killed.stop();
  t.ok(existsSync(join(root, dir!)), 'a kill -9 leaves the directory');
  const next = await startBroker(['--database', 'embdb']);
  try {
    // Removed by this broker's start, or already by another broker's that started meanwhile (tests run in parallel,
    // and every broker sweeps): which one logs it is not this test's to say (embdb-ram-dir.test.ts checks the line).
    t.notOk(existsSync(join(root, dir!)), "the next broker's start removed it");
    t.ok(ownedBy(process.pid), "the new broker's own store is there");
  } finally {
    await next.stop();
  }
});
