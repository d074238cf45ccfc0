// `make bench` / `make bench-smoke`: measures the bare uWS server, then each broker variant, on every scenario,
// and prints (and, outside smoke mode, writes to bench/RESULTS.md) req/s, p99 and the ratio to bare.
// Exits 1 when any request failed or a row could not be measured, 2 on bad arguments.
import { loadavg } from 'node:os';
import { writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { runLoad, type LoadOptions, type LoadRequest } from './load.js';
import { send } from './ngsi-client.js';
import { BARE, BARE_END, consoleTable, rowFailed, writeReport, type Row, type RunInfo } from './report.js';
import type { BrokerVariant, Scenario } from './scenario.js';
import { scenarios as allScenarios } from './scenarios/index.js';
import { startServer, type ServerProcess } from './server-process.js';
import { variants as allVariants } from './variants.js';

const BARE_SCRIPT = fileURLToPath(new URL('./bare-server.js', import.meta.url));
const BROKER_SCRIPT = fileURLToPath(new URL('../src/main.js', import.meta.url));
// Next to the sources, not in dist/: the results are committed with the harness.
const RESULTS = fileURLToPath(new URL('../../bench/RESULTS.md', import.meta.url));
const BROKER_ARGS = ['--port', '0', '--host', '127.0.0.1', '--logLevel', 'info'];

const USAGE = `Usage: node dist/bench/run.js [options]
  --smoke               3 s per row, no warm-up, default broker variant only; RESULTS.md is not written
  --duration <s>        measured seconds per row (default 10, smoke 3)
  --warmup <s>          warm-up seconds before each row (default 2, smoke 0)
  --connections <n>     autocannon connections (default 50)
  --only <a,b>          scenarios: ${allScenarios.map((s) => s.name).join(', ')}
  --variants <a,b>      broker variants: ${allVariants.map((v) => v.name).join(', ')}
  --variant <name=args> an ad-hoc variant, e.g. --variant 'pool8=--connectionPoolSize 8' (repeatable; alone, it
                        replaces the table's variants, with --variants it adds to them)
  --out <file>          where the Markdown report goes (default bench/RESULTS.md; never in smoke mode)
  --json <file>         also write the rows as JSON
`;

interface Settings {
  smoke: boolean;
  load: Omit<LoadOptions, 'url'>;
  scenarios: Scenario[];
  variants: BrokerVariant[];
  out: string;
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
      duration: { type: 'string' },
      warmup: { type: 'string' },
      connections: { type: 'string' },
      only: { type: 'string' },
      variants: { type: 'string' },
      variant: { type: 'string', multiple: true },
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
  return {
    smoke,
    load: {
      durationS: positive('duration', values.duration, smoke ? 3 : 10),
      warmupS: positive('warmup', values.warmup, smoke ? 0 : 2, true),
      connections: Math.round(positive('connections', values.connections, 50)),
    },
    scenarios: pick('only', allScenarios, values.only, allScenarios),
    variants: [
      ...pick('variants', allVariants, values.variants, values.variant !== undefined ? [] : smoke ? allVariants.slice(0, 1) : allVariants),
      ...(values.variant ?? []).map(adHocVariant),
    ],
    out: values.out ?? RESULTS,
    json: values.json,
  };
}

function log(line: string): void {
  process.stdout.write(line + '\n');
}

/** Sends a scenario's first request once: what a refusal looks like is worth more than a count of non-2xx. */
async function probe(url: string, requests: readonly LoadRequest[]): Promise<string | undefined> {
  const first = requests[0];
  if (first === undefined) return undefined;
  const over = first.next?.() ?? {};
  const path = over.path ?? first.path;
  const a = await send(url, first.method, path, over.body ?? first.body, first.headers);
  if (a.status >= 200 && a.status < 300) return undefined;
  return `first request ${first.method} ${path} answered ${a.status}: ${a.body.slice(0, 400)}`;
}

function ratio(row: Row, ...baselines: (Row | undefined)[]): number | undefined {
  const measured = baselines.map((b) => b?.result?.requestsPerSecond).filter((v): v is number => v !== undefined && v > 0);
  if (row.result === undefined || measured.length === 0) return undefined;
  return row.result.requestsPerSecond / (measured.reduce((a, b) => a + b, 0) / measured.length);
}

/** A broker row seeds and probes first; `baseline` is the bare row its ratio is taken to. */
async function measure(
  server: ServerProcess,
  variant: string,
  scenario: Scenario,
  s: Settings,
  broker: boolean,
  baseline?: Row,
): Promise<Row> {
  const row: Row = { scenario: scenario.name, variant, notes: [], targetRatio: broker ? scenario.targetRatio : undefined };
  try {
    if (broker) await scenario.setup?.(server.url);
    const requests = scenario.requests();
    if (broker) {
      const refused = await probe(server.url, requests);
      if (refused !== undefined) row.notes.push(refused);
    }
    row.result = await runLoad(requests, { ...s.load, url: server.url });
    row.ratio = ratio(row, baseline);
  } catch (e) {
    row.notes.push(e instanceof Error ? e.message : String(e));
  }
  if (server.proc.exitCode !== null || server.proc.signalCode !== null) {
    row.notes.push(`${server.name} died (exit ${server.proc.exitCode ?? server.proc.signalCode}); last output:\n${server.tail()}`);
  }
  const r = row.result;
  log(
    `  ${scenario.name.padEnd(14)} ${variant.padEnd(13)} ${r === undefined ? 'not measured' : `${Math.round(r.requestsPerSecond)} req/s, p99 ${r.p99Ms} ms, ${r.errors + r.non2xx} errors`}${row.ratio === undefined ? '' : `, ratio ${row.ratio.toFixed(3)} (to the first bare row)`}`,
  );
  for (const note of row.notes) log(`    ${note.split('\n')[0]}`);
  return row;
}

async function main(): Promise<number> {
  let s: Settings;
  try {
    s = settings(process.argv.slice(2));
  } catch (e) {
    process.stderr.write(`${e instanceof Error ? e.message : String(e)}\n${USAGE}`);
    return 2;
  }
  const info: RunInfo = {
    command: ['node', 'dist/bench/run.js', ...process.argv.slice(2)].join(' '),
    startedAt: new Date(),
    loadAverage: { start: loadavg() },
    durationS: s.load.durationS,
    warmupS: s.load.warmupS,
    connections: s.load.connections,
    scenarios: s.scenarios,
    variants: s.variants,
    exitCodes: {},
  };
  log(
    `bench: ${s.scenarios.length} scenarios × (bare + ${s.variants.map((v) => v.name).join(', ')}), ${s.load.connections} connections, ${s.load.durationS} s after ${s.load.warmupS} s warm-up`,
  );

  const rows: Row[] = [];
  const bareRows = new Map<string, Row>();
  // The bare server idles while the brokers run and is measured again at the end: on a shared machine the
  // drift between the two says how far the ratios can be trusted.
  const bare = await startServer(BARE, BARE_SCRIPT, ['127.0.0.1', '0']);
  log(`${BARE} on ${bare.url}`);
  for (const scenario of s.scenarios) {
    const row = await measure(bare, BARE, scenario, s, false);
    bareRows.set(scenario.name, row);
    rows.push(row);
  }

  for (const variant of s.variants) {
    let broker: ServerProcess;
    try {
      broker = await startServer(variant.name, BROKER_SCRIPT, [...BROKER_ARGS, ...variant.args]);
    } catch (e) {
      const message = e instanceof Error ? e.message : String(e);
      log(`${variant.name}: ${message}`);
      for (const scenario of s.scenarios)
        rows.push({ scenario: scenario.name, variant: variant.name, notes: [`broker did not start: ${message}`] });
      continue;
    }
    log(`${variant.name} on ${broker.url} (${variant.args.join(' ') || 'defaults'})`);
    for (const scenario of s.scenarios) {
      if (variant.only !== undefined && !variant.only.includes(scenario.name)) continue;
      rows.push(await measure(broker, variant.name, scenario, s, true, bareRows.get(scenario.name)));
    }
    info.exitCodes[variant.name] = await broker.stop();
    await variant.cleanup?.().catch((e: unknown) => log(`${variant.name}: cleanup failed: ${e instanceof Error ? e.message : String(e)}`));
    if (info.exitCodes[variant.name] !== 0)
      log(`${variant.name} exited with ${info.exitCodes[variant.name]} after SIGTERM (0 expected)\n${broker.tail()}`);
  }

  if (!s.smoke && s.variants.length > 0) {
    log(`${BARE_END}: the baseline again`);
    for (const scenario of s.scenarios) {
      const start = bareRows.get(scenario.name);
      const end = await measure(bare, BARE_END, scenario, s, false, start);
      rows.push(end);
      for (const row of rows)
        if (row.scenario === scenario.name && row.variant !== BARE && row.variant !== BARE_END) row.ratio = ratio(row, start, end);
    }
  }
  await bare.stop();
  info.loadAverage.end = loadavg();

  // The table is ordered by scenario so each broker row sits under its baseline.
  const order = new Map(s.scenarios.map((x, i) => [x.name, i]));
  rows.sort((a, b) => order.get(a.scenario)! - order.get(b.scenario)!);
  log('');
  log(consoleTable(rows));
  if (!s.smoke) {
    await writeReport(s.out, rows, info);
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
