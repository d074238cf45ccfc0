// The importer for the tests: in this process (the built dist/, as the brokers of startBroker), on an embdb store in
// a directory, with the stream given as records or text; or the built command as a child process.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import type * as Target from '../../../src/import-target.js';
import type * as Run from '../../../src/migrate/import/run-import.js';
import type * as CommandLine from '../../../src/command-line.js';
import type * as ImportMain from '../../../src/import-main.js';
import { docdbArgs, dropDatabases, freshDbName } from './docdb.js';
import { tsdbArgs } from './troe.js';
import { ROOT_URL } from '../../helpers/repo.js';

const DIST = new URL('dist/src/', ROOT_URL);
export const IMPORT_MAIN = fileURLToPath(new URL('import-main.js', DIST));

/** NDJSON text of records (strings are lines as they are). */
export function ndjson(records: ReadonlyArray<object | string>): string {
  return records.map((r) => (typeof r === 'string' ? r : JSON.stringify(r))).join('\n') + '\n';
}

export interface Imported {
  /** Standard error: refusal lines, then the report. */
  err: string;
  refusedLines: number[];
  anyRefused: boolean;
  /** The report's closing line of a category, e.g. 'entities: 3 imported, 0 refused'. */
  line(category: string): string | undefined;
}

/** Imports `stream` into the embdb store at `dir` (--troe embdb unless `troe` says otherwise), in this process. */
export async function importInto(dir: string, stream: string | ReadonlyArray<object | string>, troe = 'embdb'): Promise<Imported> {
  return importWith(['--database', 'embdb', '--dbDir', dir, '--troe', troe], stream);
}

/** Imports `stream` into the store and history `target` names (the importer's arguments but --file), in this process. */
export async function importWith(targetArgs: readonly string[], stream: string | ReadonlyArray<object | string>): Promise<Imported> {
  const { readArgs } = (await import(new URL('command-line.js', DIST).href)) as typeof CommandLine;
  const { IMPORTER, openImportTarget } = (await import(new URL('import-target.js', DIST).href)) as typeof Target;
  const { runImport } = (await import(new URL('migrate/import/run-import.js', DIST).href)) as typeof Run;
  const args = await readArgs([...targetArgs, '--file', '-'], {}, IMPORTER);
  const target = await openImportTarget(args, pino({ level: 'silent' }));
  let err = '';
  try {
    const text = typeof stream === 'string' ? stream : ndjson(stream);
    const report = await runImport(target.deps, { input: Readable.from([Buffer.from(text)]), err: { write: (s: string) => (err += s) } });
    return {
      err,
      anyRefused: report.anyRefused,
      refusedLines: [...err.matchAll(/^line (\d+): /gm)].map((m) => Number(m[1])),
      line: (category) => err.split('\n').find((l) => l.startsWith(`${category}: `)),
    };
  } finally {
    await target.close();
  }
}

/** This process's environment without BROKER_* (which the importer reads as options), and `env` over it. */
function importerEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const clean: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('BROKER_')) clean[k] = v;
  return { ...clean, ...env };
}

/**
 * The built importer command's main run to its end in this process (a process start spared), as runImporter gives it:
 * its exit status, its standard output (the log) and standard error. For what the command decides from its arguments,
 * environment and input; what needs the process (a signal, a capped heap, another process holding the store, the
 * pipes as the command writes them) runs it with runImporter.
 */
export async function importCommand(
  args: string[],
  stdin?: string,
  env: NodeJS.ProcessEnv = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const { main } = (await import(new URL('import-main.js', DIST).href)) as typeof ImportMain;
  let stdout = '';
  let stderr = '';
  const code = await main(args, {
    env: importerEnv(env),
    stdin: Readable.from([Buffer.from(stdin ?? '')]),
    stdout: { write: (s: string) => void (stdout += s) },
    stderr: { write: (s: string) => (stderr += s) },
  });
  return { code, stdout, stderr };
}

/** Runs the built importer command to its end. */
export function runImporter(
  args: string[],
  stdin?: string,
  env: NodeJS.ProcessEnv = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const proc = spawn(process.execPath, [IMPORT_MAIN, ...args], { env: importerEnv(env), stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    proc.stdout.on('data', (d) => (stdout += String(d)));
    proc.stderr.on('data', (d) => (stderr += String(d)));
    const timer = setTimeout(() => proc.kill('SIGKILL'), 60_000);
    proc.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
    proc.stdin.on('error', () => {});
    proc.stdin.end(stdin ?? '');
  });
}

/**
 * The store and history an import test writes into and then starts its broker on: embdb on disk by default,
 * docdb (a fresh database of the test server) with TEST_STORE=docdb, tsdb (fresh tables) with LDB_TEST_TROE=tsdb;
 * `--troe embdb` beside embdb, `--troe none` beside docdb unless tsdb. `args` are both the importer's (but --file)
 * and the broker's.
 */
export function importTarget(tap: { teardown(fn: () => unknown): void }): { args: string[]; store: 'embdb' | 'docdb'; troe: string } {
  const store = process.env.TEST_STORE === 'docdb' ? 'docdb' : 'embdb';
  const tsdb = process.env.LDB_TEST_TROE === 'tsdb';
  let args: string[];
  if (store === 'docdb') {
    const dbName = freshDbName();
    tap.teardown(() => dropDatabases(dbName).catch(() => undefined));
    args = docdbArgs(dbName);
  } else {
    const dir = mkdtempSync(join(tmpdir(), 'ldbroker-import-'));
    tap.teardown(() => rmSync(dir, { recursive: true, force: true }));
    args = ['--database', 'embdb', '--dbDir', dir];
  }
  const troe = tsdb ? tsdbArgs() : store === 'docdb' ? ['--troe', 'none'] : ['--troe', 'embdb'];
  return { args: [...args, ...troe], store, troe: troe[1]! };
}
