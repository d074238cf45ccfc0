// Query entities (CIM 009 v1.8 §5.7.2, §6.4.3.2): selection, paging and count, and every bad input answered with a
// 400 ProblemDetails while the broker keeps serving.
import t from 'tap';
import { startBroker, call, NGSI, type Broker } from './helpers/broker.js';

let broker: Broker;
const ERR = 'https://uri.etsi.org/ngsi-ld/errors/';
t.before(async () => {
  broker = await startBroker();
  const body = Array.from({ length: 30 }, (_, i) => ({
    id: `urn:ngsi-ld:Car:q${i}`,
    type: i % 2 === 0 ? 'Car' : 'Truck',
    speed: { type: 'Property', value: i },
    location: { type: 'GeoProperty', value: { type: 'Point', coordinates: [2 + i * 0.01, 48] } },
  }));
  const r = await call(broker, 'POST', `${NGSI}/entityOperations/create`, { body });
  if (r.status !== 201) throw new Error(r.text);
  await call(broker, 'POST', `${NGSI}/entities`, { body: { id: 'urn:ngsi-ld:Other:1', type: 'Other' } });
});
t.teardown(async () => {
  await broker.stop();
});
const get = (q: string) => call(broker, 'GET', `${NGSI}/entities?${q}`);

t.test('a query by type pages with limit (default 20) and offset; count=true sets NGSILD-Results-Count', async (t) => {
  const all = await get('type=Car');
  t.equal(all.status, 200, all.text);
  t.equal(all.json.length, 15);
  t.ok(all.json.every((e: any) => e.type === 'Car'));
  const page = await get('type=Car,Truck&limit=5&offset=25&count=true');
  t.equal(page.json.length, 5);
  t.equal(page.headers.get('ngsild-results-count'), '30');
  const dflt = await get('type=Car,Truck');
  t.equal(dflt.json.length, 20, 'the default limit is 20');
  const onlyCount = await get('type=Car&limit=0&count=true');
  t.equal(onlyCount.status, 200);
  t.same(onlyCount.json, []);
  t.equal(onlyCount.headers.get('ngsild-results-count'), '15');
});

t.test('id lists, idPattern, q, attrs and geo-queries select as the spec says', async (t) => {
  t.same(
    (await get('id=urn:ngsi-ld:Car:q0,urn:ngsi-ld:Car:q2')).json.map((e: any) => e.id),
    ['urn:ngsi-ld:Car:q0', 'urn:ngsi-ld:Car:q2'],
  );
  t.equal((await get('idPattern=^urn:ngsi-ld:Car:q1.$')).json.length, 10);
  t.same((await get('type=Car&q=speed>25')).json.map((e: any) => e.speed.value).sort(), [26, 28]);
  t.equal((await get('attrs=speed&limit=100')).json.length, 30, 'only entities holding speed');
  const near = await get(
    `type=Car&georel=${encodeURIComponent('near;maxDistance==1000')}&geometry=Point&coordinates=${encodeURIComponent('[2,48]')}`,
  );
  t.equal(near.status, 200, near.text);
  t.same(
    near.json.map((e: any) => e.id),
    ['urn:ngsi-ld:Car:q0'],
  );
  const geo = await call(broker, 'GET', `${NGSI}/entities?type=Car&limit=2`, { headers: { accept: 'application/geo+json' } });
  t.equal(geo.json.type, 'FeatureCollection');
  t.equal(geo.json.features.length, 2);
});

t.test('a limit above the maximum is 403 TooManyResults (table 5.5.2-1)', async (t) => {
  const r = await get('type=Car&limit=1001');
  t.equal(r.status, 403, r.text);
  t.equal(r.json.type, `${ERR}TooManyResults`);
  t.equal((await get('type=Car&limit=1000')).status, 200);
});

t.test('bad inputs answer 400 ProblemDetails and the broker keeps serving', async (t) => {
  const bad = [
    '',
    'options=count',
    'type=Car&options=bogus',
    'type=Car&limit=-1',
    'type=Car&limit=ten',
    'type=Car&offset=-3',
    'type=Car&offset=x',
    'type=Car&limit=0',
    'type=Car&count=maybe',
    'type=Car&q=(speed>1',
    'type=Car&q=speed>1)',
    'type=Car&q=speed>>',
    'type=(Car',
    'type=Car;;Truck',
    'idPattern=(unclosed',
    'idPattern=a{2,1}',
    'type=Car&unknownParam=1',
    'id=not a uri',
    `type=Car&georel=near;maxDistance==10&geometry=Point`,
    `type=Car&georel=near;maxDistance==10&geometry=Point&coordinates=${encodeURIComponent('[[1,2],[3,4]]')}`,
    `type=Car&georel=within&geometry=Polygon&coordinates=${encodeURIComponent('[1,2]')}`,
    `type=Car&georel=sideways&geometry=Point&coordinates=${encodeURIComponent('[1,2]')}`,
    'type=Car&scopeQ=/a/(',
    'type=Car&join=sideways',
  ];
  for (const q of bad) {
    const r = await get(q);
    t.equal(r.status, 400, `${q}: ${r.text}`);
    t.match(r.json?.type, /errors\/(BadRequestData|InvalidRequest)$/, q);
    t.type(r.json?.detail, 'string', q);
  }
  t.equal((await get('type=Car')).status, 200, 'still serving');
});

t.test('an unparsable q names the position of the problem', async (t) => {
  const r = await get('type=Car&q=speed>1;(speed<');
  t.equal(r.status, 400);
  t.match(r.json.detail, /\d/, 'the detail carries a position');
});

t.test('a regex built to backtrack catastrophically answers promptly (linear-time matching)', async (t) => {
  await call(broker, 'POST', `${NGSI}/entities`, { body: { id: `urn:ngsi-ld:Evil:${'a'.repeat(40)}b`, type: 'Evil' } });
  const r = await get(`idPattern=${encodeURIComponent('^urn:ngsi-ld:Evil:(a+)+$')}`);
  t.equal(r.status, 200, r.text);
  t.same(r.json, [], 'no match, and an answer at all');
  t.equal((await get('type=Car')).status, 200);
});
