// orderBy (CIM 009 v1.9.1 §4.23) on GET /entities, POST /entityOperations/query and GET /temporal/entities: the
// keys the ETSI suite uses (019_19, 021_23), stable pages, and malformed orderBy refused with 400 BadRequestData.
import t from 'tap';
import { setTimeout as sleep } from 'node:timers/promises';
import { startBroker, call, NGSI, type Broker } from './helpers/broker.js';

let broker: Broker;
const ERR = 'https://uri.etsi.org/ngsi-ld/errors/';
const id = (k: number | string) => `urn:ngsi-ld:Building:ob${k}`;
const building = (k: number, name: string, sub: number) => ({
  id: id(k),
  type: 'Building',
  name: { type: 'Property', value: name, subProperty: { type: 'Property', value: sub } },
});

t.before(async () => {
  broker = await startBroker(['--troe', 'embdb']);
  // Created in the order 2, 1, 3 (the suite's fixture), apart in time so that createdAt orders them.
  for (const [k, name, sub] of [
    [2, 'B', 2],
    [1, 'A', 1],
    [3, 'C', 3],
  ] as const) {
    const r = await call(broker, 'POST', `${NGSI}/entities`, { body: building(k, name, sub) });
    if (r.status !== 201) throw new Error(r.text);
    await sleep(5);
  }
});
t.teardown(async () => {
  await broker.stop();
});

const ids = (json: Array<{ id: string }>) => json.map((e) => e.id);
const ASC = [id(1), id(2), id(3)];
const DESC = [id(3), id(2), id(1)];
const CREATED = [id(2), id(1), id(3)];
const CASES: Array<[string, string[]]> = [
  ['name', ASC],
  ['id', ASC],
  ['createdAt', CREATED],
  ['name.createdAt', CREATED],
  ['name.subProperty', ASC],
  ['name;asc', ASC],
  ['name;desc', DESC],
  ['type,name', ASC],
  ['type;asc,name.subProperty;desc,name;asc', DESC],
  ['modifiedAt;desc', [id(3), id(1), id(2)]],
];

t.test('GET /entities sorts by entity members, attributes, sub-attributes and instance members', async (t) => {
  for (const [orderBy, expected] of CASES) {
    const r = await call(broker, 'GET', `${NGSI}/entities?type=Building&orderBy=${encodeURIComponent(orderBy)}`);
    t.equal(r.status, 200, `${orderBy}: ${r.text}`);
    t.same(ids(r.json), expected, orderBy);
  }
});

t.test('POST /entityOperations/query takes orderBy in the URL', async (t) => {
  const r = await call(broker, 'POST', `${NGSI}/entityOperations/query?orderBy=name;desc`, {
    body: { type: 'Query', entities: [{ type: 'Building' }] },
  });
  t.equal(r.status, 200, r.text);
  t.same(ids(r.json), DESC);
});

t.test('GET /temporal/entities sorts the temporal entities the same way', async (t) => {
  for (const [orderBy, expected] of CASES) {
    const r = await call(
      broker,
      'GET',
      `${NGSI}/temporal/entities?type=Building&timerel=after&timeAt=1970-01-01T00:00:00Z&timeproperty=createdAt&orderBy=${encodeURIComponent(orderBy)}`,
    );
    t.equal(r.status, 200, `${orderBy}: ${r.text}`);
    t.same(ids(r.json), expected, orderBy);
  }
  const paged = await call(broker, 'GET', `${NGSI}/temporal/entities?type=Building&orderBy=name;desc&limit=2&offset=1&count=true`);
  t.same(ids(paged.json), [id(2), id(1)]);
  t.equal(paged.headers.get('ngsild-results-count'), '3');
});

t.test('pages of a sorted query follow each other; count counts every match; a missing value sorts last', async (t) => {
  const r = await call(broker, 'POST', `${NGSI}/entities`, { body: { id: id('none'), type: 'Building' } });
  t.equal(r.status, 201, r.text);
  t.teardown(() => call(broker, 'DELETE', `${NGSI}/entities/${id('none')}`).then(() => undefined));
  const pages: string[] = [];
  for (let offset = 0; offset < 4; offset += 2) {
    const p = await call(broker, 'GET', `${NGSI}/entities?type=Building&orderBy=name;desc&limit=2&offset=${offset}&count=true`);
    t.equal(p.headers.get('ngsild-results-count'), '4');
    pages.push(...ids(p.json));
  }
  t.same(pages, [...DESC, id('none')], 'descending, the entity without a name last');
  const asc = await call(broker, 'GET', `${NGSI}/entities?type=Building&orderBy=name`);
  t.same(ids(asc.json), [...ASC, id('none')], 'last ascending too');
});

t.test('a malformed orderBy is 400 BadRequestData, on every route that takes it', async (t) => {
  const bad = [
    '',
    'name;up',
    'name;',
    ';asc',
    'name,,id',
    'na%20me',
    'name[',
    'name{a}',
    Array.from({ length: 9 }, (_, i) => `k${i}`).join(','),
    'a'.repeat(1025),
  ];
  for (const orderBy of bad) {
    for (const path of [`/entities?type=Building&orderBy=${orderBy}`, `/temporal/entities?type=Building&orderBy=${orderBy}`]) {
      const r = await call(broker, 'GET', `${NGSI}${path}`);
      t.equal(r.status, 400, `${path.slice(0, 80)}: ${r.text.slice(0, 200)}`);
      t.equal(r.json?.type, `${ERR}BadRequestData`, path.slice(0, 80));
      t.match(r.json?.detail, /orderBy/, path.slice(0, 80));
    }
  }
  const post = await call(broker, 'POST', `${NGSI}/entityOperations/query?orderBy=name;sideways`, {
    body: { type: 'Query', entities: [{ type: 'Building' }] },
  });
  t.equal(post.status, 400);
  const retrieve = await call(broker, 'GET', `${NGSI}/entities/${id(1)}?orderBy=name`);
  t.equal(retrieve.status, 400, 'a retrieval has nothing to sort: orderBy is an unknown parameter there');
});
