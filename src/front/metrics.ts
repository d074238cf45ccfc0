// GET /metrics on the health port (README "Metrics"): the Prometheus text format, written by prom-client from the
// numbers the broker keeps anyway: the front's request counts, the runner's latency arrays and pool, the notifier's
// per-host counts (one message per scrape), the store's cached sizes and the history's lag. The registry is made at
// the first scrape (which waits for the store's first sizes); nothing here runs per request.
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { MetricObjectWithValues, MetricType, MetricValueWithName } from 'prom-client';
import { LdOp } from '../ngsild/operations.js';
import { LATENCY_BOUNDS_MS, OP_SLOTS, type OpHistogram, type OpLatency } from '../pipeline/op-latency.js';
import type { PipelineRunner } from '../pipeline/runner.js';
import type { RequestCounts } from './request-counts.js';
import type { StoreSizesCache } from './store-sizes.js';
import type { History } from '../history/contract.js';

/** [host, sent, failed, queued], as the notifier thread counts them (src/notify/host-counts.ts). */
export type NotificationHostRow = [string, number, number, number];

export interface MetricSources {
  counts?: RequestCounts;
  runner?: PipelineRunner;
  sizes?: StoreSizesCache;
  history?: History;
  notificationHosts?: () => Promise<NotificationHostRow[]>;
}

/** The operation label: the catalog's name, `none` for a request no operation serves (404, 405, a bad head). */
export const operationLabel = (op: number): string => (op === LdOp.None ? 'none' : (LdOp[op] ?? 'none'));

export const METRICS_CONTENT_TYPE = Registry.PROMETHEUS_CONTENT_TYPE;

export async function metricsRegistry(src: MetricSources): Promise<Registry> {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });

  new Counter({
    name: 'ldbroker_requests_total',
    help: 'Requests answered, by operation (the LdOp catalog name; none: no route) and HTTP status',
    labelNames: ['operation', 'status'],
    registers: [registry],
    collect() {
      this.reset();
      src.counts?.each((op, status, n) => this.inc({ operation: operationLabel(op), status: String(status) }, n));
    },
  });
  const latency = src.runner?.latency;
  if (latency !== undefined) {
    registry.registerMetric(
      new ArrayHistogram(
        'ldbroker_request_wait_seconds',
        'Front wait per operation: from the hand-off to the pipeline until its result is back, less the run (queue, thread hand-offs)',
        latency.wait,
      ),
    );
    registry.registerMetric(
      new ArrayHistogram('ldbroker_request_run_seconds', 'Pipeline run per operation, measured on the thread that ran it', latency.run),
    );
  }
  const pool = (name: string, help: string, read: (s: ReturnType<PipelineRunner['stats']>) => number): void => {
    new Gauge({
      name,
      help,
      registers: [registry],
      collect() {
        if (src.runner !== undefined) this.set(read(src.runner.stats()));
      },
    });
  };
  pool('ldbroker_pool_threads', 'Pipeline threads (0: the pipeline runs on the front thread)', (s) => s.threads);
  pool('ldbroker_pool_queue_length', 'Requests handed to the pool and not yet taken by a thread', (s) => s.queued);
  pool('ldbroker_pool_in_flight', 'Requests handed to the pipeline and not answered yet', (s) => s.inFlight);
  pool('ldbroker_pool_utilization', "The pool threads' busy share since start, 0 to 1 (Piscina's utilization)", (s) => s.utilization);
  const poolCounter = (name: string, help: string, read: (s: ReturnType<PipelineRunner['stats']>) => number): void => {
    new Counter({
      name,
      help,
      registers: [registry],
      collect() {
        this.reset();
        if (src.runner !== undefined) this.inc(read(src.runner.stats()));
      },
    });
  };
  poolCounter(
    'ldbroker_requests_abandoned_total',
    'Requests handed to the pool whose client went away before their answer',
    (s) => s.abandoned,
  );
  poolCounter(
    'ldbroker_requests_skipped_total',
    'Requests the pool did not run: cancelled (client gone, or past --requestTimeout) before a thread started them',
    (s) => s.skipped,
  );
  poolCounter(
    'ldbroker_requests_expired_total',
    'Requests answered 503 at --requestTimeout (the pool got no answer in time; a late one is dropped)',
    (s) => s.expired,
  );

  if (src.notificationHosts !== undefined) {
    const ask = src.notificationHosts;
    // The registry collects every series of a scrape at once: the three of one host share one question to the notifier.
    let asking: Promise<NotificationHostRow[]> | undefined;
    const hostRows = (): Promise<NotificationHostRow[]> =>
      (asking ??= ask().finally(() => {
        asking = undefined;
      }));
    const hostCounter = (name: string, help: string, column: 1 | 2): void => {
      new Counter({
        name,
        help,
        labelNames: ['host'],
        registers: [registry],
        async collect() {
          const rows = await hostRows();
          this.reset();
          for (const r of rows) this.inc({ host: r[0] }, r[column]);
        },
      });
    };
    hostCounter(
      'ldbroker_notifications_sent_total',
      'Notification requests sent, by endpoint host (host and port only; <other> past 1000 hosts)',
      1,
    );
    hostCounter(
      'ldbroker_notifications_failed_total',
      'Notifications failed (error answer, no answer, or dropped by a queue limit), by endpoint host',
      2,
    );
    new Gauge({
      name: 'ldbroker_notifications_queued',
      help: 'Notifications waiting or in flight, by endpoint host',
      labelNames: ['host'],
      registers: [registry],
      async collect() {
        const rows = await hostRows();
        this.reset();
        for (const r of rows) this.set({ host: r[0] }, r[3]);
      },
    });
  }

  if (src.sizes !== undefined) {
    const sizes = src.sizes;
    new Gauge({
      name: 'ldbroker_store_entities',
      help: 'Entities per tenant (<default>: the default tenant; <other>: past 1000 tenants), counted at most once a minute',
      labelNames: ['tenant'],
      registers: [registry],
      async collect() {
        const s = await sizes.read();
        this.reset();
        for (const [tenant, n] of s?.entities ?? []) this.set({ tenant }, n);
      },
    });
    // Only where the store knows its size (embdb): a gauge without labels would otherwise show a false 0.
    if ((await sizes.read())?.bytes !== undefined)
      new Gauge({
        name: 'ldbroker_store_size_bytes',
        help: "Bytes the store's data takes (embdb: the pages in use), read with the entity counts",
        registers: [registry],
        async collect() {
          const bytes = (await sizes.read())?.bytes;
          this.reset();
          if (bytes !== undefined) this.set(bytes);
        },
      });
  }

  const history = src.history;
  if (history?.lag !== undefined) {
    new Gauge({
      name: 'ldbroker_history_lag_rows',
      help: 'Rows handed to the history beside the store and not yet written in it',
      registers: [registry],
      collect() {
        this.set(history.lag!().rows);
      },
    });
    new Gauge({
      name: 'ldbroker_history_lag_seconds',
      help: 'Age of the oldest row not yet written in the history beside the store (0: none waits)',
      registers: [registry],
      collect() {
        this.set(history.lag!().seconds);
      },
    });
    // A counter: rows the history's database refused (a line QuestDB cannot take) are dropped, the others written.
    new Counter({
      name: 'ldbroker_history_rows_refused_total',
      help: 'History rows the database beside the store refused and that were dropped (the log has a warn line each)',
      registers: [registry],
      collect() {
        this.reset();
        this.inc(history.lag!().refused ?? 0);
      },
    });
  }
  return registry;
}

