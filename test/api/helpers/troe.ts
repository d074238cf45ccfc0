// The history the temporal API tests run on: embdb by default; tsdb (QuestDB, started by test/services/questdb.sh)
// when LDB_TEST_TROE=tsdb, which the *.tsdb.test.ts files set before they load the test file they run again.
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';

const SCRIPT = fileURLToPath(new URL('../../services/questdb.sh', import.meta.url));
let started = false;

/** Starts QuestDB for the tests unless it runs (idempotent); its HTTP port. */
export function questDbPort(): number {
  if (!started) {
    execFileSync('bash', [SCRIPT], { stdio: ['ignore', 'ignore', 'inherit'] });
    started = true;
  }
  return Number(process.env.QDB_HTTP_PORT ?? 59000);
}

/** `--troe tsdb` on the test QuestDB, with tables of its own (a fresh prefix) so no two brokers share history. */
export function tsdbArgs(): string[] {
  const port = questDbPort();
  return ['--troe', 'tsdb', '--troeHost', '127.0.0.1', '--troePort', String(port), '--troeName', `t${randomBytes(6).toString('hex')}`];
}

export const troeUnderTest = (): 'embdb' | 'tsdb' => (process.env.LDB_TEST_TROE === 'tsdb' ? 'tsdb' : 'embdb');

/** The arguments of the history under test. */
export function troeArgs(): string[] {
  return troeUnderTest() === 'tsdb' ? tsdbArgs() : ['--troe', 'embdb'];
}
