import t from 'tap';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { ROOT_URL } from '../helpers/repo.js';

// Threads load their libraries on first use, not at start (issue 14: a broker's start was mostly its threads'
// imports): what a thread's modules load before any request, seen in a fresh process from both module systems.

const run = promisify(execFile);
const dist = (path: string): string => new URL(`dist/${path}`, ROOT_URL).href;

// Records every URL the ES module loader resolves (a loader hook on its own thread posts them back), and reads
// the CommonJS cache, which holds what createRequire loaded.
const HOOK = `let port;
export function initialize(data) { port = data.port; }
export async function resolve(specifier, context, next) { const r = await next(specifier, context); port.postMessage(r.url); return r; }`;

const PROBE = `import { register, createRequire } from 'node:module';
import { MessageChannel } from 'node:worker_threads';
const { port1, port2 } = new MessageChannel();
const resolved = [];
port1.on('message', (url) => resolved.push(url));
register('data:text/javascript,' + encodeURIComponent(${JSON.stringify(HOOK)}), { data: { port: port2 }, transferList: [port2] });
const loaded = async () => {
  await new Promise((r) => setTimeout(r, 100));
  return [...resolved, ...Object.keys(createRequire(import.meta.url).cache)];
};
for (const m of JSON.parse(process.argv[1]).entries) await import(m);
const atStart = await loaded();
const { turf } = await import(JSON.parse(process.argv[1]).turf);
const { undici } = await import(JSON.parse(process.argv[1]).undici);
turf().distance([0, 0], [1, 1]);
undici().Agent;
console.log(JSON.stringify({ atStart, afterUse: await loaded() }));
port1.close();`;

/** The packages of node_modules among `urls`. */
function packagesOf(urls: string[]): Set<string> {
  const out = new Set<string>();
  for (const u of urls) {
    const m = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(decodeURIComponent(u));
    if (m !== null) out.add(m[1]!);
  }
  return out;
}

const ENTRIES = {
  // The main thread (a broker as a value), the pipeline threads' and the notifier's start.
  entries: [dist('src/broker.js'), dist('src/pipeline/init.js'), dist('src/notify/notifier-thread.js')],
  turf: dist('src/ngsild/query/turf-lib.js'),
  undici: dist('src/pipeline/undici-lib.js'),
};

t.test('a thread loads undici and turf at their first use, not at its start', async (t) => {
  const { stdout } = await run(process.execPath, ['--input-type=module', '-e', PROBE, JSON.stringify(ENTRIES)], {
    env: { ...process.env, NODE_OPTIONS: '' },
  });
  const { atStart, afterUse } = JSON.parse(stdout) as { atStart: string[]; afterUse: string[] };
  const start = packagesOf(atStart);
  t.ok(start.has('lmdb') || start.has('pino'), 'the probe sees the packages the modules load');
  for (const lazy of ['undici', '@turf/distance', '@turf/boolean-within', '@turf/helpers'])
    t.notOk(start.has(lazy), `${lazy} not loaded at start`);
  const used = packagesOf(afterUse);
  for (const lazy of ['undici', '@turf/distance', '@turf/boolean-within']) t.ok(used.has(lazy), `${lazy} loaded once used`);
});
