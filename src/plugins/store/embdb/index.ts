// The embdb store plugin: LMDB in RAM (an env on tmpfs, removed at exit) or on disk (--dbDir). Its options are its
// own (the broker lists them with -u when embdb is the store); the history of `--troe embdb` lives in its transactions.
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Store, StoreOpenParams } from '../../../store/contract.js';
import type { OptionSpec } from '../../../plugin/contract.js';
import { EmbdbStore } from './embdb-store.js';
import { PAGE_CACHE_PAGES } from './page-cache.js';
import { rebuildIndexesIfOld } from './index-rebuild.js';
import { makeRamDir, ramRoot, sweepStaleRamDirs } from './ram-dir.js';

export const options: OptionSpec[] = [
  { name: 'dbDir', type: 'string', help: 'embdb directory on disk (absent: in RAM, removed at exit)' },
  {
    name: 'dbSync',
    type: 'enum',
    values: ['interval', 'request'],
    default: 'interval',
    help: 'request: a write is answered once durable; interval: once committed, flushed at least every 100 ms',
  },
  { name: 'dbCompress', type: 'bool', default: false, help: 'LZ4-compress stored records (embdb)' },
  {
    name: 'dbPageCache',
    type: 'int',
    min: 0,
    default: PAGE_CACHE_PAGES,
    help: 'query pages kept per thread for a read-only query asked again while its tenant is unwritten (0: off, every query reads the store)',
  },
  {
    name: 'dbLockPrefer',
    type: 'enum',
    values: ['reads', 'writes'],
    default: 'reads',
    help: 'reads: writes go through the batched async writer; writes: writes commit synchronously in the worker',
  },
];

/** The value of one of our options: as given, else the table's default (the one place defaults are written). */
function setting<T>(o: Record<string, unknown>, name: string): T {
  return (o[name] ?? options.find((s) => s.name === name)!.default) as T;
}

/** Without --dbDir the store is in RAM (seed 001 §4.4: the pipeline then runs a thread per core). */
export function storeInMemory(o: Record<string, unknown>): boolean {
  return setting<string | undefined>(o, 'dbDir') === undefined;
}

/**
 * Primary only: picks the directory every thread opens, and the one Int32 counting the commits of every thread
 * (`EmbdbSettings.commits`), shared with them through the options (a SharedArrayBuffer is not copied).
 */
export async function storePrepare(params: StoreOpenParams): Promise<Record<string, unknown>> {
  const commits = new SharedArrayBuffer(Int32Array.BYTES_PER_ELEMENT);
  const dbDir = setting<string | undefined>(params.options, 'dbDir');
  if (dbDir !== undefined) {
    mkdirSync(dbDir, { recursive: true });
    return { dbPath: join(dbDir, 'embdb'), ram: false, commits };
  }
  const root = ramRoot();
  sweepStaleRamDirs(root, params.log);
  return { dbPath: join(makeRamDir(root), 'embdb'), ram: true, commits };
}

export async function storeOpen(params: StoreOpenParams): Promise<Store> {
  const o = params.options;
  const store = new EmbdbStore({
    path: o.dbPath as string,
    ram: o.ram === true,
    sync: setting(o, 'dbSync'),
    compress: setting(o, 'dbCompress'),
    pageCachePages: setting(o, 'dbPageCache'),
    lockPrefer: setting(o, 'dbLockPrefer'),
    troe: params.keepHistory === true ? 'embdb' : 'none',
    log: params.log,
    commits: o.commits instanceof SharedArrayBuffer ? o.commits : undefined,
  });
  // The primary opens the store before any worker thread does: an old store's indexes are whole before a query runs.
  if (params.primary) {
    await rebuildIndexesIfOld(store.indexedDbs(), params.log);
    await store.history?.backfillTypeIndex(params.log);
    await store.history?.backfillUnobserved(params.log);
    await store.history?.backfillInstanceIdIndex(params.log);
  }
  return store;
}

export async function storeDispose(params: StoreOpenParams): Promise<void> {
  if (params.options.ram !== true) return;
  const path = params.options.dbPath as string;
  rmSync(join(path, '..'), { recursive: true, force: true });
}
