// Subscriptions CRUD (CIM 009 v1.8 §5.8, §6.10, §6.11): create, retrieve with computed status and counters, list
// with paging and count, update, delete; every refusal a 400 BadRequestData that names the member, 409 for a
// duplicate id, 404 for an unknown one; nothing kept from a refused request.
import t from 'tap';
import { startBroker, call, NGSI, type Broker } from './helpers/broker.js';

const ERR = 'https://uri.etsi.org/ngsi-ld/errors/';
let broker: Broker;
t.before(async () => {
  broker = await startBroker();
});
t.teardown(async () => {
  await broker.stop();
});

const sub = (extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  type: 'Subscription',
  entities: [{ type: 'Vehicle' }],
  watchedAttributes: ['speed'],
  notification: { endpoint: { uri: 'http://127.0.0.1:9/notify' } },
  ...extra,
});

const count = async (): Promise<number> => (await call(broker, 'GET', `${NGSI}/subscriptions?limit=1000`)).json.length;

t.test('the Location of a subscription names its id as a path segment: only what a segment cannot hold is encoded', async (t) => {
  const id = 'https://example.org/subs/ü?x=1#f';
  const r = await call(broker, 'POST', `${NGSI}/subscriptions`, { body: sub({ id }) });
  t.equal(r.status, 201, r.text);
  const location = r.headers.get('location') ?? '';
  t.equal(location, `${NGSI}/subscriptions/https:%2F%2Fexample.org%2Fsubs%2F%C3%BC%3Fx=1%23f`);
  const g = await call(broker, 'GET', location);
  t.equal(g.status, 200, 'the Location retrieves the subscription');
  t.equal(g.json.id, id);
  t.equal((await call(broker, 'DELETE', location)).status, 204);
});

t.test(
  'POST /subscriptions keeps the subscription (201, Location) and GET shows it with status and isActive, no counters before a notification',
  async (t) => {
    const r = await call(broker, 'POST', `${NGSI}/subscriptions`, {
      body: sub({ id: 'urn:ngsi-ld:Subscription:crud1', subscriptionName: 'one', description: 'first' }),
    });
    t.equal(r.status, 201, r.text);
    t.equal(r.headers.get('location'), `${NGSI}/subscriptions/urn:ngsi-ld:Subscription:crud1`, 'a URN id is written as it is');
    const g = await call(broker, 'GET', `${NGSI}/subscriptions/urn:ngsi-ld:Subscription:crud1`);
    t.equal(g.status, 200, g.text);
    t.match(g.headers.get('link') ?? '', /ngsi-ld-core-context/);
    t.same(g.json.entities, [{ type: 'Vehicle' }]);
    t.same(g.json.watchedAttributes, ['speed']);
    t.equal(g.json.subscriptionName, 'one');
    t.equal(g.json.description, 'first');
    t.equal(g.json.isActive, true);
    t.equal(g.json.status, 'active');
    t.equal(g.json.notification.format, 'normalized');
    t.equal(g.json.notification.endpoint.accept, 'application/json');
    t.notOk('timesSent' in g.json.notification, 'no counters before the first notification');
    t.notOk('timesFailed' in g.json.notification);
    t.notOk('status' in g.json.notification, 'no notification status before the first attempt');
    t.notOk('createdAt' in g.json, 'system times only with options=sysAttrs');
    const sys = await call(broker, 'GET', `${NGSI}/subscriptions/urn:ngsi-ld:Subscription:crud1?options=sysAttrs`);
    t.type(sys.json.createdAt, 'string');
    t.type(sys.json.modifiedAt, 'string');
    const ld = await call(broker, 'GET', `${NGSI}/subscriptions/urn:ngsi-ld:Subscription:crud1`, {
      headers: { accept: 'application/ld+json' },
    });
    t.match(ld.headers.get('content-type') ?? '', /application\/ld\+json/);
    t.ok(ld.json['@context'], 'application/ld+json carries @context');
  },
);

