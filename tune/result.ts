// tune-result.json (seed 001 §2.8): the measured table's rows and the winner. Pure, so the rules are tested alone:
// a combination with failed requests (or a run that could not be measured) never wins, and vsDefault compares with
// `--dbLockPrefer reads` and the system allocator, both with the profile trained on the workload.
import { median } from '../bench/stats.js';
import { profileNodeFlags, profileOptions, type Allocator, type Profile, type RunResult } from './run-once.js';

export interface RowRun {
  rps: number;
  p99us: number;
  notified: number;
  failedRequests: number;
  statusCodes?: Record<string, number>;
  error?: string;
}

export interface TableRow {
  dbLockPrefer: string;
  allocator: string;
  /** Medians of the runs. */
  rps: number;
  p99us: number;
  notifiedPerRun: number;
  /** Over all runs. */
  failedRequests: number;
  vsDefault: number | null;
  runs: RowRun[];
}

export interface Best {
  dbLockPrefer: string;
  allocator: string;
  brokerOptions: Record<string, string | number>;
  /** NODE_OPTIONS (the trained heap sizes) and LD_PRELOAD (empty: the system allocator). */
  env: Record<string, string>;
  rps: number;
  vsDefault: number | null;
}

export interface TuneResult {
  best: Best | null;
  table: TableRow[];
}

export interface Measured {
  lockPrefer: 'reads' | 'writes';
  allocator: Allocator;
  runs: RunResult[];
}

const ratio = (a: number, b: number): number | null => (b > 0 ? Math.round((a / b) * 100) / 100 : null);

/** A row that may win: every run measured and not one failed request. */
export const qualifies = (r: TableRow): boolean => r.failedRequests === 0 && r.runs.every((x) => x.error === undefined) && r.rps > 0;

export function buildResult(measured: readonly Measured[], trained: Record<string, Profile>, docdb = false): TuneResult {
  const rows: TableRow[] = measured.map((m) => ({
    dbLockPrefer: m.lockPrefer,
    allocator: m.allocator.name,
    rps: Math.round(median(m.runs.map((r) => r.rps))),
    p99us: Math.round(median(m.runs.map((r) => r.p99us))),
    notifiedPerRun: Math.round(median(m.runs.map((r) => r.notified))),
    failedRequests: m.runs.reduce((n, r) => n + r.failedRequests, 0),
    vsDefault: null,
    runs: m.runs.map((r) => ({ ...r })),
  }));
  const def = rows.find((r) => r.dbLockPrefer === 'reads' && r.allocator === 'system');
  for (const r of rows) r.vsDefault = def === undefined ? null : ratio(r.rps, def.rps);
  let win: TableRow | undefined;
  for (const r of rows) if (qualifies(r) && (win === undefined || r.rps > win.rps)) win = r;
  if (win === undefined) return { best: null, table: rows };
  const m = measured[rows.indexOf(win)]!;
  const profile = trained[win.dbLockPrefer]!;
  const brokerOptions: Record<string, string | number> = docdb ? {} : { dbLockPrefer: win.dbLockPrefer };
  Object.assign(brokerOptions, profileOptions(profile));
  const env: Record<string, string> = { LD_PRELOAD: m.allocator.library ?? '' };
  const flags = profileNodeFlags(profile);
  if (flags.length > 0) env.NODE_OPTIONS = flags.join(' ');
  return {
    best: { dbLockPrefer: win.dbLockPrefer, allocator: win.allocator, brokerOptions, env, rps: win.rps, vsDefault: win.vsDefault },
    table: rows,
  };
}

/** The one summary line `make tune` prints. */
export function summaryLine(r: TuneResult, file: string): string {
  if (r.best === null) return `tune: no combination ran without failed requests (see ${file})`;
  const b = r.best;
  const opts = Object.entries(b.brokerOptions)
    .map(([k, v]) => `--${k} ${v}`)
    .join(' ');
  const node = b.env.NODE_OPTIONS === undefined ? '' : `, NODE_OPTIONS="${b.env.NODE_OPTIONS}"`;
  const vs = b.vsDefault === null ? '' : ` (${b.vsDefault.toFixed(2)} x reads/system)`;
  return `tune: best ${opts}, allocator ${b.allocator}${node}: ${b.rps} req/s${vs}; written to ${file}`;
}
