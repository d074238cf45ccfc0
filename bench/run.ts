// `make bench` / `make bench-smoke`: the bare uWS server and each broker variant on every scenario, in alternated
// rounds (per scenario: bare, then each variant, --rounds times), and prints (and, outside smoke mode, writes to
// bench/RESULTS.md) the median req/s and p99 of each row, its range over the rounds, the median of the per-round
// ratios to the bare server, and the CPU each thread role of the broker spent per request.
// Exits 1 when any request failed or a row could not be measured, 2 on bad arguments.
import { execFileSync } from 'node:child_process';
import { availableParallelism, loadavg } from 'node:os';
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { REPLY_PATH, type BareReply } from './bare-reply.js';
import { runLoad, type LoadOptions, type LoadRequest, type LoadResult } from './load.js';
import {
  BARE,
  alignedTable,
  consoleTable,
  databaseLines,
  rowFailed,
  summarize,
  writeReport,
  type Placement,
  type RunInfo,
  type Sample,
} from './report.js';
import { scaleVariant } from './scale.js';
import type { BrokerVariant, Scenario } from './scenario.js';
import { scenarios as allScenarios } from './scenarios/index.js';
import { startServer, type ServerProcess } from './server-process.js';
import { databaseSnapshot, databaseSpent, listeningPid, type DatabaseProcess } from './database-cpu.js';
import { cpuSnapshot, cpuSpent } from './thread-cpu.js';
import { DEFAULT_VARIANTS, DOCDB_CONNECTIONS, DOCDB_MAKE_ROWS, DOCDB_VARIANTS, poolOf, variants as allVariants } from './variants.js';

const BARE_SCRIPT = fileURLToPath(new URL('./bare-server.js', import.meta.url));
const BROKER_SCRIPT = fileURLToPath(new URL('../src/main.js', import.meta.url));
// Next to the sources, not in dist/: the results are committed with the harness.
const RESULTS = fileURLToPath(new URL('../../bench/RESULTS.md', import.meta.url));
const BROKER_ARGS = ['--port', '0', '--host', '127.0.0.1', '--logLevel', 'info'];
/** What a row costs beyond its warm-up and measured seconds (connections, CPU readings), for the estimate. */
const ROW_OVERHEAD_S = 0.5;
/** Entities per second a seed is estimated at (batch upserts on a shared 2-core machine). */
const SEED_RATE = 15_000;
/** The pipeline thread counts `--ceiling` adds (more than the cores of this 2-core machine). */
const CEILING_POOLS = [4, 8];

const USAGE = `Usage: node dist/bench/run.js [options]
  --smoke               one round, 3 s per row, no warm-up, default broker variant only; RESULTS.md is not written
  --rounds <n>          alternated rounds per scenario (default 3, smoke 1)
  --duration <s>        measured seconds per row (default 3)
  --warmup <s>          warm-up seconds before each row (default 1, smoke 0)
  --connections <n>     autocannon connections (default 50; with --docdb, ${Object.entries(DOCDB_CONNECTIONS)
    .map(([s, n]) => `${s} ${n}`)
    .join(', ')}: given, every row)
  --only <a,b>          scenarios: ${allScenarios.map((s) => s.name).join(', ')}
  --variants <a,b>      broker variants: ${allVariants.map((v) => v.name).join(', ')} (default ${DEFAULT_VARIANTS.join(', ')})
  --variant <name=args> an ad-hoc variant, e.g. --variant 'pool8=--connectionPoolSize 8' (repeatable; alone, it
                        replaces the table's variants, with --variants it adds to them)
  --baseline <dir>      add 'baseline': the broker built in another checkout (<dir>/dist/src/main.js, e.g. a worktree
                        of an older commit) with default options, measured in the same alternated rounds (A/B)
  --scale               add ${scaleVariant.name}: the defaults holding 1M unrelated entities, 10k unrelated subscriptions
                        and 100 other tenants (make bench-scale)
  --docdb               the docdb rows (${DOCDB_MAKE_ROWS.join(', ')}) on ${DOCDB_VARIANTS.join(', ')} unless --only and
                        --variants say otherwise, into their own section of RESULTS.md (make bench); the query seeds a
                        tenth of its entities
  --ceiling             add ${CEILING_POOLS.map((n) => `pool${n}`).join(', ')}: that many pipeline threads whatever the cores
  --no-pin              do not pin the load generator and the servers to separate cores
  --out <file>          where the Markdown report goes (default bench/RESULTS.md, whose head it replaces, or with
                        --scale/--ceiling a section of it; never in smoke mode)
  --json <file>         also write the rows as JSON
`;

