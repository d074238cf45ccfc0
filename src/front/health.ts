// The health port (--healthPort): GET /live, GET /ready (once the store is open and the pool up), GET /health
// (uptime, pool utilisation, queue length, store status, notification queue, p50/p99 per operation), GET /metrics
// (Prometheus text, metrics.ts). A server of its own, outside the auth plugin's reach.
import { createServer, type Server } from 'node:http';
import type { Registry } from 'prom-client';
import type { PipelineRunner } from '../pipeline/runner.js';
import type { Store } from '../store/contract.js';
import type { Logger } from '../logger.js';
import { latencyQuantiles, metricsRegistry, METRICS_CONTENT_TYPE, type MetricSources } from './metrics.js';

export interface HealthState {
  ready: boolean;
  runner?: PipelineRunner;
  store?: Store;
  /** The notifier's queue (src/notify/notifier.ts NotifierHandle), as /health shows it. */
  notifier?: { queueStats(): object };
  startedAt: number;
  /** What /metrics reads; its registry is made at the first scrape. */
  metrics: MetricSources;
  log?: Logger;
}

export function startHealthServer(state: HealthState, host: string, port: number): Promise<{ server: Server; port: number }> {
  let registry: Promise<Registry> | undefined;
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (req.method !== 'GET') {
      res.writeHead(405, { Allow: 'GET', 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ type: 'about:blank', title: 'Method not allowed', status: 405 }));
      return;
    }
    if (path === '/live') return json(res, 200, { status: 'live' });
    // Ready once started, and while the store's server can be reached (a broker on docdb starts without it).
    const storeDown = state.store?.status().reachable === false;
    const ready = state.ready && !storeDown;
    const status = ready ? 'ready' : storeDown ? 'store unreachable' : 'starting';
    if (path === '/ready') return json(res, ready ? 200 : 503, { status });
    if (path === '/health') {
      return json(res, ready ? 200 : 503, {
        status,
        uptimeSeconds: Math.round((Date.now() - state.startedAt) / 1000),
        pool: state.runner?.stats(),
        store: state.store?.status(),
        notifications: state.notifier?.queueStats(),
        memory: process.memoryUsage(),
        // Since start, front wait plus pipeline run, interpolated in the histogram buckets of /metrics.
        latency: latencyQuantiles(state.runner?.latency),
      });
    }
    if (path === '/metrics') {
      registry ??= metricsRegistry(state.metrics);
      registry
        .then((r) => r.metrics())
        .then(
          (text) => {
            res.writeHead(200, { 'Content-Type': METRICS_CONTENT_TYPE });
            res.end(text);
          },
          (e: unknown) => {
            state.log?.error({ err: e }, '/metrics failed');
            json(res, 500, { type: 'about:blank', title: 'Internal error', status: 500, detail: 'the metrics could not be collected' });
          },
        );
      return;
    }
    json(res, 404, { type: 'about:blank', title: 'Not found', status: 404, detail: `no health route ${path}` });
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      const addr = server.address();
      resolve({ server, port: typeof addr === 'object' && addr !== null ? addr.port : port });
    });
  });
}

function json(res: import('node:http').ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'Content-Type': 'application/json' });
  res.end(JSON.stringify(body));
}
