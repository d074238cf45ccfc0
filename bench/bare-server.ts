// The baseline every benchmark is divided by: a bare uWS server doing the least an HTTP API can do, in its own
// process like the broker. By default a fixed 200-byte entity for any GET, 201/204 once a POST/PATCH body is read.
// `PUT /__bare/reply` (a JSON { status, headers, body }, or null for the defaults) makes every later request of any method answer that instead:
// the runner sets it to the broker's answer to the scenario's first request, so the bare row receives the same
// requests (same path and query string, same body) and sends back an answer of the same size as the broker rows.
import { createRequire } from 'node:module';
import { BARE_BODY } from './bench-entity.js';
import { REPLY_PATH, type BareReply } from './bare-reply.js';

type UwsModule = typeof import('@trufflesuite/uws-js-unofficial');
type HttpResponse = import('@trufflesuite/uws-js-unofficial').HttpResponse;

const uws = createRequire(import.meta.url)('@trufflesuite/uws-js-unofficial') as UwsModule;

interface Reply {
  status: string;
  headers: Array<[string, string]>;
  body: Buffer;
}

const byDefault = { get: { status: '200 OK', headers: [['Content-Type', 'application/json']], body: Buffer.from(BARE_BODY) } } as const;
let mirrored: Reply | undefined;

function send(res: HttpResponse, r: { status: string; headers: ReadonlyArray<readonly [string, string]>; body?: Buffer }): void {
  res.cork(() => {
    res.writeStatus(r.status);
    for (const [k, v] of r.headers) res.writeHeader(k, v);
    if (r.body === undefined || r.body.length === 0) res.end();
    else res.end(r.body);
  });
}

/**
 * Reads the body to its end so a write costs what a real server pays for the upload, then answers. `keep`: the body
 * is wanted (the control route); a benchmark request's is only read.
 */
function afterBody(res: HttpResponse, keep: boolean, answer: (body: Buffer) => void): void {
  const state = { aborted: false };
  const chunks: Buffer[] = [];
  res.onAborted(() => {
    state.aborted = true;
  });
  res.onData((chunk, isLast) => {
    // uWS reuses the chunk's memory after this call: what is kept is copied.
    if (keep) chunks.push(Buffer.from(chunk.slice(0)));
    if (isLast && !state.aborted) answer(keep ? Buffer.concat(chunks) : EMPTY);
  });
}

const EMPTY = Buffer.alloc(0);

function write(res: HttpResponse, fallback: string): void {
  const reply = mirrored;
  afterBody(res, false, () => send(res, reply ?? { status: fallback, headers: [] }));
}

const app = uws
  .App()
  .put(REPLY_PATH, (res) => {
    afterBody(res, true, (body) => {
      try {
        // `null` puts the default answers back.
        const r = JSON.parse(body.toString('utf8')) as BareReply | null;
        mirrored = r === null ? undefined : { status: r.status, headers: r.headers, body: Buffer.from(r.body) };
        send(res, { status: '204 No Content', headers: [] });
      } catch {
        send(res, { status: '400 Bad Request', headers: [] });
      }
    });
  })
  .get('/*', (res) => send(res, mirrored ?? byDefault.get))
  .post('/*', (res) => write(res, '201 Created'))
  .any('/*', (res) => write(res, '204 No Content'));

const host = process.argv[2] ?? '127.0.0.1';
const wantedPort = Number(process.argv[3] ?? 0);
app.listen(host, wantedPort, (token) => {
  if (!token) {
    process.stderr.write(`bare-server: cannot listen on ${host}:${wantedPort}\n`);
    process.exit(1);
  }
  // The same line shape as the broker's pino "listening" record, so one reader starts both.
  process.stdout.write(JSON.stringify({ msg: 'listening', port: uws.us_socket_local_port(token), server: 'bare-uws' }) + '\n');
  process.once('SIGTERM', () => {
    uws.us_listen_socket_close(token);
    process.exit(0);
  });
});
