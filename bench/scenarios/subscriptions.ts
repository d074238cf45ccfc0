// Issue 4 benchmarks, run on their own (`node dist/bench/scenarios/subscriptions.js [--duration 5]
// [--connections 20] [--out file]`) because subscriptions stay in the broker and would change every scenario
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

const MAIN = fileURLToPath(new URL('../../src/main.js', import.meta.url));
const PATCHED = 1000;
const LEVELS = [0, 1, 100, 10_000];
const CREATE_CONCURRENCY = 16;

const { values } = parseArgs({
  options: {
    duration: { type: 'string', default: '5' },
    connections: { type: 'string', default: '20' },
    out: { type: 'string' },
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

async function nonMatching(lines: string[]): Promise<void> {
  const b = await broker();
  try {
    await seedEntities(b.url, Array.from({ length: PATCHED }, (_, i) => benchId(i + 1)));
    const rows: Array<[number, LoadResult]> = [];
    let have = 0;
    for (const level of LEVELS) {
      await subscribe(b.url, have, level, (i) => ({
        type: 'Subscription', entities: [{ type: `Other${i}` }], notification: { endpoint: { uri: 'http://127.0.0.1:9/never' } },
      }));
      have = level;
      rows.push([level, await measure(b.url, Math.min(2, durationS))]);
    }
    const base = rows[0]![1].requestsPerSecond;
    lines.push('| subscriptions on other types | PATCH req/s | p50 ms | p99 ms | ratio to 0 |', '|---|---|---|---|---|');
    for (const [level, r] of rows) lines.push(`| ${level} | ${r.requestsPerSecond.toFixed(0)} | ${r.p50Ms} | ${r.p99Ms} | ${(r.requestsPerSecond / base).toFixed(2)} |`);
    lines.push('', `Target: ratio >= 0.9 at 10,000 (measured ${(rows.at(-1)![1].requestsPerSecond / base).toFixed(2)}).`, '');
  } finally {
    await b.stop();
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
    lines.push('| PATCH req/s with 1 matching subscription each | notifications due | delivered | notifications/s |', '|---|---|---|---|');
    lines.push(`| ${r.requestsPerSecond.toFixed(0)} | ${due} | ${delivered} | ${(delivered / seconds).toFixed(0)} |`);
    lines.push('', delivered === due ? 'Every due notification was delivered.' : `MISSING: ${due - delivered} notifications were not delivered within 60 s.`);
  } finally {
    await b.stop();
    receiver.close();
  }
}

async function main(): Promise<void> {
  const lines: string[] = [`## Subscriptions (issue 4: \`node dist/bench/scenarios/subscriptions.js\`)`, '',
    `${new Date().toISOString()}, ${cpus().length} cores, ${connections} connections, ${durationS} s per row, ${PATCHED} entities patched in turn.`, ''];
  await nonMatching(lines);
  await delivery(lines);
  const text = lines.join('\n') + '\n';
  process.stdout.write(text);
  if (values.out !== undefined) writeFileSync(values.out, text);
}

main().catch((e: unknown) => {
  process.stderr.write(`${e instanceof Error ? e.stack ?? e.message : String(e)}\n`);
  process.exit(1);
});
