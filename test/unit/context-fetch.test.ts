import t from 'tap';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ContextService } from '../../src/pipeline/contexts/context-service.js';
import { CORE_URLS } from '../../src/ngsild/context/core-contexts.js';
import { rejectsLd } from './helpers/errors.js';

// A real HTTP server on 127.0.0.1 serving contexts, slow answers, errors and oversized documents.

const TIMEOUT_MS = 400;
const hits = new Map<string, number>();
let base = '';

function json(res: ServerResponse, body: unknown, type = 'application/ld+json'): void {
  res.writeHead(200, { 'content-type': type });
  res.end(JSON.stringify(body));
}

const server: Server = createServer((req, res) => {
  const path = (req.url ?? '/').split('?')[0]!;
  hits.set(path, (hits.get(path) ?? 0) + 1);
  switch (path) {
    case '/ok.jsonld':
    case '/ok2.jsonld':
      return json(res, { '@context': { brand: 'https://ex.org/brand', ex: 'https://ex.org/' } });
    case '/plain-json':
      return json(res, { '@context': { tyre: 'https://ex.org/tyre' } }, 'text/plain');
    case '/slow-ok.jsonld':
      setTimeout(() => json(res, { '@context': { slow: 'https://ex.org/slow' } }), 150);
      return;
    case '/import.jsonld':
      return json(res, { '@context': { '@import': `${base}/ok.jsonld`, model: 'https://ex.org/model' } });
    case '/compound.jsonld':
      return json(res, { '@context': [`${base}/ok.jsonld`, CORE_URLS['1.8']] });
    case '/redirect':
      res.writeHead(302, { location: '/ok2.jsonld' });
      res.end();
      return;
    case '/missing':
      res.writeHead(404);
      res.end('no such context');
      return;
    case '/error':
      res.writeHead(500);
      res.end();
      return;
    case '/hang':
      return; // never answers
    case '/hang-body':
      res.writeHead(200, { 'content-type': 'application/ld+json' });
      res.write('{"@context": {');
      return; // headers, then nothing
    case '/big': {
      // 10 MB, chunked (no content-length): the cap must act while streaming.
      res.writeHead(200, { 'content-type': 'application/ld+json' });
      const filler = Buffer.alloc(64 * 1024, 0x20);
      res.write('{"@context": {}, "pad": "');
      let sent = 0;
      const pump = (): void => {
        while (sent < 10 * 1024 * 1024) {
          sent += filler.length;
          if (!res.write(filler)) {
            res.once('drain', pump);
            return;
          }
        }
        res.end('"}');
      };
      res.on('error', () => undefined);
      pump();
      return;
    }
    case '/big-declared':
      res.writeHead(200, { 'content-type': 'application/ld+json', 'content-length': String(10 * 1024 * 1024) });
      res.write('{');
      return;
    case '/invalid':
      res.writeHead(200, { 'content-type': 'application/ld+json' });
      res.end('{"@context": {"a": "http://ex.org/a",');
      return;
    case '/array':
      return json(res, [{ '@context': {} }]);
    case '/deep':
      res.writeHead(200, { 'content-type': 'application/ld+json' });
      res.end('{"@context":' + '{"a":'.repeat(100_000) + '"x"' + '}'.repeat(100_000) + '}');
      return;
    case '/proto':
      // Raw text: in an object literal, __proto__ would be the prototype, not a member.
      res.writeHead(200, { 'content-type': 'application/ld+json' });
      res.end('{"@context": {"a": "https://ex.org/a", "s": {"@id": "https://ex.org/s", "@context": {"__proto__": "https://ex.org/p"}}}}');
      return;
    case '/no-context':
      return json(res, { brand: 'https://ex.org/brand' });
    case '/protected':
      return json(res, { '@context': { location: 'https://ex.org/location' } });
    case '/cycle-a':
      return json(res, { '@context': [`${base}/cycle-b`] });
    case '/cycle-b':
      return json(res, { '@context': [`${base}/cycle-a`] });
    case '/scoped-missing':
      return json(res, { '@context': { T: { '@id': 'https://ex.org/T', '@context': `${base}/missing` } } });
    default:
      res.writeHead(404);
      res.end();
  }
});

