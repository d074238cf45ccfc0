// Subscriptions and registrations are shown with the @context of the request that reads them (issue 4): their
// entity types and attribute names are kept expanded, so a GET with another @context sees that context's terms, a GET
// without one sees the IRIs (or the core context's terms), and matching still works with the names of any context.
import t from 'tap';
import { createServer, type Server } from 'node:http';
import { startBroker, call, NGSI, type Broker } from './helpers/broker.js';

const A = 'https://example.org/a/';
const CONTEXTS: Record<string, unknown> = {
  '/a.jsonld': { '@context': { Car: `${A}Car`, speed: `${A}speed`, plate: `${A}plate` } },
  '/b.jsonld': { '@context': { Auto: `${A}Car`, velocity: `${A}speed`, kennzeichen: `${A}plate` } },
};

let broker: Broker;
let server: Server;
let base = '';
const notified: unknown[] = [];

t.before(async () => {
  server = createServer((req, res) => {
    const ctx = CONTEXTS[req.url ?? ''];
    if (req.method === 'GET' && ctx !== undefined) {
      res.writeHead(200, { 'content-type': 'application/ld+json' }).end(JSON.stringify(ctx));
      return;
    }
    let text = '';
    req.on('data', (d) => { text += String(d); });
    req.on('end', () => { notified.push(JSON.parse(text)); res.writeHead(204).end(); });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  broker = await startBroker();
});
t.teardown(async () => { await broker.stop(); server.close(); });

const link = (path: string): Record<string, string> =>
  ({ Link: `<${base}${path}>; rel="http://www.w3.org/ns/json-ld#context"; type="application/ld+json"` });

t.test('a subscription made with one @context reads with the terms of another, and as IRIs without one', async (t) => {
  const id = 'urn:ngsi-ld:Subscription:ctx1';
  const c = await call(broker, 'POST', `${NGSI}/subscriptions`, {
    headers: link('/a.jsonld'),
    body: {
      id, type: 'Subscription', entities: [{ type: 'Car' }, { type: 'Bus' }], watchedAttributes: ['speed'],
      notification: { attributes: ['speed', 'plate'], endpoint: { uri: `${base}/notify` } },
    },
  });
  t.equal(c.status, 201, c.text);
  const b = await call(broker, 'GET', `${NGSI}/subscriptions/${id}`, { headers: link('/b.jsonld') });
  t.equal(b.status, 200, b.text);
  t.same(b.json.entities, [{ type: 'Auto' }, { type: 'Bus' }], 'types in the terms of the GET\'s @context (Bus: the default vocabulary)');
  t.same(b.json.watchedAttributes, ['velocity']);
  t.same(b.json.notification.attributes, ['velocity', 'kennzeichen']);
  const none = await call(broker, 'GET', `${NGSI}/subscriptions/${id}`);
  t.same(none.json.entities, [{ type: `${A}Car` }, { type: 'Bus' }], 'without a @context: the IRI, or the core context\'s term');
  t.same(none.json.watchedAttributes, [`${A}speed`]);
  const list = await call(broker, 'GET', `${NGSI}/subscriptions`, { headers: link('/a.jsonld') });
  t.same(list.json.find((s: { id: string }) => s.id === id).entities, [{ type: 'Car' }, { type: 'Bus' }], 'the query renders the same way');

  // An entity written with the other @context's terms is the same entity type: the subscription matches it.
  const e = await call(broker, 'POST', `${NGSI}/entities`, { headers: link('/b.jsonld'), body: { id: 'urn:ngsi-ld:Car:ctx1', type: 'Auto', velocity: { type: 'Property', value: 3 } } });
  t.equal(e.status, 201, e.text);
  const deadline = Date.now() + 10_000;
  while (notified.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  t.equal(notified.length, 1, 'notified once');
  t.match(notified[0], { subscriptionId: id, data: [{ id: 'urn:ngsi-ld:Car:ctx1', type: 'Car', speed: { value: 3 } }] }, 'in the subscription\'s own terms');
});

t.test('a PATCH with another @context adds names in its terms; all read back in the reader\'s terms', async (t) => {
  const id = 'urn:ngsi-ld:Subscription:ctx1';
  const p = await call(broker, 'PATCH', `${NGSI}/subscriptions/${id}`, { headers: link('/b.jsonld'), body: { watchedAttributes: ['velocity', 'kennzeichen'] } });
  t.equal(p.status, 204, p.text);
  const a = await call(broker, 'GET', `${NGSI}/subscriptions/${id}`, { headers: link('/a.jsonld') });
  t.same(a.json.watchedAttributes, ['speed', 'plate']);
  t.same(a.json.entities, [{ type: 'Car' }, { type: 'Bus' }], 'the kept names are unchanged');
});

t.test('a registration made with one @context reads with the terms of another', async (t) => {
  const id = 'urn:ngsi-ld:ContextSourceRegistration:ctx1';
  const c = await call(broker, 'POST', `${NGSI}/csourceRegistrations`, {
    headers: link('/a.jsonld'),
    body: { id, type: 'ContextSourceRegistration', information: [{ entities: [{ type: 'Car' }], propertyNames: ['speed'], relationshipNames: ['plate'] }], endpoint: 'http://127.0.0.1:9/source' },
  });
  t.equal(c.status, 201, c.text);
  const b = await call(broker, 'GET', `${NGSI}/csourceRegistrations/${id}`, { headers: link('/b.jsonld') });
  t.same(b.json.information, [{ entities: [{ type: 'Auto' }], propertyNames: ['velocity'], relationshipNames: ['kennzeichen'] }]);
  const none = await call(broker, 'GET', `${NGSI}/csourceRegistrations/${id}`);
  t.same(none.json.information, [{ entities: [{ type: `${A}Car` }], propertyNames: [`${A}speed`], relationshipNames: [`${A}plate`] }]);
  const found = await call(broker, 'GET', `${NGSI}/csourceRegistrations?type=Auto&attrs=velocity`, { headers: link('/b.jsonld') });
  t.same(found.json.map((r: { id: string }) => r.id), [id], 'discovery by the other @context\'s terms finds it');
});
