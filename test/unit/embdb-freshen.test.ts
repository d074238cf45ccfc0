// embdb's freshen (issue 24): a request's read snapshot is started again only when a handle of the environment (one
// per thread) committed since this one's began, counted in the Int32 storePrepare shares; without one, every time.
import t from 'tap';
import { Worker } from 'node:worker_threads';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EmbdbStore } from '../../src/plugins/store/embdb/embdb-store.js';
import { twoStores } from '../helpers/embdb-two.js';

/** Counts the read snapshots `s` resets (lmdb's resetReadTxn, which the next read renews). */
function resetsOf(s: EmbdbStore): { n: number } {
  const env = (s as unknown as { env: { resetReadTxn(): void } }).env;
  const count = { n: 0 };
  const reset = env.resetReadTxn.bind(env);
  env.resetReadTxn = () => {
    count.n++;
    reset();
  };
  return count;
}

const ids = async (s: EmbdbStore) => (await s.collection('', 'registrations').list()).map((d) => d.id);

t.test('a new snapshot only after a commit, of this handle or another one', async (t) => {
  const [a, b] = await twoStores(t, 'ldbroker-freshen-');
  const resets = resetsOf(a);
  a.freshen();
  t.same(await ids(a), []);
  a.freshen();
  a.freshen();
  t.equal(resets.n, 1, 'nothing committed since the first');
  await b.collection('', 'registrations').insert('urn:r:1', { n: 1 });
  a.freshen();
  t.equal(resets.n, 2, "the other handle's commit");
  t.same(await ids(a), ['urn:r:1'], 'and its write is read');
  await a.collection('', 'registrations').insert('urn:r:2', { n: 2 });
  a.freshen();
  a.freshen();
  t.equal(resets.n, 3, 'its own commit, once');
  t.same(await ids(a), ['urn:r:1', 'urn:r:2']);
});

t.test('a handle opened without the counter starts a new snapshot at every freshen', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'ldbroker-freshen-'));
  const s = new EmbdbStore({ path: join(dir, 'embdb'), sync: 'interval', compress: false, lockPrefer: 'reads', ram: true });
  t.teardown(async () => {
    await s.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const resets = resetsOf(s);
  s.freshen();
  s.freshen();
  t.equal(resets.n, 2);
});

t.test("another thread's write is read at the next freshen", async (t) => {
  const [a] = await twoStores(t, 'ldbroker-freshen-');
  const options = (a as unknown as { settings: { path: string; commits: SharedArrayBuffer } }).settings;
  a.freshen();
  t.same(await ids(a), []);
  const storeModule = new URL('../../src/plugins/store/embdb/index.js', import.meta.url).href;
  const worker = new Worker(
    `const { parentPort, workerData } = require('node:worker_threads');
     import(workerData.storeModule).then(async ({ storeOpen }) => {
       const log = { debug() {}, info() {}, warn() {}, error() {} };
       const s = await storeOpen({ options: workerData.options, primary: false, log });
       await s.collection('', 'registrations').insert('urn:r:w', { n: 1 });
       await s.close();
       parentPort.postMessage('written');
     });`,
    { eval: true, workerData: { storeModule, options: { dbPath: options.path, ram: false, commits: options.commits } } },
  );
  const said = await new Promise((resolve, reject) => {
    worker.once('message', resolve);
    worker.once('error', reject);
  });
  t.equal(said, 'written');
  a.freshen();
  t.same(await ids(a), ['urn:r:w']);
  await worker.terminate();
});

t.test("a collection's generation is read once per snapshot, and again after a commit of either handle", async (t) => {
  const [a, b] = await twoStores(t, 'ldbroker-freshen-');
  let reads = 0;
  const read = a.collectionGeneration.bind(a);
  a.collectionGeneration = (key: string) => {
    reads++;
    return read(key);
  };
  const regs = a.collection('', 'registrations');
  a.freshen();
  const g0 = regs.generation!();
  t.equal(regs.generation!(), g0);
  t.equal(reads, 1, 'read once in the snapshot');
  await b.collection('', 'registrations').insert('urn:r:1', { n: 1 });
  a.freshen();
  const g1 = regs.generation!();
  t.not(g1, g0, "the other handle's insert, at the next freshen");
  await regs.insert('urn:r:2', { n: 2 });
  const g2 = regs.generation!();
  t.not(g2, g1, 'its own insert, at once');
  t.equal(regs.generation!(), g2);
  a.freshen();
  t.equal(regs.generation!(), g2, 'nothing committed since');
});
