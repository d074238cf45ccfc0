// The MongoDB-wire server of the tests (FerretDB, test/services/ferretdb.sh) and databases of their own on it: each
// test names a fresh --dbName (several test files and helpers share the server at once) and drops its databases
// (`<dbName>` and every `<dbName>-<tenant>`) when done.
import { readFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { MongoClient } from 'mongodb';
import { ROOT_URL } from '../../helpers/repo.js';

const ENV_FILE = new URL('.services/ferretdb.env', ROOT_URL);

/** MONGO_URL from the environment, else from the services' file, else FerretDB's default port. */
export function mongoUrl(): string {
  if (process.env.MONGO_URL !== undefined && process.env.MONGO_URL !== '') return process.env.MONGO_URL;
  try {
    const m = /MONGO_URL=(\S+)/.exec(readFileSync(ENV_FILE, 'utf8'));
    if (m !== null) return m[1]!;
  } catch {
    /* no file: the default */
  }
  return 'mongodb://127.0.0.1:57017/';
}

/** A database name no other test uses (short: a tenant's database is <dbName>-<tenant>, 63 characters at most). */
export function freshDbName(): string {
  return 't' + randomBytes(5).toString('hex');
}

/** Drops `<dbName>` and its tenants' databases. */
export async function dropDatabases(dbName: string, url = mongoUrl()): Promise<void> {
  const client = new MongoClient(url, { serverSelectionTimeoutMS: 5000 });
  try {
    const { databases } = await client.db('admin').admin().listDatabases({ nameOnly: true });
    for (const { name } of databases) if (name === dbName || name.startsWith(dbName + '-')) await client.db(name).dropDatabase();
  } finally {
    await client.close();
  }
}

/** The broker arguments of a docdb store on a fresh database of the test server. */
export function docdbArgs(dbName = freshDbName(), url = mongoUrl()): string[] {
  return ['--database', 'docdb', '--dbURI', url, '--dbName', dbName];
}
