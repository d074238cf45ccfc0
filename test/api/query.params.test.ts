// Query entities against a real broker, one test per parameter of CIM 009 v1.8 §6.4.3.2 (GET /entities) and
// §6.23.3.1 (POST /entityOperations/query): selection (type expressions, id lists, q, scopeQ), projections (attrs,
// pick, omit, datasetId, lang), formats and options, count, GeoJSON with geometryProperty.
import t from 'tap';
import { startBroker, call, NGSI, type Broker } from './helpers/broker.js';

let broker: Broker;
const ERR = 'https://uri.etsi.org/ngsi-ld/errors/';
const DEFAULT = 'https://uri.etsi.org/ngsi-ld/default-context/';
const P1 = 'urn:ngsi-ld:Car:p1';
const P2 = 'urn:ngsi-ld:Car:p2';
const P3 = 'urn:ngsi-ld:Truck:p3';
const P4 = 'urn:ngsi-ld:Bike:p4';

const entities = [
  {
    id: P1,
    type: 'Car',
    scope: '/Europe/France/Paris',
    speed: { type: 'Property', value: 10, observedAt: '2024-03-01T10:00:00Z', accuracy: { type: 'Property', value: 0.5 } },
    name: { type: 'LanguageProperty', languageMap: { en: 'Red car', fr: 'Voiture rouge' } },
    category: { type: 'VocabProperty', vocab: 'Commercial' },
    owner: { type: 'Relationship', object: 'urn:ngsi-ld:Person:alice' },
    bodyStyle: { type: 'Property', value: `${DEFAULT}Sedan` },
    address: { type: 'Property', value: { city: 'Paris', zip: '75001' } },
    temperature: [
      { type: 'Property', value: 20 },
      { type: 'Property', value: 22, datasetId: 'urn:ngsi-ld:Dataset:gps' },
    ],
    registeredAt: { type: 'Property', value: { '@type': 'DateTime', '@value': '2023-05-01T00:00:00Z' } },
    location: { type: 'GeoProperty', value: { type: 'Point', coordinates: [2.35, 48.85] } },
    parking: { type: 'GeoProperty', value: { type: 'Point', coordinates: [2.3, 48.8] } },
  },
  {
    id: P2,
    type: 'Car',
    scope: '/Europe/Germany',
    speed: { type: 'Property', value: 50 },
    name: { type: 'LanguageProperty', languageMap: { en: 'Blue car', '@none': 'Blaues Auto' } },
    owner: { type: 'Relationship', object: 'urn:ngsi-ld:Person:bob' },
    address: { type: 'Property', value: { city: 'Lyon' } },
    location: { type: 'GeoProperty', value: { type: 'Point', coordinates: [4.83, 45.76] } },
  },
  {
    id: P3,
    type: ['Truck', 'Vehicle'],
    speed: { type: 'Property', value: 90 },
    registeredAt: { type: 'Property', value: { '@type': 'DateTime', '@value': '2021-01-01T00:00:00Z' } },
  },
  { id: P4, type: 'Bike', speed: { type: 'Property', value: 5 } },
];

t.before(async () => {
  broker = await startBroker();
  const r = await call(broker, 'POST', `${NGSI}/entityOperations/create`, { body: entities });
  if (r.status !== 201) throw new Error(r.text);
});
t.teardown(async () => {
  await broker.stop();
});

const enc = encodeURIComponent;
const get = (q: string, headers: Record<string, string> = {}) => call(broker, 'GET', `${NGSI}/entities?${q}`, { headers });
const post = (body: unknown, qs = '') => call(broker, 'POST', `${NGSI}/entityOperations/query${qs}`, { body });
const ids = (r: { json: any }) => (Array.isArray(r.json) ? r.json.map((e: any) => e.id).sort() : r.json);
const byId = (r: { json: any }, id: string) => r.json.find((e: any) => e.id === id);

