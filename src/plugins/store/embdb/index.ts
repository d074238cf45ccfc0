// The embdb store plugin: LMDB in RAM (an env on tmpfs, removed at exit) or on disk (--dbDir).
import { mkdtempSync, mkdirSync, rmSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Store, StoreOpenParams } from '../../../store/contract.js';
import { EmbdbStore } from './embdb-store.js';
import { rebuildIndexesIfOld } from './index-rebuild.js';

/** Primary only: picks the directory every thread opens. */
export async function storePrepare(params: StoreOpenParams): Promise<Record<string, unknown>> {
  const dbDir = params.options.dbDir as string | undefined;
  if (dbDir !== undefined) {
    mkdirSync(dbDir, { recursive: true });
    return { dbPath: join(dbDir, 'embdb'), ram: false };
  }
  const shm = existsSync('/dev/shm') ? '/dev/shm' : tmpdir();
  return { dbPath: join(mkdtempSync(join(shm, 'ldbroker-')), 'embdb'), ram: true };
}

export async function storeOpen(params: StoreOpenParams): Promise<Store> {
  const o = params.options;
  const store = new EmbdbStore({
    path: o.dbPath as string,
    ram: o.ram === true,
    sync: (o.dbSync as 'interval' | 'request' | undefined) ?? 'interval',
    compress: o.dbCompress === true,
    lockPrefer: (o.dbLockPrefer as 'reads' | 'writes' | undefined) ?? 'reads',
    troe: o.troe === 'embdb' ? 'embdb' : 'none',
  });
  // The primary opens the store before any worker thread does: an old store's indexes are whole before a query runs.
  if (params.primary) {
    await rebuildIndexesIfOld(store.indexedDbs(), params.log);
    await store.history?.backfillTypeIndex(params.log);
  }
  return store;
}

export async function storeDispose(params: StoreOpenParams): Promise<void> {
  if (params.options.ram !== true) return;
  const path = params.options.dbPath as string;
  rmSync(join(path, '..'), { recursive: true, force: true });
}
