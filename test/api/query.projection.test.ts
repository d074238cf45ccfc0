// The projection language of pick and omit (CIM 009 v1.8.1 §4.21) on retrieve, query and the temporal API: nested
// projections of linked entities (`rel{a,b}` with join=inline|flat, §4.5.23), the refusals (with attrs, malformed,
// a member in both), and the 404 rule: a retrieval that selects nothing of the entity is ResourceNotFound.
import t from 'tap';
import { startBroker, call, NGSI, type Broker } from './helpers/broker.js';

let broker: Broker;
const ERR = 'https://uri.etsi.org/ngsi-ld/errors/';
const B = 'urn:ngsi-ld:Building:pj1';
const B2 = 'urn:ngsi-ld:Building:pj2';
const CITY = 'urn:ngsi-ld:City:pjParis';
const COUNTRY = 'urn:ngsi-ld:Country:pjFrance';
const V = 'urn:ngsi-ld:Vehicle:pj3';
const prop = (value: unknown) => ({ type: 'Property', value });
const rel = (object: string) => ({ type: 'Relationship', object });

t.before(async () => {
  broker = await startBroker(['--troe', 'embdb']);
  const body = [
    { id: B, type: 'Building', name: prop('Tower'), category: prop('office'), locatedAt: rel(CITY) },
    { id: CITY, type: 'City', name: prop('Paris'), description: prop('capital'), isInCountry: rel(COUNTRY) },
    { id: COUNTRY, type: 'Country', name: prop('France'), description: prop('a country') },
    { id: B2, type: 'Building', name: prop('Hall'), locatedAt: rel(CITY) },
    { id: V, type: 'Vehicle', speed: prop(30) },
  ];
  const r = await call(broker, 'POST', `${NGSI}/entityOperations/create`, { body });
  if (r.status !== 201) throw new Error(r.text);
});
t.teardown(async () => {
  await broker.stop();
});

const get = (path: string) => call(broker, 'GET', `${NGSI}${path}`);

const city = { id: CITY, type: 'City', name: prop('Paris'), description: prop('capital'), isInCountry: rel(COUNTRY) };
const country = { id: COUNTRY, type: 'Country', name: prop('France'), description: prop('a country') };

t.test('pick rel{...} projects the linked entity, inline and flat; an unpicked Relationship of it is not followed', async (t) => {
  const inline = await get(`/entities/${B}?join=inline&joinLevel=2&pick=id,locatedAt{id,name}`);
  t.equal(inline.status, 200, inline.text);
  t.strictSame(inline.json, { id: B, locatedAt: { ...rel(CITY), entity: { id: CITY, name: prop('Paris') } } });
  const flat = await get(`/entities/${B}?join=flat&joinLevel=2&pick=id,locatedAt{id,name}`);
  t.equal(flat.status, 200, flat.text);
  t.strictSame(
    flat.json,
    [
      { id: B, locatedAt: rel(CITY) },
      { id: CITY, name: prop('Paris') },
    ],
    'the Country is not reached: isInCountry is not picked',
  );
});

t.test('pick nests to the second level', async (t) => {
  const pick = 'id,locatedAt{id,name,isInCountry{id,description}}';
  const inline = await get(`/entities/${B}?join=inline&joinLevel=2&pick=${pick}`);
  t.strictSame(inline.json, {
    id: B,
    locatedAt: {
      ...rel(CITY),
      entity: { id: CITY, name: prop('Paris'), isInCountry: { ...rel(COUNTRY), entity: { id: COUNTRY, description: prop('a country') } } },
    },
  });
  const flat = await get(`/entities/${B}?join=flat&joinLevel=2&pick=${pick}`);
  t.strictSame(flat.json, [
    { id: B, locatedAt: rel(CITY) },
    { id: CITY, name: prop('Paris'), isInCountry: rel(COUNTRY) },
    { id: COUNTRY, description: prop('a country') },
  ]);
});

