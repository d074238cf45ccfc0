// Bad input to the query API (issue 3, "Bad input"): each case is a 400 ProblemDetails of the precise NGSI-LD
// error type (CIM 009 v1.8 table 5.5.2-1: BadRequestData for a value out of range, InvalidRequest for an unknown
// parameter or options word (v1.8.1 §6.3.20) and for a q, scopeQ, type or geo expression that does not parse), for GET /entities and for POST
// /entityOperations/query, and the broker answers the next request as before.
import t, { type Test } from 'tap';
import { startBroker, call, NGSI, type Broker } from './helpers/broker.js';

let broker: Broker;
const ERR = 'https://uri.etsi.org/ngsi-ld/errors/';
const enc = encodeURIComponent;
const EVIL = `urn:ngsi-ld:Evil:${'a'.repeat(30)}!`;

t.before(async () => {
  broker = await startBroker();
  const body = [
    {
      id: 'urn:ngsi-ld:Car:b1',
      type: 'Car',
      speed: { type: 'Property', value: 1 },
      location: { type: 'GeoProperty', value: { type: 'Point', coordinates: [2, 48] } },
    },
    { id: EVIL, type: 'Evil', label: { type: 'Property', value: `${'a'.repeat(30)}!` } },
  ];
  const r = await call(broker, 'POST', `${NGSI}/entityOperations/create`, { body });
  if (r.status !== 201) throw new Error(r.text);
});
t.teardown(async () => {
  await broker.stop();
});

const get = (q: string) => call(broker, 'GET', `${NGSI}/entities?${q}`);
const post = (body: unknown, qs = '') => call(broker, 'POST', `${NGSI}/entityOperations/query${qs}`, { body });

async function stillServing(t: Test): Promise<void> {
  const r = await get('type=Car');
  t.equal(r.status, 200, 'the broker still answers');
  t.equal(r.json?.length, 1);
}

function problem(
  t: Test,
  r: { status: number; json: any; text: string; headers: Headers },
  status: number,
  type: string,
  what: string,
): void {
  t.equal(r.status, status, `${what}: ${r.text}`);
  t.equal(r.json?.type, `${ERR}${type}`, what);
  t.equal(r.json?.status, status, `${what}: status member`);
  t.type(r.json?.title, 'string', `${what}: title`);
  t.type(r.json?.detail, 'string', `${what}: detail`);
  t.match(r.headers.get('content-type'), /application\/json/, `${what}: a JSON ProblemDetails`);
}

t.test('unknown options and unknown parameters are 400 InvalidRequest (CIM 009 v1.8.1 §6.3.20)', async (t) => {
  problem(t, await get('type=Car&options=bogus'), 400, 'InvalidRequest', 'options=bogus');
  problem(t, await get('type=Car&options=keyValues,bogus'), 400, 'InvalidRequest', 'one bad word among good ones');
  problem(t, await get('type=Car&colour=red'), 400, 'InvalidRequest', 'unknown parameter');
  problem(t, await post({ type: 'Query', entities: [{ type: 'Car' }] }, '?options=bogus'), 400, 'InvalidRequest', 'POST options=bogus');
  problem(t, await post({ type: 'Query', entities: [{ type: 'Car' }] }, '?colour=red'), 400, 'InvalidRequest', 'POST unknown parameter');
  await stillServing(t);
});

t.test('negative, non-numeric and too large limit/offset are refused; a limit over the maximum is 403 TooManyResults', async (t) => {
  for (const q of ['limit=-1', 'limit=ten', 'limit=1.5', 'limit=', 'offset=-3', 'offset=x', 'offset=1e3', 'limit=99999999999999999999'])
    problem(t, await get(`type=Car&${q}`), 400, 'BadRequestData', q);
  problem(t, await get('type=Car&limit=0'), 400, 'BadRequestData', 'limit=0 without count=true');
  // CIM 009 §6.3.10 and table 5.5.2-1: a limit above what the broker serves is TooManyResults (403).
  problem(t, await get('type=Car&limit=1001'), 403, 'TooManyResults', 'limit over the maximum');
  problem(t, await post({ type: 'Query', entities: [{ type: 'Car' }] }, '?limit=-1'), 400, 'BadRequestData', 'POST limit=-1');
  problem(
    t,
    await post({ type: 'Query', entities: [{ type: 'Car' }] }, '?limit=5000'),
    403,
    'TooManyResults',
    'POST limit over the maximum',
  );
  await stillServing(t);
});

t.test('a q that does not parse is 400 InvalidRequest naming the position', async (t) => {
  for (const q of [
    '(speed>1',
    'speed>1)',
    '((speed>1)',
    'speed>>1',
    'speed==',
    'speed==1..',
    ';speed>1',
    'speed>1;',
    'speed~="(unclosed"',
    'a[b',
    'speed>"open',
  ]) {
    const r = await get(`type=Car&q=${enc(q)}`);
    problem(t, r, 400, 'InvalidRequest', q);
    t.match(r.json?.detail, /position \d+|empty/, `${q}: the detail names where`);
  }
  problem(t, await post({ type: 'Query', entities: [{ type: 'Car' }], q: '(speed>1' }), 400, 'InvalidRequest', 'POST unbalanced q');
  await stillServing(t);
});

t.test('a type expression that does not parse is 400 InvalidRequest', async (t) => {
  for (const type of ['(Car', 'Car)', 'Car;;Truck', 'Car,', '|Car', 'Car Truck'])
    problem(t, await get(`type=${enc(type)}`), 400, 'InvalidRequest', type);
  await stillServing(t);
});