interface Settings {
  smoke: boolean;
  rounds: number;
  load: Omit<LoadOptions, 'url'>;
  /** Scenarios run at other connections than load.connections (every side of their rows alike). */
  connectionsOf: Readonly<Record<string, number>>;
  scenarios: Scenario[];
  variants: BrokerVariant[];
  pin: boolean;
  out: string;
  /** --scale and --ceiling runs write a section of RESULTS.md of their own, beside the main table. */
  section?: { name: string; title: string };
  json?: string;
}

class UsageError extends Error {}

function positive(name: string, text: string | undefined, fallback: number, allowZero = false): number {
  if (text === undefined) return fallback;
  const n = Number(text);
  if (!Number.isFinite(n) || n < 0 || (n === 0 && !allowZero)) throw new UsageError(`--${name}: '${text}' is not a positive number`);
  return n;
}

function pick<T extends { name: string }>(flag: string, table: readonly T[], text: string | undefined, fallback: readonly T[]): T[] {
  if (text === undefined) return [...fallback];
  return text
    .split(',')
    .filter((s) => s !== '')
    .map((name) => {
      const found = table.find((x) => x.name === name);
      if (found === undefined) throw new UsageError(`--${flag}: unknown '${name}' (known: ${table.map((x) => x.name).join(', ')})`);
      return found;
    });
}

/** The defaults of the broker another checkout built: the same rows, rounds and bare server, so a change is an A/B. */
function baselineOf(dir: string): BrokerVariant {
  const script = resolve(dir, 'dist/src/main.js');
  if (!existsSync(script)) throw new UsageError(`--baseline: ${script} does not exist (build that checkout first)`);
  return { name: 'baseline', description: `the defaults of ${dir}`, args: [], script };
}

function adHocVariant(text: string): BrokerVariant {
  const eq = text.indexOf('=');
  const name = eq < 0 ? '' : text.slice(0, eq).trim();
  if (name === '') throw new UsageError(`--variant: '${text}' is not name=args`);
  return {
    name,
    description: 'ad hoc (--variant)',
    args: text
      .slice(eq + 1)
      .split(/\s+/)
      .filter((a) => a !== ''),
  };
}

