// A server that stops answering commands while it still answers its monitoring (FerretDB 1.x deadlocked on its
// SQLite pool: `hello` went on, every `find` and `update` waited for ever) fails the request with 503 after the
// command timeout: the broker answers, it never holds a request for ever (docdb-store.ts COMMAND_TIMEOUT_MS).
import t from 'tap';
import { createServer, connect, type Socket } from 'node:net';
import { DocdbStore } from '../../src/plugins/store/docdb/docdb-store.js';
import { LdError } from '../../src/ngsild/problem.js';
import { dropDatabases, freshDbName, mongoUrl } from '../api/helpers/docdb.js';

const log = { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} };

/** The command name of an OP_MSG (opcode 2013): the first key of its body section. */
function commandOf(msg: Buffer): string | undefined {
  if (msg.readInt32LE(12) !== 2013 || msg[20] !== 0) return undefined;
  const start = 16 + 4 + 1 + 4 + 1;
  const end = msg.indexOf(0, start);
  return end < 0 ? undefined : msg.toString('latin1', start, end);
}

/** A proxy to the tests' server that, once `freeze` is set, swallows every command named in it (never answered). */
async function freezingProxy(target: URL): Promise<{ url: string; freeze: Set<string>; close: () => Promise<void> }> {
  const freeze = new Set<string>();
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = connect(Number(target.port), target.hostname);
    sockets.add(client).add(upstream);
    upstream.pipe(client);
    let pending = Buffer.alloc(0);
    client.on('data', (chunk: Buffer) => {
      pending = Buffer.concat([pending, chunk]);
      while (pending.length >= 4 && pending.length >= pending.readInt32LE(0)) {
        const msg = pending.subarray(0, pending.readInt32LE(0));
        pending = pending.subarray(msg.length);
        const name = commandOf(msg);
        if (name === undefined || !freeze.has(name)) upstream.write(msg);
      }
    });
    const end = (): void => {
      client.destroy();
      upstream.destroy();
    };
    client.on('error', end).on('close', end);
    upstream.on('error', end).on('close', end);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  return {
    url: `mongodb://127.0.0.1:${port}/`,
    freeze,
    close: () => {
      for (const s of sockets) s.destroy();
      return new Promise((r) => server.close(() => r()));
    },
  };
}

t.test('a command the server never answers fails with 503 after the command timeout, and the store goes on', async (t) => {
  const proxy = await freezingProxy(new URL(mongoUrl()));
  const dbName = freshDbName();
  const store = new DocdbStore({ uri: proxy.url, dbName, poolSize: 2, timeoutMs: 2000, sync: 'interval', log, commandTimeoutMs: 1500 });
  t.teardown(async () => {
    await store.close();
    await proxy.close();
    await dropDatabases(dbName);
  });
  await store.start(true);
  const id = 'urn:ngsi-ld:T:1';
  const entity = { id, type: ['https://example.org/T'], createdAt: '2026-01-01T00:00:00Z', modifiedAt: '2026-01-01T00:00:00Z' };
  await store.mutateEntity('', id, () => ({ next: entity, result: undefined }));

  proxy.freeze.add('find');
  let timer: NodeJS.Timeout | undefined;
  const hung = new Promise<string>((r) => (timer = setTimeout(() => r('no answer within 20 s'), 20_000)));
  const answer = await Promise.race([
    store.getEntity('', id).then(
      () => 'an entity',
      (e: unknown) => (e instanceof LdError ? `${e.status} ${e.kind}` : String(e)),
    ),
    hung,
  ]);
  clearTimeout(timer);
  t.match(answer, /^503 /, 'the unanswered read is refused as unavailable');

  proxy.freeze.clear();
  t.same((await store.getEntity('', id))?.id, id, 'the next read is answered once the server answers again');
});