t.test('an idPattern that is not a valid regular expression is 400', async (t) => {
  for (const p of ['(unclosed', 'a{2,1}', '[z-a]', '*a']) problem(t, await get(`idPattern=${enc(p)}`), 400, 'BadRequestData', p);
  problem(t, await post({ type: 'Query', entities: [{ idPattern: '(' }] }), 400, 'BadRequestData', 'POST idPattern');
  await stillServing(t);
});

t.test('regexes built to backtrack catastrophically answer promptly (idPattern and q patterns)', async (t) => {
  const evil = ['^urn:ngsi-ld:Evil:(a+)+$', '^urn:ngsi-ld:Evil:(a|aa)+$', '^urn:ngsi-ld:Evil:(a*)*b$', '^(.*a){20}$'];
  for (const p of evil) {
    const started = Date.now();
    const r = await get(`idPattern=${enc(p)}`);
    const ms = Date.now() - started;
    t.ok(r.status === 200 || r.status === 400, `${p}: answered (${r.status})`);
    if (r.status === 200) t.same(r.json, [], `${p}: nothing matches`);
    t.ok(ms < 5000, `${p}: answered in ${ms} ms (a backtracking engine would take minutes)`);
  }
  const started = Date.now();
  const r = await get(`type=Evil&q=${enc('label~="^(a+)+$"')}`);
  t.equal(r.status, 200, r.text);
  t.same(r.json, []);
  t.ok(Date.now() - started < 5000, 'a q pattern is bounded too');
  const lookaround = await get(`idPattern=${enc('^(?=a)a')}`);
  problem(t, lookaround, 400, 'BadRequestData', 'look-ahead is not in the linear-time dialect');
  await stillServing(t);
});

t.test('geo-queries: coordinates not matching the geometry, georel without coordinates, bad georel', async (t) => {
  const near = enc('near;maxDistance==1000');
  const cases: Array<[string, string]> = [
    [`georel=${near}&geometry=Point`, 'georel without coordinates'],
    [`georel=${near}&coordinates=${enc('[2,48]')}`, 'georel without geometry'],
    [`geometry=Point&coordinates=${enc('[2,48]')}`, 'geometry without georel'],
    [`georel=${near}&geometry=Point&coordinates=${enc('[[2,48],[3,49]]')}`, "a Point with a LineString's coordinates"],
    [`georel=within&geometry=Polygon&coordinates=${enc('[[2,48],[3,49]]')}`, "a Polygon with a LineString's coordinates"],
    [`georel=within&geometry=Polygon&coordinates=${enc('[[[0,0],[1,0],[1,1],[0,0.5]]]')}`, 'a Polygon ring that is not closed'],
    [`georel=${near}&geometry=LineString&coordinates=${enc('[[2,48]]')}`, 'a LineString of one position'],
    [`georel=${near}&geometry=Point&coordinates=${enc('[200,48]')}`, 'a longitude out of range'],
    [`georel=${near}&geometry=Point&coordinates=${enc('[2,"48"]')}`, 'a position that is not numbers'],
    [`georel=${near}&geometry=Point&coordinates=${enc('2,48')}`, 'coordinates that are not JSON'],
    [`georel=${near}&geometry=Circle&coordinates=${enc('[2,48]')}`, 'an unknown geometry'],
    [`georel=near&geometry=Point&coordinates=${enc('[2,48]')}`, 'near without a distance'],
    [`georel=${enc('near;maxDistance==-5')}&geometry=Point&coordinates=${enc('[2,48]')}`, 'a negative distance'],
    [`georel=sideways&geometry=Point&coordinates=${enc('[2,48]')}`, 'an unknown georel'],
  ];
  for (const [q, what] of cases) {
    const r = await get(`type=Car&${q}`);
    t.equal(r.status, 400, `${what}: ${r.text}`);
    t.match(r.json?.type, /errors\/(BadRequestData|InvalidRequest)$/, what);
  }
  const p = await post({
    type: 'Query',
    entities: [{ type: 'Car' }],
    geoQ: { georel: 'near;maxDistance==10', geometry: 'Point', coordinates: [[1, 2]] },
  });
  t.equal(p.status, 400, p.text);
  await stillServing(t);
});

t.test('a query without any selector is 400 BadRequestData', async (t) => {
  problem(t, await get(''), 400, 'BadRequestData', 'no parameter at all');
  problem(t, await get('limit=5&options=keyValues'), 400, 'BadRequestData', 'only paging and format');
  problem(t, await post({ type: 'Query' }), 400, 'BadRequestData', 'POST an empty Query');
  await stillServing(t);
});

t.test('bodies that are not a Query are 400', async (t) => {
  for (const raw of [
    '',
    'not json',
    '[]',
    '{"type":"Query","entities":"Car"}',
    '{"type":"Query","attrs":"speed"}',
    '{"type":"Query","q":5}',
  ]) {
    const r = await call(broker, 'POST', `${NGSI}/entityOperations/query`, { raw, headers: { 'content-type': 'application/json' } });
    t.equal(r.status, 400, `${raw}: ${r.text}`);
    t.match(r.json?.type, /errors\/(BadRequestData|InvalidRequest)$/, raw);
  }
  await stillServing(t);
});

t.test('a burst of bad queries does not disturb good ones running beside them', async (t) => {
  const bad = Array.from({ length: 40 }, (_, i) =>
    get(i % 2 === 0 ? `type=Car&q=${enc('(((')}` : `idPattern=${enc('^(a+)+$')}&limit=${i}`),
  );
  const good = Array.from({ length: 10 }, () => get('type=Car'));
  const [badAnswers, goodAnswers] = await Promise.all([Promise.all(bad), Promise.all(good)]);
  t.ok(
    badAnswers.every((r, i) => r.status === (i % 2 === 0 ? 400 : 200)),
    'every bad query answered as it should',
  );
  t.ok(
    goodAnswers.every((r) => r.status === 200 && r.json.length === 1),
    'every good query answered in full',
  );
});
