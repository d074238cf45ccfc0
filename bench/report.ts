// The results of one run of bench/run.ts, as a console table and as bench/RESULTS.md: per scenario and variant the
// medians over the alternated rounds, their ranges, the ratios to the bare server of the same round, the CPU the
// broker's threads spent per request, the issue's targets met or missed, and a model of where the ceiling is.
import { cpus, totalmem } from 'node:os';
import { existsSync, readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import type { LoadResult } from './load.js';
import { failedRequests } from './load.js';
import { writeResultsSection } from './results-section.js';
import type { BrokerVariant, Scenario } from './scenario.js';
import { median } from './stats.js';
import type { CpuSpent } from './thread-cpu.js';

export const BARE = 'bare-uws';
/** Issue 24: p99 at most this at 50 connections on every row. */
export const P99_TARGET_MS = 10;

export interface Placement {
  cores: number;
  pinned: boolean;
  /** taskset core lists, when pinned. */
  loadGenerator?: string;
  servers?: string;
}

/** One measured run: one scenario on one server in one round. */
export interface Sample {
  scenario: string;
  variant: string;
  round: number;
  result: LoadResult;
  /** The server's CPU during the measured run, by thread role (undefined without /proc). */
  cpu?: CpuSpent;
  /** Wall time of the measured run (connecting and draining included) and the load generator's own CPU in it, µs. */
  wallUs?: number;
  loadGeneratorUs?: number;
  /** The CPU of the database servers behind the broker during the run (bench/database-cpu.ts), µs by server. */
  databaseCpu?: Record<string, number>;
}

/** CPU per request (µs) of the median round, and how busy the server and the load generator were (cores). */
export interface RowCpu {
  frontUs: number;
  pipelineUs: number;
  otherUs: number;
  /** Pipeline threads and the share of the pipeline's CPU of the least and the most busy one. */
  pipelineThreads: number;
  leastShare?: number;
  mostShare?: number;
  serverCores: number;
  loadGeneratorCores: number;
  /** CPU per request (µs) of each database server behind the broker (docdb: FerretDB, PostgreSQL). */
  databaseUs?: Record<string, number>;
}

export interface Row {
  scenario: string;
  /** A broker variant's name, or BARE for the baseline. */
  variant: string;
  /** The rounds measured. */
  rounds: number;
  /** Medians of req/s, p50 and p99 over the rounds; completed, errors, timeouts, non-2xx and statuses summed. */
  result?: LoadResult;
  rpsRange?: [number, number];
  /** Median over the rounds of req/s divided by the bare server's in the same round, and the range of those ratios. */
  ratio?: number;
  ratioRange?: [number, number];
  /** The same against the first broker variant (the defaults) in the same round. */
  vsDefault?: number;
  vsDefaultRange?: [number, number];
  entitiesPerS?: number;
  cpu?: RowCpu;
  targetRatio?: number;
  targetEntitiesPerS?: number;
  /** Why the row has no (or untrustworthy) numbers: setup refused, first request refused, harness error. */
  notes: string[];
  /** Its connections, where not the run's (RunInfo.connectionsOf). */
  connections?: number;
}

export interface RunInfo {
  command: string;
  startedAt: Date;
  endedAt?: Date;
  loadAverage: { start: number[]; end?: number[] };
  rounds: number;
  durationS: number;
  warmupS: number;
  connections: number;
  /** Scenarios run at other connections than `connections`. */
  connectionsOf?: Readonly<Record<string, number>>;
  scenarios: Scenario[];
  variants: BrokerVariant[];
  placement: Placement;
  /** Exit code of each broker variant after SIGTERM (0 expected; null: killed or died). */
  exitCodes: Record<string, number | null>;
}

const spread = (xs: readonly number[]): [number, number] => [Math.min(...xs), Math.max(...xs)];

function sum(results: readonly LoadResult[]): LoadResult {
  const statusCodes: Record<string, number> = {};
  for (const r of results) for (const [c, n] of Object.entries(r.statusCodes)) statusCodes[c] = (statusCodes[c] ?? 0) + n;
  const total = (f: (r: LoadResult) => number): number => results.reduce((a, r) => a + f(r), 0);
  return {
    requestsPerSecond: median(results.map((r) => r.requestsPerSecond)),
    p50Ms: median(results.map((r) => r.p50Ms)),
    p99Ms: median(results.map((r) => r.p99Ms)),
    completed: total((r) => r.completed),
    errors: total((r) => r.errors),
    timeouts: total((r) => r.timeouts),
    non2xx: total((r) => r.non2xx),
    statusCodes,
  };
}

/** The CPU of the round whose req/s is the median one (an even count: the lower middle). */
function rowCpu(samples: readonly Sample[]): RowCpu | undefined {
  const withCpu = samples.filter((s) => s.cpu !== undefined && s.result.completed > 0);
  if (withCpu.length === 0) return undefined;
  const sorted = [...withCpu].sort((a, b) => a.result.requestsPerSecond - b.result.requestsPerSecond);
  const s = sorted[Math.floor((sorted.length - 1) / 2)]!;
  const c = s.cpu!;
  const n = s.result.completed;
  const shares = c.pipeline > 0 ? c.pipelineThreads.map((t) => t / c.pipeline) : [];
  return {
    frontUs: c.front / n,
    pipelineUs: c.pipeline / n,
    otherUs: c.other / n,
    pipelineThreads: c.pipelineThreads.length,
    leastShare: shares.length > 0 ? Math.min(...shares) : undefined,
    mostShare: shares.length > 0 ? Math.max(...shares) : undefined,
    // At the rate autocannon sampled, not over the run's wall time: connecting and draining add wall time without load.
    serverCores: (s.result.requestsPerSecond * (c.front + c.pipeline + c.other)) / n / 1e6,
    loadGeneratorCores: (s.result.requestsPerSecond * (s.loadGeneratorUs ?? 0)) / n / 1e6,
    databaseUs: s.databaseCpu === undefined ? undefined : Object.fromEntries(Object.entries(s.databaseCpu).map(([k, us]) => [k, us / n])),
  };
}

/** Rows in scenario order, the bare row first, then the variants in the order given. */
export function summarize(
  scenarios: readonly Scenario[],
  variants: readonly string[],
  samples: readonly Sample[],
  notes: ReadonlyMap<string, string[]>,
): Row[] {
  const rows: Row[] = [];
  const defaultVariant = variants.find((v) => v !== BARE);
  for (const scenario of scenarios) {
    const of = (variant: string): Sample[] => samples.filter((s) => s.scenario === scenario.name && s.variant === variant);
    const rpsIn = (variant: string, round: number): number | undefined =>
      of(variant).find((s) => s.round === round)?.result.requestsPerSecond;
    for (const variant of variants) {
      const mine = of(variant);
      const rowNotes = notes.get(`${scenario.name}\u0000${variant}`) ?? [];
      if (mine.length === 0 && rowNotes.length === 0 && variant !== BARE && !samples.some((s) => s.variant === variant)) continue;
      const row: Row = { scenario: scenario.name, variant, rounds: mine.length, notes: [...rowNotes] };
      if (mine.length > 0) {
        row.result = sum(mine.map((s) => s.result));
        row.rpsRange = spread(mine.map((s) => s.result.requestsPerSecond));
        row.cpu = rowCpu(mine);
      }
      const against = (base: string): number[] =>
        mine.flatMap((s) => {
          const b = rpsIn(base, s.round);
          return b !== undefined && b > 0 ? [s.result.requestsPerSecond / b] : [];
        });
      if (variant !== BARE) {
        row.targetRatio = scenario.targetRatio;
        row.targetEntitiesPerS = scenario.targetEntitiesPerS;
        const toBare = against(BARE);
        if (toBare.length > 0) [row.ratio, row.ratioRange] = [median(toBare), spread(toBare)];
        if (defaultVariant !== undefined && variant !== defaultVariant) {
          const toDefault = against(defaultVariant);
          if (toDefault.length > 0) [row.vsDefault, row.vsDefaultRange] = [median(toDefault), spread(toDefault)];
        }
      }
      if (scenario.entitiesPerRequest !== undefined && row.result !== undefined)
        row.entitiesPerS = row.result.requestsPerSecond * scenario.entitiesPerRequest;
      rows.push(row);
    }
  }
  return rows;
}

export function rowErrors(row: Row): number | undefined {
  return row.result === undefined ? undefined : failedRequests(row.result);
}

/** A row failed when a request failed, it could not be measured, or setup refused. */
export function rowFailed(row: Row): boolean {
  return row.result === undefined || failedRequests(row.result) > 0;
}

// Truncated, not rounded: a ratio just under its target must not print as the target.
const two = (x: number): string => (Math.floor(x * 100) / 100).toFixed(2);
const twoRange = (r: [number, number] | undefined): string => (r === undefined ? '' : `${two(r[0])}-${two(r[1])}`);

/** The issue's targets of a broker row: each met or MISSED. */
function verdicts(row: Row): string {
  if (row.variant === BARE || row.result === undefined) return '';
  const out: string[] = [];
  if (row.targetRatio !== undefined && row.ratio !== undefined)
    out.push(`ratio >= ${row.targetRatio.toFixed(2)} ${row.ratio >= row.targetRatio ? 'met' : 'MISSED'}`);
  if (row.targetEntitiesPerS !== undefined && row.entitiesPerS !== undefined)
    out.push(
      `>= ${row.targetEntitiesPerS.toLocaleString('en')} entities/s ${row.entitiesPerS >= row.targetEntitiesPerS ? 'met' : 'MISSED'}`,
    );
  out.push(`p99 <= ${P99_TARGET_MS} ms ${row.result.p99Ms <= P99_TARGET_MS ? 'met' : 'MISSED'}`);
  return out.join('; ');
}

const HEAD = [
  'scenario',
  'variant',
  'req/s',
  'req/s range',
  'p99 ms',
  'ratio to bare',
  'ratio range',
  'vs default',
  'entities/s',
  'front µs/req',
  'pipeline µs/req',
  'server cores busy',
  'load generator busy',
  'errors',
  'targets',
];
/** Columns aligned right in the console. */
const NUMERIC = new Set([2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13]);

/** The scenario's name, with its connections where they are not the run's. */
export function scenarioLabel(row: Pick<Row, 'scenario' | 'connections'>): string {
  return row.connections === undefined ? row.scenario : `${row.scenario} (${row.connections} conn.)`;
}

function cells(row: Row): string[] {
  const r = row.result;
  const errors = rowErrors(row);
  const c = row.cpu;
  return [
    scenarioLabel(row),
    row.variant,
    r === undefined ? '-' : Math.round(r.requestsPerSecond).toString(),
    row.rpsRange === undefined ? '' : `${Math.round(row.rpsRange[0])}-${Math.round(row.rpsRange[1])}`,
    r === undefined ? '-' : r.p99Ms.toFixed(1),
    row.variant === BARE ? '1.00' : row.ratio === undefined ? '-' : two(row.ratio),
    twoRange(row.ratioRange),
    row.vsDefault === undefined ? '' : `${two(row.vsDefault)} (${twoRange(row.vsDefaultRange)})`,
    row.entitiesPerS === undefined ? '' : Math.round(row.entitiesPerS).toString(),
    c === undefined ? '' : c.frontUs.toFixed(1),
    c === undefined || row.variant === BARE ? '' : c.pipelineUs.toFixed(1),
    c === undefined ? '' : c.serverCores.toFixed(2),
    c === undefined ? '' : c.loadGeneratorCores.toFixed(2),
    errors === undefined ? 'not run' : errors.toString(),
    verdicts(row),
  ];
}

export function consoleTable(rows: readonly Row[]): string {
  return alignedTable(HEAD, rows.map(cells), NUMERIC);
}

/** Columns padded to their widest cell; `numeric` ones aligned right. */
export function alignedTable(head: readonly string[], lines: readonly string[][], numeric: ReadonlySet<number>): string {
  const all = [head, ...lines];
  const widths = head.map((_, i) => Math.max(...all.map((c) => c[i]!.length)));
  return all
    .map((c) =>
      c
        .map((v, i) => (numeric.has(i) ? v.padStart(widths[i]!) : v.padEnd(widths[i]!)))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

function markdownTable(head: readonly string[], lines: readonly string[][], numeric: ReadonlySet<number>): string {
  return [
    `| ${head.join(' | ')} |`,
    `|${head.map((_, i) => (numeric.has(i) ? '---:' : '---')).join('|')}|`,
    ...lines.map((c) => `| ${c.join(' | ')} |`),
  ].join('\n');
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

const thousands = (x: number): string => Math.round(x).toLocaleString('en');

/** Requests per second `cores` cores carry, by the model: the front is one thread; everything else spreads. */
export function modelled(cpu: Pick<RowCpu, 'frontUs' | 'pipelineUs' | 'otherUs'>, cores: number): number {
  const total = cpu.frontUs + cpu.pipelineUs + cpu.otherUs;
  return Math.min(1e6 / cpu.frontUs, (cores * 1e6) / total);
}

/** Issue 24 item 4: the CPU per request by thread role, and what it says about more cores. */
function ceilingSection(rows: readonly Row[], info: RunInfo, sub: string): string[] {
  const brokerCores = info.placement.pinned ? coreCount(info.placement.servers ?? '') : info.placement.cores;
  const measured = rows.filter((r) => r.variant !== BARE && r.cpu !== undefined && r.cpu.frontUs > 0 && r.result !== undefined);
  if (measured.length === 0) return [];
  const head = [
    'scenario',
    'variant',
    'front µs/req',
    'pipeline µs/req',
    'other threads µs/req',
    'pipeline threads (least-most share)',
    'one front thread carries',
    'front saturates at',
    `model at ${brokerCores} core(s)`,
    'measured',
    'server cores busy',
    'model at 16 cores',
    'model at 64 cores',
  ];
  const lines = measured.map((r) => {
    const c = r.cpu!;
    const total = c.frontUs + c.pipelineUs + c.otherUs;
    const share = c.leastShare === undefined ? '' : ` (${(c.leastShare * 100).toFixed(0)}-${((c.mostShare ?? 0) * 100).toFixed(0)}%)`;
    return [
      r.scenario,
      r.variant,
      c.frontUs.toFixed(1),
      c.pipelineUs.toFixed(1),
      c.otherUs.toFixed(1),
      `${c.pipelineThreads}${share}`,
      `${thousands(1e6 / c.frontUs)} req/s`,
      `${(total / c.frontUs).toFixed(1)} cores`,
      thousands(modelled(c, brokerCores)),
      thousands(r.result!.requestsPerSecond),
      c.serverCores.toFixed(2),
      thousands(modelled(c, 16)),
      thousands(modelled(c, 64)),
    ];
  });
  return [
    `${sub} Where the ceiling is (issue 24 item 4)`,
    '',
    'CPU per request of each thread role of the broker, read from `/proc/<pid>/task/*/stat` (user + system time, 10 ms',
    'ticks) around the measured run of the round with the median req/s, divided by the requests it completed: the',
    'front is the main thread, the pipeline the threads named `ldb-pipeline` (workers/thread-name.ts), other threads',
    "are the notifier, V8's (garbage collection) and libuv's.",
    '',
    'The model: the front is one thread, so the broker never serves more than 1,000,000 / (front µs) req/s whatever the',
    'cores; the rest of the work spreads over the other cores (pipeline threads, one per core by default; garbage',
    'collection), so C cores serve at most C × 1,000,000 / (total µs). The front saturates once C reaches total / front;',
    'past that, more cores add nothing to one broker (more brokers on one store do). `model at N core(s)` against',
    '`measured` says how far the model holds on this machine: measured = server cores busy × 1,000,000 / total µs, so',
    'a server that got less than its cores (`server cores busy`, other work on the machine) falls short of the model by',
    'as much. Two things the model leaves out: the front batches the requests that arrive together for each pipeline',
    'thread, so with more threads its batches are smaller and its µs per request higher (compare the pool4 and pool8',
    'rows of `make bench-ceiling`), which makes the 16- and 64-core figures optimistic; and CPU per request measured on',
    'a busy shared machine is higher than on an idle one (caches, scheduling), which makes them pessimistic.',
    '',
    markdownTable(head, lines, new Set([2, 3, 4, 6, 7, 8, 9, 10, 11, 12])),
    '',
    'With more pipeline threads than cores (`--ceiling`: pool4 and pool8 beside the default pool of one thread per core), a hand-off that',
    "serialised would show as req/s falling with the threads and one thread holding most of the pipeline's CPU; an",
    'even share and req/s flat in the thread count say it does not.',
    '',
  ];
}

/**
 * Issue 17: where a docdb request's CPU goes, the broker's (every thread) beside each database server's behind it, for
 * the rows whose variant names its databases (bench/variants.ts `databases`).
 */
export function databaseLines(rows: readonly Row[]): { head: string[]; lines: string[][] } | undefined {
  const measured = rows.filter((r) => r.cpu?.databaseUs !== undefined && r.result !== undefined);
  if (measured.length === 0) return undefined;
  const names = [...new Set(measured.flatMap((r) => Object.keys(r.cpu!.databaseUs!)))];
  const head = ['scenario', 'variant', 'req/s', 'broker µs/req', ...names.map((n) => `${n} µs/req`), 'broker share'];
  const lines = measured.map((r) => {
    const c = r.cpu!;
    const broker = c.frontUs + c.pipelineUs + c.otherUs;
    const dbs = names.map((n) => c.databaseUs![n]);
    const total = broker + dbs.reduce<number>((a, x) => a + (x ?? 0), 0);
    return [
      scenarioLabel(r),
      r.variant,
      thousands(r.result!.requestsPerSecond),
      broker.toFixed(0),
      ...dbs.map((x) => (x === undefined ? '' : x.toFixed(0))),
      total > 0 ? `${((broker / total) * 100).toFixed(0)}%` : '',
    ];
  });
  return { head, lines };
}

function databaseSection(rows: readonly Row[], sub: string): string[] {
  const t = databaseLines(rows);
  if (t === undefined) return [];
  return [
    `${sub} The broker and its database (issue 17)`,
    '',
    'CPU per request of the broker (all its threads) and of each database server behind it, in the round with the median',
    'req/s: the processes listening on the loopback ports of the variant (bench/database-cpu.ts; PostgreSQL with the',
    'backends its postmaster forked), user + system time from /proc in 10 ms ticks. The database servers are not',
    'pinned: they share the cores with the load generator and the broker.',
    '',
    markdownTable(t.head, t.lines, new Set(t.head.map((_, i) => i).filter((i) => i >= 2))),
    '',
  ];
}

function coreCount(list: string): number {
  let n = 0;
  for (const part of list.split(',')) {
    const [a, b] = part.split('-').map(Number);
    if (a !== undefined && Number.isFinite(a)) n += b !== undefined && Number.isFinite(b) ? b - a + 1 : 1;
  }
  return Math.max(1, n);
}

/** ` (batch-upsert and query-type at 4: every side of their rows)`, or nothing. */
function connectionsText(of: Readonly<Record<string, number>> | undefined): string {
  const by = new Map<number, string[]>();
  for (const [s, n] of Object.entries(of ?? {})) by.set(n, [...(by.get(n) ?? []), s]);
  if (by.size === 0) return '';
  return ` (${[...by].map(([n, ss]) => `${ss.join(' and ')} at ${n}`).join(', ')}: the bare server and every variant alike)`;
}

function loadText(l: readonly number[]): string {
  return l.map((x) => x.toFixed(2)).join(' / ');
}

export function markdownReport(rows: readonly Row[], info: RunInfo, title = 'Benchmark results', level = 1): string {
  const sub = '#'.repeat(level + 1);
  const cpu = cpus();
  const exits = Object.entries(info.exitCodes)
    .map(([v, c]) => `${v} ${c === null ? 'killed' : c}`)
    .join(', ');
  const problems = statusDetail(rows);
  const p = info.placement;
  const minutes = info.endedAt === undefined ? '' : `, ${((info.endedAt.getTime() - info.startedAt.getTime()) / 60_000).toFixed(1)} min`;
  return [
    `${'#'.repeat(level)} ${title}`,
    '',
    'Written by `node dist/bench/run.js` (`make bench`); a run replaces this part of the file and leaves the sections',
    'of the other benchmarks below as they were. Per scenario the bare uWS server (`bench/bare-server.ts`) and each',
    'broker variant are measured in alternated rounds (bare, then each variant, repeated): req/s and p99 are the',
    'medians over the rounds with the req/s range; **ratio to bare is the median of the per-round ratios** (each',
    "variant's req/s over the bare server's in the same round), with their range; `vs default` is the same against the",
    'first variant. The bare server receives the same requests as the brokers (same paths and query strings, same',
    "bodies, the same per-request setup in the load generator) and sends back the first broker's answer to the",
    "scenario's first request (status, headers, body), so a query row's bare server returns as many bytes as the",
    'broker. `server cores busy`: the cores the server used at the measured rate (req/s × its CPU µs per request; 1.00',
    "= one core), `load generator busy` the same of the runner's process: a row whose server is well under its cores",
    'while the load generator is near 1.00 measured the load generator, not the server.',
    '',
    'Caches serve rows that ask the same thing again of data nobody writes during the run: GET by id (retrieve) is',
    "answered from the retrieve cache of rendered bytes (checked against the entity's stored bytes); a query row",
    '(query-type, query-q, query-near) sends one query to a tenant not written during the run, so after its first',
    "request embdb's page cache answers it (the page that query had, kept while its tenant is unwritten) with the same",
    'body bytes as the time before. The `uws-pool-uncached` rows (`--dbPageCache 0`) measure a query read from the',
    "store each time (its index and each entity's stored bytes; entities unchanged since are still not decoded or",
    'rendered again): what a query costs when the page cache cannot answer it, a polled query whose tenant is written',
    'between two polls.',
    '',
    `- date: ${info.startedAt.toISOString()}${minutes}`,
    `- command: \`${info.command}\``,
    `- machine: ${cpu.length} cores (nproc), ${cpu[0]?.model ?? 'unknown CPU'}, ${(totalmem() / 2 ** 30).toFixed(1)} GiB RAM`,
    p.pinned
      ? `- placement: load generator (autocannon, in the runner's process) pinned to core ${p.loadGenerator}, every server to core(s) ${p.servers} (\`taskset\`); a broker sees ${coreCount(p.servers ?? '')} core(s), so its default pool has that many pipeline threads`
      : `- placement: not pinned: load generator and servers share the ${p.cores} core(s)`,
    `- load average (1/5/15 min) at start ${loadText(info.loadAverage.start)}, at end ${info.loadAverage.end === undefined ? '-' : loadText(info.loadAverage.end)}`,
    `- node ${process.version}; autocannon ${info.connections} connections${connectionsText(info.connectionsOf)}; ${info.rounds} alternated rounds of ${info.durationS} s measured after ${info.warmupS} s warm-up per row`,
    `- broker exit codes after SIGTERM: ${exits === '' ? 'none started' : exits}`,
    '',
    '> Other work may share the machine (see the load average): absolute numbers are low and noisy; the ratios to the',
    '> bare server of the same round, and their ranges, are what to compare.',
    '',
    markdownTable(HEAD, rows.map(cells), NUMERIC),
    '',
    `Targets (issue 24, default options): ratio to bare, batch upsert in entities/s, p99 <= ${P99_TARGET_MS} ms at 50 connections on`,
    `every row; shown on every broker row, binding on the first variant (the defaults)${info.connectionsOf === undefined || Object.keys(info.connectionsOf).length === 0 ? '' : ', and only on the rows run at 50 connections'}.`,
    '',
    ...ceilingSection(rows, info, sub),
    ...databaseSection(rows, sub),
    `${sub} Scenarios`,
    '',
    ...info.scenarios.map((s) => `- **${s.name}**: ${s.description}`),
    '',
    `${sub} Broker variants`,
    '',
    '`node dist/src/main.js --port 0 --host 127.0.0.1 --logLevel info` (embdb in RAM) plus:',
    '',
    ...info.variants.map((v) => `- **${v.name}** (\`${v.args.join(' ') || 'no extra arguments'}\`): ${v.description}`),
    '',
    `${sub} Failed requests and notes`,
    '',
    ...(problems.length === 0 ? ['None: every request of every row answered 2xx.'] : problems),
    '',
  ].join('\n');
}

/** The first section marker of another benchmark (results-section.ts): the main report ends where it begins. */
const SECTION_START = /<!-- [\w-]+:begin -->/;

/**
 * Writes the report as the head of `path`, keeping the other benchmarks' sections after it; with `section`, as that
 * marked section instead (--scale, --ceiling: beside the main table, not over it).
 */
export async function writeReport(
  path: string,
  rows: readonly Row[],
  info: RunInfo,
  section?: { name: string; title: string },
): Promise<void> {
  if (section !== undefined) {
    const body = markdownReport(rows, info, section.title, 2);
    writeResultsSection(section.name, `<!-- ${section.name}:begin -->\n${body.trimEnd()}\n<!-- ${section.name}:end -->`, path);
    return;
  }
  const previous = existsSync(path) ? readFileSync(path, 'utf8') : '';
  const at = previous.search(SECTION_START);
  const rest = at < 0 ? '' : previous.slice(at);
  await writeFile(path, markdownReport(rows, info) + (rest === '' ? '' : '\n' + rest));
}