t.test("type expressions: , and | are OR, ; is AND over an entity's types, parentheses group", async (t) => {
  t.same(ids(await get('type=Car,Bike')), [P4, P1, P2].sort());
  t.same(ids(await get('type=Car|Bike')), [P4, P1, P2].sort());
  t.same(ids(await get('type=Truck;Vehicle')), [P3]);
  t.same(ids(await get('type=Truck;Car')), [], 'no entity is both a Truck and a Car');
  t.same(ids(await get(`type=${enc('(Car|Bike)')}`)), [P4, P1, P2].sort());
  t.same(ids(await get(`type=${enc('Car|(Truck;Vehicle)')}`)), [P1, P2, P3].sort());
  t.same(ids(await get(`type=${enc(DEFAULT + 'Bike')}`)), [P4], 'a type may be given as an IRI');
});

t.test('id lists select exactly those entities, alone or with a type', async (t) => {
  t.same(ids(await get(`id=${P1},${P3}`)), [P1, P3]);
  t.same(ids(await get(`id=${P1},${P3}&type=Car`)), [P1], 'id and type are both applied');
  t.same(ids(await get(`id=urn:ngsi-ld:Car:none`)), []);
  t.same(ids(await get(`id=${P1},${P1},${P2}`)), [P1, P2], 'an id named twice answers its entity once');
  t.same(ids(await post({ type: 'Query', entities: [{ id: `${P4},${P4}` }] })), [P4], 'in a Query too');
  const counted = await get(`id=${P1},${P1}&count=true`);
  t.equal(counted.headers.get('ngsild-results-count'), '1');
});

t.test('q: ranges, value lists, patterns, datetimes, compound members, sub-attributes, relationships, languages', async (t) => {
  const q = (expr: string, extra = '') => get(`q=${enc(expr)}${extra}&limit=100`);
  t.same(ids(await q('speed==5..50')), [P4, P1, P2].sort(), 'a range includes both ends');
  t.same(ids(await q('speed==10,90')), [P1, P3], 'a list is any of its values');
  t.same(ids(await q('speed!=10,90')), [P4, P2].sort());
  t.same(ids(await q('address[city]~=^Pa')), [P1], 'a pattern on a compound member');
  t.same(ids(await q('address[city]!~=^Pa')), [P2], 'not matching: only entities holding the member');
  t.same(ids(await q('address[city]=="Lyon"')), [P2]);
  t.same(ids(await q('address[zip]')), [P1], 'a compound member alone asks for its existence');
  t.same(ids(await q('speed.accuracy<1')), [P1], 'a sub-attribute path');
  t.same(ids(await q('speed.observedAt>=2024-01-01T00:00:00Z')), [P1], 'a datetime compared with observedAt');
  t.same(ids(await q('registeredAt>2022-01-01T00:00:00Z')), [P1], 'a DateTime value compared as a datetime');
  t.same(ids(await q('registeredAt==2020-01-01T00:00:00Z..2022-01-01T00:00:00Z')), [P3], 'a datetime range');
  t.same(ids(await q('owner=="urn:ngsi-ld:Person:alice"')), [P1], 'a relationship by its object, quoted');
  t.same(ids(await q('owner==urn:ngsi-ld:Person:bob')), [P2], 'a relationship by its object, as a URI');
  t.same(ids(await q('name[fr]=="Voiture rouge"')), [P1], 'a LanguageProperty in one language');
  t.same(ids(await q('name[en]=="Voiture rouge"')), [], 'the language chosen is the only one compared');
  t.same(ids(await q('name=="Blaues Auto"')), [P2], 'without a language, every language is compared');
  t.same(ids(await q('name[*]~=car')), [P1, P2], 'the * language');
  t.same(ids(await q('category=="Commercial"')), [P1], 'a VocabProperty compared after expansion');
  t.equal((await q('category==Commercial')).status, 400, 'a bare word is no value of the q grammar');
  t.same(ids(await q('(speed<20|speed>80);speed!=5')), [P1, P3], 'parentheses and precedence');
  t.same(ids(await q('speed>20;owner')), [P2], '; binds tighter than |, and an attribute alone asks for existence');
  t.same(ids(await q('!owner', '&type=Car,Truck')), [P3], '! negates existence');
});

