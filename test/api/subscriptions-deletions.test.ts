// Notifications of deletions as a receiver gets them (CIM 009 v1.8 §5.8.6, §4.5.0): each kind of write that deletes
// an attribute notifies it with its kind and the NGSI-LD Null, showChanges with what it had; the header names of a
// notification as written; a subscription's jsonldContext fetched when it is given (§5.8.1.4, §5.8.2.4).
import t from 'tap';
import { createServer, type Server } from 'node:http';
import { createServer as createTcpServer } from 'node:net';
import { startBroker, call, NGSI, type Broker } from './helpers/broker.js';

interface Received {
  path: string;
  rawHeaders: string[];
  body: any;
}

const ERR = 'https://uri.etsi.org/ngsi-ld/errors/';
const NULL = 'urn:ngsi-ld:null';
let broker: Broker;
let receiver: Server;
let base = '';
const received: Received[] = [];

t.before(async () => {
  receiver = createServer((req, res) => {
    if (req.method === 'GET') {
      if (req.url === '/ctx.jsonld')
        res
          .writeHead(200, { 'content-type': 'application/ld+json' })
          .end(JSON.stringify({ '@context': { Barn: 'https://example.org/Barn' } }));
      else res.writeHead(200, { 'content-type': 'text/plain' }).end('not a @context');
      return;
    }
    let text = '';
    req.on('data', (d) => {
      text += String(d);
    });
    req.on('end', () => {
      received.push({ path: req.url ?? '', rawHeaders: req.rawHeaders, body: JSON.parse(text) });
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(receiver.address() as { port: number }).port}`;
  broker = await startBroker();
});
t.teardown(async () => {
  await broker.stop();
  receiver.close();
});

async function notificationsAt(path: string, n: number): Promise<Received[]> {
  const deadline = Date.now() + 8000;
  for (;;) {
    const got = received.filter((r) => r.path === path);
    if (got.length >= n || Date.now() > deadline) return got;
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function subscribe(
  path: string,
  extra: Record<string, unknown>,
  notification: Record<string, unknown> = {},
  headers: Record<string, string> = {},
): Promise<void> {
  const { endpoint, ...rest } = notification as { endpoint?: Record<string, unknown> };
  const body = {
    id: `urn:ngsi-ld:Subscription:${path.slice(1)}`,
    type: 'Subscription',
    ...extra,
    notification: { ...rest, endpoint: { uri: base + path, ...endpoint } },
  };
  const r = await call(broker, 'POST', `${NGSI}/subscriptions`, { body, headers });
  if (r.status !== 201) throw new Error(r.text);
}

const building = (id: string): Record<string, unknown> => ({
  id,
  type: 'Barn',
  name: [
    { type: 'Property', value: 'Eiffel Tower' },
    { type: 'Property', value: 'Tour Eiffel', datasetId: 'urn:ngsi-ld:Dataset:fr' },
    { type: 'Property', value: 'Eiffelturm', datasetId: 'urn:ngsi-ld:Dataset:de' },
  ],
  locatedAt: { type: 'Relationship', object: 'urn:ngsi-ld:City:Paris' },
  street: { type: 'LanguageProperty', languageMap: { fr: 'Grand Place', nl: 'Grote Markt' } },
  category: { type: 'VocabProperty', vocab: 'monument' },
});

t.test('each write that deletes an attribute notifies it with its kind and the NGSI-LD Null', async (t) => {
  await subscribe('/deleted', { entities: [{ type: 'Barn' }], notificationTrigger: ['attributeDeleted'] });
  const id = 'urn:ngsi-ld:Barn:1';
  t.equal((await call(broker, 'POST', `${NGSI}/entities`, { body: building(id) })).status, 201);
  t.equal(
    (await call(broker, 'PATCH', `${NGSI}/entities/${id}`, { body: { locatedAt: { type: 'Relationship', object: NULL } } })).status,
    204,
    'merge',
  );
  t.equal(
    (
      await call(broker, 'PATCH', `${NGSI}/entities/${id}/attrs/street`, {
        body: { type: 'LanguageProperty', languageMap: { '@none': NULL } },
      })
    ).status,
    204,
    'partial attribute update',
  );
  t.equal((await call(broker, 'DELETE', `${NGSI}/entities/${id}/attrs/category`)).status, 204);
  t.equal((await call(broker, 'DELETE', `${NGSI}/entities/${id}/attrs/name?datasetId=urn:ngsi-ld:Dataset:fr`)).status, 204);
  t.equal((await call(broker, 'DELETE', `${NGSI}/entities/${id}/attrs/name?deleteAll=true`)).status, 204);
  const got = (await notificationsAt('/deleted', 5)).map((n) => n.body.data[0]);
  t.same(got[0].locatedAt, { type: 'Relationship', object: NULL });
  t.same(got[1].street, { type: 'LanguageProperty', languageMap: { '@none': NULL } });
  t.same(got[2].category, { type: 'VocabProperty', vocab: NULL });
  t.same(
    got[3].name,
    [
      { type: 'Property', value: 'Eiffel Tower' },
      { type: 'Property', value: 'Eiffelturm', datasetId: 'urn:ngsi-ld:Dataset:de' },
      { type: 'Property', value: NULL, datasetId: 'urn:ngsi-ld:Dataset:fr' },
    ],
    'one datasetId instance: the kept ones, then it',
  );
  t.same(got[4].name, { type: 'Property', value: NULL }, 'deleteAll: the attribute, one null instance');
});

t.test('showChanges: an attribute deletion and an entity deletion carry the previous values', async (t) => {
  await subscribe('/changes', { entities: [{ type: 'Barn' }], notificationTrigger: ['attributeDeleted'] }, { showChanges: true });
  await subscribe('/gone', { entities: [{ type: 'Barn' }], notificationTrigger: ['entityDeleted'] }, { showChanges: true });
  await subscribe('/gone-plain', { entities: [{ type: 'Barn' }], notificationTrigger: ['entityDeleted'] });
  const id = 'urn:ngsi-ld:Barn:2';
  t.equal((await call(broker, 'POST', `${NGSI}/entities`, { body: building(id) })).status, 201);
  t.equal((await call(broker, 'DELETE', `${NGSI}/entities/${id}/attrs/locatedAt`)).status, 204);
  const [changed] = await notificationsAt('/changes', 1);
  t.same(changed!.body.data[0].locatedAt, { type: 'Relationship', object: NULL, previousObject: 'urn:ngsi-ld:City:Paris' });
  t.equal((await call(broker, 'DELETE', `${NGSI}/entities/${id}`)).status, 204);
  const [gone] = await notificationsAt('/gone', 1);
  const e = gone!.body.data[0];
  t.same(e.street, {
    type: 'LanguageProperty',
    languageMap: { '@none': NULL },
    previousLanguageMap: { fr: 'Grand Place', nl: 'Grote Markt' },
  });
  t.same(e.category, { type: 'VocabProperty', vocab: NULL, previousVocab: 'monument' });
  t.type(e.deletedAt, 'string');
  t.notOk('locatedAt' in e, 'deleted before');
  const [plain] = await notificationsAt('/gone-plain', 1);
  t.same(Object.keys(plain!.body.data[0]).sort(), ['deletedAt', 'id', 'type'], 'without showChanges: id, type, deletedAt');
});

t.test('header names go out as written; a receiverInfo key replaces a header of its name in any case', async (t) => {
  await subscribe(
    '/headers',
    { entities: [{ type: 'Silo' }] },
    { endpoint: { receiverInfo: [{ key: 'X-Additional-Key', value: 'v1' }] } },
    { 'NGSILD-Tenant': 'farm' },
  );
  await subscribe(
    '/override',
    { entities: [{ type: 'Silo' }] },
    { endpoint: { receiverInfo: [{ key: 'ngsild-tenant', value: 'other' }] } },
    { 'NGSILD-Tenant': 'farm' },
  );
  t.equal(
    (
      await call(broker, 'POST', `${NGSI}/entities`, {
        body: { id: 'urn:ngsi-ld:Silo:1', type: 'Silo', level: { type: 'Property', value: 1 } },
        headers: { 'NGSILD-Tenant': 'farm' },
      })
    ).status,
    201,
  );
  const [n] = await notificationsAt('/headers', 1);
  const names = n!.rawHeaders.filter((_, i) => i % 2 === 0);
  for (const name of ['Content-Type', 'Link', 'NGSILD-Tenant', 'X-Additional-Key'])
    t.ok(names.includes(name), `${name} as written (${names.join(', ')})`);
  const [o] = await notificationsAt('/override', 1);
  const tenantHeaders = [];
  for (let i = 0; i < o!.rawHeaders.length; i += 2)
    if (o!.rawHeaders[i]!.toLowerCase() === 'ngsild-tenant') tenantHeaders.push([o!.rawHeaders[i], o!.rawHeaders[i + 1]]);
  t.same(tenantHeaders, [['ngsild-tenant', 'other']], 'one header, the receiverInfo one');
});

t.test('application/ld+json: the @context in each entity of data and in the Notification', async (t) => {
  await subscribe('/ld', { entities: [{ type: 'Shed' }] }, { endpoint: { accept: 'application/ld+json' } });
  t.equal(
    (
      await call(broker, 'POST', `${NGSI}/entities`, {
        body: { id: 'urn:ngsi-ld:Shed:1', type: 'Shed', size: { type: 'Property', value: 3 } },
      })
    ).status,
    201,
  );
  const [n] = await notificationsAt('/ld', 1);
  t.ok(n!.body.data[0]['@context'], 'in the entity');
  t.same(n!.body['@context'], n!.body.data[0]['@context'], 'and the same at the top');
  t.notOk(n!.rawHeaders.includes('Link'));
});

/** A local port nothing listens on (a connection to it is refused). */
async function closedPort(): Promise<number> {
  const s = createTcpServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as { port: number }).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

t.test('jsonldContext is fetched when given: 503 when it cannot be had, 400 when it is no @context; nothing kept', async (t) => {
  const nowhere = `http://127.0.0.1:${await closedPort()}/none.jsonld`;
  const sub = (id: string, jsonldContext: string): Record<string, unknown> => ({
    id,
    type: 'Subscription',
    entities: [{ type: 'Barn' }],
    notification: { endpoint: { uri: `${base}/unused` } },
    jsonldContext,
  });
  const unavailable = await call(broker, 'POST', `${NGSI}/subscriptions`, { body: sub('urn:ngsi-ld:Subscription:ctx503', nowhere) });
  t.equal(unavailable.status, 503, unavailable.text);
  t.equal(unavailable.json.type, `${ERR}LdContextNotAvailable`);
  t.equal((await call(broker, 'GET', `${NGSI}/subscriptions/urn:ngsi-ld:Subscription:ctx503`)).status, 404, 'not created');
  const invalid = await call(broker, 'POST', `${NGSI}/subscriptions`, {
    body: sub('urn:ngsi-ld:Subscription:ctx400', `${base}/text.jsonld`),
  });
  t.equal(invalid.status, 400, invalid.text);
  t.equal(invalid.json.type, `${ERR}BadRequestData`);
  t.match(invalid.json.detail, /^jsonldContext/);
  t.equal((await call(broker, 'GET', `${NGSI}/subscriptions/urn:ngsi-ld:Subscription:ctx400`)).status, 404);
  const good = await call(broker, 'POST', `${NGSI}/subscriptions`, { body: sub('urn:ngsi-ld:Subscription:ctx201', `${base}/ctx.jsonld`) });
  t.equal(good.status, 201, good.text);
  const patch = await call(broker, 'PATCH', `${NGSI}/subscriptions/urn:ngsi-ld:Subscription:ctx201`, { body: { jsonldContext: nowhere } });
  t.equal(patch.status, 503, patch.text);
  t.equal(
    (await call(broker, 'GET', `${NGSI}/subscriptions/urn:ngsi-ld:Subscription:ctx201`)).json.jsonldContext,
    `${base}/ctx.jsonld`,
    'the update changed nothing',
  );
  t.equal(
    (await call(broker, 'PATCH', `${NGSI}/subscriptions/urn:ngsi-ld:Subscription:ctx201`, { body: { description: 'kept' } })).status,
    204,
    'a PATCH without jsonldContext does not fetch it',
  );
});