t.test('POST /subscriptions without an id makes one (a URN in Location)', async (t) => {
  const r = await call(broker, 'POST', `${NGSI}/subscriptions`, { body: sub() });
  t.equal(r.status, 201, r.text);
  const loc = decodeURIComponent(r.headers.get('location')!);
  t.match(loc, /^\/ngsi-ld\/v1\/subscriptions\/urn:ngsi-ld:Subscription:[0-9a-f-]{36}$/);
  t.equal((await call(broker, 'GET', r.headers.get('location')!)).status, 200);
});

t.test('POST /subscriptions with an id that exists answers 409 AlreadyExists and keeps the first', async (t) => {
  const body = sub({ id: 'urn:ngsi-ld:Subscription:dup', subscriptionName: 'first' });
  t.equal((await call(broker, 'POST', `${NGSI}/subscriptions`, { body })).status, 201);
  const again = await call(broker, 'POST', `${NGSI}/subscriptions`, { body: { ...body, subscriptionName: 'second' } });
  t.equal(again.status, 409, again.text);
  t.equal(again.json.type, `${ERR}AlreadyExists`);
  t.equal((await call(broker, 'GET', `${NGSI}/subscriptions/urn:ngsi-ld:Subscription:dup`)).json.subscriptionName, 'first');
});

