// Representations of temporal answers (CIM 009 v1.8 §4.5.7 to §4.5.9, §4.5.23): concise instances, the simplified
// (temporalValues) form by each of its names, pick/omit projections, and the checks on format, options and lang.
import t from 'tap';
import { startBroker, call, NGSI, type Broker } from './helpers/broker.js';
import { troeArgs } from './helpers/troe.js';

let broker: Broker;
let id: string;
const T = (minute: number): string => `2024-06-01T12:${String(minute).padStart(2, '0')}:00.000Z`;
const BAD = 'https://uri.etsi.org/ngsi-ld/errors/BadRequestData';

t.before(async () => {
  broker = await startBroker(troeArgs());
  id = 'urn:ngsi-ld:Pump:render';
  const r = await call(broker, 'POST', `${NGSI}/temporal/entities`, {
    body: {
      id,
      type: 'Pump',
      scope: '/site/a',
      flow: [
        { type: 'Property', value: 3, observedAt: T(0) },
        { type: 'Property', value: 4, observedAt: T(1) },
      ],
      owner: { type: 'Relationship', object: 'urn:ngsi-ld:Org:1', observedAt: T(0) },
      label: { type: 'LanguageProperty', languageMap: { en: 'pump', de: 'Pumpe' }, observedAt: T(0) },
    },
  });
  if (r.status !== 201) throw new Error(`seed: ${r.status} ${r.text}`);
});
t.teardown(async () => {
  await broker.stop();
});
const get = async (q: string): Promise<any> => {
  const r = await call(broker, 'GET', `${NGSI}/temporal/entities/${id}?${q}`);
  if (r.status !== 200) throw new Error(`${q}: ${r.status} ${r.text}`);
  return r.json;
};

t.test("format=concise and options=concise drop the type an instance's members already tell", async (t) => {
  const e = await get('format=concise');
  t.same(
    e.flow.map((i: any) => [i.type, i.value, i.observedAt]),
    [
      [undefined, 3, T(0)],
      [undefined, 4, T(1)],
    ],
  );
  t.ok(e.flow[0].instanceId, 'each instance keeps its instanceId');
  t.same([e.owner[0].type, e.owner[0].object], [undefined, 'urn:ngsi-ld:Org:1']);
  t.same((await get('options=concise')).flow, e.flow);
  t.equal((await get('format=normalized')).flow[0].type, 'Property');
});

t.test('the simplified representation answers to format=simplified, format=keyValues, options=keyValues and temporalValues', async (t) => {
  const expected = {
    type: 'Property',
    values: [
      [3, T(0)],
      [4, T(1)],
    ],
  };
  for (const q of ['format=simplified', 'format=keyValues', 'format=temporalValues', 'options=keyValues', 'options=temporalValues'])
    t.same((await get(q)).flow, expected, q);
});

t.test('pick keeps only the named members; omit leaves them out; attributes not picked are not read', async (t) => {
  const picked = await get('pick=id,flow');
  t.same(
    Object.keys(picked)
      .filter((k) => k !== '@context')
      .sort(),
    ['flow', 'id'],
  );
  t.equal(picked.flow.length, 2);
  const omitted = await get('omit=flow,scope');
  t.equal(omitted.flow, undefined);
  t.equal(omitted.scope, undefined);
  t.equal(omitted.id, id);
  t.ok(omitted.owner);
  const pickedSimplified = await get('pick=owner&format=simplified');
  t.same(pickedSimplified.owner, { type: 'Relationship', objects: [['urn:ngsi-ld:Org:1', T(0)]] });
  t.equal(pickedSimplified.id, undefined);
});

t.test('pick and omit apply to temporal queries, GET and POST', async (t) => {
  const g = await call(broker, 'GET', `${NGSI}/temporal/entities?type=Pump&pick=id,owner`);
  t.equal(g.status, 200, g.text);
  t.same(
    g.json.map((e: any) =>
      Object.keys(e)
        .filter((k) => k !== '@context')
        .sort(),
    ),
    [['id', 'owner']],
  );
  const p = await call(broker, 'POST', `${NGSI}/temporal/entityOperations/query`, {
    body: { type: 'Query', entities: [{ type: 'Pump' }], omit: ['flow', 'label'] },
  });
  t.equal(p.status, 200, p.text);
  t.equal(p.json[0].flow, undefined);
  t.ok(p.json[0].owner);
});

t.test("lang renders a LanguageProperty's instances in the best language; concise keeps lang", async (t) => {
  t.same([(await get('lang=de')).label[0].value, (await get('lang=de')).label[0].lang], ['Pumpe', 'de']);
  t.equal((await get('lang=fr;q=0.9,en;q=0.5')).label[0].value, 'pump');
  t.equal((await get('lang=de&format=concise')).label[0].value, 'Pumpe');
});

t.test('bad format, options, projections and lang are 400 BadRequestData naming the fault', async (t) => {
  const cases: Array<[string, RegExp]> = [
    ['options=concise,temporalValues', /cannot be asked together/],
    ['options=keyValues,aggregatedValues&aggrMethods=sum', /cannot be asked together/],
    ['pick=id,flow&omit=flow', /'flow' is both in pick and in omit/],
    ['pick=flow&attrs=flow', /pick cannot be combined with attrs/],
    ['omit=flow&attrs=flow', /omit cannot be combined with attrs/],
    ['pick=id;flow', /pick: expected ',' or the end at position 2/],
    ['omit=owner{name', /omit: expected ',' or '}'/],
    ['lang=', /lang/],
    ['lang=en;q=2', /lang/],
    ['lang=12345678901', /lang/],
  ];
  for (const [q, detail] of cases) {
    const r = await call(broker, 'GET', `${NGSI}/temporal/entities/${id}?${q}`);
    t.equal(r.status, 400, q);
    t.equal(r.json?.type, BAD, q);
    t.match(r.json?.detail, detail, q);
  }
  for (const path of [`${NGSI}/temporal/entities/${id}?format=table`, `${NGSI}/temporal/entities?type=Pump&format=table`]) {
    const format = await call(broker, 'GET', path);
    t.equal(format.status, 400, path);
    t.equal(
      format.json?.type,
      'https://uri.etsi.org/ngsi-ld/errors/InvalidRequest',
      `a format value it does not know is InvalidRequest: ${path}`,
    );
    t.match(format.json?.detail, /format: 'table' is not one of/);
  }
  const word = await call(broker, 'GET', `${NGSI}/temporal/entities/${id}?options=bogus`);
  t.equal(word.status, 400);
  t.equal(
    word.json?.type,
    'https://uri.etsi.org/ngsi-ld/errors/InvalidRequest',
    'an options word the operation does not support (CIM 009 v1.8.1 §6.3.20)',
  );
  const body = await call(broker, 'POST', `${NGSI}/temporal/entityOperations/query`, {
    body: { type: 'Query', entities: [{ type: 'Pump' }], pick: [] },
  });
  t.equal(body.status, 400, 'an empty pick in a Query body');
});
