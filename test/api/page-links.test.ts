// Pagination Link headers (CIM 009 v1.8 §5.5.9, §6.3.10) on every GET that pages with limit and offset: rel="next"
// exactly when items follow the page, rel="prev" when it does not start at 0, with and without count; the @context
// Link stays first; HEAD carries the same links; a POST query, whose next page needs its body, has none.
import t, { type Test } from 'tap';
import { startBroker, call, NGSI, type Broker } from './helpers/broker.js';
import { rawExchange } from './helpers/raw-http.js';

let broker: Broker;
const TYPE = 'PagedThing';
const CONTEXT_REL = 'rel="http://www.w3.org/ns/json-ld#context"';

t.before(async () => {
  broker = await startBroker(['--troe', 'embdb']);
  for (let i = 0; i < 3; i++) {
    const e = await call(broker, 'POST', `${NGSI}/entities`, {
      body: { id: `urn:ngsi-ld:${TYPE}:${i}`, type: TYPE, n: { type: 'Property', value: i } },
    });
    const s = await call(broker, 'POST', `${NGSI}/subscriptions`, {
      body: {
        id: `urn:ngsi-ld:Subscription:paged${i}`,
        type: 'Subscription',
        entities: [{ type: TYPE }],
        notification: { endpoint: { uri: 'http://127.0.0.1:9/notify' } },
      },
    });
    if (e.status !== 201 || s.status !== 201) throw new Error(`seed: ${e.text} ${s.text}`);
  }
  // The registrations last: an inclusive registration of the type gets later creates of it forwarded (CIM 009 §4.3.6).
  for (let i = 0; i < 3; i++) {
    const r = await call(broker, 'POST', `${NGSI}/csourceRegistrations`, {
      body: {
        id: `urn:ngsi-ld:ContextSourceRegistration:paged${i}`,
        type: 'ContextSourceRegistration',
        information: [{ entities: [{ type: TYPE }] }],
        endpoint: 'http://127.0.0.1:9/source',
      },
    });
    if (r.status !== 201) throw new Error(`seed: ${r.text}`);
  }
});
t.teardown(async () => {
  await broker.stop();
});

/** Each Link value of a header list joined by fetch, as [rel, target, type]. */
function linksOf(header: string | null): Array<[string, string, string]> {
  if (header === null) return [];
  return header.split(/,\s*(?=<)/).map((value) => {
    const m = /^<([^>]*)>; rel="([^"]+)"; type="([^"]+)"$/.exec(value);
    if (m === null) throw new Error(`unexpected Link value ${value}`);
    return [m[2]!, m[1]!, m[3]!];
  });
}

/** The page links only: the @context Link (there with application/json) is left out after checking it comes first. */
function pageLinksOf(t: Test, header: string | null): Array<[string, string]> {
  const all = linksOf(header);
  const contextAt = all.findIndex(([rel]) => rel.includes('json-ld#context'));
  if (contextAt >= 0) t.equal(contextAt, 0, 'the @context Link comes first');
  return all
    .filter(([rel]) => !rel.includes('json-ld#context'))
    .map(([rel, target, type]) => {
      t.equal(type, 'application/json', 'the link type is the media type of the answer');
      return [rel, target];
    });
}

interface Paged {
  name: string;
  route: string;
  /** The route's own parameters, before limit and offset. */
  params: string;
  /** Items the route's query finds. */
  total: number;
}

const PAGED: Paged[] = [
  { name: 'GET /entities by type (type index)', route: `${NGSI}/entities`, params: `type=${TYPE}&`, total: 3 },
  { name: 'GET /entities with q (a filter)', route: `${NGSI}/entities`, params: `type=${TYPE}&q=n%3E=0&`, total: 3 },
  { name: 'GET /subscriptions', route: `${NGSI}/subscriptions`, params: '', total: 3 },
  { name: 'GET /csourceRegistrations', route: `${NGSI}/csourceRegistrations`, params: `type=${TYPE}&`, total: 3 },
  { name: 'GET /temporal/entities by type', route: `${NGSI}/temporal/entities`, params: `type=${TYPE}&`, total: 3 },
  {
    name: 'GET /temporal/entities with q (judged on the history)',
    route: `${NGSI}/temporal/entities`,
    params: `type=${TYPE}&q=n%3E=0&`,
    total: 3,
  },
];