function settings(argv: string[]): Settings {
  const { values } = parseArgs({
    args: argv,
    options: {
      smoke: { type: 'boolean', default: false },
      rounds: { type: 'string' },
      duration: { type: 'string' },
      warmup: { type: 'string' },
      connections: { type: 'string' },
      only: { type: 'string' },
      variants: { type: 'string' },
      variant: { type: 'string', multiple: true },
      scale: { type: 'boolean', default: false },
      docdb: { type: 'boolean', default: false },
      ceiling: { type: 'boolean', default: false },
      baseline: { type: 'string' },
      'no-pin': { type: 'boolean', default: false },
      out: { type: 'string' },
      json: { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
    },
    strict: true,
  });
  if (values.help === true) {
    process.stdout.write(USAGE);
    process.exit(0);
  }
  const smoke = values.smoke === true;
  const defaults = allVariants.filter((v) => (smoke ? v === allVariants[0] : DEFAULT_VARIANTS.includes(v.name)));
  const docdb = values.docdb === true;
  const variants = [
    ...pick(
      'variants',
      allVariants,
      values.variants ?? (docdb ? DOCDB_VARIANTS.join(',') : undefined),
      values.variant !== undefined ? [] : defaults,
    ),
    ...(values.variant ?? []).map(adHocVariant),
    ...(values.scale === true ? [scaleVariant] : []),
    ...(values.ceiling === true ? CEILING_POOLS.map(poolOf) : []),
    ...(values.baseline !== undefined ? [baselineOf(values.baseline)] : []),
  ];
  if (new Set(variants.map((v) => v.name)).size !== variants.length) throw new UsageError('a variant is named twice');
  return {
    smoke,
    rounds: Math.round(positive('rounds', values.rounds, smoke ? 1 : 3)),
    load: {
      durationS: positive('duration', values.duration, 3),
      warmupS: positive('warmup', values.warmup, smoke ? 0 : 1, true),
      connections: Math.round(positive('connections', values.connections, 50)),
    },
    connectionsOf: docdb && values.connections === undefined ? DOCDB_CONNECTIONS : {},
    scenarios: pick('only', allScenarios, values.only ?? (docdb ? DOCDB_MAKE_ROWS.join(',') : undefined), allScenarios),
    variants,
    pin: values['no-pin'] !== true,
    out: values.out ?? RESULTS,
    section:
      values.out !== undefined || (values.scale !== true && values.ceiling !== true && !docdb)
        ? undefined
        : docdb
          ? { name: 'run-docdb', title: 'docdb beside embdb on FerretDB on PostgreSQL (issue 17: `make bench`, run.js --docdb)' }
          : values.scale === true
            ? { name: 'run-scale', title: 'The same rows beside unrelated data (issue 24 item 3: `make bench-scale`)' }
            : { name: 'run-ceiling', title: 'More pipeline threads than cores (issue 24 item 4: `make bench-ceiling`)' },
    json: values.json,
  };
}

function log(line: string): void {
  process.stdout.write(line + '\n');
}

const message = (e: unknown): string => (e instanceof Error ? e.message : String(e));

/**
 * The load generator (this process: autocannon runs on its main thread) on core 0, the servers on the others, when
 * there are at least two: neither takes CPU from the other, and the ratio compares servers, not schedulers.
 */
function placement(pin: boolean): Placement {
  const cores = availableParallelism();
  if (!pin || cores < 2) return { cores, pinned: false };
  const servers = cores === 2 ? '1' : `1-${cores - 1}`;
  try {
    // -a: every thread of this process (libuv's and V8's too); threads started later inherit it.
    execFileSync('taskset', ['-a', '-p', '-c', '0', String(process.pid)], { stdio: 'ignore' });
  } catch (e) {
    log(`taskset failed (${message(e).split('\n')[0]}): not pinned`);
    return { cores, pinned: false };
  }
  return { cores, pinned: true, loadGenerator: '0', servers };
}

/** The headers a bare server can send back as the broker did (not those uWS writes itself). */
const NOT_MIRRORED = new Set(['date', 'content-length', 'connection', 'keep-alive', 'transfer-encoding', 'uwebsockets']);

/**
 * Sends a scenario's first request to a broker: what a refusal looks like is worth more than a count of non-2xx, and
 * the answer is what the bare server mirrors for the scenario. Twice, the second answer kept: a batch upsert creates
 * (201 and the ids) the first time and replaces (204) ever after, as in the measured runs.
 */
async function probe(url: string, requests: readonly LoadRequest[]): Promise<{ refused?: string; reply?: BareReply }> {
  const once = await probeOnce(url, requests);
  return once.refused !== undefined ? once : probeOnce(url, requests);
}

async function probeOnce(url: string, requests: readonly LoadRequest[]): Promise<{ refused?: string; reply?: BareReply }> {
  const first = requests[0];
  if (first === undefined) return {};
  const over = first.next?.() ?? {};
  const path = over.path ?? first.path;
  const res = await fetch(url + path, { method: first.method, body: over.body ?? first.body, headers: first.headers });
  const body = await res.text();
  if (res.status < 200 || res.status >= 300)
    return { refused: `first request ${first.method} ${path} answered ${res.status}: ${body.slice(0, 400)}` };
  const headers: Array<[string, string]> = [];
  res.headers.forEach((v, k) => {
    if (!NOT_MIRRORED.has(k)) headers.push([k, v]);
  });
  return { reply: { status: `${res.status} ${res.statusText}`, headers, body } };
}

async function mirror(bare: ServerProcess, reply: BareReply | undefined): Promise<void> {
  const res = await fetch(bare.url + REPLY_PATH, { method: 'PUT', body: JSON.stringify(reply ?? null) });
  if (res.status !== 204) throw new Error(`the bare server refused its reply (${res.status})`);
}

/** One measured row of one round: a warm-up run, then the measured run between two readings of the server's CPU. */
async function measureOnce(
  server: ServerProcess,
  scenario: Scenario,
  s: Settings,
  databases: ReadonlyArray<DatabaseProcess & { pid: number }>,
): Promise<{ result: LoadResult } & Partial<Sample>> {
  const url = server.url;
  const load = { ...s.load, connections: s.connectionsOf[scenario.name] ?? s.load.connections };
  if (load.warmupS > 0) await runLoad(scenario.requests(), { ...load, url, durationS: load.warmupS, warmupS: 0 });
  const pid = server.proc.pid!;
  const dbBefore = databases.length > 0 ? databaseSnapshot(databases) : undefined;
  const before = cpuSnapshot(pid);
  const ownBefore = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  const result = await runLoad(scenario.requests(), { ...load, url, warmupS: 0 });
  const wallUs = Number(process.hrtime.bigint() - t0) / 1000;
  const own = process.cpuUsage(ownBefore);
  const after = cpuSnapshot(pid);
  const dbAfter = dbBefore !== undefined ? databaseSnapshot(databases) : undefined;
  return {
    result,
    databaseCpu: dbBefore !== undefined && dbAfter !== undefined ? databaseSpent(dbBefore, dbAfter) : undefined,
    cpu: before !== undefined && after !== undefined ? cpuSpent(before, after) : undefined,
    wallUs,
    loadGeneratorUs: own.user + own.system,
  };
}

interface Side {
  variant: string;
  server?: ServerProcess;
  broker?: BrokerVariant;
  /** The database servers behind it that were found (their listening process). */
  databases?: Array<DatabaseProcess & { pid: number }>;
}

const includes = (v: BrokerVariant | undefined, scenario: Scenario): boolean => v?.only === undefined || v.only.includes(scenario.name);

async function main(): Promise<number> {
  let s: Settings;
  try {
    s = settings(process.argv.slice(2));
  } catch (e) {
    process.stderr.write(`${message(e)}\n${USAGE}`);
    return 2;
  }
  const where = placement(s.pin);
  const info: RunInfo = {
    command: ['node', 'dist/bench/run.js', ...process.argv.slice(2)].join(' '),
    startedAt: new Date(),
    loadAverage: { start: loadavg() },
    rounds: s.rounds,
    durationS: s.load.durationS,
    warmupS: s.load.warmupS,
    connections: s.load.connections,
    connectionsOf: s.connectionsOf,
    scenarios: s.scenarios,
    variants: s.variants,
    placement: where,
    exitCodes: {},
  };
  log(
    `bench: ${s.scenarios.length} scenarios × (bare + ${s.variants.map((v) => v.name).join(', ')}) × ${s.rounds} rounds, ${s.load.connections} connections, ${s.load.durationS} s after ${s.load.warmupS} s warm-up`,
  );
  log(
    where.pinned
      ? `pinned: load generator on core ${where.loadGenerator}, servers on core(s) ${where.servers} (taskset)`
      : `not pinned (${where.cores} core(s)${s.pin ? '' : ', --no-pin'}): load generator and servers share the cores`,
  );
  log(
    `load average at start ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' / ')}`,
  );

  const cores = where.pinned ? where.servers : undefined;
  const bare = await startServer(BARE, BARE_SCRIPT, ['127.0.0.1', '0'], { cores });
  const sides: Side[] = [{ variant: BARE, server: bare }];
  const samples: Sample[] = [];
  const notes = new Map<string, string[]>();
  const note = (scenario: string, variant: string, text: string): void => {
    const key = `${scenario}\u0000${variant}`;
    notes.set(key, [...(notes.get(key) ?? []), text]);
  };

  // Every broker runs from the start to the end, so that each round measures them all side by side; one waiting its
  // turn idles.
  for (const variant of s.variants) {
    try {
      const server = await startServer(variant.name, variant.script ?? BROKER_SCRIPT, [...BROKER_ARGS, ...variant.args], {
        cores,
        env: variant.env,
        nodeFlags: variant.nodeFlags,
      });
      log(`${variant.name} on ${server.url} (${variant.args.join(' ') || 'defaults'})`);
      const databases = (variant.databases ?? []).flatMap((d) => {
        const pid = listeningPid(d.port);
        if (pid === undefined) log(`${variant.name}: no process found listening on port ${d.port} (${d.name}): its CPU is not read`);
        return pid === undefined ? [] : [{ ...d, pid }];
      });
      sides.push({ variant: variant.name, server, broker: variant, databases });
    } catch (e) {
      log(`${variant.name}: ${message(e).split('\n')[0]}`);
      for (const scenario of s.scenarios) note(scenario.name, variant.name, `broker did not start: ${message(e)}`);
      sides.push({ variant: variant.name, broker: variant });
    }
  }

  const rowS = s.load.warmupS + s.load.durationS + ROW_OVERHEAD_S;
  const rowsLeft = (from: number): number =>
    s.scenarios
      .slice(from)
      .reduce((n, sc) => n + s.rounds * sides.filter((x) => x.broker === undefined || includes(x.broker, sc)).length, 0);
  const seedsLeft = (from: number): number =>
    s.scenarios
      .slice(from)
      .reduce((n, sc) => n + (sc.seeds ?? 0) * sides.filter((x) => x.broker !== undefined && includes(x.broker, sc)).length, 0);
  const preloads = sides.reduce((n, x) => n + (x.server === undefined ? 0 : (x.broker?.preloads ?? 0)), 0);
  const leftS = (from: number, rowsDoneHere: number): number => (rowsLeft(from) - rowsDoneHere) * rowS + seedsLeft(from + 1) / SEED_RATE;
  const minutes = (sec: number): string => `${(sec / 60).toFixed(1)} min`;
  log(
    `estimated total: ${minutes(rowsLeft(0) * rowS + (seedsLeft(0) + preloads) / SEED_RATE)} (${rowsLeft(0)} rows of about ${rowS.toFixed(1)} s, ${(seedsLeft(0) + preloads).toLocaleString('en')} entities to seed at about ${SEED_RATE.toLocaleString('en')}/s)`,
  );

  for (const side of sides) {
    if (side.server === undefined || side.broker?.preload === undefined) continue;
    try {
      await side.broker.preload(side.server.url, log);
    } catch (e) {
      for (const scenario of s.scenarios) note(scenario.name, side.variant, `preload failed: ${message(e)}`);
      log(`${side.variant}: preload failed: ${message(e)}`);
    }
  }

  let row = 0;
  const total = rowsLeft(0);
  for (const [i, scenario] of s.scenarios.entries()) {
    const here = sides.filter((x) => x.broker === undefined || includes(x.broker, scenario));
    let reply: BareReply | undefined;
    for (const side of here) {
      if (side.broker === undefined || side.server === undefined) continue;
      try {
        const t0 = Date.now();
        await scenario.setup?.(side.server.url);
        if (Date.now() - t0 > 2000) log(`  ${scenario.name}: ${side.variant} seeded in ${((Date.now() - t0) / 1000).toFixed(0)} s`);
        const answer = await probe(side.server.url, scenario.requests());
        if (answer.refused !== undefined) note(scenario.name, side.variant, answer.refused);
        reply ??= answer.reply;
      } catch (e) {
        note(scenario.name, side.variant, message(e));
      }
    }
    // The bare server answers what the first broker answered to the same first request (size, status, headers).
    await mirror(bare, reply);
    if (reply === undefined) note(scenario.name, BARE, 'no broker answered the first request: the bare server sent its default answer');
    let doneHere = 0;
    for (let round = 0; round < s.rounds; round++) {
      for (const side of here) {
        row++;
        doneHere++;
        if (side.server === undefined) continue;
        const label = `[${row}/${total}] ${scenario.name} ${side.variant} round ${round + 1}/${s.rounds}`;
        try {
          const sample = await measureOnce(side.server, scenario, s, side.databases ?? []);
          samples.push({ scenario: scenario.name, variant: side.variant, round, ...sample });
          const r = sample.result;
          log(
            `  ${label}: ${Math.round(r.requestsPerSecond)} req/s, p99 ${r.p99Ms} ms, ${r.errors + r.non2xx} errors; about ${minutes(leftS(i, doneHere))} left`,
          );
        } catch (e) {
          note(scenario.name, side.variant, `round ${round + 1}: ${message(e)}`);
          log(`  ${label}: ${message(e).split('\n')[0]}`);
        }
        const p = side.server.proc;
        if (p.exitCode !== null || p.signalCode !== null) {
          note(
            scenario.name,
            side.variant,
            `${side.variant} died (exit ${p.exitCode ?? p.signalCode}); last output:\n${side.server.tail()}`,
          );
          side.server = undefined;
        }
      }
    }
  }

  for (const side of sides) {
    if (side.broker === undefined) continue;
    if (side.server !== undefined) {
      info.exitCodes[side.variant] = await side.server.stop();
      if (info.exitCodes[side.variant] !== 0)
        log(`${side.variant} exited with ${info.exitCodes[side.variant]} after SIGTERM (0 expected)\n${side.server.tail()}`);
    } else info.exitCodes[side.variant] = null;
    await side.broker.cleanup?.().catch((e: unknown) => log(`${side.variant}: cleanup failed: ${message(e)}`));
  }
  await bare.stop();
  info.loadAverage.end = loadavg();
  info.endedAt = new Date();
  log(`load average at end ${info.loadAverage.end.map((l) => l.toFixed(2)).join(' / ')}`);

  // A variant that runs only some scenarios (its `only`: uws-pool-uncached, the query rows) has no row of the others:
  // not a row left unmeasured.
  const rows = summarize(
    s.scenarios,
    sides.map((x) => x.variant),
    samples,
    notes,
  ).filter((row) => {
    const scenario = s.scenarios.find((x) => x.name === row.scenario);
    return scenario === undefined || includes(sides.find((x) => x.variant === row.variant)?.broker, scenario);
  });
  for (const row of rows) row.connections = s.connectionsOf[row.scenario];
  log('');
  log(consoleTable(rows));
  const db = databaseLines(rows);
  if (db !== undefined) log('\n' + alignedTable(db.head, db.lines, new Set([2, 3, 4, 5, 6])));
  if (!s.smoke) {
    await writeReport(s.out, rows, info, s.section);
    log(`\nwritten to ${s.out}`);
  }
  if (s.json !== undefined)
    await writeFile(
      s.json,
      JSON.stringify(
        { info: { ...info, scenarios: s.scenarios.map((x) => x.name), variants: s.variants.map((v) => v.name) }, rows },
        null,
        2,
      ),
    );

  const failed = rows.filter(rowFailed);
  const badExits = Object.entries(info.exitCodes).filter(([, code]) => code !== 0);
  if (failed.length > 0)
    log(`\n${failed.length} row(s) with failed requests or not measured: ${failed.map((r) => `${r.scenario}/${r.variant}`).join(', ')}`);
  if (badExits.length > 0) log(`broker variant(s) not exiting 0 after SIGTERM: ${badExits.map(([v, c]) => `${v} (${c})`).join(', ')}`);
  return failed.length > 0 || badExits.length > 0 ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (e: unknown) => {
    process.stderr.write(`bench: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
    process.exit(1);
  },
);
