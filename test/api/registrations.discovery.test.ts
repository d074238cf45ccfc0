// Context source discovery (CIM 009 v1.8 §5.10.2, §6.8.3.2): what a discovery must name, the 400 BadRequestData of
// a malformed q or an incomplete temporal query, a RegistrationInfo without entities covering every entity
// (§5.2.10), and the temporal query matched against observationInterval and managementInterval.
import t, { type Test } from 'tap';
import { startBroker, call, NGSI, type Broker, type Reply } from './helpers/broker.js';

const ERR = 'https://uri.etsi.org/ngsi-ld/errors/';
const R = `${NGSI}/csourceRegistrations`;
const h = { 'NGSILD-Tenant': 'discovery' };
let broker: Broker;

const reg = (id: string, extra: Record<string, unknown>): Record<string, unknown> => ({
  id: `urn:ngsi-ld:ContextSourceRegistration:${id}`,
  type: 'ContextSourceRegistration',
  endpoint: 'http://127.0.0.1:9/source',
  ...extra,
});

t.before(async () => {
  broker = await startBroker();
  const regs = [
    reg('attrsOnly', { information: [{ propertyNames: ['name', 'subCategory'] }] }),
    reg('parking', { information: [{ entities: [{ type: 'OffStreetParking' }] }] }),
    reg('observed', {
      information: [{ entities: [{ type: 'Building' }] }],
      observationInterval: { startAt: '2020-08-01T22:07:00Z', endAt: '2021-08-01T21:07:00Z' },
    }),
    reg('managed', { information: [{ entities: [{ type: 'Building' }] }], managementInterval: { startAt: '2022-01-01T00:00:00Z' } }),
    reg('timeless', { information: [{ entities: [{ type: 'Building' }] }] }),
  ];
  for (const body of regs) {
    const r = await call(broker, 'POST', R, { headers: h, body });
    if (r.status !== 201) throw new Error(r.text);
  }
});
t.teardown(async () => {
  await broker.stop();
});

const found = async (query: string): Promise<string[]> => {
  const r = await call(broker, 'GET', `${R}?${query}`, { headers: h });
  if (r.status !== 200) throw new Error(`${query}: ${r.status} ${r.text}`);
  return r.json.map((x: { id: string }) => x.id.split(':').pop()).sort();
};

function badRequest(t: Test, r: Reply, what: string): void {
  t.equal(r.status, 400, `${what}: ${r.text}`);
  t.equal(r.json?.type, `${ERR}BadRequestData`, what);
}

t.test('a discovery naming nothing to look for is 400 BadRequestData', async (t) => {
  for (const query of ['', 'limit=5', 'count=true', 'options=sysAttrs', 'timerel=before&timeAt=2021-08-01T22:00:00Z']) {
    badRequest(t, await call(broker, 'GET', `${R}?${query}`, { headers: h }), query === '' ? 'no parameter' : query);
  }
  for (const query of [
    'type=Building',
    'attrs=name',
    'q=brand==%22x%22',
    'id=urn:ngsi-ld:Building:1',
    'idPattern=.*',
    'georel=near;maxDistance==10&geometry=Point&coordinates=[0,0]',
  ])
    t.equal((await call(broker, 'GET', `${R}?${query}`, { headers: h })).status, 200, query);
});

t.test('a q that does not parse and an incomplete or malformed temporal query are 400 BadRequestData', async (t) => {
  for (const query of [
    'q=%28invalidQuery',
    'type=Building&q=%28%28',
    'type=Building&timerel=before',
    'type=Building&timerel=between&timeAt=2021-01-01T00:00:00Z',
    'type=Building&timerel=sometime&timeAt=2021-01-01T00:00:00Z',
    'type=Building&timerel=after&timeAt=yesterday',
    'type=Building&timeAt=2021-01-01T00:00:00Z',
    'type=Building&timeproperty=deletedAt&timerel=before&timeAt=2021-01-01T00:00:00Z',
    'type=Building&timeproperty=expiresAt&timerel=before&timeAt=2021-01-01T00:00:00Z',
  ])
    badRequest(t, await call(broker, 'GET', `${R}?${query}`, { headers: h }), query);
});

t.test('a RegistrationInfo without entities covers every entity, of any type and id', async (t) => {
  t.same(await found('type=OffStreetParking&idPattern=.*downtown$'), ['attrsOnly', 'parking']);
  t.same(await found('type=Anything'), ['attrsOnly']);
  t.same(await found('type=OffStreetParking&attrs=name'), ['attrsOnly', 'parking'], 'an info with entities only covers every attribute');
  t.same(await found('type=OffStreetParking&attrs=capacity'), ['parking'], 'the attrs-only info lists its attributes');
});

t.test('the temporal query meets observationInterval (observedAt) or managementInterval (createdAt, modifiedAt)', async (t) => {
  // attrsOnly (no entities: every entity, no interval: any time) is found by each of them.
  const at = (rel: string, time: string, prop = ''): string =>
    `type=Building&timerel=${rel}&timeAt=${time}${prop === '' ? '' : `&timeproperty=${prop}`}`;
  t.same(await found('type=Building'), ['attrsOnly', 'managed', 'observed', 'timeless']);
  t.same(
    await found(at('before', '2021-08-01T22:00:00Z')),
    ['attrsOnly', 'managed', 'observed', 'timeless'],
    'observedAt is the default; an interval the registration lacks sets no bound',
  );
  t.same(await found(at('before', '2020-01-01T00:00:00Z', 'observedAt')), ['attrsOnly', 'managed', 'timeless'], 'before its startAt');
  t.same(await found(at('after', '2021-08-01T21:07:00Z', 'observedAt')), ['attrsOnly', 'managed', 'observed', 'timeless'], 'at its endAt');
  t.same(await found(at('after', '2021-08-01T21:07:01Z', 'observedAt')), ['attrsOnly', 'managed', 'timeless'], 'after its endAt');
  t.same(
    await found(at('before', '2021-08-01T22:00:00Z', 'createdAt')),
    ['attrsOnly', 'observed', 'timeless'],
    'managementInterval starts 2022',
  );
  t.same(
    await found(at('after', '2030-01-01T00:00:00Z', 'modifiedAt')),
    ['attrsOnly', 'managed', 'observed', 'timeless'],
    'an interval without endAt is open',
  );
  t.same(await found('type=Building&timerel=between&timeAt=2019-01-01T00:00:00Z&endTimeAt=2020-01-01T00:00:00Z'), [
    'attrsOnly',
    'managed',
    'timeless',
  ]);
});
