// Issue 13 item 2: a client naming @context URLs that never answer slows only itself. Its requests wait for their
// fetches off the pipeline's slots, so plain requests of other clients are answered meanwhile; a batch naming one
// slow URL in many entries costs one fetch. Ordering facts only, no timing: the slow requests cannot finish before
// the 5 s fetch deadline, and every plain GET must be answered while they all still wait.
import t from 'tap';
import { createServer, type Server } from 'node:http';
import type { Socket } from 'node:net';
import { startBroker, call, NGSI, type Broker } from './helpers/broker.js';

const ERR = 'https://uri.etsi.org/ngsi-ld/errors/';
let broker: Broker;
/** Accepts connections and reads requests, never answers. */
let silent: Server;
let silentBase = '';
const sockets = new Set<Socket>();
/** Requests the silent server received, by path. */
const received = new Map<string, number>();

t.before(async () => {
  silent = createServer((req) => {
    const path = (req.url ?? '/').split('?')[0]!;
    received.set(path, (received.get(path) ?? 0) + 1);
  });
  silent.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
  silentBase = `http://127.0.0.1:${(silent.address() as { port: number }).port}`;
  broker = await startBroker([], {}, { pool: true });
});
t.teardown(async () => {
  await broker.stop();
  for (const s of sockets) s.destroy();
  silent.close();
});

const linkTo = (url: string): string => `<${url}>; rel="http://www.w3.org/ns/json-ld#context"; type="application/ld+json"`;

async function until(cond: () => boolean, what: string, poll?: () => Promise<void>): Promise<void> {
  for (let i = 0; i < 1000; i++) {
    await poll?.();
    if (cond()) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`gave up waiting until ${what}`);
}

async function pipelineHolds(): Promise<number> {
  const health = (await fetch(`http://127.0.0.1:${broker.healthPort}/health`).then((r) => r.json())) as { pool?: { inFlight: number } };
  return health.pool?.inFlight ?? 0;
}

t.test('200 requests whose @context never arrives do not delay plain GETs: all 50 are answered while the 200 still wait', async (t) => {
  const id = 'urn:ngsi-ld:Plain:1';
  t.equal((await call(broker, 'POST', `${NGSI}/entities`, { body: { id, type: 'Plain', n: { type: 'Property', value: 7 } } })).status, 201);
  let slowFinished = 0;
  const slow: Array<Promise<{ status: number; type: unknown }>> = [];
  for (let i = 0; i < 200; i++) {
    // Distinct URLs: one shared fetch would hide the cost of many.
    slow.push(
      call(broker, 'GET', `${NGSI}/entities/${id}`, { headers: { link: linkTo(`${silentBase}/ctx/${i}.jsonld`) } }).then((r) => {
        slowFinished++;
        return { status: r.status, type: (r.json as { type?: unknown } | undefined)?.type };
      }),
    );
    // Spread over turns of the broker's event loop, as independent clients would arrive (one batch each).
    if (i % 4 === 3) await new Promise((r) => setTimeout(r, 1));
  }
  let holding = 0;
  await until(
    () => holding >= 200,
    'the pipeline holds the 200 slow requests',
    async () => {
      holding = await pipelineHolds();
    },
  );
  t.equal(slowFinished, 0, 'no slow request has finished when the plain GETs start');

  const plain = await Promise.all(Array.from({ length: 50 }, () => call(broker, 'GET', `${NGSI}/entities/${id}?options=keyValues`)));
  const finishedMeanwhile = slowFinished;
  t.ok(
    plain.every((r) => r.status === 200 && (r.json as { id: string; n: number }).id === id && (r.json as { n: number }).n === 7),
    'every plain GET is answered correctly',
  );
  t.equal(finishedMeanwhile, 0, 'all 50 plain GETs were answered before the first slow request finished');

  const outcomes = await Promise.all(slow);
  t.ok(
    outcomes.every((o) => o.status === 503 && o.type === `${ERR}LdContextNotAvailable`),
    'each slow request ends 503 LdContextNotAvailable',
  );
});

