// The history the temporal API tests run on: embdb by default; tsdb (QuestDB, started by test/services/questdb.sh)
// when LDB_TEST_TROE=tsdb, which the *.tsdb.test.ts files set before they load the test file they run again.
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { repoPath } from '../../helpers/repo.js';

const SCRIPT = repoPath('test/services/questdb.sh');
let started = false;

/** Starts QuestDB for the tests unless it runs (idempotent); its HTTP port. */
export function questDbPort(): number {
  const port = Number(process.env.QDB_HTTP_PORT ?? 59000);
  if (!started) {
    // A QuestDB already answering (started by another checkout's script, whose pid file this one's script does not
    // see) is used as it is; otherwise the script starts one.
    if (!answers(port)) execFileSync('bash', [SCRIPT], { stdio: ['ignore', 'ignore', 'inherit'] });
    started = true;
  }
  return port;
}

function answers(port: number): boolean {
  try {
    execFileSync('curl', ['-fsS', '--max-time', '2', `http://127.0.0.1:${port}/exec?query=select%201`], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

const prefixes: string[] = [];

/** Drops the tables of this process's brokers when it is about to exit, so test runs do not pile them up. */
async function dropTables(): Promise<void> {
  const exec = async (query: string): Promise<{ dataset?: unknown[][] }> =>
    (await (await fetch(`http://127.0.0.1:${questDbPort()}/exec?query=${encodeURIComponent(query)}`)).json()) as { dataset?: unknown[][] };
  try {
    const all = await exec('SELECT table_name FROM tables()');
    for (const [name] of all.dataset ?? []) {
      if (typeof name === 'string' && prefixes.some((p) => name.startsWith(`${p}_`))) await exec(`DROP TABLE IF EXISTS ${name}`);
    }
  } catch {
    // QuestDB gone: nothing to tidy.
  }
  prefixes.length = 0;
}

/** `--troe tsdb` on the test QuestDB, with tables of its own (a fresh prefix) so no two brokers share history. */
export function tsdbArgs(): string[] {
  const port = questDbPort();
  const prefix = `t${randomBytes(6).toString('hex')}`;
  if (prefixes.length === 0) process.once('beforeExit', () => void dropTables());
  prefixes.push(prefix);
  return ['--troe', 'tsdb', '--troeHost', '127.0.0.1', '--troePort', String(port), '--troeName', prefix];
}

export const troeUnderTest = (): 'embdb' | 'tsdb' => (process.env.LDB_TEST_TROE === 'tsdb' ? 'tsdb' : 'embdb');

/** The arguments of the history under test. */
export function troeArgs(): string[] {
  return troeUnderTest() === 'tsdb' ? tsdbArgs() : ['--troe', 'embdb'];
}
