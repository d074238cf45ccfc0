// Issue 4 benchmarks, run on their own (`node dist/bench/scenarios/subscriptions.js [--duration 5]
// [--connections 20] [--only matching,patch,delivery] [--out file]`) because subscriptions stay in the broker and would change every scenario
// measured after them on the shared broker of `bench/run.ts`:
// (1) PATCH throughput with 0, 1, 100 and 10,000 subscriptions on other types, as a ratio to 0 (target >= 0.9 at
// 10,000); (2) notifications per second to a local receiver with one matching subscription per entity, with how
// many were due (successful PATCHes) and how many were delivered (all must be).
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { cpus } from 'node:os';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { benchId } from '../bench-entity.js';
import { runLoad, failedRequests, type LoadRequest, type LoadResult } from '../load.js';
import { JSON_HEADERS, NGSI, expectStatus, seedEntities, send } from '../ngsi-client.js';
import { startServer } from '../server-process.js';
import { compileSubscription } from '../../src/ngsild/subscription/compile.js';
import { SubscriptionIndex, matchChange } from '../../src/ngsild/subscription/match.js';
import type { StoredEntity } from '../../src/ngsild/entity/model.js';
import type { ResolvedContext } from '../../src/ngsild/context/resolved.js';

const MAIN = fileURLToPath(new URL('../../src/main.js', import.meta.url));
const PATCHED = 1000;
const LEVELS = [0, 1, 100, 10_000];
const CREATE_CONCURRENCY = 16;

const { values } = parseArgs({
  options: {
    duration: { type: 'string', default: '5' },
    connections: { type: 'string', default: '20' },
    out: { type: 'string' },
    only: { type: 'string' },
  },
});
const durationS = Number(values.duration);
const connections = Number(values.connections);

const broker = () => startServer('broker', MAIN, ['--port', '0', '--host', '127.0.0.1', '--logLevel', 'info']);

function patches(): LoadRequest[] {
  let n = 0;
  return [{
    method: 'PATCH',
    path: `${NGSI}/entities/${benchId(1)}/attrs/temperature`,
    headers: JSON_HEADERS,
    body: '{"type":"Property","value":0}',
    next: () => {
      n++;
      return { path: `${NGSI}/entities/${benchId((n % PATCHED) + 1)}/attrs/temperature`, body: `{"type":"Property","value":${n}}` };
    },
  }];
}

/** Creates subscriptions from..to-1 built by `body`, a few at a time. */
async function subscribe(url: string, from: number, to: number, body: (i: number) => Record<string, unknown>): Promise<void> {
  let next = from;
  const worker = async (): Promise<void> => {
    while (next < to) {
      const i = next++;
      await expectStatus(`subscription ${i}`, send(url, 'POST', `${NGSI}/subscriptions`, JSON.stringify(body(i))), [201]);
    }
  };
  await Promise.all(Array.from({ length: CREATE_CONCURRENCY }, worker));
}

async function measure(url: string, warmupS: number): Promise<LoadResult> {
  const r = await runLoad(patches(), { url, connections, durationS, warmupS });
  if (failedRequests(r) > 0) throw new Error(`failed requests: ${JSON.stringify(r.statusCodes)} errors ${r.errors}`);
  return r;
}

/** PATCH throughput of a fresh broker holding `level` subscriptions on other types. */
async function patchWith(level: number): Promise<LoadResult> {
  const b = await broker();
  try {
    await seedEntities(b.url, Array.from({ length: PATCHED }, (_, i) => benchId(i + 1)));
    await subscribe(b.url, 0, level, (i) => ({
      type: 'Subscription', entities: [{ type: `Other${i}` }], notification: { endpoint: { uri: 'http://127.0.0.1:9/never' } },
    }));
    return await measure(b.url, Math.min(2, durationS));
  } finally {
    await b.stop();
  }
}

async function nonMatching(lines: string[]): Promise<void> {
  // A fresh broker per row, and the row without subscriptions measured first and last: on a shared machine the
  // drift between the two says how far apart rows can be for reasons that are not subscriptions.
  const rows: Array<[string, LoadResult]> = [];
  for (const level of [...LEVELS, 0]) rows.push([rows.length === LEVELS.length ? '0 (again)' : String(level), await patchWith(level)]);
  const base = (rows[0]![1].requestsPerSecond + rows.at(-1)![1].requestsPerSecond) / 2;
  lines.push('| subscriptions on other types | PATCH req/s | p50 ms | p99 ms | ratio to 0 (mean of both runs) |', '|---|---|---|---|---|');
  for (const [label, r] of rows) lines.push(`| ${label} | ${r.requestsPerSecond.toFixed(0)} | ${r.p50Ms} | ${r.p99Ms} | ${(r.requestsPerSecond / base).toFixed(2)} |`);
  const at10k = rows.find(([l]) => l === '10000')![1].requestsPerSecond / base;
  lines.push('', `Target: ratio >= 0.9 at 10,000 (measured ${at10k.toFixed(2)}; drift between the two runs without: ${(rows.at(-1)![1].requestsPerSecond / rows[0]![1].requestsPerSecond).toFixed(2)}).`, '');
}