await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
t.teardown(() => {
  server.closeAllConnections();
  server.close();
});

async function fresh(opts: { maxContextBytes?: number } = {}): Promise<ContextService> {
  const r = new ContextService({ fetchTimeoutMs: TIMEOUT_MS, ...opts });
  await r.init();
  return r;
}

t.test('a context served over HTTP is fetched and applied, core last', async (t) => {
  const r = await fresh();
  const ctx = await r.resolve(`${base}/ok.jsonld`);
  t.equal(ctx.expandTerm('brand'), 'https://ex.org/brand');
  t.equal(ctx.expandTerm('ex:wheel'), 'https://ex.org/wheel');
  t.equal(ctx.compactIri('https://ex.org/wheel'), 'ex:wheel');
  t.equal(ctx.expandTerm('location'), 'https://uri.etsi.org/ngsi-ld/location');
  t.equal(ctx.linkUrl, `${base}/ok.jsonld`);
  t.equal(ctx.contextValue, `${base}/ok.jsonld`, 'echoed as the request named it');
  t.equal((await r.resolve(`${base}/plain-json`)).expandTerm('tyre'), 'https://ex.org/tyre', 'any content type is read as JSON');
  t.equal((await r.resolve(`${base}/redirect`)).expandTerm('brand'), 'https://ex.org/brand', 'redirects are followed');
});

t.test('a second resolve of the same URL makes no request', async (t) => {
  const r = await fresh();
  const before = hits.get('/ok.jsonld') ?? 0;
  const first = await r.resolve(`${base}/ok.jsonld`);
  t.equal(hits.get('/ok.jsonld'), before + 1, 'one request');
  t.equal(await r.resolve(`${base}/ok.jsonld`), first, 'the same resolved context');
  t.equal(r.resolveCachedUrl(`${base}/ok.jsonld`), first, 'the sync fast path has it');
  // Another context naming the same URL uses the cached document.
  const other = await r.resolve([`${base}/ok.jsonld`, { extra: 'https://ex.org/extra' }]);
  t.equal(other.expandTerm('brand'), 'https://ex.org/brand');
  const compound = await r.resolve(`${base}/compound.jsonld`);
  t.equal(compound.expandTerm('brand'), 'https://ex.org/brand');
  t.equal(hits.get('/ok.jsonld'), before + 1, 'still one request');
});

t.test('concurrent resolves of one URL make one request', async (t) => {
  const r = await fresh();
  const before = hits.get('/slow-ok.jsonld') ?? 0;
  const all = await Promise.all([1, 2, 3, 4, 5].map(() => r.resolve(`${base}/slow-ok.jsonld`)));
  t.equal(hits.get('/slow-ok.jsonld'), before + 1);
  t.ok(all.every((c) => c === all[0]));
});

t.test('@import of a remote context is followed', async (t) => {
  const r = await fresh();
  const ctx = await r.resolve(`${base}/import.jsonld`);
  t.equal(ctx.expandTerm('model'), 'https://ex.org/model');
  t.equal(ctx.expandTerm('brand'), 'https://ex.org/brand');
});

t.test('a URL answering 404 or 500 is LdContextNotAvailable (503)', async (t) => {
  const r = await fresh();
  await rejectsLd(t, r.resolve(`${base}/missing`), 'LdContextNotAvailable', 'answered 404');
  await rejectsLd(t, r.resolve(`${base}/error`), 'LdContextNotAvailable', 'answered 500');
  await rejectsLd(t, r.resolve([{ a: 'https://ex.org/a' }, `${base}/missing`]), 'LdContextNotAvailable', 'answered 404');
  await rejectsLd(t, r.resolve(`${base}/scoped-missing`), 'LdContextNotAvailable', 'answered 404');
  t.equal(r.resolveCachedUrl(`${base}/missing`), undefined);
  const before = hits.get('/missing') ?? 0;
  await rejectsLd(t, r.resolve(`${base}/missing`), 'LdContextNotAvailable', 'answered 404');
  t.equal(
    hits.get('/missing'),
    before,
    'a failure is remembered a moment: the next request does not ask again (context-fetch-limits.test.ts)',
  );
});