t.test('q compares through the request @context (Link header) like every other name', async (t) => {
  const ctx = { '@context': { vitesse: `${DEFAULT}speed` } };
  const hosted = await call(broker, 'POST', `${NGSI}/jsonldContexts`, { body: ctx });
  t.equal(hosted.status, 201, hosted.text);
  const url = `${broker.url}${hosted.headers.get('location')}`;
  const r = await get(`type=Car&q=${enc('vitesse>20')}`, {
    link: `<${url}>; rel="http://www.w3.org/ns/json-ld#context"; type="application/ld+json"`,
  });
  t.equal(r.status, 200, r.text);
  t.same(ids(r), [P2]);
  t.ok(r.json[0].vitesse, 'the answer is compacted with the same context');
});

t.test('scopeQ selects by scope (§4.19) and a malformed scopeQ is 400', async (t) => {
  const cars = 'type=Car,Truck,Bike&';
  t.same(ids(await get(`${cars}scopeQ=${enc('/Europe/#')}`)), [P1, P2]);
  t.same(ids(await get(`${cars}scopeQ=${enc('/Europe/+/Paris')}`)), [P1]);
  t.same(ids(await get(`${cars}scopeQ=${enc('/Europe/Germany,/Asia')}`)), [P2]);
  t.same(ids(await get(`${cars}scopeQ=${enc('/Europe/#;/Europe/France/+')}`)), [P1], '; is AND');
  const alone = await get(`scopeQ=${enc('/Europe/#')}`);
  t.equal(alone.status, 400, 'scopeQ alone is no selector (§5.7.2: type, id, attrs, q or a geo-query is needed)');
  t.same(ids(await get(`type=Car&scopeQ=${enc('/Europe/France')}`)), [], 'a scope matches itself, not its children');
  for (const bad of ['Europe', '/Europe/(', '/a;;/b', '/a/#/b', '']) {
    const r = await get(`type=Car&scopeQ=${enc(bad)}`);
    t.equal(r.status, 400, `${bad}: ${r.text}`);
    t.equal(r.json?.type, `${ERR}InvalidRequest`, `${bad}: a syntax error, like one in q`);
    t.match(r.json?.detail, /scopeQ/);
  }
});

t.test('attrs keeps the attributes asked (and selects entities holding one); pick and omit project members', async (t) => {
  const a = await get('type=Car&attrs=speed,owner');
  const p1 = byId(a, P1);
  t.ok(p1.speed && p1.owner, 'the attributes asked are kept');
  t.notOk(p1.name || p1.address || p1.location || p1.temperature, 'the others are left out');
  const p = await get('type=Car&pick=id,speed');
  t.same(
    p.json.map((e: any) => Object.keys(e).sort()),
    [
      ['id', 'speed'],
      ['id', 'speed'],
    ],
  );
  const o = await get(`id=${P1}&omit=type,name,address,temperature,registeredAt,location,parking,scope,bodyStyle`);
  t.same(Object.keys(o.json[0]).sort(), ['category', 'id', 'owner', 'speed']);
  const both = await get('type=Car&pick=id,speed&omit=type');
  t.equal(both.status, 200, 'pick and omit together apply both (CIM 009 v1.8.1 §4.21)');
  t.same(
    both.json.map((e: any) => Object.keys(e).sort()),
    [
      ['id', 'speed'],
      ['id', 'speed'],
    ],
  );
  const same = await get('type=Car&pick=id,speed&omit=speed');
  t.equal(same.status, 400, 'a member both picked and omitted is refused');
  t.equal(same.json.type, `${ERR}BadRequestData`);
});

t.test('datasetId keeps only the instances with those datasetIds, @none the default one (§4.5.5)', async (t) => {
  const gps = await get(`id=${P1}&datasetId=urn:ngsi-ld:Dataset:gps&attrs=temperature`);
  t.equal(gps.status, 200, gps.text);
  t.same(gps.json[0].temperature, { type: 'Property', value: 22, datasetId: 'urn:ngsi-ld:Dataset:gps' });
  const none = await get(`id=${P1}&datasetId=@none&attrs=temperature`);
  t.same(none.json[0].temperature, { type: 'Property', value: 20 });
  const both = await get(`id=${P1}&datasetId=@none,urn:ngsi-ld:Dataset:gps&attrs=temperature`);
  t.equal(both.json[0].temperature.length, 2);
  const kv = await get(`id=${P1}&attrs=temperature&options=keyValues`);
  t.same(kv.json[0].temperature, { dataset: { '@none': 20, 'urn:ngsi-ld:Dataset:gps': 22 } }, 'keyValues of a multi-attribute');
});

