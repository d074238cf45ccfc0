// The pipeline: two workers serve requests concurrently on one store; the inline front-thread mode and the
// node:http server answer the same.
import t from 'tap';
import { createServer } from 'node:http';
import { startBroker, call, NGSI } from './helpers/broker.js';

t.test('two pipeline workers serve requests concurrently on one LMDB store', async (t) => {
  // --frontOps none: the one-entity operations below would run on the front thread of a small machine otherwise.
  const broker = await startBroker(['--connectionPoolSize', '2', '--frontOps', 'none', '--logLevel', 'debug']);
  try {
    const ids = Array.from({ length: 200 }, (_, i) => `urn:ngsi-ld:Sensor:${i}`);
    const created = await Promise.all(
      ids.map((id) => call(broker, 'POST', `${NGSI}/entities`, { body: { id, type: 'Sensor', v: { type: 'Property', value: 1 } } })),
    );
    t.ok(
      created.every((r) => r.status === 201),
      'all created',
    );
    const read = await Promise.all(ids.map((id) => call(broker, 'GET', `${NGSI}/entities/${id}`)));
    t.ok(
      read.every((r) => r.status === 200),
      'every entity is read back whatever thread wrote it',
    );
    const threads = new Set<string>();
    for (const line of broker.logs) {
      try {
        const rec = JSON.parse(line) as { msg?: string; thread?: string };
        if (rec.msg === 'request' && rec.thread?.startsWith('pipeline-')) threads.add(rec.thread);
      } catch {
        /* not JSON */
      }
    }
    t.ok(threads.size >= 2, `requests were served by ${threads.size} pipeline threads: ${[...threads].join(', ')}`);
  } finally {
    await broker.stop();
  }
});

for (const [name, args] of [
  ['inline (--connectionPoolSize 0)', ['--connectionPoolSize', '0']],
  ['node:http (--httpServer node)', ['--httpServer', 'node']],
] as const) {
  t.test(`${name} serves the same API`, async (t) => {
    const broker = await startBroker([...args], {}, { pool: true, http: true });
    try {
      const c = await call(broker, 'POST', `${NGSI}/entities`, {
        body: { id: 'urn:ngsi-ld:X:1', type: 'X', a: { type: 'Property', value: 1 } },
      });
      t.equal(c.status, 201);
      const r = await call(broker, 'GET', `${NGSI}/entities/urn:ngsi-ld:X:1?options=keyValues`);
      t.same(r.json, { id: 'urn:ngsi-ld:X:1', type: 'X', a: 1 });
      t.equal((await call(broker, 'PUT', `${NGSI}/entities`)).status, 405);
      const big = await call(broker, 'POST', `${NGSI}/entities`, {
        raw: new Uint8Array(9 * 1024 * 1024).fill(32),
        headers: { 'content-type': 'application/json' },
      });
      t.equal(big.status, 413);
    } finally {
      t.equal(await broker.stop(), 0, 'clean exit');
    }
  });
}

/**
 * A context server that holds every request until released: a request whose Link names it stays in the pipeline
 * (fetching its @context) for as long as the test wants, with no timing involved.
 */
async function heldContextServer(): Promise<{ url: string; held: () => number; release: () => void; close: () => void }> {
  const waiting: Array<() => void> = [];
  let released = false;
  const server = createServer((_req, res) => {
    const answer = (): void => {
      res
        .writeHead(200, { 'content-type': 'application/ld+json' })
        .end(JSON.stringify({ '@context': { slowTerm: 'https://example.org/slow#term' } }));
    };
    if (released) answer();
    else waiting.push(answer);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  return {
    url: `http://127.0.0.1:${port}/slow.jsonld`,
    held: () => waiting.length,
    release: () => {
      released = true;
      for (const answer of waiting.splice(0)) answer();
    },
    close: () => {
      server.closeAllConnections();
      server.close();
    },
  };
}

const linkTo = (url: string): string => `<${url}>; rel="http://www.w3.org/ns/json-ld#context"; type="application/ld+json"`;

async function until(cond: () => boolean, what: string, poll?: () => Promise<void>): Promise<void> {
  for (let i = 0; i < 500; i++) {
    await poll?.();
    if (cond()) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  if (!cond()) throw new Error(`gave up waiting until ${what}`);
}

t.test('requests handed to a thread together: a slow one (remote @context) delays none of the others', async (t) => {
  const ctxServer = await heldContextServer();
  const broker = await startBroker([], {}, { pool: true });
  try {
    t.equal(
      (
        await call(broker, 'POST', `${NGSI}/entities`, {
          body: { id: 'urn:ngsi-ld:Fast:1', type: 'Fast', a: { type: 'Property', value: 1 } },
        })
      ).status,
      201,
    );
    let slowDone = false;
    const slow = call(broker, 'GET', `${NGSI}/entities/urn:ngsi-ld:Fast:1`, { headers: { link: linkTo(ctxServer.url) } }).then((r) => {
      slowDone = true;
      return r;
    });
    // Sent at once, so most share a batch with the slow one or follow it onto the same thread.
    const fast = await Promise.all(
      Array.from({ length: 40 }, () => call(broker, 'GET', `${NGSI}/entities/urn:ngsi-ld:Fast:1?options=keyValues`)),
    );
    t.ok(
      fast.every((r) => r.status === 200 && (r.json as { a: number }).a === 1),
      'every other request answered',
    );
    await until(() => ctxServer.held() === 1, 'the slow request reaches the context server');
    t.notOk(slowDone, 'the slow request is still waiting for its @context meanwhile');
    ctxServer.release();
    const r = await slow;
    t.equal(r.status, 200, 'and answers once its @context arrives');
  } finally {
    t.equal(await broker.stop(), 0, 'clean exit');
    ctxServer.close();
  }
});

for (const [mode, args] of [
  ['pool', ['--frontOps', 'none']],
  ['split', ['--frontOps', 'cheap']],
  ['inline', ['--connectionPoolSize', '0']],
] as const) {
  t.test(`--maxPendingRequests (${mode}): past the limit a request is answered 503 at once, and the broker recovers`, async (t) => {
    const ctxServer = await heldContextServer();
    const broker = await startBroker(['--maxPendingRequests', '3', ...args], {}, { pool: true });
    try {
      const held = Array.from({ length: 3 }, () => call(broker, 'GET', `${NGSI}/types`, { headers: { link: linkTo(ctxServer.url) } }));
      // The health port counts the requests the pipeline holds.
      let holding = 0;
      await until(
        () => holding === 3,
        'the pipeline holds the three',
        async () => {
          const health = (await fetch(`http://127.0.0.1:${broker.healthPort}/health`).then((r) => r.json())) as {
            pool?: { inFlight: number };
          };
          holding = health.pool?.inFlight ?? 0;
        },
      );
      const refused = await call(broker, 'GET', `${NGSI}/types`);
      t.equal(refused.status, 503);
      t.equal((refused.json as { type: string }).type, 'https://uri.etsi.org/ngsi-ld/errors/Unavailable');
      t.match((refused.json as { detail: string }).detail, /maxPendingRequests/);
      t.equal(refused.headers.get('retry-after'), '1', 'RFC 9110 §10.2.3: when to come back');
      ctxServer.release();
      t.same(
        (await Promise.all(held)).map((r) => r.status),
        [200, 200, 200],
        'the held requests complete',
      );
      t.equal((await call(broker, 'GET', `${NGSI}/types`)).status, 200, 'and new requests are admitted again');
    } finally {
      t.equal(await broker.stop(), 0, 'clean exit');
      ctxServer.close();
    }
  });
}