const BAD: Array<[string, Record<string, unknown>, RegExp]> = [
  ['an endpoint uri that is no URI', sub({ notification: { endpoint: { uri: 'not a uri' } } }), /notification\.endpoint\.uri/],
  [
    'an endpoint uri with an unsupported scheme',
    sub({ notification: { endpoint: { uri: 'ftp://127.0.0.1/x' } } }),
    /notification\.endpoint\.uri/,
  ],
  ['an http endpoint without host', sub({ notification: { endpoint: { uri: 'http:/notify' } } }), /notification\.endpoint\.uri/],
  [
    'an mqtt endpoint while the MQTT bridge is not loaded',
    sub({ notification: { endpoint: { uri: 'mqtt://127.0.0.1:1883/topic' } } }),
    /notification\.endpoint\.uri.*MQTT/,
  ],
  [
    'an mqtts endpoint while the MQTT bridge is not loaded',
    sub({ notification: { endpoint: { uri: 'mqtts://127.0.0.1/topic' } } }),
    /notification\.endpoint\.uri.*MQTT/,
  ],
  ['an unknown format', sub({ notification: { format: 'xml', endpoint: { uri: 'http://127.0.0.1:9/n' } } }), /notification\.format/],
  [
    'an unknown accept',
    sub({ notification: { endpoint: { uri: 'http://127.0.0.1:9/n', accept: 'text/plain' } } }),
    /notification\.endpoint\.accept/,
  ],
  [
    'a negative timeout',
    sub({ notification: { endpoint: { uri: 'http://127.0.0.1:9/n', timeout: -1 } } }),
    /notification\.endpoint\.timeout/,
  ],
  [
    'receiverInfo that cannot be a header',
    sub({ notification: { endpoint: { uri: 'http://127.0.0.1:9/n', receiverInfo: [{ key: 'bad key', value: 'v' }] } } }),
    /receiverInfo/,
  ],
  [
    'receiverInfo that is not key/value pairs',
    sub({ notification: { endpoint: { uri: 'http://127.0.0.1:9/n', receiverInfo: [{ key: 'k' }] } } }),
    /receiverInfo/,
  ],
  ['a negative throttling', sub({ throttling: -1 }), /throttling/],
  ['a throttling that is no number', sub({ throttling: '5' }), /throttling/],
  ['timeInterval together with watchedAttributes', sub({ timeInterval: 10 }), /timeInterval/],
  ['a timeInterval of 0', sub({ watchedAttributes: undefined, timeInterval: 0 }), /timeInterval/],
  [
    'a timeInterval under the 1 s bound',
    sub({ watchedAttributes: undefined, timeInterval: 0.001 }),
    /^timeInterval: must be a number of seconds, at least 1, not 0.001/,
  ],
  ['a q that does not parse', sub({ q: 'speed>>' }), /^q: /],
  ['a geoQ that does not parse', sub({ geoQ: { georel: 'near;maxDistance==10', geometry: 'Point', coordinates: [1] } }), /geoQ/],
  ['a geoQ with an unknown georel', sub({ geoQ: { georel: 'around', geometry: 'Point', coordinates: [1, 2] } }), /geoQ/],
  ['a scopeQ that does not parse', sub({ scopeQ: 'no-slash' }), /scopeQ/],
  ['an expiresAt in the past', sub({ expiresAt: '2020-01-01T00:00:00Z' }), /expiresAt/],
  ['an expiresAt that is no date-time', sub({ expiresAt: 'tomorrow' }), /expiresAt/],
  ['no notification', sub({ notification: undefined }), /notification/],
  ['a notification without endpoint', sub({ notification: { format: 'keyValues' } }), /notification\.endpoint/],
  ['neither entities nor watchedAttributes', sub({ entities: undefined, watchedAttributes: undefined }), /entities/],
  ['an entity selector without type', sub({ entities: [{ id: 'urn:ngsi-ld:Vehicle:1' }] }), /entities\[0\]\.type/],
  ['an entity selector id that is no URI', sub({ entities: [{ id: 'x', type: 'Vehicle' }] }), /entities\[0\]\.id/],
  ['an idPattern that RE2 refuses', sub({ entities: [{ idPattern: '(?=a)', type: 'Vehicle' }] }), /entities\[0\]\.idPattern/],
  ['an empty entities array', sub({ entities: [] }), /entities/],
  ['a type that is not Subscription', sub({ type: 'Registration' }), /^type/],
  ['no type', sub({ type: undefined }), /^type/],
  ['an unknown member', sub({ colour: 'red' }), /colour/],
  ['an unknown notificationTrigger', sub({ notificationTrigger: ['entityTouched'] }), /notificationTrigger/],
  ['isActive that is no boolean', sub({ isActive: 'yes' }), /isActive/],
  ['watchedAttributes that are no names', sub({ watchedAttributes: ['a b'] }), /watchedAttributes/],
  ['an id that is no URI', sub({ id: 'sub 1' }), /^id/],
  [
    'a member both in pick and omit',
    sub({ notification: { pick: ['id', 'a'], omit: ['a'], endpoint: { uri: 'http://127.0.0.1:9/n' } } }),
    /'notification\.a' is both in pick and in omit/,
  ],
  [
    'pick with attributes',
    sub({ notification: { pick: ['id'], attributes: ['id'], endpoint: { uri: 'http://127.0.0.1:9/n' } } }),
    /notification\.pick: cannot be combined with notification\.attributes/,
  ],
  [
    'omit with attributes',
    sub({ notification: { omit: ['a'], attributes: ['b'], endpoint: { uri: 'http://127.0.0.1:9/n' } } }),
    /notification\.omit: cannot be combined/,
  ],
  [
    'a malformed pick',
    sub({ notification: { pick: ['id', 'rel{a'], endpoint: { uri: 'http://127.0.0.1:9/n' } } }),
    /notification\.pick: expected ',' or '}'/,
  ],
  ['a jsonldContext that is no URL', sub({ jsonldContext: 'context' }), /jsonldContext/],
  ['a lang that is no language list', sub({ lang: 'e n' }), /lang/],
];

t.test('POST /subscriptions refuses bad input with 400 BadRequestData naming the member, and keeps nothing', async (t) => {
  const before = await count();
  for (const [what, body, member] of BAD) {
    const r = await call(broker, 'POST', `${NGSI}/subscriptions`, { body });
    t.equal(r.status, 400, `${what}: ${r.text}`);
    t.equal(r.json?.type, `${ERR}BadRequestData`, what);
    t.match(r.json?.detail ?? '', member, `${what}: the detail names the member`);
  }
  const notJson = await call(broker, 'POST', `${NGSI}/subscriptions`, { raw: '{"type":', headers: { 'content-type': 'application/json' } });
  t.equal(notJson.status, 400);
  const array = await call(broker, 'POST', `${NGSI}/subscriptions`, { body: [sub()] });
  t.equal(array.status, 400);
  t.equal(await count(), before, 'no refused subscription was kept');
});