/** Sums timesSent and timesFailed over every subscription, once the counters are written (they lag by a flush). */
async function brokerCounters(url: string): Promise<{ sent: number; failed: number }> {
  let prev = -1;
  for (;;) {
    await new Promise((r) => setTimeout(r, 1500));
    let sent = 0;
    let failed = 0;
    for (let offset = 0; ; offset += 1000) {
      const page = JSON.parse((await expectStatus('GET /subscriptions', send(url, 'GET', `${NGSI}/subscriptions?limit=1000&offset=${offset}`), [200])).body) as Array<{ notification: { timesSent: number; timesFailed: number } }>;
      for (const s of page) { sent += s.notification.timesSent; failed += s.notification.timesFailed; }
      if (page.length < 1000) break;
    }
    if (sent === prev) return { sent, failed };
    prev = sent;
  }
}

async function delivery(lines: string[]): Promise<void> {
  let delivered = 0;
  let last = 0;
  const receiver = createServer((req, res) => {
    req.resume();
    req.on('end', () => { delivered++; last = Date.now(); res.writeHead(204).end(); });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  const uri = `http://127.0.0.1:${(receiver.address() as { port: number }).port}/notify`;
  const b = await broker();
  try {
    await seedEntities(b.url, Array.from({ length: PATCHED }, (_, i) => benchId(i + 1)));
    await subscribe(b.url, 0, PATCHED, (i) => ({
      type: 'Subscription', entities: [{ id: benchId(i + 1), type: 'Bench' }], watchedAttributes: ['temperature'],
      notificationTrigger: ['attributeUpdated'], notification: { endpoint: { uri } },
    }));
    delivered = 0;
    const start = Date.now();
    // No warm-up: every successful PATCH is one notification due.
    const r = await measure(b.url, 0);
    const due = r.statusCodes['204'] ?? 0;
    const deadline = Date.now() + 60_000;
    while (delivered < due && Date.now() < deadline) await new Promise((res) => setTimeout(res, 50));
    const seconds = ((last || Date.now()) - start) / 1000;
    // The broker's own count: requests cut off at the end of the run may still have been written and notified.
    const counted = await brokerCounters(b.url);
    const all = delivered === counted.sent && counted.failed === 0 && delivered >= due;
    lines.push('| PATCH req/s, 1 matching subscription per entity | due (PATCH answered 204) | sent (timesSent) | failed (timesFailed) | delivered | notifications/s |', '|---|---|---|---|---|---|');
    lines.push(`| ${r.requestsPerSecond.toFixed(0)} | ${due} | ${counted.sent} | ${counted.failed} | ${delivered} | ${(delivered / seconds).toFixed(0)} |`);
    lines.push('', all ? 'Every due notification was delivered.' : `NOT ALL DELIVERED: ${counted.sent - delivered} sent but not received, ${counted.failed} failed.`);
  } finally {
    await b.stop();
    receiver.close();
  }
}

/**
 * The matching step alone, in this process: the work a pipeline worker adds to each write (index lookup and full
 * tests of the candidates) with 0 and with 10,000 subscriptions on other types. Immune to the machine's other load.
 */
function matchingCost(lines: string[]): void {
  const vocab = 'https://uri.etsi.org/ngsi-ld/default-context/';
  const ctx = { key: 'bench', expandTerm: (t: string) => vocab + t, compactIri: (i: string) => i.slice(vocab.length), termType: () => undefined, contextValue: null, linkUrl: '' } as ResolvedContext;
  const before: StoredEntity = { id: benchId(1), type: [`${vocab}Bench`], createdAt: '', modifiedAt: '', [`${vocab}temperature`]: [{ type: 'Property', value: 1 }] };
  const after: StoredEntity = { ...before, [`${vocab}temperature`]: [{ type: 'Property', value: 2 }] };
  const perWrite = (index: SubscriptionIndex): number => {
    const n = 2_000_000;
    let matched = 0;
    const start = process.hrtime.bigint();
    for (let i = 0; i < n; i++) for (const sub of index.candidates('', before.id, before, after)) if (matchChange(sub, before, after, 0)) matched++;
    if (matched !== 0) throw new Error('a subscription on another type matched');
    return Number(process.hrtime.bigint() - start) / n;
  };
  const empty = new SubscriptionIndex();
  const full = new SubscriptionIndex();
  for (let i = 0; i < 10_000; i++) {
    full.upsert(compileSubscription('', {
      body: { id: `urn:ngsi-ld:Subscription:${i}`, type: 'Subscription', entities: [{ type: `Other${i}` }], notification: { endpoint: { uri: 'http://127.0.0.1:9/n' } } },
      context: null, createdAt: '', modifiedAt: '',
    }, ctx, ctx));
  }
  perWrite(full);
  const ns0 = perWrite(empty);
  const ns10k = perWrite(full);
  lines.push(`Matching per write, in process: ${ns0.toFixed(0)} ns with no subscription, ${ns10k.toFixed(0)} ns with 10,000 on other types.`, '');
}

async function main(): Promise<void> {
  const lines: string[] = [`## Subscriptions (issue 4: \`node dist/bench/scenarios/subscriptions.js\`)`, '',
    `${new Date().toISOString()}, ${cpus().length} cores, ${connections} connections, ${durationS} s per row, ${PATCHED} entities patched in turn.`, ''];
  const only = values.only?.split(',');
  if (only === undefined || only.includes('matching')) matchingCost(lines);
  if (only === undefined || only.includes('patch')) await nonMatching(lines);
  if (only === undefined || only.includes('delivery')) await delivery(lines);
  const text = lines.join('\n') + '\n';
  process.stdout.write(text);
  if (values.out !== undefined) writeFileSync(values.out, text);
}

main().catch((e: unknown) => {
  process.stderr.write(`${e instanceof Error ? e.stack ?? e.message : String(e)}\n`);
  process.exit(1);
});
