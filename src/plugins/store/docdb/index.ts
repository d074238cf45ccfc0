// The docdb store plugin (issue 17): the store on a MongoDB replica set or sharded cluster (FerretDB in the tests),
// which several brokers share as a high-availability set (README "Deployment on docdb"). Its options are its own.
import type { Store, StoreOpenParams } from '../../../store/contract.js';
import type { OptionSpec } from '../../../plugin/contract.js';
import { DocdbStore } from './docdb-store.js';
import { checkDbName } from './layout.js';
import { isUnreachable } from './errors.js';
import { generationBuffer } from './generations.js';

export const options: OptionSpec[] = [
  {
    name: 'dbHost',
    type: 'string',
    default: '127.0.0.1:27017',
    help: 'docdb: host[:port] of the MongoDB server (or a,b,c of a replica set)',
  },
  { name: 'dbName', type: 'string', default: 'orion', help: 'docdb: database of the default tenant; a tenant has <dbName>-<tenant>' },
  {
    name: 'dbURI',
    type: 'string',
    help: 'docdb: a full mongodb:// or mongodb+srv:// connection string (replica set, TLS...); overrides --dbHost',
  },
  { name: 'dbUser', type: 'string', help: 'docdb: user name' },
  { name: 'dbPwd', type: 'string', help: 'docdb: password (never logged)' },
  { name: 'dbPoolSize', type: 'int', min: 1, default: 10, help: 'docdb: most connections per broker thread' },
  { name: 'dbTimeout', type: 'int', min: 1, default: 5000, help: 'docdb: ms to find a reachable server before a request answers 503' },
  {
    name: 'dbSync',
    type: 'enum',
    values: ['interval', 'request'],
    default: 'interval',
    help: 'request: a write is answered once a majority journaled it; interval: with the driver default write concern',
  },
];

function setting<T>(o: Record<string, unknown>, name: string): T {
  return (o[name] ?? options.find((s) => s.name === name)!.default) as T;
}

export function storeInMemory(): boolean {
  return false;
}

/** Several brokers share a docdb (README "Deployment on docdb"). */
export function storeShared(): boolean {
  return true;
}

/** The connection string: --dbURI as given, else mongodb://<dbHost>/. */
export function connectionUri(o: Record<string, unknown>): string {
  const uri = setting<string | undefined>(o, 'dbURI');
  if (uri !== undefined) {
    if (!/^mongodb(\+srv)?:\/\//.test(uri)) throw new Error('--dbURI: a mongodb:// or mongodb+srv:// connection string');
    return uri;
  }
  const host = setting<string>(o, 'dbHost');
  if (!/^[A-Za-z0-9.:\-[\],]+$/.test(host)) throw new Error(`--dbHost '${host.slice(0, 80)}': host[:port][,host[:port]...]`);
  return `mongodb://${host}/`;
}

/**
 * Once in the primary: the counters of the collections' generations (generations.ts), which every thread's store
 * shares through the options (a SharedArrayBuffer crosses to the worker threads as itself).
 */
export async function storePrepare(): Promise<Record<string, unknown>> {
  return { generations: generationBuffer() };
}

export async function storeOpen(params: StoreOpenParams): Promise<Store> {
  const o = params.options;
  const dbName = setting<string>(o, 'dbName');
  checkDbName(dbName);
  const store = new DocdbStore({
    uri: connectionUri(o),
    dbName,
    user: setting<string | undefined>(o, 'dbUser'),
    password: setting<string | undefined>(o, 'dbPwd'),
    poolSize: setting(o, 'dbPoolSize'),
    timeoutMs: setting(o, 'dbTimeout'),
    sync: setting(o, 'dbSync'),
    log: params.log,
    brokerId: params.brokerId,
    generations: o.generations instanceof SharedArrayBuffer ? o.generations : undefined,
  });
  try {
    await store.start(params.primary);
  } catch (e) {
    if (!isUnreachable(e)) {
      await store.close();
      throw e;
    }
    // The database down at start: the broker starts all the same, each request answering 503 until it is back
    // (the store connects again in the background; the layout is made at the first use that reaches the server).
    store.reconnectInBackground(params.primary);
    params.log.warn(
      { err: { name: (e as Error).name, message: (e as Error).message }, dbName },
      'docdb: the database is not reachable at start',
    );
  }
  return store;
}
