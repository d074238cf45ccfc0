// Subscriptions and registrations are shown with the @context of the request that reads them (issue 4): their
// entity types and attribute names are kept expanded, so a GET with another @context sees that context's terms, a GET
// without one sees the IRIs (or the core context's terms), and matching still works with the names of any context.
import t, { type Test } from 'tap';
import { createServer, type Server } from 'node:http';
import { request as httpRequest } from 'node:http';
import { startBroker, runBroker, runBrokerHere, call, NGSI, type Broker } from './helpers/broker.js';

const A = 'https://example.org/a/';
const CONTEXTS: Record<string, unknown> = {
  '/a.jsonld': { '@context': { Car: `${A}Car`, speed: `${A}speed`, plate: `${A}plate` } },
  '/b.jsonld': { '@context': { Auto: `${A}Car`, velocity: `${A}speed`, kennzeichen: `${A}plate` } },
};

let broker: Broker;
let server: Server;
let base = '';
const notified: unknown[] = [];
const notifiedLinks: Array<string | undefined> = [];
const notifiedPaths: string[] = [];

t.before(async () => {
  server = createServer((req, res) => {
    const ctx = CONTEXTS[req.url ?? ''];
    if (req.method === 'GET' && ctx !== undefined) {
      res.writeHead(200, { 'content-type': 'application/ld+json' }).end(JSON.stringify(ctx));
      return;
    }
    let text = '';
    req.on('data', (d) => {
      text += String(d);
    });
    req.on('end', () => {
      notified.push(JSON.parse(text));
      notifiedLinks.push(req.headers.link);
      notifiedPaths.push(req.url ?? '');
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  broker = await startBroker();
});
t.teardown(async () => {
  await broker.stop();
  server.close();
});

const link = (path: string): Record<string, string> => ({
  Link: `<${base}${path}>; rel="http://www.w3.org/ns/json-ld#context"; type="application/ld+json"`,
});

t.test('a subscription made with one @context reads with the terms of another, and as IRIs without one', async (t) => {
  const id = 'urn:ngsi-ld:Subscription:ctx1';
  const c = await call(broker, 'POST', `${NGSI}/subscriptions`, {
    headers: link('/a.jsonld'),
    body: {
      id,
      type: 'Subscription',
      entities: [{ type: 'Car' }, { type: 'Bus' }],
      watchedAttributes: ['speed'],
      notification: { attributes: ['speed', 'plate'], endpoint: { uri: `${base}/notify` } },
    },
  });
  t.equal(c.status, 201, c.text);
  const b = await call(broker, 'GET', `${NGSI}/subscriptions/${id}`, { headers: link('/b.jsonld') });
  t.equal(b.status, 200, b.text);
  t.same(b.json.entities, [{ type: 'Auto' }, { type: 'Bus' }], "types in the terms of the GET's @context (Bus: the default vocabulary)");
  t.same(b.json.watchedAttributes, ['velocity']);
  t.same(b.json.notification.attributes, ['velocity', 'kennzeichen']);
  const none = await call(broker, 'GET', `${NGSI}/subscriptions/${id}`);
  t.same(none.json.entities, [{ type: `${A}Car` }, { type: 'Bus' }], "without a @context: the IRI, or the core context's term");
  t.same(none.json.watchedAttributes, [`${A}speed`]);
  const list = await call(broker, 'GET', `${NGSI}/subscriptions`, { headers: link('/a.jsonld') });
  t.same(list.json.find((s: { id: string }) => s.id === id).entities, [{ type: 'Car' }, { type: 'Bus' }], 'the query renders the same way');

  // An entity written with the other @context's terms is the same entity type: the subscription matches it.
  const e = await call(broker, 'POST', `${NGSI}/entities`, {
    headers: link('/b.jsonld'),
    body: { id: 'urn:ngsi-ld:Car:ctx1', type: 'Auto', velocity: { type: 'Property', value: 3 } },
  });
  t.equal(e.status, 201, e.text);
  const deadline = Date.now() + 10_000;
  while (notified.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  t.equal(notified.length, 1, 'notified once');
  t.match(
    notified[0],
    { subscriptionId: id, data: [{ id: 'urn:ngsi-ld:Car:ctx1', type: 'Car', speed: { value: 3 } }] },
    "in the subscription's own terms",
  );
});

t.test("a PATCH with another @context adds names in its terms; all read back in the reader's terms", async (t) => {
  const id = 'urn:ngsi-ld:Subscription:ctx1';
  const p = await call(broker, 'PATCH', `${NGSI}/subscriptions/${id}`, {
    headers: link('/b.jsonld'),
    body: { watchedAttributes: ['velocity', 'kennzeichen'] },
  });
  t.equal(p.status, 204, p.text);
  const a = await call(broker, 'GET', `${NGSI}/subscriptions/${id}`, { headers: link('/a.jsonld') });
  t.same(a.json.watchedAttributes, ['speed', 'plate']);
  t.same(a.json.entities, [{ type: 'Car' }, { type: 'Bus' }], 'the kept names are unchanged');
});

t.test('a registration made with one @context reads with the terms of another', async (t) => {
  const id = 'urn:ngsi-ld:ContextSourceRegistration:ctx1';
  const c = await call(broker, 'POST', `${NGSI}/csourceRegistrations`, {
    headers: link('/a.jsonld'),
    body: {
      id,
      type: 'ContextSourceRegistration',
      information: [{ entities: [{ type: 'Car' }], propertyNames: ['speed'], relationshipNames: ['plate'] }],
      endpoint: 'http://127.0.0.1:9/source',
    },
  });
  t.equal(c.status, 201, c.text);
  const b = await call(broker, 'GET', `${NGSI}/csourceRegistrations/${id}`, { headers: link('/b.jsonld') });
  t.same(b.json.information, [{ entities: [{ type: 'Auto' }], propertyNames: ['velocity'], relationshipNames: ['kennzeichen'] }]);
  const none = await call(broker, 'GET', `${NGSI}/csourceRegistrations/${id}`);
  t.same(none.json.information, [{ entities: [{ type: `${A}Car` }], propertyNames: [`${A}speed`], relationshipNames: [`${A}plate`] }]);
  const found = await call(broker, 'GET', `${NGSI}/csourceRegistrations?type=Auto&attrs=velocity`, { headers: link('/b.jsonld') });
  t.same(
    found.json.map((r: { id: string }) => r.id),
    [id],
    "discovery by the other @context's terms finds it",
  );
});

t.test(
  "a notification of a subscription made with an inline @context in a tenant links that tenant's ImplicitlyCreated copy",
  async (t) => {
    const tenant = { 'NGSILD-Tenant': 'subt' };
    const ctx = { Yacht: 'https://example.org/Yacht', mast: 'https://example.org/mast' };
    const seed = await call(broker, 'POST', `${NGSI}/entities`, { headers: tenant, body: { id: 'urn:ngsi-ld:Seed:subt', type: 'Seed' } });
    t.equal(seed.status, 201, seed.text);
    const id = 'urn:ngsi-ld:Subscription:implicit1';
    const c = await call(broker, 'POST', `${NGSI}/subscriptions`, {
      headers: { ...tenant, 'content-type': 'application/ld+json' },
      raw: JSON.stringify({
        id,
        type: 'Subscription',
        entities: [{ type: 'Yacht' }],
        notification: { endpoint: { uri: `${base}/notify`, accept: 'application/json' } },
        '@context': ctx,
      }),
    });
    t.equal(c.status, 201, c.text);
    const before = notified.length;
    const e = await call(broker, 'POST', `${NGSI}/entities`, {
      headers: { ...tenant, 'content-type': 'application/ld+json' },
      raw: JSON.stringify({ id: 'urn:ngsi-ld:Yacht:1', type: 'Yacht', mast: { type: 'Property', value: 2 }, '@context': ctx }),
    });
    t.equal(e.status, 201, e.text);
    const deadline = Date.now() + 10_000;
    while (notified.length === before && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    t.match(notified[before], { subscriptionId: id, data: [{ type: 'Yacht', mast: { value: 2 } }] });
    const url = /<([^>]+)>/.exec(notifiedLinks[before] ?? '')?.[1] ?? '';
    t.match(new URL(url).pathname, /^\/ngsi-ld\/v1\/jsonldContexts\/subt~implicit-/, `the Link names the tenant's copy (${url})`);
    t.equal(new URL(url).origin, broker.url, "at the address the subscription's request reached (before: the configured one, port 0)");
    // A receiver dereferences the URL as it is.
    const served = await fetch(url);
    t.equal(served.status, 200);
    t.same(await served.json(), { '@context': ctx });
    const listed = await call(broker, 'GET', `${NGSI}/jsonldContexts?kind=ImplicitlyCreated`, { headers: tenant });
    t.ok(
      (listed.json as string[]).some((u) => new URL(u).pathname === new URL(url).pathname),
      'listed in the tenant',
    );
  },
);

/** A request with a chosen Host header (fetch may not set Host). */
function withHost(method: string, path: string, host: string, headers: Record<string, string>, body?: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const r = httpRequest({ host: '127.0.0.1', port: broker.port, path, method, headers: { ...headers, host } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    r.on('error', reject);
    r.end(body);
  });
}

/** The Link URL of the next notification to `path` after a write of `entityId`. */
async function nextLink(t: Test, b: Broker, entityId: string, type: string, ctx: Record<string, string>, path: string): Promise<string> {
  const before = notified.length;
  const e = await call(b, 'POST', `${NGSI}/entityOperations/upsert`, {
    headers: { 'content-type': 'application/ld+json' },
    raw: JSON.stringify([{ id: entityId, type, n: { type: 'Property', value: 1 }, '@context': ctx }]),
  });
  t.ok(e.status === 201 || e.status === 204, e.text);
  const deadline = Date.now() + 10_000;
  while (!notifiedPaths.slice(before).includes(path) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  const at = notifiedPaths.indexOf(path, before);
  return /<([^>]+)>/.exec(notifiedLinks[at] ?? '')?.[1] ?? '';
}

t.test(
  'without --brokerUrl, notifications link the @context at the Host of the latest request that made or changed the subscription',
  async (t) => {
    const ctx = { Dinghy: 'https://example.org/Dinghy' };
    const id = 'urn:ngsi-ld:Subscription:host1';
    const body = JSON.stringify({
      id,
      type: 'Subscription',
      entities: [{ type: 'Dinghy' }],
      notification: { endpoint: { uri: `${base}/host1`, accept: 'application/json' } },
      '@context': ctx,
    });
    t.equal(
      await withHost('POST', `${NGSI}/subscriptions`, 'gateway.example.org:8080', { 'content-type': 'application/ld+json' }, body),
      201,
    );
    t.match(
      await nextLink(t, broker, 'urn:ngsi-ld:Dinghy:1', 'Dinghy', ctx, '/host1'),
      /^http:\/\/gateway\.example\.org:8080\/ngsi-ld\/v1\/jsonldContexts\/implicit-/,
      'the host the client used (a proxy, a port mapping)',
    );
    const patch = await call(broker, 'PATCH', `${NGSI}/subscriptions/${id}`, {
      headers: { 'content-type': 'application/ld+json' },
      raw: JSON.stringify({ description: 'direct', '@context': ctx }),
    });
    t.equal(patch.status, 204, patch.text);
    const direct = await nextLink(t, broker, 'urn:ngsi-ld:Dinghy:2', 'Dinghy', ctx, '/host1');
    t.equal(new URL(direct).origin, broker.url, 'an update from elsewhere moves it to the address that request reached');
    t.equal((await fetch(direct)).status, 200, 'which serves the @context');
    // A Host that is no host[:port] is never copied into a header: the configured address instead.
    const junkId = 'urn:ngsi-ld:Subscription:host2';
    const junk = JSON.stringify({
      id: junkId,
      type: 'Subscription',
      entities: [{ type: 'Dinghy' }],
      notification: { endpoint: { uri: `${base}/host2`, accept: 'application/json' } },
      '@context': ctx,
    });
    t.equal(await withHost('POST', `${NGSI}/subscriptions`, 'bad host/<x>', { 'content-type': 'application/ld+json' }, junk), 201);
    t.match(
      await nextLink(t, broker, 'urn:ngsi-ld:Dinghy:3', 'Dinghy', ctx, '/host2'),
      /^http:\/\/127\.0\.0\.1:0\/ngsi-ld\/v1\/jsonldContexts\/implicit-/,
    );
    await call(broker, 'DELETE', `${NGSI}/subscriptions/${id}`);
    await call(broker, 'DELETE', `${NGSI}/subscriptions/${junkId}`);
  },
);

t.test('--brokerUrl names every URL of a @context the broker serves: notifications, answers and the list', async (t) => {
  const pub = await startBroker(['--brokerUrl', 'HTTPS://Public.Example.org:443/']);
  t.teardown(() => pub.stop());
  const ctx = { Kayak: 'https://example.org/Kayak' };
  const c = await call(pub, 'POST', `${NGSI}/subscriptions`, {
    headers: { 'content-type': 'application/ld+json' },
    raw: JSON.stringify({
      type: 'Subscription',
      entities: [{ type: 'Kayak' }],
      notification: { endpoint: { uri: `${base}/public`, accept: 'application/json' } },
      '@context': ctx,
    }),
  });
  t.equal(c.status, 201, c.text);
  t.match(
    await nextLink(t, pub, 'urn:ngsi-ld:Kayak:1', 'Kayak', ctx, '/public'),
    /^https:\/\/public\.example\.org\/ngsi-ld\/v1\/jsonldContexts\/implicit-/,
    "a notification (the request's own Host does not win)",
  );
  const q = await call(pub, 'POST', `${NGSI}/entityOperations/query`, {
    headers: { 'content-type': 'application/ld+json', accept: 'application/json' },
    raw: JSON.stringify({ type: 'Query', entities: [{ type: 'Kayak' }], '@context': ctx }),
  });
  t.match(q.headers.get('link') ?? '', /^<https:\/\/public\.example\.org\/ngsi-ld\/v1\/jsonldContexts\/implicit-/, 'an answer');
  const listed = await call(pub, 'GET', `${NGSI}/jsonldContexts?kind=ImplicitlyCreated`);
  t.ok(
    (listed.json as string[]).length > 0 &&
      (listed.json as string[]).every((u) => u.startsWith('https://public.example.org/ngsi-ld/v1/jsonldContexts/')),
    'the list',
  );
});

t.test(
  'a --brokerUrl that is not http[s]://host[:port] stops the broker at start (test/unit/options-broker-url.test.ts: every form)',
  async (t) => {
    for (const bad of ['public.example.org', 'https://x.org/broker']) {
      // The first from the spawned command, the other as main.ts runs it, in this process (no process start).
      const r = await (bad === 'public.example.org' ? runBroker : runBrokerHere)(['--brokerUrl', bad]);
      t.equal(r.code, 1, bad);
      t.match(r.stdout + r.stderr, /--brokerUrl: .* is not http\[s\]:\/\/host\[:port\]/, bad);
    }
  },
);
