// Aggregated temporal representation (CIM 009 v1.8 §4.5.19): per attribute, each asked method over periods of
// aggrPeriodDuration, as [result, periodStart, periodEnd] triples. Pure: instances in, JSON-ready arrays out.
import { badRequest } from '../problem.js';
import { addDuration, isZeroDuration, parseDuration, type Duration } from './duration.js';

export const AGGR_METHODS = ['totalCount', 'distinctCount', 'sum', 'avg', 'min', 'max', 'stddev', 'sumsq'] as const;
export type AggrMethod = (typeof AGGR_METHODS)[number];

export function parseAggrMethods(text: string | undefined): AggrMethod[] {
  if (text === undefined || text.trim() === '') throw badRequest('aggregatedValues needs aggrMethods');
  const out: AggrMethod[] = [];
  for (const raw of text.split(',')) {
    const m = raw.trim();
    if (!(AGGR_METHODS as readonly string[]).includes(m))
      throw badRequest(`aggrMethods: '${m.slice(0, 40)}' is not one of ${AGGR_METHODS.join(', ')}`);
    if (!out.includes(m as AggrMethod)) out.push(m as AggrMethod);
  }
  return out;
}

/** aggrPeriodDuration; absent means the whole range (PT0S). */
export function parseAggrPeriod(text: string | undefined): Duration | undefined {
  if (text === undefined) return undefined;
  const d = parseDuration(text);
  if (d === undefined) throw badRequest(`aggrPeriodDuration: '${text.slice(0, 40)}' is not an ISO 8601 duration`);
  if (isZeroDuration(d)) return undefined;
  // Instants are milliseconds: a shorter period would never move on.
  if (addDuration(0, d) < 1) throw badRequest(`aggrPeriodDuration: '${text.slice(0, 40)}' is shorter than a millisecond`);
  return d;
}

export interface Sample {
  value: unknown;
  /** ms on the time property */
  t: number;
}

export type Triple = [unknown, string, string];

/**
 * A period bound as the instance times it is computed from are written: to the second, with a fraction only when
 * the bound has one (`2020-08-01T12:03:00Z`, `2020-08-01T12:03:00.250Z`); both are ISO 8601 UTC date-times.
 */
export function periodBound(ms: number): string {
  const text = new Date(ms).toISOString();
  return text.endsWith('.000Z') ? `${text.slice(0, -5)}Z` : text;
}

/**
 * Aggregates samples (in time order) over periods starting at `from` (else the first sample) and stepping by
 * `period`. Each period spans one `period` (§4.5.19), the last one included; only the asked range's end `to`, when
 * there is one, cuts it. Without `period`, one period spans the asked range (to just after the last sample without
 * `to`). Periods without samples are left out, and skipped without stepping through them one by one.
 */
export function aggregate(
  samples: readonly Sample[],
  methods: readonly AggrMethod[],
  period: Duration | undefined,
  from: number | undefined,
  to: number | undefined,
): Record<AggrMethod, Triple[]> {
  const out = {} as Record<AggrMethod, Triple[]>;
  for (const m of methods) out[m] = [];
  if (samples.length === 0) return out;
  const first = from ?? samples[0]!.t;
  const end = to ?? samples[samples.length - 1]!.t + 1;
  // A fixed period (no years or months) locates the one holding a sample by division; a calendar one steps.
  const fixedMs = period !== undefined && period.years === 0 && period.months === 0 ? addDuration(0, period) : undefined;
  let i = 0;
  let start = first;
  while (i < samples.length && samples[i]!.t < first) i++;
  while (i < samples.length && samples[i]!.t < end) {
    const t = samples[i]!.t;
    let stop: number;
    if (period === undefined) {
      stop = end;
    } else if (fixedMs !== undefined) {
      start = first + Math.floor((t - first) / fixedMs) * fixedMs;
      stop = start + fixedMs;
    } else {
      for (stop = addDuration(start, period); stop <= t; stop = addDuration(start, period)) start = stop;
    }
    if (to !== undefined && stop > to) stop = to;
    const inPeriod: unknown[] = [];
    for (; i < samples.length && samples[i]!.t < stop; i++) inPeriod.push(samples[i]!.value);
    const s = periodBound(start);
    const e = periodBound(stop);
    for (const m of methods) {
      const r = apply(m, inPeriod);
      if (r !== undefined) out[m].push([r, s, e]);
    }
    start = stop;
  }
  return out;
}

function apply(method: AggrMethod, values: readonly unknown[]): unknown {
  if (method === 'totalCount') return values.length;
  if (method === 'distinctCount')
    return new Set(values.map((v) => (typeof v === 'object' ? JSON.stringify(v) : `${typeof v}:${String(v)}`))).size;
  const nums: number[] = [];
  for (const v of values) if (typeof v === 'number' && Number.isFinite(v)) nums.push(v);
  if (nums.length === 0) {
    // min and max also order strings (dates, codes); the arithmetic methods need numbers.
    if (method !== 'min' && method !== 'max') return undefined;
    const strs = values.filter((v): v is string => typeof v === 'string');
    if (strs.length === 0) return undefined;
    return strs.reduce((a, b) => ((method === 'min' ? b < a : b > a) ? b : a));
  }
  switch (method) {
    case 'sum':
      return nums.reduce((a, b) => a + b, 0);
    case 'avg':
      return nums.reduce((a, b) => a + b, 0) / nums.length;
    case 'min':
      return Math.min(...nums);
    case 'max':
      return Math.max(...nums);
    case 'sumsq':
      return nums.reduce((a, b) => a + b * b, 0);
    case 'stddev': {
      // Sample standard deviation (n - 1), 0 for a single value.
      if (nums.length < 2) return 0;
      const mean = nums.reduce((a, b) => a + b, 0) / nums.length;
      return Math.sqrt(nums.reduce((a, b) => a + (b - mean) ** 2, 0) / (nums.length - 1));
    }
  }
}
