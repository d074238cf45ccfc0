// The broker configurations `make bench` compares; the first is the default, the only one `--smoke` runs.
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { MongoClient } from 'mongodb';
import { loopbackPort, type DatabaseProcess } from './database-cpu.js';
import { queryScenarios } from './scenarios/query.js';
import type { BrokerVariant } from './scenario.js';

/** The MongoDB-wire server of `make bench`: MONGO_URL, else FerretDB as test/services/ferretdb.sh starts it. */
const MONGO_URL = process.env.MONGO_URL ?? 'mongodb://127.0.0.1:57017/';
/**
 * FerretDB on its PostgreSQL backend (`FERRETDB_BACKEND=pg test/services/ferretdb.sh`, .services/ferretdb-pg.env):
 * MONGO_PG_URL, and the PostgreSQL it stores in (FERRETDB_POSTGRESQL_URL), whose processes' CPU the rows add.
 */
const MONGO_PG_URL = process.env.MONGO_PG_URL ?? 'mongodb://127.0.0.1:57018/';
const FERRETDB_POSTGRESQL_URL = process.env.FERRETDB_POSTGRESQL_URL ?? 'postgres://postgres@127.0.0.1:55432/ferretdb';
/** A database of this run only, dropped (with its tenants' databases) after the variant. */
const DOCDB_NAME = 'bench' + randomBytes(3).toString('hex');

async function dropDocdb(url: string): Promise<void> {
  const client = new MongoClient(url, { serverSelectionTimeoutMS: 5000 });
  try {
    const { databases } = await client.db('admin').admin().listDatabases({ nameOnly: true });
    for (const { name } of databases) if (name === DOCDB_NAME || name.startsWith(DOCDB_NAME + '-')) await client.db(name).dropDatabase();
  } finally {
    await client.close();
  }
}

/** The database servers of a variant that listen on loopback ports (a remote one's CPU is not this machine's). */
function local(dbs: Array<{ name: string; url: string; children?: boolean }>): DatabaseProcess[] {
  return dbs.flatMap(({ name, url, children }) => {
    const port = loopbackPort(url);
    return port === undefined ? [] : [{ name, port, children }];
  });
}

/**
 * The docdb rows (issue 17): the entity rows and the query by type, beside embdb's in the same run. Batch upsert
 * before query-type: on FerretDB a batch's read of its ids (`$in`, not pushed down) reads the whole collection, and
 * query-type seeds 100,000 entities into it.
 */
export const DOCDB_ROWS = ['retrieve', 'create', 'patch', 'batch-upsert', 'query-type'];
/** The rows of `run.js --docdb` (make bench): all five. */
export const DOCDB_MAKE_ROWS = DOCDB_ROWS;
/**
 * The connections of the rows of `run.js --docdb` that FerretDB cannot serve at 50 (unless --connections is given;
 * bare and embdb beside them at the same count): a batch upsert of 100 is about 200 commands there (a find by _id
 * per id, the store's IdReads, then an update command per replacement), and a page by type reads every match on
 * PostgreSQL (FerretDB 1.24 pushes no limit down). At 50, a row's requests queued in FerretDB for longer than the
 * row and the runner's 20 s stop. Batch upsert at 2: at 4, the warm-up's batches still running beside the measured
 * ones, none completed in make bench's 2 s row (a batch takes about 0.25 s there alone, bench/RESULTS.md).
 */
export const DOCDB_CONNECTIONS: Readonly<Record<string, number>> = { 'batch-upsert': 2, 'query-type': 4 };
/** The variants of `run.js --docdb` (make bench): embdb's rows beside docdb's on FerretDB on PostgreSQL. */
export const DOCDB_VARIANTS = ['uws-pool', 'docdb-pg-pool'];

export const variants: BrokerVariant[] = [
  { name: 'uws-pool', description: 'uWS front, pipeline in the worker pool (the defaults)', args: [] },
  {
    // The query rows send one query again and again to a tenant nobody writes: on the defaults, after the first
    // request, embdb's page cache (page-cache.ts) answers them, with the body bytes of the last time
    // (query-fragments.ts). Without the page cache every request reads its page from the store, its index and each
    // entity's stored bytes: what a query costs when the page cache cannot answer it (issue 24 item 1). Entities that
    // did not change are still not decoded nor rendered again (entity-cache.ts, their kept forms), as for any query.
    name: 'uws-pool-uncached',
    description: 'the defaults with --dbPageCache 0: every query reads its page from the store (query rows only)',
    args: ['--dbPageCache', '0'],
    only: queryScenarios.map((q) => q.name),
  },
  { name: 'uws-inline', description: 'uWS front, pipeline on the front thread', args: ['--connectionPoolSize', '0'] },
  {
    // What --frontOps auto (the default) saves or costs: the same pool with every operation handed to it.
    name: 'uws-pool-all',
    description: 'uWS front, worker pool, every operation in the pool (--frontOps none)',
    args: ['--frontOps', 'none'],
  },
  { name: 'node-pool', description: 'node:http front, pipeline in the worker pool', args: ['--httpServer', 'node'] },
  {
    name: 'docdb-pool',
    description: 'uWS front, worker pool, --database docdb on the MongoDB-wire server of MONGO_URL (FerretDB on SQLite by default)',
    args: ['--database', 'docdb', '--dbURI', MONGO_URL, '--dbName', DOCDB_NAME],
    only: DOCDB_ROWS,
    databases: local([{ name: 'FerretDB', url: MONGO_URL }]),
    cleanup: () => dropDocdb(MONGO_URL),
  },
  {
    // FerretDB's SQLite backend scans the collection for every update by _id (about 1 batch upsert/s): the same rows
    // on its PostgreSQL backend say what the broker costs around a database that is not that slow.
    name: 'docdb-pg-pool',
    description: 'uWS front, worker pool, --database docdb on FerretDB on PostgreSQL (MONGO_PG_URL)',
    args: ['--database', 'docdb', '--dbURI', MONGO_PG_URL, '--dbName', DOCDB_NAME],
    only: DOCDB_ROWS,
    databases: local([
      { name: 'FerretDB', url: MONGO_PG_URL },
      { name: 'PostgreSQL', url: FERRETDB_POSTGRESQL_URL, children: true },
    ]),
    cleanup: () => dropDocdb(MONGO_PG_URL),
  },
];

/**
 * The variants of `make bench`'s table (the others by `--variants`): each adds a row per scenario per round (of its
 * `only` scenarios). uws-pool-uncached beside uws-pool: each query row cached and uncached.
 */
export const DEFAULT_VARIANTS = ['uws-pool', 'uws-pool-uncached', 'uws-inline'];

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
