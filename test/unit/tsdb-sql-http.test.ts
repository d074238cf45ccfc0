// The tsdb history's SQL over HTTP (src/plugins/history/tsdb/sql.ts exec) on kept connections, against a stand-in
// QuestDB: a kept connection the server closed meanwhile is not a QuestDB that is down (the statement goes again on a
// new connection); a server that does not answer, or answers no JSON, or refuses the statement, is told apart.
import t from 'tap';
import { createServer, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { exec, QuestDbDown, QuestDbRefused } from '../../src/plugins/history/tsdb/sql.js';
import type { TsdbSettings } from '../../src/plugins/history/tsdb/settings.js';

async function standIn(
  t: { teardown(fn: () => unknown): void },
  answer: (query: string, res: ServerResponse) => void,
): Promise<{ s: TsdbSettings; sockets: Set<Socket> }> {
  const sockets = new Set<Socket>();
  const server = createServer((req, res) => answer(new URL(req.url ?? '', 'http://x').searchParams.get('query') ?? '', res));
  server.keepAliveTimeout = 60_000;
  server.on('connection', (c: Socket) => {
    sockets.add(c);
    c.on('close', () => sockets.delete(c));
  });
  await new Promise<void>((res) => server.listen(0, '127.0.0.1', res));
  t.teardown(() => {
    for (const c of sockets) c.destroy();
    server.close();
  });
  const port = (server.address() as { port: number }).port;
  return { s: { host: '127.0.0.1', port, name: 'ldb', buffer: 1000 }, sockets };
}

const json = (res: ServerResponse, status: number, body: unknown): void => {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
};

t.test('a kept connection the server reset is tried again on a new one, not reported as QuestDB down', async (t) => {
  let n = 0;
  const { s, sockets } = await standIn(t, (_q, res) => json(res, 200, { columns: [{ name: 'n', type: 'INT' }], dataset: [[++n]] }));
  t.same((await exec(s, 'SELECT 1')).dataset, [[1]]);
  t.equal(sockets.size, 1, 'the connection is kept');
  // The server drops the kept connection abruptly (RST) while the client holds it free: the next statement finds it dead.
  for (const c of sockets) c.resetAndDestroy();
  t.same((await exec(s, 'SELECT 1')).dataset, [[2]], 'answered on a new connection');
});

t.test('refused, down and silent are told apart', async (t) => {
  const { s } = await standIn(t, (q, res) => {
    if (q === 'bad') json(res, 400, { error: 'table does not exist [table=x]' });
    else if (q === 'broken') res.writeHead(500).end('not json');
    else if (q === 'silent') return;
    else json(res, 503, { error: 'busy' });
  });
  const failure = (p: Promise<unknown>): Promise<unknown> =>
    p.then(
      () => undefined,
      (e: unknown) => e,
    );
  t.ok((await failure(exec(s, 'bad'))) instanceof QuestDbRefused, 'a statement QuestDB refuses');
  t.ok((await failure(exec(s, 'broken'))) instanceof QuestDbDown, 'an answer without JSON');
  t.ok((await failure(exec(s, 'busy'))) instanceof QuestDbDown, 'a 503');
  t.ok((await failure(exec(s, 'silent', 200))) instanceof QuestDbDown, 'no answer within the timeout');
  t.ok((await failure(exec({ ...s, port: 1 }, 'SELECT 1'))) instanceof QuestDbDown, 'nothing listening');
});
