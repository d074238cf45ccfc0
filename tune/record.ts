// The winner of tune-result.json as the file the container image keeps (seed 001 §4.4): shell assignments of
// TUNE_DBLOCKPREFER, TUNE_ALLOCATOR and the trained options, which docker/entrypoint.sh applies unless the operator
// set the same. Usage: node dist/tune/record.js tune-result.json > tune.env. Exit 1: the result has no winner.
import { readFileSync } from 'node:fs';
import type { TuneResult } from './result.js';

/** Values go into a file the shell sources: only characters that need no quoting beyond single quotes. */
const SAFE = /^[A-Za-z0-9=._/ -]*$/;

export function recordLines(r: TuneResult): string[] {
  const b = r.best;
  if (b === null) throw new Error('tune-result.json has no winner (best is null): every combination had failed requests');
  const vars: [string, string][] = [];
  if (b.brokerOptions.dbLockPrefer !== undefined) vars.push(['TUNE_DBLOCKPREFER', String(b.brokerOptions.dbLockPrefer)]);
  vars.push(['TUNE_ALLOCATOR', b.allocator]);
  for (const [k, v] of Object.entries(b.brokerOptions)) if (k !== 'dbLockPrefer') vars.push([`TUNE_${k.toUpperCase()}`, String(v)]);
  if (b.env.NODE_OPTIONS !== undefined) vars.push(['TUNE_NODE_OPTIONS', b.env.NODE_OPTIONS]);
  for (const [k, v] of vars) {
    if (!/^TUNE_[A-Z0-9_]+$/.test(k) || !SAFE.test(v))
      throw new Error(`refusing to record ${k}=${JSON.stringify(v)}: unexpected characters`);
    if (k === 'TUNE_ALLOCATOR' && !['system', 'jemalloc', 'mimalloc'].includes(v)) throw new Error(`unknown allocator ${v}`);
  }
  return [
    `# The tuned broker (seed 001 §4.4), recorded from tune-result.json (${b.rps} req/s, vsDefault ${b.vsDefault}).`,
    ...vars.map(([k, v]) => `${k}='${v}'`),
  ];
}

function main(): number {
  const file = process.argv[2];
  if (file === undefined) {
    process.stderr.write('usage: record.js tune-result.json\n');
    return 2;
  }
  try {
    const r = JSON.parse(readFileSync(file, 'utf8')) as TuneResult;
    process.stdout.write(`${recordLines(r).join('\n')}\n`);
    return 0;
  } catch (e) {
    process.stderr.write(`record: ${file}: ${(e as Error).message}\n`);
    return 1;
  }
}

if (process.argv[1]?.endsWith('record.js')) process.exitCode = main();
