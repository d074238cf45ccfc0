// Drives autocannon (programmatic API) with the requests a scenario defines and reduces its result to the few
// numbers the report shows. autocannon has no types: its options and result are narrowed here, once.
import { createRequire } from 'node:module';

/** One request shape of a scenario. `next`, when present, gives each request its own path and/or body. */
export interface LoadRequest {
  method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';
  path: string;
  headers?: Record<string, string>;
  body?: string;
  next?: () => { path?: string; body?: string };
}

export interface LoadOptions {
  url: string;
  connections: number;
  durationS: number;
  warmupS: number;
}

export interface LoadResult {
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  completed: number;
  /** Socket errors and timeouts (autocannon `errors`, which counts timeouts too). */
  errors: number;
  timeouts: number;
  non2xx: number;
  statusCodes: Record<string, number>;
}

interface AutocannonRequest {
  method: string;
  path: string;
  headers?: Record<string, string>;
  body?: string;
  setupRequest?: (req: { path: string; body?: string }) => { path: string; body?: string };
}

interface AutocannonResult {
  requests: { average: number; total: number };
  latency: { p50: number; p99: number };
  errors: number;
  timeouts: number;
  non2xx: number;
  statusCodeStats?: Record<string, { count: number }>;
}

type Autocannon = (opts: Record<string, unknown>) => PromiseLike<unknown>;

const autocannon = createRequire(import.meta.url)('autocannon') as Autocannon;

function toAutocannon(r: LoadRequest): AutocannonRequest {
  const out: AutocannonRequest = { method: r.method, path: r.path };
  if (r.headers !== undefined) out.headers = r.headers;
  if (r.body !== undefined) out.body = r.body;
  const next = r.next;
  if (next !== undefined) {
    // autocannon hands a fresh merged copy to setupRequest for every request: filling it in place is safe.
    out.setupRequest = (req) => {
      const v = next();
      if (v.path !== undefined) req.path = v.path;
      if (v.body !== undefined) req.body = v.body;
      return req;
    };
  }
  return out;
}

export async function runLoad(requests: readonly LoadRequest[], opts: LoadOptions): Promise<LoadResult> {
  // autocannon ends a run at its first sample after the duration, one a second by default: a run shorter than a
  // second (the smoke test's) takes ten samples, and its per-sample rate is scaled back to requests per second.
  const sampleMs = opts.durationS >= 1 ? 1000 : Math.max(10, Math.round(opts.durationS * 100));
  const acOpts: Record<string, unknown> = {
    url: opts.url,
    connections: opts.connections,
    duration: opts.durationS,
    sampleInt: sampleMs,
    requests: requests.map(toAutocannon),
  };
  if (opts.warmupS > 0) acOpts.warmup = { connections: opts.connections, duration: opts.warmupS };
  const r = (await autocannon(acOpts)) as AutocannonResult;
  const statusCodes: Record<string, number> = {};
  for (const [code, stat] of Object.entries(r.statusCodeStats ?? {})) statusCodes[code] = stat.count;
  return {
    requestsPerSecond: (r.requests.average * 1000) / sampleMs,
    p50Ms: r.latency.p50,
    p99Ms: r.latency.p99,
    completed: r.requests.total,
    errors: r.errors,
    timeouts: r.timeouts,
    non2xx: r.non2xx,
    statusCodes,
  };
}

/** What the report counts as failed requests: non-2xx answers plus socket errors and timeouts. */
export function failedRequests(r: LoadResult): number {
  return r.errors + r.non2xx;
}