/** p50 and p99 per operation in milliseconds (front wait plus run), for /health: operations with requests only. */
export function latencyQuantiles(latency: OpLatency | undefined): Record<string, { count: number; p50Ms: number; p99Ms: number }> {
  const out: Record<string, { count: number; p50Ms: number; p99Ms: number }> = {};
  if (latency === undefined) return out;
  const total = latency.total;
  for (let op = 0; op < OP_SLOTS; op++) {
    if (total.totals[op] === 0) continue;
    out[operationLabel(op)] = { count: total.totals[op]!, p50Ms: round(total.quantile(op, 0.5)!), p99Ms: round(total.quantile(op, 0.99)!) };
  }
  return out;
}

const round = (ms: number): number => Math.round(ms * 1000) / 1000;

type Value = MetricValueWithName<string>;

/**
 * A prom-client histogram whose numbers are the runner's arrays (op-latency.ts) rather than its own observe(): the
 * request path increments a typed array and never hashes labels. What it exports is what a Histogram exports.
 */
class ArrayHistogram extends Histogram<string> {
  constructor(
    private readonly metricName: string,
    private readonly metricHelp: string,
    private readonly source: OpHistogram,
  ) {
    super({
      name: metricName,
      help: metricHelp,
      labelNames: ['operation'],
      buckets: LATENCY_BOUNDS_MS.map((ms) => ms / 1000),
      registers: [],
    });
  }

  override async get(): Promise<MetricObjectWithValues<Value>> {
    return this.getForPromString();
  }

  /** What prom-client's registry reads when it writes the text format. */
  async getForPromString(): Promise<MetricObjectWithValues<Value>> {
    const h = this.source;
    const values: Value[] = [];
    const name = this.metricName;
    const bucketName = `${name}_bucket`;
    for (let op = 0; op < OP_SLOTS; op++) {
      const count = h.totals[op]!;
      if (count === 0) continue;
      const operation = operationLabel(op);
      for (let b = 0; b < LATENCY_BOUNDS_MS.length; b++)
        values.push({ metricName: bucketName, labels: { operation, le: LATENCY_BOUNDS_MS[b]! / 1000 }, value: h.cumulative(op, b) });
      values.push({ metricName: bucketName, labels: { operation, le: '+Inf' }, value: count });
      values.push({ metricName: `${name}_sum`, labels: { operation }, value: h.sums[op]! / 1000 });
      values.push({ metricName: `${name}_count`, labels: { operation }, value: count });
    }
    return {
      name,
      help: this.metricHelp, // prom-client declares MetricType as an enum its JavaScript does not export: the value is the string.
      type: 'histogram' as unknown as MetricType,
      values,
      aggregator: 'sum',
      collect: () => undefined,
    };
  }
}
