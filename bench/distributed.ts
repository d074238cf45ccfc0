// The cost of a distributed retrieve (issue 22): an entity split over two local context sources (each holds half of
// its attributes; the front broker holds none and registers both, inclusive), retrieved through the front broker,
// against a retrieve of the same entity held wholly by the front broker, in the same run. Reported as the ratio
// distributed / local (the forwarded one makes two HTTP round trips to the sources in parallel, then merges).
// Writes its section of bench/RESULTS.md. `--smoke`: 3 s, nothing written.
import { fileURLToPath } from 'node:url';
import { startServer, type ServerProcess } from './server-process.js';
import { runLoad, failedRequests, type LoadResult } from './load.js';
import { NGSI, JSON_HEADERS, expectStatus, send } from './ngsi-client.js';
import { machineAtStart, writeResultsSection } from './results-section.js';
import { durationArg } from './duration-arg.js';

const BROKER_SCRIPT = fileURLToPath(new URL('../src/main.js', import.meta.url));
const smoke = process.argv.includes('--smoke');
const durationS = smoke ? 3 : durationArg(10);
const warmupS = smoke ? 0 : 2;
const ID = 'urn:ngsi-ld:Bench:split';
const LOCAL_ID = 'urn:ngsi-ld:Bench:whole';

const attrs = (from: number, to: number): Record<string, unknown> => {
  const out: Record<string, unknown> = {};
  for (let i = from; i < to; i++) out[`a${i}`] = { type: 'Property', value: i, observedAt: '2024-01-01T00:00:00Z' };
  return out;
};

async function measure(name: string, url: string, path: string): Promise<{ name: string; result: LoadResult }> {
  const result = await runLoad([{ method: 'GET', path }], { url, connections: 50, durationS, warmupS });
  process.stdout.write(
    `  ${name.padEnd(36)} ${Math.round(result.requestsPerSecond)} req/s, p99 ${result.p99Ms} ms, ${failedRequests(result)} failed\n`,
  );
  return { name, result };
}

async function main(): Promise<void> {
  const servers: ServerProcess[] = [];
  try {
    const base = ['--port', '0', '--host', '127.0.0.1', '--logLevel', 'info'];
    const [front, b, c] = await Promise.all([
      startServer('front', BROKER_SCRIPT, [...base, '--contextSourceAlias', 'bench-front']),
      startServer('source-b', BROKER_SCRIPT, [...base, '--contextSourceAlias', 'bench-b']),
      startServer('source-c', BROKER_SCRIPT, [...base, '--contextSourceAlias', 'bench-c']),
    ]);
    servers.push(front, b, c);
    const create = (url: string, body: unknown): Promise<unknown> =>
      expectStatus('seed', send(url, 'POST', `${NGSI}/entities?local=true`, JSON.stringify(body), JSON_HEADERS), [201, 409]);
    await create(b.url, { id: ID, type: 'Bench', ...attrs(0, 5) });
    await create(c.url, { id: ID, type: 'Bench', ...attrs(5, 10) });
    await create(front.url, { id: LOCAL_ID, type: 'Bench', ...attrs(0, 10) });
    for (const [i, source] of [b, c].entries()) {
      const reg = {
        id: `urn:ngsi-ld:ContextSourceRegistration:bench-${i}`,
        type: 'ContextSourceRegistration',
        endpoint: source.url,
        information: [{ entities: [{ type: 'Bench', id: ID }] }],
      };
      await expectStatus(
        'registration',
        send(front.url, 'POST', `${NGSI}/csourceRegistrations`, JSON.stringify(reg), JSON_HEADERS),
        [201, 409],
      );
    }
    const check = JSON.parse((await send(front.url, 'GET', `${NGSI}/entities/${ID}`)).body) as Record<string, unknown>;
    if (Object.keys(check).length !== 12) throw new Error(`the split entity answers ${Object.keys(check).length} members, not 12`);
    const local = await measure('retrieve, held by the broker', front.url, `${NGSI}/entities/${LOCAL_ID}`);
    const split = await measure('retrieve, split over two sources', front.url, `${NGSI}/entities/${ID}`);
    const ratio = (split.result.requestsPerSecond / local.result.requestsPerSecond).toFixed(2);
    process.stdout.write(`  distributed / local: ${ratio}\n`);
    const rows = [local, split];
    if (!smoke)
      writeResultsSection(
        'distributed',
        [
          '<!-- distributed:begin -->',
          '## Distributed retrieve: an entity split over two local context sources',
          '',
          `Run: \`node dist/bench/distributed.js\`, ${durationS} s after ${warmupS} s warm-up, 50 connections; ${machineAtStart()}.`,
          '',
          '| row | req/s | p99 ms | failed |',
          '|---|---:|---:|---:|',
          ...rows.map((r) => `| ${r.name} | ${Math.round(r.result.requestsPerSecond)} | ${r.result.p99Ms} | ${failedRequests(r.result)} |`),
          '',
          `distributed / local: **${ratio}**.`,
          '<!-- distributed:end -->',
        ].join('\n'),
      );
    if (rows.some((r) => failedRequests(r.result) > 0)) process.exitCode = 1;
  } finally {
    for (const s of servers) await s.stop();
  }
}

await main();