t.test('lang renders a LanguageProperty as a Property in the best language, @none and * included (§4.15)', async (t) => {
  const fr = await get(`id=${P1},${P2}&attrs=name&lang=fr`);
  t.same(byId(fr, P1).name, { type: 'Property', value: 'Voiture rouge', lang: 'fr' });
  t.same(byId(fr, P2).name, { type: 'Property', value: 'Blaues Auto' }, 'no French: the @none value, without lang');
  const en = await get(`id=${P1}&attrs=name&lang=${enc('de,en;q=0.5')}`);
  t.same(en.json[0].name, { type: 'Property', value: 'Red car', lang: 'en' });
  const any = await get(`id=${P1}&attrs=name&lang=*`);
  t.equal(any.json[0].name.type, 'Property');
  t.ok(['Red car', 'Voiture rouge'].includes(any.json[0].name.value), '* picks one language');
  const kv = await get(`id=${P1}&attrs=name&lang=fr&options=keyValues`);
  t.equal(kv.json[0].name, 'Voiture rouge');
  const conc = await get(`id=${P1}&attrs=name&lang=fr&format=concise`);
  t.same(conc.json[0].name, { value: 'Voiture rouge', lang: 'fr' });
  const all = await get(`id=${P1}&attrs=name`);
  t.same(
    all.json[0].name,
    { type: 'LanguageProperty', languageMap: { en: 'Red car', fr: 'Voiture rouge' } },
    'without lang, the whole map',
  );
  t.equal((await get(`id=${P1}&lang=${enc('fr;;en')}`)).status, 400, 'a malformed lang is 400');
});

t.test('format and options choose normalized, concise or keyValues; conflicting ones are 400', async (t) => {
  const norm = await get(`id=${P4}`);
  t.same(norm.json[0].speed, { type: 'Property', value: 5 });
  const kv = await get(`id=${P4}&format=keyValues`);
  t.same(kv.json[0], { id: P4, type: 'Bike', speed: 5 });
  t.same((await get(`id=${P4}&options=keyValues`)).json[0], kv.json[0], 'options=keyValues is the same as format=keyValues');
  t.same((await get(`id=${P4}&format=concise`)).json[0], { id: P4, type: 'Bike', speed: 5 });
  const conc = await get(`id=${P1}&format=concise&attrs=owner,speed`);
  t.same(conc.json[0].owner, { object: 'urn:ngsi-ld:Person:alice' });
  t.same(conc.json[0].speed, { value: 10, observedAt: '2024-03-01T10:00:00Z', accuracy: 0.5 });
  t.same(
    (await get(`id=${P4}&format=normalized&options=keyValues`)).json[0].speed,
    { type: 'Property', value: 5 },
    'format wins over options',
  );
  const both = await get(`id=${P4}&options=keyValues,concise`);
  t.equal(both.status, 400, both.text);
  t.equal(both.json?.type, `${ERR}BadRequestData`, 'two representations at once');
  for (const bad of ['format=compact', 'format=']) {
    const r = await get(`id=${P4}&${bad}`);
    t.equal(r.status, 400, `${bad}: ${r.text}`);
    t.equal(r.json?.type, `${ERR}InvalidRequest`, `${bad}: a representation the operation does not support (CIM 009 v1.8.1 §6.3.20)`);
  }
  const retrieve = await call(broker, 'GET', `${NGSI}/entities/${P4}?format=invalidFormat`);
  t.equal(retrieve.json?.type, `${ERR}InvalidRequest`, `so on a retrieve: ${retrieve.text}`);
  const word = await get(`id=${P4}&options=sideways`);
  t.equal(word.status, 400, word.text);
  t.equal(word.json?.type, `${ERR}InvalidRequest`, 'an options word the operation does not support (CIM 009 v1.8.1 §6.3.20)');
});

