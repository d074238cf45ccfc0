#!/usr/bin/env node
// ldbroker-import (seed 001 §4.3): `ldbroker-import --database <store> [--dbDir <dir>] [--troe <history>] [plugin
// options] --file <stream|->`. The log is pino on standard output, the report on standard error (§2.7). Exit status
// 0 when every record went in, 1 when any was refused (§7); 2 when nothing could be imported (a bad command line, a
// stream that cannot be opened, a store in use or that cannot be opened).
import { createReadStream, statSync } from 'node:fs';
import { readArgs, StartError } from './command-line.js';
import { createLogger } from './logger.js';
import { IMPORTER, ImportTargetError, openImportTarget } from './import-target.js';
import { runImport } from './migrate/import/run-import.js';

async function main(argv: readonly string[]): Promise<number> {
  const fail = (message: string): number => {
    process.stderr.write(`ldbroker-import: ${message}\n`);
    return 2;
  };
  let args;
  try {
    args = await readArgs(argv, process.env, IMPORTER);
  } catch (e) {
    return fail(e instanceof StartError || e instanceof Error ? e.message : String(e));
  }
  if (args.values.u === true) {
    process.stdout.write(args.usage);
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
  const log = createLogger(args.values.logLevel as string, 'import');
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
  for (const signal of ['SIGINT', 'SIGTERM'] as const)
    process.once(signal, () => {
      process.stderr.write(`\nldbroker-import: interrupted (${signal}): the records written so far stay; import the rest again\n`);
      log.warn({ signal }, 'import interrupted');
      process.exit(2);
    });
  const started = Date.now();
  try {
    const input = file === '-' ? process.stdin : createReadStream(file, { highWaterMark: 1024 * 1024 });
    const report = await runImport(target.deps, { input, size, err: process.stderr });
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
    await target.close();
  }
}

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
