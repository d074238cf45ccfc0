// Remote @context fetches cost a slow server little (issue 13): one fetch per URL at a time, failures remembered
// briefly, fetches bounded per host and in all under one deadline, the URLs of a context fetched side by side, and a
// request told (parked) when it has to wait for the network. Real HTTP servers on 127.0.0.1 that hold every request
// until the test answers: no timing is asserted.
import t from 'tap';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { ContextService, type ContextServiceOptions } from '../../src/pipeline/contexts/context-service.js';
import { LdError } from '../../src/ngsild/problem.js';
import { ContextWait, ParkingLot } from '../../src/pipeline/context-wait.js';
import { rejectsLd } from './helpers/errors.js';

interface HeldServer {
  base: string;
  /** Requests received, by path. */
  received: Map<string, number>;
  /** Requests received and not answered yet. */
  held: () => number;
  /** Most requests held at once, and most connections open at once. */
  maxHeld: () => number;
  maxSockets: () => number;
  /** Answers every held request (200 with a context naming the path, or 404 for paths under /missing). */
  answerAll: () => void;
  close: () => void;
}

async function heldServer(): Promise<HeldServer> {
  const received = new Map<string, number>();
  let waiting: Array<() => void> = [];
  let maxHeld = 0;
  let sockets = 0;
  let maxSockets = 0;
  const open = new Set<Socket>();
  const server = createServer((req, res: ServerResponse) => {
    const path = (req.url ?? '/').split('?')[0]!;
    received.set(path, (received.get(path) ?? 0) + 1);
    waiting.push(() => {
      if (path.startsWith('/missing')) res.writeHead(404).end();
      else
        res
          .writeHead(200, { 'content-type': 'application/ld+json' })
          .end(JSON.stringify({ '@context': { [`t${path.replace(/\W/g, '')}`]: `https://ex.org${path}` } }));
    });
    maxHeld = Math.max(maxHeld, waiting.length);
  });
  server.on('connection', (s: Socket) => {
    open.add(s);
    maxSockets = Math.max(maxSockets, ++sockets);
    s.on('close', () => {
      sockets--;
      open.delete(s);
    });
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  return {
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    received,
    held: () => waiting.length,
    maxHeld: () => maxHeld,
    maxSockets: () => maxSockets,
    answerAll: () => {
      const all = waiting;
      waiting = [];
      for (const answer of all) answer();
    },
    close: () => {
      for (const s of open) s.destroy();
      server.close();
    },
  };
}

async function until(cond: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 300; i++) {
    if (cond()) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`gave up waiting until ${what}`);
}

/** A pause long enough for fetches that were going to start to reach the server (not an assertion of time). */
const grace = (): Promise<void> => new Promise((r) => setTimeout(r, 100));

async function fresh(opts: ContextServiceOptions = {}): Promise<ContextService> {
  const r = new ContextService(opts);
  await r.init();
  return r;
}

t.test('concurrent loads of one URL share one fetch, whichever contexts name it', async (t) => {
  const s = await heldServer();
  t.teardown(s.close);
  const r = await fresh();
  const url = `${s.base}/shared.jsonld`;
  const all = Promise.all([
    ...Array.from({ length: 5 }, () => r.resolve(url)),
    ...Array.from({ length: 5 }, (_, i) => r.resolve([url, { [`extra${i}`]: `https://ex.org/extra${i}` }])),
  ]);
  await until(() => s.held() === 1, 'the fetch reaches the server');
  await grace();
  s.answerAll();
  const contexts = await all;
  t.equal(s.received.get('/shared.jsonld'), 1, 'the server was asked once');
  t.ok(
    contexts.every((c) => c.expandTerm('tsharedjsonld') === 'https://ex.org/shared.jsonld'),
    'every load got the document',
  );
});

t.test(
  'a failed fetch is remembered for failureMemoryMs: loads meanwhile fail at once without asking, then it is fetched again',
  async (t) => {
    const s = await heldServer();
    t.teardown(s.close);
    let now = 1_000_000;
    const r = await fresh({ fetches: { failureMemoryMs: 3000, now: () => now } });
    const url = `${s.base}/missing.jsonld`;
    const first = r.resolve(url);
    await until(() => s.held() === 1, 'the fetch reaches the server');
    s.answerAll();
    await rejectsLd(t, first, 'LdContextNotAvailable', 'the server answered 404');
    now += 1000;
    const again = r.resolve([url, { other: 'https://ex.org/other' }]);
    await rejectsLd(t, again, 'LdContextNotAvailable', 'the server answered 404');
    const remembered = await again.catch((e: unknown) => e);
    t.equal(remembered instanceof LdError ? remembered.retryAfter : undefined, 2, 'Retry-After: the seconds until it is asked again');
    t.equal(s.received.get('/missing.jsonld'), 1, 'within the window the server is not asked');
    now += 2001;
    const later = r.resolve(url);
    await until(() => s.held() === 1, 'after the window the fetch reaches the server again');
    s.answerAll();
    await rejectsLd(t, later, 'LdContextNotAvailable', 'the server answered 404');
    t.equal(s.received.get('/missing.jsonld'), 2, 'asked again once the window passed');
  },
);

t.test('forget (DELETE /jsonldContexts) and reload drop a remembered failure', async (t) => {
  const s = await heldServer();
  t.teardown(s.close);
  const r = await fresh({ fetches: { failureMemoryMs: 60_000 } });
  const url = `${s.base}/missing-then-forgotten.jsonld`;
  const first = r.resolve(url);
  await until(() => s.held() === 1, 'the fetch reaches the server');
  s.answerAll();
  await rejectsLd(t, first, 'LdContextNotAvailable', '404');
  r.forget(url);
  const again = r.resolve(url);
  await until(() => s.held() === 1, 'after forget the server is asked again');
  s.answerAll();
  await rejectsLd(t, again, 'LdContextNotAvailable', '404');
  const reload = r.reload(url);
  await until(() => s.held() === 1, 'a reload asks the server whatever is remembered');
  s.answerAll();
  await rejectsLd(t, reload, 'LdContextNotAvailable', '404');
  t.equal(s.received.get('/missing-then-forgotten.jsonld'), 3);
});

t.test('at most perHost fetches of one host run at once; the rest wait their turn and succeed', async (t) => {
  const s = await heldServer();
  t.teardown(s.close);
  const r = await fresh({ fetches: { perHost: 3, total: 10 } });
  const all = Promise.all(Array.from({ length: 12 }, (_, i) => r.resolve(`${s.base}/c${i}.jsonld`)));
  let answered = 0;
  while (answered < 12) {
    await until(() => s.held() === Math.min(3, 12 - answered), 'the next fetches reach the server');
    await grace();
    t.equal(s.held(), Math.min(3, 12 - answered), 'no more than 3 at once');
    answered += s.held();
    s.answerAll();
  }
  const contexts = await all;
  t.equal(contexts.length, 12, 'every load succeeds');
  t.equal(s.maxHeld(), 3, 'the server saw at most 3 requests at once');
  t.ok(s.maxSockets() <= 3, `and at most 3 connections at once (${s.maxSockets()})`);
});

t.test('at most total fetches run at once over all hosts', async (t) => {
  const a = await heldServer();
  const b = await heldServer();
  t.teardown(() => {
    a.close();
    b.close();
  });
  const r = await fresh({ fetches: { perHost: 2, total: 3 } });
  const all = Promise.all(Array.from({ length: 8 }, (_, i) => r.resolve(`${(i % 2 === 0 ? a : b).base}/c${i}.jsonld`)));
  let answered = 0;
  while (answered < 8) {
    await until(() => a.held() + b.held() === Math.min(3, 8 - answered), 'the next fetches reach the servers');
    await grace();
    t.ok(a.held() <= 2 && b.held() <= 2 && a.held() + b.held() <= 3, `${a.held()} + ${b.held()} at once`);
    answered += a.held() + b.held();
    a.answerAll();
    b.answerAll();
  }
  t.equal((await all).length, 8);
  t.ok(a.maxHeld() <= 2 && b.maxHeld() <= 2, 'per host');
});

t.test('a fetch waiting for a slot fails on its own deadline, started when it was asked for, and never reaches the server', async (t) => {
  const s = await heldServer();
  t.teardown(s.close);
  const deadlines: AbortController[] = [];
  const r = await fresh({
    fetches: {
      perHost: 1,
      deadline: () => {
        const c = new AbortController();
        deadlines.push(c);
        return c.signal;
      },
    },
  });
  const running = r.resolve(`${s.base}/first.jsonld`);
  const queued = r.resolve(`${s.base}/second.jsonld`);
  await until(() => s.held() === 1, 'the first fetch reaches the server');
  t.equal(deadlines.length, 2, 'both deadlines run from the load, the queued one included');
  deadlines[1]!.abort();
  await rejectsLd(t, queued, 'LdContextNotAvailable', /no answer within 5000 ms \(it waited for one of the 1 fetches allowed per host/);
  s.answerAll();
  t.equal((await running).expandTerm('tfirstjsonld'), 'https://ex.org/first.jsonld');
  t.equal(s.received.get('/second.jsonld'), undefined, 'the expired fetch was never sent');
  // A fetch that expired in the queue says nothing about its URL: the next load tries it.
  const retry = r.resolve(`${s.base}/second.jsonld`);
  await until(() => s.held() === 1, 'the retry reaches the server');
  s.answerAll();
  t.equal((await retry).expandTerm('tsecondjsonld'), 'https://ex.org/second.jsonld');
});

t.test('the URLs a context names are fetched side by side, not one after another', async (t) => {
  const s = await heldServer();
  t.teardown(s.close);
  const r = await fresh();
  const both = r.resolve([`${s.base}/a.jsonld`, { local: 'https://ex.org/local' }, `${s.base}/b.jsonld`, `${s.base}/c.jsonld`]);
  await until(() => s.held() === 3, 'all three fetches reach the server before any is answered');
  s.answerAll();
  const ctx = await both;
  t.equal(ctx.expandTerm('tajsonld'), 'https://ex.org/a.jsonld');
  t.equal(ctx.expandTerm('tcjsonld'), 'https://ex.org/c.jsonld');
  t.equal(ctx.expandTerm('local'), 'https://ex.org/local');
  // The first failure in context order is the answer, as when they were fetched in turn.
  const failing = r.resolve([`${s.base}/missing-1.jsonld`, `${s.base}/missing-2.jsonld`]);
  await until(() => s.held() === 2, 'both failing fetches are under way');
  s.answerAll();
  await rejectsLd(t, failing, 'LdContextNotAvailable', 'missing-1');
});

t.test('a request is parked when its context waits for the network, and only then', async (t) => {
  const s = await heldServer();
  t.teardown(s.close);
  const r = await fresh();
  const lot = new ParkingLot(2);
  const url = `${s.base}/parked.jsonld`;
  const first = new ContextWait(lot, undefined);
  const p1 = r.resolve(url, first);
  await until(() => s.held() === 1, 'the fetch reaches the server');
  t.ok(first.parked, 'the request that started the fetch is parked');
  const joining = new ContextWait(lot, undefined);
  const p2 = r.resolve([url, { more: 'https://ex.org/more' }], joining);
  await until(() => joining.parked, 'a request whose context shares the fetch parks too');
  t.equal(lot.parked, 2);
  const refused = new ContextWait(lot, undefined);
  const p3 = r.resolve(url, refused);
  const err = await p3.catch((e: unknown) => e);
  t.ok(
    err instanceof LdError && err.kind === 'Unavailable' && err.status === 503,
    "past the lot's bound a request is refused 503 Unavailable at once",
  );
  t.equal((err as LdError).retryAfter, 5, 'with Retry-After');
  t.notOk(refused.parked);
  s.answerAll();
  t.equal((await p1).expandTerm('tparkedjsonld'), 'https://ex.org/parked.jsonld', 'the parked requests get the context');
  t.equal((await p2).expandTerm('more'), 'https://ex.org/more');
  first.end();
  joining.end();
  t.equal(lot.parked, 0, 'and leave the lot when they end');
  const cached = new ContextWait(lot, undefined);
  await r.resolve([url, { again: 'https://ex.org/again' }], cached);
  t.notOk(cached.parked, 'a context whose documents are at hand parks nothing');
});

t.test('a request refused a wait leaves the fetch going; its failure, awaited by no one, is no unhandled rejection', async (t) => {
  const s = await heldServer();
  t.teardown(s.close);
  const r = await fresh();
  const full = new ParkingLot(0);
  const refused = r.resolve(`${s.base}/missing-nobody-waits.jsonld`, new ContextWait(full, undefined));
  await rejectsLd(t, refused, 'Unavailable', 'already wait for remote @contexts');
  await until(() => s.held() === 1, 'the fetch goes on');
  s.answerAll();
  await grace();
  // The failure is remembered for the next request (and a rejection nobody awaited would fail this test file).
  await rejectsLd(t, r.resolve(`${s.base}/missing-nobody-waits.jsonld`), 'LdContextNotAvailable', '404');
  t.equal(s.received.get('/missing-nobody-waits.jsonld'), 1);
});

t.test('a parked request gives its slot back once; one that never parks gives it back when it ends', async (t) => {
  let released = 0;
  const slot = {
    release: () => {
      released++;
    },
  };
  const lot = new ParkingLot(1);
  const parking = new ContextWait(lot, slot);
  parking.park();
  parking.park();
  t.equal(released, 1, 'parking twice releases once');
  parking.end();
  t.equal(released, 1, 'ending a parked request releases nothing more');
  t.equal(lot.parked, 0);
  const plain = new ContextWait(lot, slot);
  plain.end();
  t.equal(released, 2);
});