t.test('options=sysAttrs adds createdAt and modifiedAt to the entity and its attributes', async (t) => {
  const r = await get(`id=${P4}&options=sysAttrs`);
  const e = r.json[0];
  t.match(e.createdAt, /^\d{4}-\d\d-\d\dT/);
  t.match(e.modifiedAt, /^\d{4}-\d\d-\d\dT/);
  t.match(e.speed.createdAt, /^\d{4}-\d\d-\d\dT/);
  const kv = await get(`id=${P4}&options=sysAttrs,keyValues`);
  t.equal(kv.json[0].speed, 5, 'keyValues has no room for attribute sysAttrs');
  t.notOk('createdAt' in (await get(`id=${P4}`)).json[0], 'absent without the option');
});

t.test('count=true with limit=0 answers only the count', async (t) => {
  const r = await get('type=Car,Truck,Bike&count=true&limit=0');
  t.equal(r.status, 200);
  t.same(r.json, []);
  t.equal(r.headers.get('ngsild-results-count'), '4');
  const q = await get(`q=${enc('speed>8')}&count=true&limit=1`);
  t.equal(q.json.length, 1);
  t.equal(q.headers.get('ngsild-results-count'), '3', 'the count is of every match, not of the page');
  t.notOk((await get('type=Car')).headers.get('ngsild-results-count'), 'no count unless asked');
});

t.test('local=true is accepted (this broker answers from its own store only) and is a selection on its own', async (t) => {
  const r = await get('type=Car&local=true');
  t.equal(r.status, 200, r.text);
  t.same(ids(r), [P1, P2]);
  const all = await get('local=true&count=true');
  t.equal(all.status, 200, all.text);
  t.same(ids(all), [P1, P2, P3, P4].sort(), 'every local entity');
  t.equal(all.headers.get('ngsild-results-count'), '4');
  t.same(ids(await post({ type: 'Query' }, '?local=true')), [P1, P2, P3, P4].sort(), 'POST query too');
  t.equal((await get('local=false')).status, 400, 'local=false is no selection');
  const bad = await get('type=Car&local=maybe');
  t.equal(bad.status, 400, 'local is true or false');
  t.equal(bad.json.type, `${ERR}BadRequestData`);
});

t.test('expandValues: the q values of the attributes listed are expanded with the @context before comparing', async (t) => {
  const r = await get(`type=Car&q=${enc('category=="Commercial"')}&expandValues=category`);
  t.equal(r.status, 200, r.text);
  t.same(ids(r), [P1]);
  const iri = await get(`type=Car&q=${enc(`category=="${DEFAULT}Commercial"`)}`);
  t.same(ids(iri), [P1], 'the expanded value compares equal too');
  t.same(ids(await get(`type=Car&q=${enc('bodyStyle=="Sedan"')}`)), [], 'a Property holding an IRI does not equal the bare term');
  t.same(
    ids(await get(`type=Car&q=${enc('bodyStyle=="Sedan"')}&expandValues=bodyStyle`)),
    [P1],
    'with expandValues the term is expanded first',
  );
  t.same(ids(await get(`type=Car&q=${enc('bodyStyle=="Coupe","Sedan"')}&expandValues=bodyStyle`)), [P1], 'in a list too');
  t.same(ids(await get(`type=Car&q=${enc('speed==10')}&expandValues=speed`)), [P1], 'numbers are never expanded');
  t.same(
    ids(await post({ type: 'Query', entities: [{ type: 'Car' }], q: 'bodyStyle=="Sedan"' }, '?expandValues=bodyStyle')),
    [P1],
    'POST query',
  );
});

t.test('application/geo+json answers a FeatureCollection; geometryProperty picks the geometry', async (t) => {
  const accept = { accept: 'application/geo+json' };
  const r = await get(`id=${P1},${P4}`, accept);
  t.equal(r.status, 200, r.text);
  t.match(r.headers.get('content-type'), /application\/geo\+json/);
  t.equal(r.json.type, 'FeatureCollection');
  const f1 = r.json.features.find((f: any) => f.id === P1);
  t.equal(f1.type, 'Feature');
  t.same(f1.geometry, { type: 'Point', coordinates: [2.35, 48.85] }, 'location by default');
  t.equal(f1.properties.type, 'Car');
  t.equal(r.json.features.find((f: any) => f.id === P4).geometry, null, 'no geometry: null');
  const parking = await get(`id=${P1}&geometryProperty=parking`, accept);
  t.same(parking.json.features[0].geometry, { type: 'Point', coordinates: [2.3, 48.8] });
  const kv = await get(`id=${P1}&options=keyValues&attrs=speed,location`, accept);
  t.equal(kv.json.features[0].properties.speed, 10, 'keyValues properties');
  const post1 = await call(broker, 'POST', `${NGSI}/entityOperations/query`, {
    body: { type: 'Query', entities: [{ type: 'Bike' }] },
    headers: accept,
  });
  t.equal(post1.json.type, 'FeatureCollection', 'POST query answers GeoJSON too');
});

