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
    if (!(AGGR_METHODS as readonly string[]).includes(m)) throw badRequest(`aggrMethods: '${m.slice(0, 40)}' is not one of ${AGGR_METHODS.join(', ')}`);
    if (!out.includes(m as AggrMethod)) out.push(m as AggrMethod);
  }
  return out;
}

/** aggrPeriodDuration; absent means the whole range (PT0S). */
export function parseAggrPeriod(text: string | undefined): Duration | undefined {
  if (text === undefined) return undefined;
  const d = parseDuration(text);
  if (d === undefined) throw badRequest(`aggrPeriodDuration: '${text.slice(0, 40)}' is not an ISO 8601 duration`);
  return isZeroDuration(d) ? undefined : d;
}

export interface Sample {
  value: unknown;
  /** ms on the time property */
  t: number;
}

export type Triple = [unknown, string, string];

/**
 * Aggregates samples (in time order) over periods starting at `from` (else the first sample) and stepping by
 * `period` (undefined: one period up to `to`, else to the last sample). Periods without samples are left out.
 */
export function aggregate(samples: readonly Sample[], methods: readonly AggrMethod[], period: Duration | undefined,
  from: number | undefined, to: number | undefined): Record<AggrMethod, Triple[]> {
  const out = {} as Record<AggrMethod, Triple[]>;
  for (const m of methods) out[m] = [];
  if (samples.length === 0) return out;
  const first = from ?? samples[0]!.t;
  const last = to ?? samples[samples.length - 1]!.t + 1;
  let i = 0;
  let start = first;
  while (i < samples.length && start < last) {
    const end = period === undefined ? last : Math.min(addDuration(start, period), last);
    if (end <= start) break;
    const inPeriod: unknown[] = [];
    while (i < samples.length && samples[i]!.t < end) {
      if (samples[i]!.t >= start) inPeriod.push(samples[i]!.value);
      i++;
    }
    if (inPeriod.length > 0) {
      const s = new Date(start).toISOString();
      const e = new Date(end).toISOString();
      for (const m of methods) {
        const r = apply(m, inPeriod);
        if (r !== undefined) out[m].push([r, s, e]);
      }
    }
    start = end;
  }
  return out;
}

function apply(method: AggrMethod, values: readonly unknown[]): unknown {
  if (method === 'totalCount') return values.length;
  if (method === 'distinctCount') return new Set(values.map((v) => (typeof v === 'object' ? JSON.stringify(v) : `${typeof v}:${String(v)}`))).size;
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
    case 'sum': return nums.reduce((a, b) => a + b, 0);
    case 'avg': return nums.reduce((a, b) => a + b, 0) / nums.length;
    case 'min': return Math.min(...nums);
    case 'max': return Math.max(...nums);
    case 'sumsq': return nums.reduce((a, b) => a + b * b, 0);
    case 'stddev': {
      // Sample standard deviation (n - 1), 0 for a single value.
      if (nums.length < 2) return 0;
      const mean = nums.reduce((a, b) => a + b, 0) / nums.length;
      return Math.sqrt(nums.reduce((a, b) => a + (b - mean) ** 2, 0) / (nums.length - 1));
    }
  }
}