t.test('GET /subscriptions lists in creation order, pages with limit/offset and counts with count=true', async (t) => {
  const tenant = { 'NGSILD-Tenant': 'subspage' };
  for (let i = 0; i < 5; i++) {
    const r = await call(broker, 'POST', `${NGSI}/subscriptions`, { body: sub({ id: `urn:ngsi-ld:Subscription:p${i}` }), headers: tenant });
    t.equal(r.status, 201, r.text);
  }
  const all = await call(broker, 'GET', `${NGSI}/subscriptions`, { headers: tenant });
  t.same(
    all.json.map((s: { id: string }) => s.id),
    [0, 1, 2, 3, 4].map((i) => `urn:ngsi-ld:Subscription:p${i}`),
  );
  const page = await call(broker, 'GET', `${NGSI}/subscriptions?limit=2&offset=1&count=true`, { headers: tenant });
  t.same(
    page.json.map((s: { id: string }) => s.id),
    ['urn:ngsi-ld:Subscription:p1', 'urn:ngsi-ld:Subscription:p2'],
  );
  t.equal(page.headers.get('ngsild-results-count'), '5');
  t.equal((await call(broker, 'GET', `${NGSI}/subscriptions/urn:ngsi-ld:Subscription:p0`)).status, 404, 'another tenant does not see them');
  for (const q of ['limit=x', 'offset=-1', 'count=maybe', 'colour=red', 'limit=5000']) {
    const r = await call(broker, 'GET', `${NGSI}/subscriptions?${q}`, { headers: tenant });
    t.ok(r.status === 400 || r.status === 403, `${q}: ${r.status}`);
  }
});

t.test('PATCH /subscriptions/{id} replaces the members given, keeps the others, and validates the result', async (t) => {
  const id = 'urn:ngsi-ld:Subscription:patch1';
  t.equal(
    (
      await call(broker, 'POST', `${NGSI}/subscriptions`, {
        body: sub({ id, q: 'speed>10', notification: { sysAttrs: true, endpoint: { uri: 'http://127.0.0.1:9/notify' } } }),
      })
    ).status,
    201,
  );
  const p = await call(broker, 'PATCH', `${NGSI}/subscriptions/${id}`, {
    body: { isActive: false, notification: { format: 'keyValues', endpoint: { uri: 'http://127.0.0.1:9/other' } }, q: null },
  });
  t.equal(p.status, 204, p.text);
  const g = (await call(broker, 'GET', `${NGSI}/subscriptions/${id}`)).json;
  t.equal(g.isActive, false);
  t.equal(g.status, 'paused');
  t.equal(g.notification.format, 'keyValues');
  t.equal(g.notification.endpoint.uri, 'http://127.0.0.1:9/other');
  t.notOk('sysAttrs' in g.notification, 'CIM 009 §5.5.8: notification was replaced whole');
  t.notOk('q' in g, 'null removed q');
  t.same(g.watchedAttributes, ['speed']);

  const bad: Array<[Record<string, unknown>, RegExp]> = [
    [{ timeInterval: 5 }, /timeInterval/],
    [{ throttling: -3 }, /throttling/],
    [{ notification: { endpoint: { uri: 'mqtt://127.0.0.1/t' } } }, /notification\.endpoint\.uri/],
    [{ notification: { format: 'xml', endpoint: { uri: 'http://127.0.0.1:9/notify' } } }, /notification\.format/],
    [{ notification: { format: 'keyValues' } }, /notification\.endpoint/],
    [{ notification: { format: 'keyValues', endpoint: null } }, /notification\.endpoint/],
    [{ notification: null }, /^notification/],
    [{ q: '(((' }, /^q/],
    [{ expiresAt: '2001-01-01T00:00:00Z' }, /expiresAt/],
    [{ id: 'urn:ngsi-ld:Subscription:other' }, /^id/],
    [{}, /no member/],
  ];
  for (const [body, member] of bad) {
    const r = await call(broker, 'PATCH', `${NGSI}/subscriptions/${id}`, { body });
    t.equal(r.status, 400, `${JSON.stringify(body)}: ${r.text}`);
    t.equal(r.json.type, `${ERR}BadRequestData`);
    t.match(r.json.detail, member, JSON.stringify(body));
  }
  const after = (await call(broker, 'GET', `${NGSI}/subscriptions/${id}`)).json;
  t.same({ ...after }, { ...g }, 'refused updates changed nothing');
  const missing = await call(broker, 'PATCH', `${NGSI}/subscriptions/urn:ngsi-ld:Subscription:nope`, { body: { isActive: true } });
  t.equal(missing.status, 404);
  t.equal(missing.json.type, `${ERR}ResourceNotFound`);
});

