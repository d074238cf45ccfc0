// GET /metrics on the health port (README "Metrics"): the Prometheus text of a broker's requests by operation and
// status, latency per operation (front wait, pipeline run), pool, notifications per endpoint host, store entities
// per tenant; /health's p50 and p99; what the port answers to anything else; --metrics false.
import t from 'tap';
import { startBroker, call, NGSI, type Broker } from './helpers/broker.js';
import { startReceiver, type Receiver } from './helpers/receiver.js';
import { tsdbArgs } from './helpers/troe.js';
import { createServer } from 'node:net';

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/**
 * The text exposition format (Prometheus "Exposition formats", text 0.0.4), read strictly: every line a # HELP, a
 * # TYPE or a sample of a family typed before it; label values quoted with \\, \" and \n escaped; a float value.
 */
function parseMetrics(text: string): Sample[] {
  const samples: Sample[] = [];
  const typed = new Map<string, string>();
  for (const line of text.split('\n')) {
    if (line === '') continue;
    const comment = /^# (HELP|TYPE) ([a-zA-Z_:][a-zA-Z0-9_:]*) (.*)$/.exec(line);
    if (comment !== null) {
      if (comment[1] === 'TYPE') {
        if (!/^(counter|gauge|histogram|summary|untyped)$/.test(comment[3]!)) throw new Error(`bad type: ${line}`);
        typed.set(comment[2]!, comment[3]!);
      }
      continue;
    }
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (m === null) throw new Error(`not a sample line: ${line}`);
    const name = m[1]!;
    const family = typed.has(name) ? name : name.replace(/_(bucket|sum|count)$/, '');
    if (!typed.has(family)) throw new Error(`a sample of an untyped family: ${line}`);
    const labels: Record<string, string> = {};
    let rest = m[2] ?? '';
    while (rest !== '') {
      const l = /^([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\n]|\\[\\"n])*)",?/.exec(rest);
      if (l === null) throw new Error(`bad labels: ${line}`);
      labels[l[1]!] = l[2]!.replace(/\\n/g, '\n').replace(/\\"/g, '"').replace(/\\\\/g, '\\');
      rest = rest.slice(l[0].length);
    }
    // Prometheus reads values with Go's ParseFloat: NaN and Inf in any case (prom-client writes `Nan`).
    const value = /^[+-]?inf$/i.test(m[3]!) ? (m[3]!.startsWith('-') ? -Infinity : Infinity) : Number(m[3]);
    if (Number.isNaN(value) && !/^nan$/i.test(m[3]!)) throw new Error(`bad value: ${line}`);
    samples.push({ name, labels, value });
  }
  return samples;
}

const find = (samples: Sample[], name: string, labels: Record<string, string> = {}): Sample[] =>
  samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));

const one = (samples: Sample[], name: string, labels: Record<string, string> = {}): number | undefined => {
  const found = find(samples, name, labels);
  return found.length === 1 ? found[0]!.value : undefined;
};

async function scrape(broker: Broker): Promise<{ text: string; samples: Sample[]; contentType: string | null }> {
  const res = await fetch(`http://127.0.0.1:${broker.healthPort}/metrics`);
  t.equal(res.status, 200, '/metrics answers 200');
  const text = await res.text();
  return { text, samples: parseMetrics(text), contentType: res.headers.get('content-type') };
}

const entity = (id: string): object => ({ id, type: 'Probe', n: { type: 'Property', value: 1 } });

t.test('requests counted by operation and status, timed per operation', async (t) => {
  const broker = await startBroker();
  t.teardown(() => broker.stop());
  for (const id of ['urn:ngsi-ld:Probe:m1', 'urn:ngsi-ld:Probe:m2'])
    t.equal((await call(broker, 'POST', `${NGSI}/entities`, { body: entity(id) })).status, 201);
  t.equal((await call(broker, 'POST', `${NGSI}/entities`, { body: entity('urn:ngsi-ld:Probe:m1') })).status, 409);
  t.equal((await call(broker, 'GET', `${NGSI}/entities/urn:ngsi-ld:Probe:m1`)).status, 200);
  t.equal((await call(broker, 'GET', `${NGSI}/entities/urn:ngsi-ld:Probe:none`)).status, 404);
  t.equal((await call(broker, 'GET', '/no/such/route')).status, 404);
  t.equal((await call(broker, 'PATCH', `${NGSI}/entities`, { body: {} })).status, 405);

  const { samples, contentType } = await scrape(broker);
  t.match(contentType, /^text\/plain; version=0\.0\.4/);
  const requests = (operation: string, status: string): number | undefined =>
    one(samples, 'ldbroker_requests_total', { operation, status });
  t.equal(requests('CreateEntity', '201'), 2);
  t.equal(requests('CreateEntity', '409'), 1);
  t.equal(requests('RetrieveEntity', '200'), 1);
  t.equal(requests('RetrieveEntity', '404'), 1);
  t.equal(requests('none', '404'), 1, 'a request no operation serves counts as operation none');
  t.equal(requests('none', '405'), 1);
  t.equal(find(samples, 'ldbroker_requests_total').length, 6, 'nothing else was counted');

  // The histograms: per operation, buckets cumulative, +Inf the count.
  for (const name of ['ldbroker_request_wait_seconds', 'ldbroker_request_run_seconds']) {
    t.equal(one(samples, `${name}_count`, { operation: 'CreateEntity' }), 3, `${name}: three creates ran`);
    t.equal(one(samples, `${name}_count`, { operation: 'RetrieveEntity' }), 2);
    const buckets = find(samples, `${name}_bucket`, { operation: 'RetrieveEntity' });
    t.equal(buckets.length, 17, '16 bounds and +Inf');
    for (let i = 1; i < buckets.length; i++) t.ok(buckets[i]!.value >= buckets[i - 1]!.value, 'cumulative');
    t.equal(buckets.at(-1)!.labels.le, '+Inf');
    t.equal(buckets.at(-1)!.value, 2);
    t.equal(find(samples, `${name}_count`, { operation: 'none' }).length, 0, 'no pipeline time for what the front answered');
  }
  t.ok(one(samples, 'ldbroker_request_run_seconds_sum', { operation: 'CreateEntity' })! > 0);
  t.equal(one(samples, 'ldbroker_store_entities', { tenant: '<default>' }), 2);
  t.ok(one(samples, 'ldbroker_store_size_bytes')! > 0);
  t.equal(one(samples, 'ldbroker_pool_threads'), 0, 'the helper runs the pipeline inline');
  t.type(one(samples, 'ldbroker_pool_queue_length'), 'number');
  t.type(one(samples, 'process_resident_memory_bytes'), 'number', "prom-client's process metrics are there");
  t.equal(find(samples, 'ldbroker_history_lag_rows').length, 0, 'no history beside the store: no lag series');

  const h = await call(`http://127.0.0.1:${broker.healthPort}`, 'GET', '/health');
  t.equal(h.json.latency.RetrieveEntity.count, 2);
  t.type(h.json.latency.RetrieveEntity.p50Ms, 'number');
  t.ok(h.json.latency.RetrieveEntity.p99Ms >= h.json.latency.RetrieveEntity.p50Ms);
  t.equal(h.json.latency.none, undefined);
});

t.test('the pool: front wait and pipeline run measured across the threads', async (t) => {
  // --frontOps none: a retrieve would run on the front thread of a 2-core machine, with no hand-off to time.
  const broker = await startBroker(['--frontOps', 'none'], {}, { pool: true });
  t.teardown(() => broker.stop());
  t.equal((await call(broker, 'POST', `${NGSI}/entities`, { body: entity('urn:ngsi-ld:Probe:p1') })).status, 201);
  for (let i = 0; i < 3; i++) t.equal((await call(broker, 'GET', `${NGSI}/entities/urn:ngsi-ld:Probe:p1`)).status, 200);
  const { samples } = await scrape(broker);
  t.ok(one(samples, 'ldbroker_pool_threads')! >= 1);
  t.equal(one(samples, 'ldbroker_requests_total', { operation: 'RetrieveEntity', status: '200' }), 3);
  t.equal(one(samples, 'ldbroker_request_wait_seconds_count', { operation: 'RetrieveEntity' }), 3);
  t.equal(one(samples, 'ldbroker_request_run_seconds_count', { operation: 'RetrieveEntity' }), 3);
  t.ok(one(samples, 'ldbroker_request_wait_seconds_sum', { operation: 'RetrieveEntity' })! > 0, 'the hand-off takes time');
  const utilization = one(samples, 'ldbroker_pool_utilization')!;
  t.ok(utilization >= 0 && utilization <= 1);
});

t.test('notifications per endpoint host: the host only, never the path or query', async (t) => {
  const receiver: Receiver = await startReceiver();
  const broker = await startBroker();
  t.teardown(async () => {
    await broker.stop();
    receiver.close();
  });
  const r = await call(broker, 'POST', `${NGSI}/subscriptions`, {
    body: {
      type: 'Subscription',
      entities: [{ type: 'Probe' }],
      notification: { endpoint: { uri: `${receiver.url}/secret-path?token=s3cr3t` } },
    },
  });
  t.equal(r.status, 201);
  // A second subscription whose receiver is not there: its notification fails.
  const dead = await call(broker, 'POST', `${NGSI}/subscriptions`, {
    body: { type: 'Subscription', entities: [{ type: 'Probe' }], notification: { endpoint: { uri: 'http://127.0.0.1:1/x' } } },
  });
  t.equal(dead.status, 201);
  t.equal((await call(broker, 'POST', `${NGSI}/entities`, { body: entity('urn:ngsi-ld:Probe:n1') })).status, 201);
  t.equal((await receiver.at('/secret-path?token=s3cr3t', 1)).length, 1);
  const host = new URL(receiver.url).host;
  let samples: Sample[] = [];
  let text = '';
  for (let i = 0; i < 100; i++) {
    ({ samples, text } = await scrape(broker));
    if (one(samples, 'ldbroker_notifications_failed_total', { host: '127.0.0.1:1' }) === 1) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  t.equal(one(samples, 'ldbroker_notifications_sent_total', { host }), 1);
  t.equal(one(samples, 'ldbroker_notifications_failed_total', { host }), 0);
  t.equal(one(samples, 'ldbroker_notifications_queued', { host }), 0);
  t.equal(one(samples, 'ldbroker_notifications_failed_total', { host: '127.0.0.1:1' }), 1);
  t.notMatch(text, /secret|s3cr3t|token/, "nothing of the endpoint's path or query is shown");
});

t.test('--metrics false: nothing counted, /metrics still answers', async (t) => {
  const broker = await startBroker(['--metrics', 'false']);
  t.teardown(() => broker.stop());
  t.equal((await call(broker, 'GET', `${NGSI}/entities/urn:ngsi-ld:Probe:none`)).status, 404);
  const { samples } = await scrape(broker);
  t.equal(find(samples, 'ldbroker_requests_total').length, 0);
  t.equal(find(samples, 'ldbroker_request_run_seconds_count').length, 0);
  const h = await call(`http://127.0.0.1:${broker.healthPort}`, 'GET', '/health');
  t.same(h.json.latency, {});
});

t.test('the health port: anything but its routes is a ProblemDetails, never the metrics', async (t) => {
  const broker = await startBroker();
  t.teardown(() => broker.stop());
  const base = `http://127.0.0.1:${broker.healthPort}`;
  for (const path of ['/metrics/', '/metricsx', '/metrics/../live', '/Metrics', '/%6detrics', '/metrics%00']) {
    const r = await call(base, 'GET', path);
    if (path === '/metrics/../live') {
      // fetch resolves the dot segments itself: the request is GET /live.
      t.equal(r.status, 200);
      continue;
    }
    t.equal(r.status, 404, `GET ${path}`);
    t.match(r.json, { status: 404, title: 'Not found' });
    t.equal(r.headers.get('content-type'), 'application/json');
  }
  const post = await call(base, 'POST', '/metrics', { body: {} });
  t.equal(post.status, 405);
  t.equal(post.headers.get('allow'), 'GET');
  t.equal((await call(base, 'GET', '/metrics?x=1')).status, 200, 'a query string is ignored, as on the other routes');
});

t.test('entities per tenant', async (t) => {
  const broker = await startBroker();
  t.teardown(() => broker.stop());
  t.equal((await call(broker, 'POST', `${NGSI}/entities`, { body: entity('urn:ngsi-ld:Probe:t0') })).status, 201);
  for (const id of ['urn:ngsi-ld:Probe:t1', 'urn:ngsi-ld:Probe:t2'])
    t.equal((await call(broker, 'POST', `${NGSI}/entities`, { body: entity(id), headers: { 'NGSILD-Tenant': 'acme' } })).status, 201);
  const { samples } = await scrape(broker);
  t.equal(one(samples, 'ldbroker_store_entities', { tenant: '<default>' }), 1);
  t.equal(one(samples, 'ldbroker_store_entities', { tenant: 'acme' }), 2);
});

t.test('history lag: the rows a history beside the store has not written yet, and their age', async (t) => {
  // QuestDB away (a port nothing listens on): the writer keeps the rows and says how far behind it is.
  const closed = await new Promise<number>((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
  const down = await startBroker(['--troe', 'tsdb', '--troeHost', '127.0.0.1', '--troePort', String(closed), '--troeName', 'lagtest']);
  t.teardown(() => down.stop());
  t.equal((await call(down, 'POST', `${NGSI}/entities`, { body: entity('urn:ngsi-ld:Probe:h1') })).status, 201);
  let samples: Sample[] = [];
  for (let i = 0; i < 100; i++) {
    ({ samples } = await scrape(down));
    if (one(samples, 'ldbroker_history_lag_seconds')! > 0) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  t.ok(one(samples, 'ldbroker_history_lag_rows')! >= 1, 'the rows of the write wait');
  t.ok(one(samples, 'ldbroker_history_lag_seconds')! > 0);

  // QuestDB there: the lag goes back to 0 once the rows are written.
  const up = await startBroker(tsdbArgs());
  t.teardown(() => up.stop());
  t.equal((await call(up, 'POST', `${NGSI}/entities`, { body: entity('urn:ngsi-ld:Probe:h2') })).status, 201);
  t.equal((await call(up, 'GET', `${NGSI}/temporal/entities/urn:ngsi-ld:Probe:h2`)).status, 200, 'written (the read syncs)');
  ({ samples } = await scrape(up));
  t.equal(one(samples, 'ldbroker_history_lag_rows'), 0);
  t.equal(one(samples, 'ldbroker_history_lag_seconds'), 0);
});
