// Every recursive walk of what a client sends is bounded (CIM 009 leaves the bound to the broker): a body nested
// 100,000 deep on any route, in a value, in an application/ld+json @context or in a batch entry, and q, scopeQ and
// type expressions nested past their bound, are 400 with a clear detail; never a 500 "Maximum call stack size
// exceeded", and the broker answers on.
import t, { type Test } from 'tap';
import { startBroker, call, NGSI, type Broker } from './helpers/broker.js';

const ERR = 'https://uri.etsi.org/ngsi-ld/errors/';
const N = 100_000;
let broker: Broker;
t.before(async () => {
  broker = await startBroker(['--connectionPoolSize', '2', '--troe', 'embdb']);
});
t.teardown(async () => {
  await broker.stop();
});

const deepArray = '['.repeat(N) + ']'.repeat(N);
const deepObject = '{"a":'.repeat(N) + '1' + '}'.repeat(N);
const send = (method: string, path: string, text: string, contentType = 'application/json') =>
  call(broker, method, path, { raw: text, headers: { 'content-type': contentType } });

const ROUTES: Array<[string, string]> = [
  ['POST', '/entities'],
  ['PATCH', '/entities/urn:ngsi-ld:D:1'],
  ['PUT', '/entities/urn:ngsi-ld:D:1'],
  ['POST', '/entities/urn:ngsi-ld:D:1/attrs'],
  ['PATCH', '/entities/urn:ngsi-ld:D:1/attrs'],
  ['PATCH', '/entities/urn:ngsi-ld:D:1/attrs/a'],
  ['PUT', '/entities/urn:ngsi-ld:D:1/attrs/a'],
  ['POST', '/entityOperations/create'],
  ['POST', '/entityOperations/upsert'],
  ['POST', '/entityOperations/update'],
  ['POST', '/entityOperations/merge'],
  ['POST', '/entityOperations/delete'],
  ['POST', '/entityOperations/query'],
  ['POST', '/subscriptions'],
  ['PATCH', '/subscriptions/urn:ngsi-ld:Subscription:d'],
  ['POST', '/csourceRegistrations'],
  ['PATCH', '/csourceRegistrations/urn:ngsi-ld:ContextSourceRegistration:d'],
  ['POST', '/temporal/entities'],
  ['POST', '/temporal/entities/urn:ngsi-ld:D:1/attrs'],
  ['POST', '/temporal/entityOperations/query'],
  ['POST', '/jsonldContexts'],
];

function isDepthRefusal(t: Test, r: { status: number; json: any; text: string }, what: string): void {
  t.equal(r.status, 400, `${what}: ${r.text.slice(0, 300)}`);
  t.equal(r.json?.type, `${ERR}BadRequestData`, what);
  t.match(r.json?.detail, /nested deeper than 66 levels/, what);
}

t.test('a body nested 100,000 deep is 400 BadRequestData on every route that takes a body', async (t) => {
  t.equal((await send('POST', `${NGSI}/entities`, '{"id":"urn:ngsi-ld:D:1","type":"D","a":1}')).status, 201);
  for (const [method, path] of ROUTES) {
    isDepthRefusal(t, await send(method, NGSI + path, deepArray), `${method} ${path}, an array body`);
    isDepthRefusal(
      t,
      await send(method, NGSI + path, `{"id":"urn:ngsi-ld:D:9","type":"D","@context":${deepObject}}`, 'application/ld+json'),
      `${method} ${path}, an application/ld+json @context`,
    );
  }
  const value = await send('POST', `${NGSI}/entities`, `{"id":"urn:ngsi-ld:D:2","type":"D","a":{"type":"Property","value":${deepObject}}}`);
  isDepthRefusal(t, value, 'a value');
  t.match(value.json.detail, /^a: /, 'the detail names the attribute');
  isDepthRefusal(
    t,
    await send('POST', `${NGSI}/entityOperations/create`, `[{"id":"urn:ngsi-ld:D:3","type":"D","a":${deepArray}}]`),
    'a batch entry',
  );
  isDepthRefusal(
    t,
    await send(
      'POST',
      `${NGSI}/entityOperations/query`,
      `{"type":"Query","entities":[{"type":"D"}],"geoQ":{"georel":"within","geometry":"Polygon","coordinates":${deepArray}}}`,
    ),
    'geoQ coordinates in a query body',
  );
  const e = await call(broker, 'GET', `${NGSI}/entities/urn:ngsi-ld:D:1`);
  t.equal(e.status, 200, 'the broker answers on');
  t.same(e.json, { id: 'urn:ngsi-ld:D:1', type: 'D', a: { type: 'Property', value: 1 } }, 'and nothing was written');
});

