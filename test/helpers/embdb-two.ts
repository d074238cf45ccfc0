// Two embdb handles on the same files in one process, as the front's store and a pipeline thread's: what one writes
// the other reads from the same environment. Both are closed and the directory removed when the test ends.
import type { Test } from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { storeOpen } from '../../src/plugins/store/embdb/index.js';
import type { EmbdbStore } from '../../src/plugins/store/embdb/embdb-store.js';

const log = { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} };

export async function twoStores(t: Test, prefix: string): Promise<[EmbdbStore, EmbdbStore]> {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const path = join(dir, 'embdb');
  // The commit counter storePrepare gives every thread's handle (EmbdbSettings.commits).
  const options = { dbPath: path, ram: false, commits: new SharedArrayBuffer(4) };
  const a = (await storeOpen({ options, primary: true, log })) as EmbdbStore;
  // A worker thread's store: its own instance on the same files.
  const b = (await storeOpen({ options, primary: false, log })) as EmbdbStore;
  t.teardown(async () => {
    await b.close();
    await a.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return [a, b];
}
