// GET /entities keeps the compiled form of a query string per @context (ops/query-compiled.ts): the same query string
// under another @context selects and renders by that context, a bad one is refused every time, a string pushed out
// of the kept ones is compiled again, and no request changes what a later one with the same string is answered.
import t, { type Test } from 'tap';
import { startBroker, call, NGSI, type Broker } from './helpers/broker.js';
import { COMPILED_PER_CONTEXT } from '../../src/ops/query-compiled.js';

let broker: Broker;
const ERR = 'https://uri.etsi.org/ngsi-ld/errors/';
const enc = encodeURIComponent;
t.before(async () => {
  broker = await startBroker();
  const body = [
    { id: 'urn:ngsi-ld:Boat:a1', type: 'https://example.org/a/Boat', speed: { type: 'Property', value: 5 } },
    { id: 'urn:ngsi-ld:Boat:b1', type: 'https://example.org/b/Boat', speed: { type: 'Property', value: 7 } },
    { id: 'urn:ngsi-ld:Boat:b2', type: 'https://example.org/b/Boat', speed: { type: 'Property', value: 9 } },
  ];
  const r = await call(broker, 'POST', `${NGSI}/entityOperations/create`, { body });
  if (r.status !== 201) throw new Error(r.text);
});
t.teardown(async () => {
  await broker.stop();
});

/** A @context kept by the broker, as a Link header naming it. */
async function linkTo(t: Test, ctx: Record<string, string>): Promise<string> {
  const hosted = await call(broker, 'POST', `${NGSI}/jsonldContexts`, { body: { '@context': ctx } });
  t.equal(hosted.status, 201, hosted.text);
  return `<${broker.url}${hosted.headers.get('location')}>; rel="http://www.w3.org/ns/json-ld#context"; type="application/ld+json"`;
}
const get = (q: string, headers: Record<string, string> = {}) => call(broker, 'GET', `${NGSI}/entities?${q}`, { headers });
const ids = (r: { json: any }): string[] => (r.json as Array<{ id: string }>).map((e) => e.id).sort();

t.test('the same query string under two @contexts selects and renders by each, asked in turn', async (t) => {
  const a = await linkTo(t, { Boat: 'https://example.org/a/Boat', vitesse: 'https://uri.etsi.org/ngsi-ld/default-context/speed' });
  const b = await linkTo(t, { Boat: 'https://example.org/b/Boat', velocidad: 'https://uri.etsi.org/ngsi-ld/default-context/speed' });
  for (let round = 0; round < 3; round++) {
    const ra = await get('type=Boat', { link: a });
    t.equal(ra.status, 200, ra.text);
    t.same(ids(ra), ['urn:ngsi-ld:Boat:a1'], `round ${round}: context a`);
    t.equal(ra.json[0].vitesse.value, 5, 'compacted with context a');
    const rb = await get('type=Boat', { link: b });
    t.same(ids(rb), ['urn:ngsi-ld:Boat:b1', 'urn:ngsi-ld:Boat:b2'], `round ${round}: context b`);
    t.ok(
      rb.json.every((e: any) => e.velocidad !== undefined && e.vitesse === undefined),
      'compacted with context b',
    );
    const core = await get('type=Boat');
    t.same(core.json, [], 'the core context expands Boat to neither');
  }
});

t.test('a bad query string is refused each time it comes, and the good one beside it still answers', async (t) => {
  for (let round = 0; round < 3; round++) {
    const bad = await get(`type=${enc('https://example.org/b/Boat')}&q=${enc('speed>>1')}`);
    t.equal(bad.status, 400, bad.text);
    t.equal(bad.json.type, `${ERR}InvalidRequest`);
    const badLimit = await get(`type=${enc('https://example.org/b/Boat')}&limit=5000`);
    t.equal(badLimit.status, 403, 'limit above the maximum: TooManyResults every time');
    const good = await get(`type=${enc('https://example.org/b/Boat')}&q=${enc('speed>8')}`);
    t.same(ids(good), ['urn:ngsi-ld:Boat:b2']);
  }
});

t.test('more query strings than are kept: the first, pushed out, is compiled again and answers the same', async (t) => {
  const first = `type=${enc('https://example.org/b/Boat')}&limit=1`;
  const r1 = await get(first);
  t.same(ids(r1), ['urn:ngsi-ld:Boat:b1']);
  t.match(r1.headers.get('link'), /rel="next"/);
  for (let i = 0; i <= COMPILED_PER_CONTEXT; i++) {
    const r = await get(`type=${enc('https://example.org/b/Boat')}&q=${enc(`speed>${i}`)}`);
    t.equal(r.status, 200, r.text);
  }
  const again = await get(first);
  t.same(again.json, r1.json);
  t.equal(again.headers.get('link'), r1.headers.get('link'));
});

t.test('answers in other media and with count, then the plain query string again: each as asked', async (t) => {
  const q = `type=${enc('https://example.org/b/Boat')}&attrs=speed`;
  const geo = await get(q, { accept: 'application/geo+json' });
  t.equal(geo.status, 200, geo.text);
  t.equal(geo.json.type, 'FeatureCollection');
  const ld = await get(q, { accept: 'application/ld+json' });
  t.ok(ld.json.every((e: any) => e['@context'] !== undefined));
  const counted = await get(`${q}&count=true`);
  t.equal(counted.headers.get('ngsild-results-count'), '2');
  const plain = await get(q);
  t.same(ids(plain), ['urn:ngsi-ld:Boat:b1', 'urn:ngsi-ld:Boat:b2']);
  t.equal(plain.headers.get('ngsild-results-count'), null);
  t.ok(plain.json.every((e: any) => e['@context'] === undefined && e.speed !== undefined));
  // Page links: the same start, each with the media type of its own answer.
  const nextOf = (r: { headers: Headers }): string | undefined =>
    r.headers
      .get('link')
      ?.split(/,\s*(?=<)/)
      .find((l) => l.includes('rel="next"'));
  const geoNext = nextOf(await get(`${q}&limit=1`, { accept: 'application/geo+json' }));
  const jsonNext = nextOf(await get(`${q}&limit=1`));
  t.match(geoNext, /^<\/ngsi-ld\/v1\/entities\?type=[^>]*&attrs=speed&limit=1&offset=1>; rel="next"; type="application\/geo\+json"$/);
  t.equal(jsonNext, geoNext?.replace('application/geo+json', 'application/json'));
});
