// Retrieve over the WebSocket transport (issue 23) against the same retrieve over HTTP, in the same run: bare uWS over
// HTTP (the baseline of every benchmark), the broker over HTTP (autocannon), the broker over WebSocket (50 connections,
// each keeping one request in flight as autocannon does, then 16 pipelined). The upgrade removes HTTP parsing and
// framing per request, so the WebSocket rows are expected above the HTTP retrieve. Writes its section of
// bench/RESULTS.md. `--smoke`: 3 s, nothing written. Not run by `make test`.
import { fileURLToPath } from 'node:url';
import { WebSocket } from 'undici';
import { startServer, type ServerProcess } from './server-process.js';
import { runLoad, failedRequests, type LoadResult } from './load.js';
import { benchId } from './bench-entity.js';
import { NGSI, seedEntities } from './ngsi-client.js';
import { machineAtStart, writeResultsSection } from './results-section.js';
import { durationArg } from './duration-arg.js';

const BARE_SCRIPT = fileURLToPath(new URL('./bare-server.js', import.meta.url));
const BROKER_SCRIPT = fileURLToPath(new URL('../src/main.js', import.meta.url));
const CONNECTIONS = 50;
const ENTITIES = 100;

const smoke = process.argv.includes('--smoke');
const durationS = smoke ? 3 : durationArg(10);
const warmupS = smoke ? 0 : 2;

interface Row {
  name: string;
  result: LoadResult;
}

const retrievePath = (k: number): string => `${NGSI}/entities/${encodeURIComponent(benchId(k))}`;

async function http(name: string, url: string): Promise<Row> {
  let k = 0;
  const result = await runLoad([{ method: 'GET', path: retrievePath(1), next: () => ({ path: retrievePath((k++ % ENTITIES) + 1) }) }], {
    url,
    connections: CONNECTIONS,
    durationS,
    warmupS,
  });
  report(name, result);
  return { name, result };
}

/** `window` requests in flight on each of CONNECTIONS WebSockets for the duration; latencies from send to answer. */
async function websocket(name: string, port: number, window: number): Promise<Row> {
  const sockets = await Promise.all(
    Array.from({ length: CONNECTIONS }, async () => {
      const ws = new WebSocket(`ws://127.0.0.1:${port}${NGSI}/ws`);
      await new Promise<void>((resolve, reject) => {
        ws.onopen = () => resolve();
        ws.onerror = () => reject(new Error('the WebSocket did not open'));
      });
      return ws;
    }),
  );
  const statusCodes: Record<string, number> = {};
  const latencies: number[] = [];
  let completed = 0;
  let errors = 0;
  let measuring = false;
  let running = true;
  let next = 0;
  for (const ws of sockets) {
    const sentAt = new Map<string, number>();
    const send = (): void => {
      const id = String(next++);
      sentAt.set(id, performance.now());
      const path = retrievePath((next % ENTITIES) + 1);
      ws.send(JSON.stringify({ metadata: { method: 'GET', path, correlationId: id } }));
    };
    ws.onmessage = (e) => {
      const m = JSON.parse(String(e.data)) as { metadata: { correlationId?: string; status?: number } };
      const id = m.metadata.correlationId;
      if (id === undefined) return; // the connection's first message
      const at = sentAt.get(id);
      sentAt.delete(id);
      if (measuring && at !== undefined) {
        completed++;
        latencies.push(performance.now() - at);
        const s = String(m.metadata.status);
        statusCodes[s] = (statusCodes[s] ?? 0) + 1;
      }
      if (running) send();
    };
    ws.onclose = () => {
      if (running) errors++;
    };
    for (let i = 0; i < window; i++) send();
  }
  await new Promise((r) => setTimeout(r, warmupS * 1000));
  measuring = true;
  const started = performance.now();
  await new Promise((r) => setTimeout(r, durationS * 1000));
  measuring = false;
  const seconds = (performance.now() - started) / 1000;
  running = false;
  for (const ws of sockets) ws.close();
  latencies.sort((a, b) => a - b);
  const at = (q: number): number => Math.round(latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? 0);
  const non2xx = Object.entries(statusCodes).reduce((n, [s, c]) => (s.startsWith('2') ? n : n + c), 0);
  const result: LoadResult = {
    requestsPerSecond: completed / seconds,
    p50Ms: at(0.5),
    p99Ms: at(0.99),
    completed,
    errors,
    timeouts: 0,
    non2xx,
    statusCodes,
  };
  report(name, result);
  return { name, result };
}

function report(name: string, result: LoadResult): void {
  process.stdout.write(
    `  ${name.padEnd(34)} ${Math.round(result.requestsPerSecond)} req/s, p99 ${result.p99Ms} ms, ${failedRequests(result)} failed\n`,
  );
}

async function main(): Promise<void> {
  const servers: ServerProcess[] = [];
  try {
    const bare = await startServer('bare-uws', BARE_SCRIPT, ['127.0.0.1', '0']);
    servers.push(bare);
    const rows = [await http('bare uWS, HTTP', bare.url)];
    await bare.stop();
    const broker = await startServer('broker', BROKER_SCRIPT, ['--port', '0', '--host', '127.0.0.1', '--logLevel', 'info']);
    servers.push(broker);
    await seedEntities(
      broker.url,
      Array.from({ length: ENTITIES }, (_, i) => benchId(i + 1)),
    );
    const port = Number(new URL(broker.url).port);
    rows.push(await http('retrieve, HTTP', broker.url));
    rows.push(await websocket('retrieve, WebSocket (1 in flight)', port, 1));
    rows.push(await websocket('retrieve, WebSocket (16 in flight)', port, 16));
    await broker.stop();

    const [bareRow, httpRow] = rows as [Row, Row, Row, Row];
    const ratio = (r: Row): string => (r.result.requestsPerSecond / bareRow.result.requestsPerSecond).toFixed(2);
    const vsHttp = (r: Row): string => (r.result.requestsPerSecond / httpRow.result.requestsPerSecond).toFixed(2);
    const failed = rows.reduce((n, r) => n + failedRequests(r.result), 0);
    if (!smoke) {
      writeResultsSection(
        'websocket',
        [
          '<!-- websocket:begin -->',
          '## Retrieve over WebSocket against HTTP',
          '',
          `Run: \`node dist/bench/websocket.js\`, ${durationS} s after ${warmupS} s warm-up, ${CONNECTIONS} connections; ${machineAtStart()}.`,
          '',
          '| row | req/s | p99 ms | ratio to bare | ratio to HTTP retrieve | failed |',
          '|---|---:|---:|---:|---:|---:|',
          ...rows.map(
            (r) =>
              `| ${r.name} | ${Math.round(r.result.requestsPerSecond)} | ${r.result.p99Ms} | ${ratio(r)} | ${vsHttp(r)} | ${failedRequests(r.result)} |`,
          ),
          '<!-- websocket:end -->',
        ].join('\n'),
      );
    }
    if (failed > 0) process.exitCode = 1;
  } finally {
    for (const s of servers) await s.stop();
  }
}

await main();