t.test('omit rel{...} keeps rel and omits inside the linked entity; a level without braces is whole', async (t) => {
  const inline = await get(`/entities/${B}?join=inline&joinLevel=2&omit=type,name,category,locatedAt{name}`);
  t.equal(inline.status, 200, inline.text);
  const { name: _n, ...cityWithoutName } = city;
  t.strictSame(inline.json, {
    id: B,
    locatedAt: { ...rel(CITY), entity: { ...cityWithoutName, isInCountry: { ...rel(COUNTRY), entity: country } } },
  });
  const flat = await get(`/entities/${B}?join=flat&joinLevel=2&omit=type,name,category,locatedAt{name,isInCountry{description}}`);
  const { description: _d, ...countryWithoutDescription } = country;
  t.strictSame(flat.json, [{ id: B, locatedAt: rel(CITY) }, cityWithoutName, countryWithoutDescription]);
});

t.test('pick and omit together: pick selects, omit leaves out, also inside braces', async (t) => {
  const r = await get(`/entities/${B}?join=inline&pick=id,locatedAt&omit=locatedAt{description,isInCountry}`);
  t.equal(r.status, 200, r.text);
  t.strictSame(r.json, { id: B, locatedAt: { ...rel(CITY), entity: { id: CITY, type: 'City', name: prop('Paris') } } });
});

t.test('queries (GET and POST) project the linked entities of every entity of the page', async (t) => {
  const g = await get('/entities?type=Building&join=flat&pick=id,locatedAt{name}');
  t.equal(g.status, 200, g.text);
  t.strictSame(g.json, [{ id: B, locatedAt: rel(CITY) }, { id: B2, locatedAt: rel(CITY) }, { name: prop('Paris') }], 'the City once');
  const p = await call(broker, 'POST', `${NGSI}/entityOperations/query?join=inline`, {
    body: { type: 'Query', entities: [{ type: 'Building' }], pick: ['id', 'locatedAt{id}'] },
  });
  t.equal(p.status, 200, p.text);
  t.strictSame(
    p.json.map((e: any) => e.locatedAt.entity),
    [{ id: CITY }, { id: CITY }],
  );
});

t.test('pick or omit with attrs, a member in both and a malformed projection are 400 BadRequestData', async (t) => {
  const cases: Array<[string, RegExp]> = [
    [`/entities/${B}?pick=name&attrs=category`, /pick cannot be combined with attrs/],
    [`/entities/${B}?omit=name&attrs=category`, /omit cannot be combined with attrs/],
    [`/entities/${B}?pick=name&omit=name`, /'name' is both in pick and in omit/],
    [`/entities/${B}?pick=id;name`, /pick: expected ',' or the end at position 2/],
    [`/entities/${B}?pick=id,locatedAt{name`, /expected ',' or '}' at position 17/],
    [`/entities/${B}?pick=id,locatedAt{{name}`, /not '\{'/],
    [`/entities/${B}?pick=id,,name`, /not ','/],
    [`/entities/${B}?pick=id,locatedAt{,name}`, /not ','/],
    [`/entities/${B}?pick=id,locatedAt{}`, /not '\}'/],
    [`/entities/${B}?omit=a{b{c{d{e{f{g}}}}}}`, /nested deeper than 5/],
    [`/entities/${B}?pick=${'a'.repeat(5000)}`, /longer than 4096/],
    ['/entities?type=Building&pick=name&attrs=category', /pick cannot be combined with attrs/],
    ['/entities?type=Building&omit=id}', /unbalanced '\}'/],
  ];
  for (const [path, detail] of cases) {
    const r = await get(path);
    t.equal(r.status, 400, `${path.slice(0, 80)}: ${r.text.slice(0, 200)}`);
    t.equal(r.json?.type, `${ERR}BadRequestData`, path.slice(0, 80));
    t.match(r.json?.detail, detail, path.slice(0, 80));
  }
  const post = (body: unknown, qs = '') => call(broker, 'POST', `${NGSI}/entityOperations/query${qs}`, { body });
  const withAttrs = await post({ type: 'Query', entities: [{ type: 'Building' }], attrs: ['name'], pick: ['id'] });
  t.equal(withAttrs.status, 400, 'body attrs with body pick');
  const urlPick = await post({ type: 'Query', entities: [{ type: 'Building' }], attrs: ['name'] }, '?pick=id');
  t.equal(urlPick.status, 400, 'body attrs with a URL pick');
  const bad = await post({ type: 'Query', entities: [{ type: 'Building' }], omit: ['a{'] });
  t.equal(bad.status, 400, 'a malformed body omit');
  t.match(bad.json?.detail, /omit: expected/);
});