t.test('a refused connection is LdContextNotAvailable (503)', async (t) => {
  const probe = createServer();
  await new Promise<void>((ok) => probe.listen(0, '127.0.0.1', ok));
  const port = (probe.address() as AddressInfo).port;
  await new Promise((ok) => probe.close(ok));
  const r = await fresh();
  await rejectsLd(t, r.resolve(`http://127.0.0.1:${port}/ctx.jsonld`), 'LdContextNotAvailable', 'is not available');
});

t.test('a server that never answers is LdContextNotAvailable (503) within the timeout', async (t) => {
  const r = await fresh();
  for (const path of ['/hang', '/hang-body']) {
    const start = Date.now();
    await rejectsLd(t, r.resolve(`${base}${path}`), 'LdContextNotAvailable', `within ${TIMEOUT_MS} ms`);
    const took = Date.now() - start;
    t.ok(took >= TIMEOUT_MS - 20 && took < TIMEOUT_MS + 1000, `${path} gave up after ${took} ms`);
  }
});

// Too big is 503, not 400: the spec's LdContextNotAvailable is "the broker could not obtain the context", and a
// document over the broker's own limit is exactly that; the client's request may be fine for another broker.
t.test('a context over maxContextBytes is LdContextNotAvailable (503), chunked or declared', async (t) => {
  const r = await fresh({ maxContextBytes: 1024 * 1024 });
  const start = Date.now();
  await rejectsLd(t, r.resolve(`${base}/big`), 'LdContextNotAvailable', 'more than the 1048576 bytes allowed');
  await rejectsLd(t, r.resolve(`${base}/big-declared`), 'LdContextNotAvailable', '10485760 bytes, more than the 1048576 allowed');
  t.ok(Date.now() - start < TIMEOUT_MS * 2, 'refused without reading everything');
  t.equal((await r.resolve(`${base}/ok.jsonld`)).expandTerm('brand'), 'https://ex.org/brand', 'the resolver keeps working');
});

t.test('a document that is not a valid context is InvalidRequest (400)', async (t) => {
  const r = await fresh();
  await rejectsLd(t, r.resolve(`${base}/invalid`), 'InvalidRequest', 'is not valid JSON');
  await rejectsLd(t, r.resolve(`${base}/array`), 'InvalidRequest', 'a JSON object with an @context member');
  await rejectsLd(t, r.resolve(`${base}/deep`), 'InvalidRequest', 'is nested deeper than 64 levels');
  await rejectsLd(t, r.resolve(`${base}/no-context`), 'InvalidRequest', 'a JSON object with an @context member');
  await rejectsLd(t, r.resolve(`${base}/protected`), 'InvalidRequest', "protected core term 'location'");
  await rejectsLd(t, r.resolve(`${base}/cycle-a`), 'InvalidRequest', /Cyclical @context URLs/);
  await rejectsLd(t, r.resolve({ '@import': `${base}/invalid` }), 'InvalidRequest', 'is not valid JSON');
});

t.test('a fetched context defining a term __proto__ is refused (jsonld would drop the term)', async (t) => {
  const r = await fresh();
  await rejectsLd(
    t,
    r.resolve(`${base}/proto`),
    'InvalidRequest',
    /holds a member named "__proto__" \(at @context\.s\.@context\.__proto__\)/,
  );
  t.equal(r.cachedUrls().includes(`${base}/proto`), false, 'not cached, so never kept as Cached');
});