for (const p of PAGED) {
  for (const count of [false, true]) {
    const params = p.params + (count ? 'count=true&' : '');
    const target = (limit: number, offset: number): string => `${p.route}?${params}limit=${limit}&offset=${offset}`;
    t.test(`${p.name}${count ? ' with count' : ''}: first, middle and last page, a full last page, one page for all`, async (t) => {
      const page = async (limit: number, offset: number): Promise<Array<[string, string]>> => {
        const r = await call(broker, 'GET', target(limit, offset));
        t.equal(r.status, 200, r.text);
        t.equal(
          r.json.length,
          Math.max(0, Math.min(limit, p.total - offset)),
          `limit=${limit} offset=${offset}: the page holds what it should`,
        );
        if (count) t.equal(r.headers.get('ngsild-results-count'), String(p.total));
        return pageLinksOf(t, r.headers.get('link'));
      };
      t.same(await page(1, 0), [['next', target(1, 1)]], 'first page: next only');
      t.same(
        await page(1, 1),
        [
          ['prev', target(1, 0)],
          ['next', target(1, 2)],
        ],
        'middle page: prev and next',
      );
      t.same(await page(1, 2), [['prev', target(1, 1)]], 'last page, full: prev only, no next');
      t.same(await page(2, 1), [['prev', target(1, 0)]], 'last page, short: prev names the item before it');
      t.same(await page(3, 0), [], 'one full page holding everything: no link');
      t.same(await page(20, 0), [], 'one page: no link');
      t.same(await page(2, 5), [['prev', target(2, 3)]], 'past the end: prev only');
    });
  }
}

t.test('limit=0 with count answers the count alone, without page links', async (t) => {
  const r = await call(broker, 'GET', `${NGSI}/entities?type=${TYPE}&limit=0&count=true`);
  t.equal(r.status, 200);
  t.equal(r.headers.get('ngsild-results-count'), '3');
  t.same(pageLinksOf(t, r.headers.get('link')), []);
});

t.test('with application/ld+json the page links are the only Link headers and say so in their type', async (t) => {
  const r = await call(broker, 'GET', `${NGSI}/subscriptions?limit=1&offset=1`, { headers: { accept: 'application/ld+json' } });
  t.equal(r.status, 200);
  t.same(linksOf(r.headers.get('link')), [
    ['prev', `${NGSI}/subscriptions?limit=1&offset=0`, 'application/ld+json'],
    ['next', `${NGSI}/subscriptions?limit=1&offset=2`, 'application/ld+json'],
  ]);
});

t.test('HEAD carries the links of the GET', async (t) => {
  const path = `${NGSI}/entities?type=${TYPE}&limit=1&offset=1`;
  const get = await call(broker, 'GET', path);
  const head = await call(broker, 'HEAD', path);
  t.equal(head.status, 200);
  t.equal(head.headers.get('link'), get.headers.get('link'));
  t.equal(head.text, '');
});

t.test('a POST query pages too but has no page links: the next page needs the body', async (t) => {
  const r = await call(broker, 'POST', `${NGSI}/entityOperations/query?limit=1&offset=1`, {
    body: { type: 'Query', entities: [{ type: TYPE }] },
  });
  t.equal(r.status, 200);
  t.equal(r.json.length, 1);
  t.same(pageLinksOf(t, r.headers.get('link')), []);
});

t.test('query text the client sent raw reaches the link percent-encoded, never as it was', async (t) => {
  const { replies } = await rawExchange(broker.port, `GET ${NGSI}/entities?type=${TYPE}&q=n>=0&limit=1 HTTP/1.1\r\nHost: x\r\n\r\n`);
  t.equal(replies[0]?.status, 200);
  const next = replies[0]!.headers
    .filter(([name]) => name === 'link')
    .map(([, value]) => value)
    .find((v) => v.includes('rel="next"'));
  t.equal(next, `<${NGSI}/entities?type=${TYPE}&q=n%3E=0&limit=1&offset=1>; rel="next"; type="application/json"`);
});

t.test('a context Link with a page link: two Link lines on the wire, the @context first', async (t) => {
  const { replies } = await rawExchange(broker.port, `GET ${NGSI}/entities?type=${TYPE}&limit=1&offset=1 HTTP/1.1\r\nHost: x\r\n\r\n`);
  const values = replies[0]!.headers.filter(([name]) => name === 'link').map(([, value]) => value);
  t.equal(values.length, 3, 'context, prev, next');
  t.match(values[0], CONTEXT_REL);
});
