// Context source registrations, registry only (CIM 009 v1.8 §5.9, §6.8, §6.9): CRUD, validation naming the member,
// discovery by type/id/idPattern/attrs/q/geoQ, and the 409 Conflict of exclusive and redirect registrations
// against each other and against local entities.
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

const reg = (extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  type: 'ContextSourceRegistration',
  information: [{ entities: [{ type: 'Building' }], propertyNames: ['height'] }],
  endpoint: 'http://127.0.0.1:9/source',
  ...extra,
});
const R = `${NGSI}/csourceRegistrations`;

t.test('the Location of a registration names its id as a path segment: only what a segment cannot hold is encoded', async (t) => {
  const id = 'https://example.org/regs/ü?x=1#f';
  const r = await call(broker, 'POST', R, { body: reg({ id }) });
  t.equal(r.status, 201, r.text);
  const location = r.headers.get('location') ?? '';
  t.equal(location, `${R}/https:%2F%2Fexample.org%2Fregs%2F%C3%BC%3Fx=1%23f`);
  const g = await call(broker, 'GET', location);
  t.equal(g.status, 200, 'the Location retrieves the registration');
  t.equal(g.json.id, id);
  t.equal((await call(broker, 'DELETE', location)).status, 204);
});

t.test('POST /csourceRegistrations keeps a registration (201, Location); GET, PATCH and DELETE work on it', async (t) => {
  const id = 'urn:ngsi-ld:ContextSourceRegistration:crud';
  const r = await call(broker, 'POST', R, {
    body: reg({
      id,
      registrationName: 'r',
      mode: 'inclusive',
      operations: ['retrieveOps'],
      management: { timeout: 500 },
      observationInterval: { startAt: '2024-01-01T00:00:00Z', endAt: '2025-01-01T00:00:00Z' },
      expiresAt: '2099-01-01T00:00:00Z',
    }),
  });
  t.equal(r.status, 201, r.text);
  t.equal(r.headers.get('location'), `${R}/${id}`, 'a URN id is written as it is');
  const g = await call(broker, 'GET', `${R}/${id}`);
  t.equal(g.status, 200);
  t.same(g.json.information, [{ entities: [{ type: 'Building' }], propertyNames: ['height'] }]);
  t.equal(g.json.mode, 'inclusive');
  t.same(g.json.operations, ['retrieveOps']);
  t.match(g.headers.get('link') ?? '', /ngsi-ld-core-context/);
  t.equal((await call(broker, 'POST', R, { body: reg({ id }) })).status, 409, 'a duplicate id is 409');
  t.equal((await call(broker, 'PATCH', `${R}/${id}`, { body: { registrationName: 'renamed', management: null } })).status, 204);
  const p = (await call(broker, 'GET', `${R}/${id}?options=sysAttrs`)).json;
  t.equal(p.registrationName, 'renamed');
  t.notOk('management' in p);
  t.type(p.createdAt, 'string');
  t.equal((await call(broker, 'PATCH', `${R}/${id}`, { body: { mode: 'sometimes' } })).status, 400, 'a PATCH is validated');
  t.equal((await call(broker, 'DELETE', `${R}/${id}`)).status, 204);
  t.equal((await call(broker, 'GET', `${R}/${id}`)).status, 404);
  t.equal((await call(broker, 'DELETE', `${R}/${id}`)).status, 404);
  t.equal((await call(broker, 'PATCH', `${R}/${id}`, { body: { registrationName: 'x' } })).status, 404);
  t.equal((await call(broker, 'GET', `${R}/not%20a%20uri`)).status, 400);
  const gen = await call(broker, 'POST', R, { body: reg() });
  t.match(
    decodeURIComponent(gen.headers.get('location') ?? ''),
    /urn:ngsi-ld:ContextSourceRegistration:[0-9a-f-]{36}$/,
    'an id is made when none is given',
  );
});

