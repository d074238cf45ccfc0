// The baseline every benchmark is divided by: a bare uWS server doing the least an HTTP API can do (a fixed
// 200-byte entity for any GET, 201/204 once a POST/PATCH body is read), in its own process like the broker.
import { createRequire } from 'node:module';
import { BARE_BODY } from './bench-entity.js';

type UwsModule = typeof import('@trufflesuite/uws-js-unofficial');
type HttpResponse = import('@trufflesuite/uws-js-unofficial').HttpResponse;

const uws = createRequire(import.meta.url)('@trufflesuite/uws-js-unofficial') as UwsModule;
const body = Buffer.from(BARE_BODY);

// Reads the body to its end so a write costs what a real server pays for the upload, then answers.
function answerAfterBody(res: HttpResponse, status: string): void {
  const state = { aborted: false };
  res.onAborted(() => {
    state.aborted = true;
  });
  res.onData((_chunk, isLast) => {
    if (!isLast || state.aborted) return;
    res.cork(() => {
      res.writeStatus(status).end();
    });
  });
}

const app = uws
  .App()
  .get('/*', (res) => {
    res.cork(() => {
      res.writeStatus('200 OK').writeHeader('Content-Type', 'application/json').end(body);
    });
  })
  .post('/*', (res) => answerAfterBody(res, '201 Created'))
  .any('/*', (res) => answerAfterBody(res, '204 No Content'));

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