t.test("an entity is bounded at 64 levels, alone or in a batch, where one too deep is that entry's error", async (t) => {
  const nest = (levels: number): string => '{"x":'.repeat(levels) + '1' + '}'.repeat(levels);
  const entity = (id: string, levels: number): string =>
    `{"id":"urn:ngsi-ld:D:${id}","type":"D","a":{"type":"Property","value":${nest(levels)}}}`;
  // entity (1) > attribute (2) > value (3 ...): 62 objects in the value reach level 64.
  t.equal((await send('POST', `${NGSI}/entities`, entity('alone', 62))).status, 201);
  const alone = await send('POST', `${NGSI}/entities`, entity('alone-over', 63));
  t.equal(alone.status, 400, alone.text);
  t.equal(alone.json.detail, 'a: nested deeper than 64 levels');
  const batch = await send('POST', `${NGSI}/entityOperations/create`, `[${entity('in-batch', 62)},${entity('in-batch-over', 63)}]`);
  t.equal(batch.status, 207, batch.text);
  t.same(batch.json.success, ['urn:ngsi-ld:D:in-batch'], 'the entry inside the bound is created');
  t.same(
    batch.json.errors.map((e: any) => [e.entityId, e.error.detail]),
    [['urn:ngsi-ld:D:in-batch-over', 'a: nested deeper than 64 levels']],
  );
  isDepthRefusal(t, await send('POST', `${NGSI}/entityOperations/create`, `[${entity('far-over', 64)}]`), 'a batch past the body bound');
});

t.test('q, scopeQ and type nested past their bound are 400, in a query string and in a query body', async (t) => {
  const parens = (n: number, inner: string): string => '('.repeat(n) + inner + ')'.repeat(n);
  for (const [param, inner] of [
    ['q', 'a==1'],
    ['scopeQ', '/a'],
    ['type', 'D'],
  ] as const) {
    const over = await call(
      broker,
      'GET',
      `${NGSI}/entities?${param === 'type' ? '' : 'type=D&'}${param}=${encodeURIComponent(parens(65, inner))}`,
    );
    t.equal(over.status, 400, `${param}: ${over.text}`);
    t.match(over.json.detail, /nested deeper than 64/, param);
    const atBound = await call(
      broker,
      'GET',
      `${NGSI}/entities?${param === 'type' ? '' : 'type=D&'}${param}=${encodeURIComponent(parens(64, inner))}`,
    );
    t.equal(atBound.status, 200, `${param} at the bound: ${atBound.text}`);
    const long = await send(
      'POST',
      `${NGSI}/entityOperations/query`,
      JSON.stringify({ type: 'Query', entities: [{ type: 'D' }], [param === 'type' ? 'q' : param]: parens(N, inner) }),
    );
    t.equal(long.status, 400, `${param} ${N} deep in a query body: ${long.text.slice(0, 200)}`);
  }
  const sub = await send(
    'POST',
    `${NGSI}/subscriptions`,
    JSON.stringify({
      type: 'Subscription',
      entities: [{ type: 'D' }],
      q: parens(N, 'a==1'),
      notification: { endpoint: { uri: 'http://127.0.0.1:1/n' } },
    }),
  );
  t.equal(sub.status, 400, `a subscription's q: ${sub.text.slice(0, 200)}`);
  t.equal((await call(broker, 'GET', `${NGSI}/entities?type=D`)).status, 200, 'the broker answers on');
});
