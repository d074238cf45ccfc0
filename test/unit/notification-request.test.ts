// One notification POST through undici's dispatch API (src/notify/http-request.ts) against a real node:http receiver:
// what its outcome says for a 2xx, a non-2xx, a refused connection, and an abort before and after the request starts.
import t from 'tap';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Pool } from 'undici';
import { NotificationRequest } from '../../src/notify/http-request.js';

async function receiver(
  answer: (req: IncomingMessage, res: ServerResponse) => void,
): Promise<{ origin: string; bodies: string[]; close(): Promise<void> }> {
  const bodies: string[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (body += c));
    req.on('end', () => {
      bodies.push(body);
      answer(req, res);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    origin,
    bodies,
    close: () => {
      server.closeAllConnections();
      return new Promise((r) => server.close(() => r()));
    },
  };
}

const post = (pool: Pool, request: NotificationRequest, body = '{"n":1}'): void => {
  pool.dispatch({ method: 'POST', path: '/notify', headers: { 'content-type': 'application/json' }, body }, request);
};

t.test('a 2xx answer is a success; its body is read and dropped; the receiver got the body sent', async (t) => {
  const r = await receiver((_req, res) => res.writeHead(200, { 'content-type': 'text/plain' }).end('thanks'));
  const pool = new Pool(r.origin);
  t.teardown(async () => {
    await pool.close();
    await r.close();
  });
  const request = new NotificationRequest();
  post(pool, request, '{"id":"n1"}');
  t.equal(await request.done, undefined);
  t.same(r.bodies, ['{"id":"n1"}']);
  // The connection is kept and reused: a second request on the same pool succeeds too.
  const again = new NotificationRequest();
  post(pool, again);
  t.equal(await again.done, undefined);
});

t.test('a non-2xx answer fails with its status', async (t) => {
  const r = await receiver((_req, res) => res.writeHead(503).end('busy'));
  const pool = new Pool(r.origin);
  t.teardown(async () => {
    await pool.close();
    await r.close();
  });
  const request = new NotificationRequest();
  post(pool, request);
  t.equal(await request.done, 'HTTP 503');
});

t.test('a refused connection fails with the error code', async (t) => {
  const r = await receiver((_req, res) => res.end());
  const origin = r.origin;
  await r.close();
  const pool = new Pool(origin);
  t.teardown(() => pool.destroy());
  const request = new NotificationRequest();
  post(pool, request);
  t.match(await request.done, /^ECONNREFUSED: /);
});

t.test('aborted before undici starts it: it fails with the reason given and the receiver gets nothing', async (t) => {
  const r = await receiver((_req, res) => res.writeHead(204).end());
  const pool = new Pool(r.origin);
  t.teardown(async () => {
    await pool.close();
    await r.close();
  });
  const request = new NotificationRequest();
  request.abort('subscription deleted');
  post(pool, request);
  t.equal(await request.done, 'subscription deleted');
  t.same(r.bodies, []);
});

t.test('aborted while the receiver holds its answer: it fails with the reason given, once', async (t) => {
  let held: ServerResponse | undefined;
  const r = await receiver((_req, res) => (held = res));
  const pool = new Pool(r.origin);
  t.teardown(async () => {
    held?.destroy();
    await pool.destroy();
    await r.close();
  });
  const request = new NotificationRequest();
  post(pool, request);
  while (held === undefined) await new Promise((res) => setTimeout(res, 5));
  request.abort('no answer within 50 ms');
  request.abort('subscription deleted');
  t.equal(await request.done, 'no answer within 50 ms');
});