t.test('DELETE /subscriptions/{id} removes it: 204, then 404 for GET, PATCH and DELETE', async (t) => {
  const id = 'urn:ngsi-ld:Subscription:del1';
  t.equal((await call(broker, 'POST', `${NGSI}/subscriptions`, { body: sub({ id }) })).status, 201);
  t.equal((await call(broker, 'DELETE', `${NGSI}/subscriptions/${id}`)).status, 204);
  t.equal((await call(broker, 'GET', `${NGSI}/subscriptions/${id}`)).status, 404);
  t.equal((await call(broker, 'DELETE', `${NGSI}/subscriptions/${id}`)).status, 404);
  t.equal((await call(broker, 'PATCH', `${NGSI}/subscriptions/${id}`, { body: { isActive: false } })).status, 404);
  t.equal((await call(broker, 'POST', `${NGSI}/subscriptions`, { body: sub({ id }) })).status, 201, 'the id can be used again');
});

t.test('a subscription id that is no URI is 400 on every /subscriptions/{id} route', async (t) => {
  for (const method of ['GET', 'PATCH', 'DELETE']) {
    const r = await call(broker, method, `${NGSI}/subscriptions/not%20a%20uri`, method === 'PATCH' ? { body: { isActive: true } } : {});
    t.equal(r.status, 400, `${method}: ${r.text}`);
  }
});

t.test('creating a subscription creates its tenant (CIM 009 §4.14); a refused one leaves none', async (t) => {
  const refused = await call(broker, 'POST', `${NGSI}/subscriptions`, {
    body: sub({ notification: { endpoint: { uri: 'not a uri' } } }),
    headers: { 'NGSILD-Tenant': 'subsrefused' },
  });
  t.equal(refused.status, 400);
  const none = await call(broker, 'GET', `${NGSI}/subscriptions`, { headers: { 'NGSILD-Tenant': 'subsrefused' } });
  t.equal(none.json?.type, 'https://uri.etsi.org/ngsi-ld/errors/NonexistentTenant', 'no tenant from a refused create');
  const tenant = { 'NGSILD-Tenant': 'subsonly' };
  const c = await call(broker, 'POST', `${NGSI}/subscriptions`, { body: sub({ id: 'urn:ngsi-ld:Subscription:only' }), headers: tenant });
  t.equal(c.status, 201, c.text);
  const list = await call(broker, 'GET', `${NGSI}/subscriptions`, { headers: tenant });
  t.equal(list.status, 200, list.text);
  t.same(
    list.json.map((s: { id: string }) => s.id),
    ['urn:ngsi-ld:Subscription:only'],
  );
  t.equal(
    (await call(broker, 'GET', `${NGSI}/entities?type=Vehicle`, { headers: tenant })).status,
    200,
    'the tenant exists for entities too',
  );
});
