// The broker configurations `make bench` compares; the first is the default, the only one `--smoke` runs.
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { MongoClient } from 'mongodb';
import type { BrokerVariant } from './scenario.js';

/** The MongoDB-wire server of `make bench`: MONGO_URL, else FerretDB as test/services/ferretdb.sh starts it. */
const MONGO_URL = process.env.MONGO_URL ?? 'mongodb://127.0.0.1:57017/';
/** A database of this run only, dropped (with its tenants' databases) after the variant. */
const DOCDB_NAME = 'bench' + randomBytes(3).toString('hex');

async function dropDocdb(): Promise<void> {
  const client = new MongoClient(MONGO_URL, { serverSelectionTimeoutMS: 5000 });
  try {
    const { databases } = await client.db('admin').admin().listDatabases({ nameOnly: true });
    for (const { name } of databases) if (name === DOCDB_NAME || name.startsWith(DOCDB_NAME + '-')) await client.db(name).dropDatabase();
  } finally {
    await client.close();
  }
}

export const variants: BrokerVariant[] = [
  { name: 'uws-pool', description: 'uWS front, pipeline in the worker pool (the defaults)', args: [] },
  { name: 'uws-inline', description: 'uWS front, pipeline on the front thread', args: ['--connectionPoolSize', '0'] },
  {
    // What --frontOps auto (the default) saves or costs: the same pool with every operation handed to it.
    name: 'uws-pool-all',
    description: 'uWS front, worker pool, every operation in the pool (--frontOps none)',
    args: ['--frontOps', 'none'],
  },
  { name: 'node-pool', description: 'node:http front, pipeline in the worker pool', args: ['--httpServer', 'node'] },
  {
    // Issue 17: the entity rows and the query by type on docdb, beside embdb's in the same run.
    name: 'docdb-pool',
    description: 'uWS front, worker pool, --database docdb on the MongoDB-wire server of MONGO_URL (FerretDB by default)',
    args: ['--database', 'docdb', '--dbURI', MONGO_URL, '--dbName', DOCDB_NAME],
    only: ['retrieve', 'create', 'patch', 'batch-upsert', 'query-type'],
    cleanup: dropDocdb,
  },
];

/** The variants of `make bench`'s table (the others by `--variants`): each adds a row per scenario per round. */
export const DEFAULT_VARIANTS = ['uws-pool', 'uws-inline'];

const PARALLELISM = fileURLToPath(new URL('./parallelism.js', import.meta.url));

/**
 * `--ceiling`: a pool of `threads` pipeline threads whatever the cores (bench/parallelism.ts lifts the pool's cap at
 * the cores): more threads than cores show whether the hand-off between the front and the pool serialises.
 */
export function poolOf(threads: number): BrokerVariant {
  return {
    name: `pool${threads}`,
    description: `uWS front, ${threads} pipeline threads whatever the cores (bench/parallelism.ts)`,
    args: ['--connectionPoolSize', String(threads)],
    env: { BENCH_PARALLELISM: String(threads) },
    nodeFlags: ['--import', PARALLELISM],
  };
}
