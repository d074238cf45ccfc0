// An embdb store for a unit test: in RAM (the broker's default), in a private directory removed with the store when
// the test ends. Tests name only the settings they are about (a history, a lock preference, a cap).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EmbdbStore, type EmbdbSettings } from '../../../src/plugins/store/embdb/embdb-store.js';

interface Teardown {
  teardown: (fn: () => void | Promise<void>) => void;
}

export function tempEmbdb(t: Teardown, settings: Partial<EmbdbSettings> = {}): EmbdbStore {
  const dir = mkdtempSync(join(tmpdir(), 'ldbroker-embdb-'));
  const store = new EmbdbStore({
    path: join(dir, 'embdb'),
    sync: 'interval',
    compress: false,
    lockPrefer: 'reads',
    ram: true,
    ...settings,
  });
  t.teardown(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return store;
}