t.test('POST /entityOperations/query takes the same selection in its body', async (t) => {
  t.same(
    ids(await post({ type: 'Query', entities: [{ type: 'Truck;Vehicle' }, { id: P4 }] })),
    [P4, P3].sort(),
    'several selectors: any of them',
  );
  t.same(ids(await post({ type: 'Query', entities: [{ type: 'Car' }], q: 'speed==5..50' })), [P1, P2]);
  t.same(ids(await post({ type: 'Query', entities: [{ type: 'Car' }], q: 'address[city]~=^Ly' })), [P2]);
  t.same(ids(await post({ type: 'Query', entities: [{ type: 'Car' }], scopeQ: '/Europe/France/#' })), [P1]);
  t.same(ids(await post({ type: 'Query', entities: [{ idPattern: '^urn:ngsi-ld:(Bike|Truck):' }] })), [P4, P3].sort());
  const geo = await post({ type: 'Query', geoQ: { geometry: 'Point', coordinates: [2.35, 48.85], georel: 'near;maxDistance==1000' } });
  t.same(ids(geo), [P1]);
  const attrs = await post({ type: 'Query', entities: [{ id: P1 }], attrs: ['speed'] });
  t.same(
    Object.keys(attrs.json[0])
      .filter((k) => k !== 'scope')
      .sort(),
    ['id', 'speed', 'type'],
  );
  const lang = await post({ type: 'Query', entities: [{ id: P1 }], attrs: ['name'], lang: 'fr' });
  t.same(lang.json[0].name, { type: 'Property', value: 'Voiture rouge', lang: 'fr' });
  const pick = await post({ type: 'Query', entities: [{ type: 'Car' }], pick: ['id'] });
  t.equal(pick.status, 200, pick.text);
  t.same(
    pick.json.map((e: any) => Object.keys(e)),
    [['id'], ['id']],
    'pick in the body',
  );
  const ds = await post({ type: 'Query', entities: [{ id: P1 }], attrs: ['temperature'], datasetId: ['urn:ngsi-ld:Dataset:gps'] });
  t.equal(ds.status, 200, ds.text);
  t.same(ds.json[0].temperature?.value, 22, 'datasetId in the body');
  const kv = await post({ type: 'Query', entities: [{ id: P4 }] }, '?format=keyValues&count=true');
  t.same(kv.json, [{ id: P4, type: 'Bike', speed: 5 }]);
  t.equal(kv.headers.get('ngsild-results-count'), '1');
  const sys = await post({ type: 'Query', entities: [{ id: P4 }] }, '?options=sysAttrs');
  t.ok(sys.json[0].createdAt);
  for (const bad of [
    { type: 'Query' },
    { type: 'Query', q: 'speed>', entities: [{ type: 'Car' }] },
    { type: 'Query', scopeQ: 'x' },
    { type: 'Query', entities: [{ type: '(Car' }] },
    { type: 'Query', entities: [{ idPattern: '(' }] },
    { type: 'Query', entities: [] },
    { type: 'Query', geoQ: { geometry: 'Point', georel: 'near;maxDistance==1' } },
    { type: 'Query', entities: [{ type: 'Car' }], bogus: 1 },
    { type: 'Subscription', entities: [{ type: 'Car' }] },
  ]) {
    const r = await post(bad);
    t.equal(r.status, 400, `${JSON.stringify(bad)}: ${r.text}`);
    t.match(r.json?.type, /errors\/(BadRequestData|InvalidRequest)$/);
  }
  const badOpt = await post({ type: 'Query', entities: [{ type: 'Car' }] }, '?options=bogus');
  t.equal(badOpt.status, 400);
});