const BAD: Array<[string, Record<string, unknown>, RegExp]> = [
  ['no information', reg({ information: undefined }), /information/],
  ['empty information', reg({ information: [] }), /information/],
  ['an empty RegistrationInfo', reg({ information: [{}] }), /information\[0\]/],
  [
    'an EntityInfo without type',
    reg({ information: [{ entities: [{ id: 'urn:ngsi-ld:Building:1' }] }] }),
    /information\[0\]\.entities\[0\]\.type/,
  ],
  ['an EntityInfo id that is no URI', reg({ information: [{ entities: [{ id: 'b1', type: 'Building' }] }] }), /entities\[0\]\.id/],
  ['a bad idPattern', reg({ information: [{ entities: [{ idPattern: '(?<=x)', type: 'Building' }] }] }), /idPattern/],
  ['propertyNames that are no names', reg({ information: [{ propertyNames: ['a b'] }] }), /propertyNames/],
  ['no endpoint', reg({ endpoint: undefined }), /endpoint/],
  ['an endpoint that is no URL', reg({ endpoint: 'nowhere' }), /endpoint/],
  ['an unknown mode', reg({ mode: 'sometimes' }), /mode/],
  ['an unknown operation', reg({ operations: ['teleport'] }), /operations/],
  ['an expiresAt in the past', reg({ expiresAt: '2001-01-01T00:00:00Z' }), /expiresAt/],
  [
    'an interval ending before it starts',
    reg({ managementInterval: { startAt: '2025-01-01T00:00:00Z', endAt: '2024-01-01T00:00:00Z' } }),
    /managementInterval/,
  ],
  ['a location that is no geometry', reg({ location: { type: 'Point' } }), /location/],
  ['a bad management member', reg({ management: { retries: 3 } }), /management/],
  ['a wrong type', reg({ type: 'Subscription' }), /^type/],
  [
    'an exclusive registration with an idPattern',
    reg({ mode: 'exclusive', information: [{ entities: [{ idPattern: '.*', type: 'Building' }], propertyNames: ['height'] }] }),
    /exclusive/,
  ],
  [
    'an exclusive registration without attributes',
    reg({ mode: 'exclusive', information: [{ entities: [{ id: 'urn:ngsi-ld:Building:9', type: 'Building' }] }] }),
    /exclusive/,
  ],
  ['a scope that is no scope', reg({ scope: 'nope' }), /scope/],
];

t.test('bad registrations are 400 BadRequestData naming the member, and nothing is kept', async (t) => {
  const before = (await call(broker, 'GET', `${R}?idPattern=.*&limit=1000`)).json.length;
  for (const [what, body, member] of BAD) {
    const r = await call(broker, 'POST', R, { body });
    t.equal(r.status, 400, `${what}: ${r.text}`);
    t.equal(r.json?.type, `${ERR}BadRequestData`, what);
    t.match(r.json?.detail ?? '', member, what);
  }
  t.equal((await call(broker, 'GET', `${R}?idPattern=.*&limit=1000`)).json.length, before);
});

t.test('GET /csourceRegistrations selects by type, id, idPattern, attrs, q and geoQ; pages and counts', async (t) => {
  const h = { 'NGSILD-Tenant': 'regquery' };
  await call(broker, 'POST', `${NGSI}/entities`, { headers: h, body: { id: 'urn:ngsi-ld:Thing:0', type: 'Thing' } });
  const mk = async (id: string, extra: Record<string, unknown>): Promise<void> => {
    const r = await call(broker, 'POST', R, { headers: h, body: reg({ id: `urn:ngsi-ld:ContextSourceRegistration:${id}`, ...extra }) });
    t.equal(r.status, 201, r.text);
  };
  await mk('cars', {
    information: [{ entities: [{ type: 'Car' }], propertyNames: ['speed'] }],
    brand: 'acme',
    location: { type: 'Point', coordinates: [2.35, 48.85] },
  });
  await mk('car7', {
    information: [{ entities: [{ id: 'urn:ngsi-ld:Car:7', type: 'Car' }], relationshipNames: ['owner'] }],
    brand: { type: 'Property', value: 'other' },
  });
  await mk('bikes', {
    information: [{ entities: [{ idPattern: '^urn:ngsi-ld:Bike:', type: 'Bike' }] }],
    location: { type: 'Point', coordinates: [10, 10] },
  });
  const ids = async (query: string): Promise<string[]> => {
    const r = await call(broker, 'GET', `${R}?${query}`, { headers: h });
    t.equal(r.status, 200, `${query}: ${r.text}`);
    return r.json.map((x: { id: string }) => x.id.split(':').pop()).sort();
  };
  t.same(await ids('type=Car'), ['car7', 'cars']);
  t.same(await ids('type=Bike'), ['bikes']);
  t.same(await ids('id=urn:ngsi-ld:Car:7'), ['car7', 'cars']);
  t.same(await ids('id=urn:ngsi-ld:Car:8&type=Car'), ['cars']);
  t.same(await ids('id=urn:ngsi-ld:Bike:1&type=Bike'), ['bikes']);
  t.same(await ids('id=urn:ngsi-ld:Bike:2'), ['bikes', 'cars'], 'a registration by type alone may hold any id');
  t.same(await ids('type=Car&attrs=owner'), ['car7']);
  t.same(await ids('type=Car&attrs=speed'), ['cars']);
  t.same(await ids('type=Car&idPattern=Car:7$'), ['car7', 'cars']);
  t.same(await ids('type=Car&q=brand==%22acme%22'), ['cars']);
  t.same(await ids('type=Car,Bike&georel=near;maxDistance==1000&geometry=Point&coordinates=[2.35,48.85]'), ['cars']);
  t.same(await ids('type=Truck'), []);
  const page = await call(broker, 'GET', `${R}?type=Car,Bike&limit=1&count=true`, { headers: h });
  t.equal(page.json.length, 1);
  t.equal(page.headers.get('ngsild-results-count'), '3');
  for (const bad of ['q=(((', 'id=notauri', 'georel=near&geometry=Point', 'limit=-1', 'colour=red', 'idPattern=(?=x)']) {
    const r = await call(broker, 'GET', `${R}?${bad}`, { headers: h });
    t.equal(r.status, 400, `${bad}: ${r.text}`);
  }
});

