// The results of one run as a console table and as bench/RESULTS.md (the table plus what it was measured on).
import { cpus, totalmem } from 'node:os';
import { writeFile } from 'node:fs/promises';
import type { LoadResult } from './load.js';
import { failedRequests } from './load.js';
import type { BrokerVariant, Scenario } from './scenario.js';

export const BARE = 'bare-uws';
/** The bare server measured again after the brokers; its ratio is to the first bare row: the machine's drift. */
export const BARE_END = 'bare-uws-end';

export interface Row {
  scenario: string;
  /** A broker variant's name, or BARE for the baseline. */
  variant: string;
  result?: LoadResult;
  /** Broker req/s over the bare server's on the same requests (the mean of its start and end rows). */
  ratio?: number;
  targetRatio?: number;
  /** Why the row has no (or untrustworthy) numbers: setup refused, first request refused, harness error. */
  notes: string[];
}

export interface RunInfo {
  command: string;
  startedAt: Date;
  loadAverage: { start: number[]; end?: number[] };
  durationS: number;
  warmupS: number;
  connections: number;
  scenarios: Scenario[];
  variants: BrokerVariant[];
  /** Exit code of each broker variant after SIGTERM (0 expected). */
  exitCodes: Record<string, number | null>;
}

export function rowErrors(row: Row): number | undefined {
  return row.result === undefined ? undefined : failedRequests(row.result);
}

/** A row failed when a request failed, it could not be measured, or setup refused. */
export function rowFailed(row: Row): boolean {
  return row.result === undefined || failedRequests(row.result) > 0;
}

function verdict(row: Row): string {
  if (row.ratio === undefined || row.targetRatio === undefined) return '';
  return row.ratio >= row.targetRatio ? `>= ${row.targetRatio.toFixed(2)} met` : `>= ${row.targetRatio.toFixed(2)} MISSED`;
}

// Truncated, not rounded: a ratio just under its target must not print as the target.
function ratioText(ratio: number): string {
  return (Math.floor(ratio * 100) / 100).toFixed(2);
}

function cells(row: Row): string[] {
  const r = row.result;
  const errors = rowErrors(row);
  return [
    row.scenario,
    row.variant,
    r === undefined ? '-' : Math.round(r.requestsPerSecond).toString(),
    r === undefined ? '-' : r.p99Ms.toFixed(1),
    row.ratio === undefined ? (row.variant === BARE ? '1.00' : '-') : ratioText(row.ratio),
    errors === undefined ? 'not run' : errors.toString(),
    verdict(row),
  ];
}

const HEAD = ['scenario', 'variant', 'req/s', 'p99 ms', 'ratio to bare', 'errors', 'target'];

export function consoleTable(rows: readonly Row[]): string {
  const all = [HEAD, ...rows.map(cells)];
  const widths = HEAD.map((_, i) => Math.max(...all.map((c) => c[i]!.length)));
  return all
    .map((c) =>
      c
        .map((v, i) => (i >= 2 && i <= 5 ? v.padStart(widths[i]!) : v.padEnd(widths[i]!)))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

function markdownTable(rows: readonly Row[]): string {
  const lines = [`| ${HEAD.join(' | ')} |`, `|${HEAD.map((_, i) => (i >= 2 && i <= 5 ? '---:' : '---')).join('|')}|`];
  for (const row of rows) lines.push(`| ${cells(row).join(' | ')} |`);
  return lines.join('\n');
}

function statusDetail(rows: readonly Row[]): string[] {
  const out: string[] = [];
  for (const row of rows) {
    const codes =
      row.result === undefined
        ? ''
        : Object.entries(row.result.statusCodes)
            .map(([c, n]) => `${c}×${n}`)
            .join(', ');
    const extra =
      row.result !== undefined && row.result.errors > 0 ? `; socket errors ${row.result.errors} (timeouts ${row.result.timeouts})` : '';
    if (rowFailed(row) || row.notes.length > 0) {
      out.push(`- ${row.scenario} / ${row.variant}: ${codes === '' ? 'no answers' : `statuses ${codes}`}${extra}`);
      for (const note of row.notes) out.push(`  - ${note.replace(/\n/g, ' ')}`);
    }
  }
  return out;
}

function loadText(l: readonly number[]): string {
  return l.map((x) => x.toFixed(2)).join(' / ');
}

export function markdownReport(rows: readonly Row[], info: RunInfo): string {
  const cpu = cpus();
  const exits = Object.entries(info.exitCodes)
    .map(([v, c]) => `${v} ${c === null ? 'killed' : c}`)
    .join(', ');
  const problems = statusDetail(rows);
  return [
    '# Benchmark results',
    '',
    'Written by `make bench` (`node dist/bench/run.js`); every run overwrites it. Each broker row is divided by the',
    'bare uWS server (`bench/bare-server.ts`) on the same requests in the same run: the mean of its measurement before',
    `the brokers (${BARE}) and after them (${BARE_END}, whose ratio is to ${BARE}: how much the machine drifted).`,
    '',
    `- date: ${info.startedAt.toISOString()}`,
    `- command: \`${info.command}\``,
    `- machine: ${cpu.length} cores (nproc), ${cpu[0]?.model ?? 'unknown CPU'}, ${(totalmem() / 2 ** 30).toFixed(1)} GiB RAM`,
    `- load average (1/5/15 min) at start ${loadText(info.loadAverage.start)}, at end ${info.loadAverage.end === undefined ? '-' : loadText(info.loadAverage.end)}`,
    `- node ${process.version}; autocannon ${info.connections} connections, ${info.durationS} s measured after ${info.warmupS} s warm-up, per row`,
    `- broker exit codes after SIGTERM: ${exits === '' ? 'none started' : exits}`,
    '',
    '> The load generator (autocannon, one thread) runs on the same cores as the server it measures, and other work',
    '> shared the machine during the run: absolute numbers are low and noisy; the ratios to the bare server of the',
    '> same run are what to compare.',
    '',
    markdownTable(rows),
    '',
    '## Scenarios',
    '',
    ...info.scenarios.map((s) => `- **${s.name}**: ${s.description}`),
    '',
    '## Broker variants',
    '',
    '`node dist/src/main.js --port 0 --host 127.0.0.1 --logLevel info` (embdb in RAM) plus:',
    '',
    ...info.variants.map((v) => `- **${v.name}** (\`${v.args.join(' ') || 'no extra arguments'}\`): ${v.description}`),
    '',
    '## Failed requests and notes',
    '',
    ...(problems.length === 0 ? ['None: every request of every row answered 2xx.'] : problems),
    '',
  ].join('\n');
}

export async function writeReport(path: string, rows: readonly Row[], info: RunInfo): Promise<void> {
  await writeFile(path, markdownReport(rows, info));
}