t.test('a retrieval selecting nothing of the entity is 404 ResourceNotFound', async (t) => {
  for (const qs of ['attrs=unknown', 'attrs=unknown,other', 'pick=unknown', 'omit=id,type,name,category,locatedAt']) {
    const r = await get(`/entities/${B}?${qs}`);
    t.equal(r.status, 404, `${qs}: ${r.text}`);
    t.equal(r.json?.type, `${ERR}ResourceNotFound`, qs);
  }
  t.strictSame(
    (await get(`/entities/${B}?attrs=unknown,name`)).json,
    { id: B, type: 'Building', name: prop('Tower') },
    'one attribute matched',
  );
  t.strictSame((await get(`/entities/${B}?pick=id,unknown`)).json, { id: B }, 'one member left');
  const geo = await call(broker, 'GET', `${NGSI}/entities/${B}?pick=unknown`, { headers: { accept: 'application/geo+json' } });
  t.equal(geo.status, 404, 'GeoJSON too');
});

t.test('a query leaves out the entities the projection leaves empty, before paging and counting', async (t) => {
  const r = await get('/entities?type=Building,Vehicle&pick=name&count=true');
  t.equal(r.status, 200, r.text);
  t.strictSame(r.json, [{ name: prop('Tower') }, { name: prop('Hall') }], 'the Vehicle has no name');
  t.equal(r.headers.get('ngsild-results-count'), '2');
  const page = await get('/entities?type=Building,Vehicle&pick=speed&limit=1');
  t.strictSame(page.json, [{ speed: prop(30) }], 'the first page holds the match');
  const omitted = await get('/entities?type=Vehicle&omit=id,type,speed');
  t.strictSame(omitted.json, []);
});

t.test('temporal retrieve: attrs, pick or omit selecting nothing is 404; temporal pick with attrs is 400', async (t) => {
  for (const qs of ['attrs=unknownAttribute', 'pick=unknown', 'omit=id,type,speed']) {
    const r = await get(`/temporal/entities/${V}?${qs}`);
    t.equal(r.status, 404, `${qs}: ${r.text}`);
    t.equal(r.json?.type, `${ERR}ResourceNotFound`, qs);
  }
  t.equal((await get(`/temporal/entities/${V}?attrs=speed`)).status, 200);
  t.equal(
    (await get(`/temporal/entities/${V}?attrs=speed&timerel=after&timeAt=2999-01-01T00:00:00Z`)).status,
    200,
    'an attribute with no instance in the window is still found',
  );
  t.strictSame(
    Object.keys((await get(`/temporal/entities/${V}?pick=id`)).json).filter((k) => k !== '@context'),
    ['id'],
  );
  const q = await get('/temporal/entities?type=Building,Vehicle&pick=speed');
  t.equal(q.status, 200, q.text);
  t.same(
    q.json.map((e: any) => Object.keys(e)),
    [['speed']],
    'a temporal query leaves out what pick leaves empty',
  );
  const both = await get(`/temporal/entities/${V}?pick=speed&attrs=speed`);
  t.equal(both.status, 400);
});