t.test('exclusive and redirect registrations conflict with each other and with local entities (409 Conflict)', async (t) => {
  const h = { 'NGSILD-Tenant': 'regconflict' };
  t.equal(
    (
      await call(broker, 'POST', `${NGSI}/entities`, {
        headers: h,
        body: { id: 'urn:ngsi-ld:Tank:local', type: 'Tank', level: { type: 'Property', value: 3 } },
      })
    ).status,
    201,
  );
  const post = (body: Record<string, unknown>) => call(broker, 'POST', R, { headers: h, body });
  const excl = (id: string, attr: string): Record<string, unknown> =>
    reg({ mode: 'exclusive', information: [{ entities: [{ id, type: 'Tank' }], propertyNames: [attr] }] });

  const local = await post(excl('urn:ngsi-ld:Tank:local', 'level'));
  t.equal(local.status, 409, `an exclusive registration of a locally held attribute: ${local.text}`);
  t.equal(local.json.type, `${ERR}Conflict`);
  t.equal((await post(excl('urn:ngsi-ld:Tank:local', 'pressure'))).status, 201, 'another attribute of the local entity can be exclusive');
  t.equal((await post(excl('urn:ngsi-ld:Tank:remote', 'level'))).status, 201);
  const twice = await post(excl('urn:ngsi-ld:Tank:remote', 'level'));
  t.equal(twice.status, 409, 'two exclusive registrations of one attribute conflict');
  const redirect = await post(reg({ mode: 'redirect', information: [{ entities: [{ id: 'urn:ngsi-ld:Tank:remote', type: 'Tank' }] }] }));
  t.equal(redirect.status, 409, 'a redirect registration over an exclusive one conflicts');
  const redirectLocal = await post(reg({ mode: 'redirect', information: [{ entities: [{ type: 'Tank' }], propertyNames: ['level'] }] }));
  t.equal(redirectLocal.status, 409, 'a redirect registration of what local entities hold conflicts');
  t.equal(
    (await post(reg({ mode: 'redirect', information: [{ entities: [{ type: 'Pipe' }] }] }))).status,
    201,
    'a redirect registration of nothing held locally is kept',
  );
  t.equal(
    (
      await post(
        reg({ mode: 'inclusive', information: [{ entities: [{ id: 'urn:ngsi-ld:Tank:local', type: 'Tank' }], propertyNames: ['level'] }] }),
      )
    ).status,
    201,
    'inclusive registrations never conflict',
  );
  const id = 'urn:ngsi-ld:ContextSourceRegistration:becomes-exclusive';
  t.equal(
    (
      await call(broker, 'POST', R, {
        headers: h,
        body: reg({ id, information: [{ entities: [{ id: 'urn:ngsi-ld:Tank:local', type: 'Tank' }], propertyNames: ['level'] }] }),
      })
    ).status,
    201,
  );
  const patched = await call(broker, 'PATCH', `${R}/${id}`, { headers: h, body: { mode: 'exclusive' } });
  t.equal(patched.status, 409, 'an update into a conflict is refused');
  t.equal((await call(broker, 'GET', `${R}/${id}`, { headers: h })).json.mode, undefined, 'and changes nothing');
});

t.test('creating a registration creates its tenant (CIM 009 §4.14); a refused one leaves none', async (t) => {
  const refused = await call(broker, 'POST', R, { headers: { 'NGSILD-Tenant': 'regrefused' }, body: reg({ endpoint: 'not a uri' }) });
  t.equal(refused.status, 400);
  t.equal(
    (await call(broker, 'GET', `${R}?type=Car`, { headers: { 'NGSILD-Tenant': 'regrefused' } })).json?.type,
    'https://uri.etsi.org/ngsi-ld/errors/NonexistentTenant',
    'no tenant from a refused create',
  );
  const h = { 'NGSILD-Tenant': 'regonly' };
  const c = await call(broker, 'POST', R, { headers: h, body: reg({ id: 'urn:ngsi-ld:ContextSourceRegistration:only' }) });
  t.equal(c.status, 201, c.text);
  const list = await call(broker, 'GET', `${R}?type=Building`, { headers: h });
  t.equal(list.status, 200, list.text);
  t.same(
    list.json.map((r: { id: string }) => r.id),
    ['urn:ngsi-ld:ContextSourceRegistration:only'],
  );
});