t.test('a batch whose entries all name one silent @context URL costs one fetch of it, not one per entry', async (t) => {
  const url = `${silentBase}/batch-shared.jsonld`;
  const entries = Array.from({ length: 8 }, (_, i) => ({ id: `urn:ngsi-ld:B:${i}`, type: 'B', '@context': [url] }));
  const r = await call(broker, 'POST', `${NGSI}/entityOperations/create`, {
    body: entries,
    headers: { 'content-type': 'application/ld+json' },
  });
  t.equal(r.status, 207, r.text);
  const errors = (r.json as { errors: Array<{ error: { type: string } }> }).errors;
  t.equal(errors.length, 8);
  t.ok(
    errors.every((e) => e.error.type === `${ERR}LdContextNotAvailable`),
    'every entry fails LdContextNotAvailable',
  );
  t.equal(received.get('/batch-shared.jsonld'), 1, 'the silent server was asked once');
});

t.test("batches waiting for a silent @context hold none of the thread's batch slots: a plain batch is answered first", async (t) => {
  // Batch operations run a few at once per thread (ops/batch-slots.ts); one waiting for a remote @context gives its
  // slot up, so more of them than there are slots still let another client's batch through on the same thread.
  const one = await startBroker(['--connectionPoolSize', '1'], {}, { pool: true });
  try {
    const order: string[] = [];
    const slow = Array.from({ length: 8 }, (_, b) =>
      call(one, 'POST', `${NGSI}/entityOperations/upsert`, {
        body: [{ id: `urn:ngsi-ld:S:${b}`, type: 'S', '@context': [`${silentBase}/slots/${b}.jsonld`] }],
        headers: { 'content-type': 'application/ld+json' },
      }).then((r) => {
        order.push('slow');
        return r;
      }),
    );
    // 4 fetches per host run at once (the others wait in the fetcher's line): four asked, every batch is waiting.
    await until(() => [...received.keys()].filter((p) => p.startsWith('/slots/')).length >= 4, 'the slow batches wait for their @contexts');
    const plain = await call(one, 'POST', `${NGSI}/entityOperations/upsert`, { body: [{ id: 'urn:ngsi-ld:P:1', type: 'P' }] });
    order.push('plain');
    t.equal(plain.status, 201, plain.text);
    const answers = await Promise.all(slow);
    t.equal(order[0], 'plain', 'the plain batch was answered while all eight still waited');
    t.ok(
      answers.every((r) => r.status === 207),
      'each slow batch ends with its entry LdContextNotAvailable',
    );
  } finally {
    t.equal(await one.stop(), 0, 'clean exit');
  }
});

t.test(
  'past 256 requests per pipeline thread waiting for @contexts, one more is refused 503 Unavailable with Retry-After at once',
  async (t) => {
    const capped = await startBroker(['--connectionPoolSize', '2']);
    try {
      const order: string[] = [];
      const sent = Array.from({ length: 600 }, (_, i) =>
        call(capped, 'GET', `${NGSI}/types`, { headers: { link: linkTo(`${silentBase}/cap/${i}.jsonld`) } }).then((r) => {
          const type = (r.json as { type?: string } | undefined)?.type ?? '';
          order.push(type);
          return { status: r.status, type, retryAfter: r.headers.get('retry-after') };
        }),
      );
      const all = await Promise.all(sent);
      const refused = all.filter((r) => r.type === `${ERR}Unavailable`);
      t.ok(refused.length >= 600 - 2 * 256, `at least ${600 - 2 * 256} refused (${refused.length})`);
      t.ok(
        refused.every((r) => r.status === 503 && r.retryAfter === '5'),
        'each 503 with Retry-After: 5',
      );
      const waited = all.filter((r) => r.type === `${ERR}LdContextNotAvailable`);
      t.equal(refused.length + waited.length, 600, 'the others waited for their fetch and ended 503 LdContextNotAvailable');
      t.equal(order.indexOf(`${ERR}LdContextNotAvailable`), refused.length, 'every refusal came before the first waiting request ended');
    } finally {
      t.equal(await capped.stop(), 0, 'clean exit');
    }
  },
);
