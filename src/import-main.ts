#!/usr/bin/env node
// ldbroker-import (seed 001 §4.3): `ldbroker-import --database <store> [--dbDir <dir>] [--troe <history>] [plugin
// options] --file <stream|->`. The log is pino on standard output, the report on standard error (§2.7). Exit status
// 0 when every record went in, 1 when any was refused (§7); 2 when nothing could be imported (a bad command line, a
// stream that cannot be opened, a store in use or that cannot be opened).
import { createReadStream, realpathSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { readArgs, StartError } from './command-line.js';
import { createLogger, type LogDestination } from './logger.js';
import { IMPORTER, ImportTargetError, openImportTarget } from './import-target.js';
import { runImport } from './migrate/import/run-import.js';

/** What the command reads and writes: the process's own, or a test's that runs the command in its process. */
export interface CommandIo {
  env: NodeJS.ProcessEnv;
  stdin: NodeJS.ReadableStream;
  /** The log (pino JSON lines) and the usage. */
  stdout: LogDestination;
  /** The refused records' lines and the report. */
  stderr: { write(text: string): unknown; isTTY?: boolean };
}

const PROCESS_IO: CommandIo = { env: process.env, stdin: process.stdin, stdout: process.stdout, stderr: process.stderr };

/** The command on `argv` (the arguments after the script): its exit status. */
export async function main(argv: readonly string[], io: CommandIo = PROCESS_IO): Promise<number> {
  const fail = (message: string): number => {
    io.stderr.write(`ldbroker-import: ${message}\n`);
    return 2;
  };
  let args;
  try {
    args = await readArgs(argv, io.env, IMPORTER);
  } catch (e) {
    return fail(e instanceof StartError || e instanceof Error ? e.message : String(e));
  }
  if (args.values.u === true) {
    io.stdout.write(args.usage);
    return 0;
  }
  const file = args.values.file as string | undefined;
  if (file === undefined || file === '') return fail('--file is required: the stream to import, or - for standard input');
  let size: number | undefined;
  if (file !== '-') {
    try {
      const st = statSync(file);
      if (!st.isFile()) return fail(`--file ${file}: not a file`);
      size = st.size;
    } catch (e) {
      return fail(`--file ${file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
    }
  }
  const log = createLogger(args.values.logLevel as string, 'import', io === PROCESS_IO ? undefined : io.stdout);
  let target;
  try {
    target = await openImportTarget(args, log);
  } catch (e) {
    if (e instanceof ImportTargetError) return fail(e.message);
    log.error({ err: e }, 'the store cannot be opened');
    return fail(`the store cannot be opened: ${e instanceof Error ? e.message : String(e)}`);
  }
  log.info({ file, database: args.values.database, troe: args.values.troe }, 'import started');
  // Interrupted: what was written stays (each record is its own write); the report of the rest cannot be given.
  const interrupted = (signal: NodeJS.Signals): void => {
    io.stderr.write(`\nldbroker-import: interrupted (${signal}): the records written so far stay; import the rest again\n`);
    log.warn({ signal }, 'import interrupted');
    process.exit(2);
  };
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, interrupted);
  const started = Date.now();
  try {
    const input = file === '-' ? io.stdin : createReadStream(file, { highWaterMark: 1024 * 1024 });
    const report = await runImport(target.deps, { input, size, err: io.stderr });
    const seconds = (Date.now() - started) / 1000;
    log.info(
      {
        records: report.records,
        seconds,
        recordsPerSecond: Math.round(report.records / Math.max(seconds, 0.001)),
        refused: report.anyRefused,
      },
      'import finished',
    );
    return report.anyRefused ? 1 : 0;
  } catch (e) {
    log.error({ err: e }, 'import stopped');
    return fail(`import stopped: ${e instanceof Error ? e.message : String(e)}`);
  } finally {
    try {
      await target.close();
    } finally {
      // Run in a test's process, the command leaves no handler of its own behind.
      for (const signal of ['SIGINT', 'SIGTERM'] as const) process.off(signal, interrupted);
    }
  }
}

/** Whether this module is the process's script (node dist/src/import-main.js, or a link to it as ldbroker-import). */
function isScript(): boolean {
  try {
    return process.argv[1] !== undefined && realpathSync(process.argv[1]) === fileURLToPath(import.meta.url);
  } catch {
    return false;
  }
}

if (isScript())
  main(process.argv.slice(2)).then(
    (code) => {
      process.exitCode = code;
      // A resolver's channel or a plugin's timer must not keep a finished import alive.
      setTimeout(() => process.exit(code), 100).unref();
    },
    (e: unknown) => {
      process.stderr.write(`ldbroker-import: ${e instanceof Error ? e.stack : String(e)}\n`);
      process.exit(2);
    },
  );
