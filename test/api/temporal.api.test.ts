// The temporal API with --troe embdb (CIM 009 v1.8 §6.18 to §6.24): query by timerel/timeproperty/lastN, the
// simplified and aggregated representations, the temporal writes, 206 paging, and bad input.
import t from 'tap';
import { startBroker, call, NGSI, type Broker } from './helpers/broker.js';
import { troeArgs } from './helpers/troe.js';

let broker: Broker;
t.before(async () => {
  broker = await startBroker(troeArgs());
});
t.teardown(async () => {
  await broker.stop();
});

let n = 0;
const newId = (): string => `urn:ngsi-ld:Meter:api${++n}`;
const T = (minute: number): string => `2024-03-01T10:${String(minute).padStart(2, '0')}:00.000Z`;
const obs = (value: unknown, minute: number, extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  type: 'Property',
  value,
  observedAt: T(minute),
  ...extra,
});

/** A temporal entity with `values` observed one minute apart from 10:00. */
async function seeded(values: unknown[], type = 'Meter'): Promise<string> {
  const id = newId();
  const r = await call(broker, 'POST', `${NGSI}/temporal/entities`, { body: { id, type, power: values.map((v, i) => obs(v, i)) } });
  if (r.status !== 201) throw new Error(`temporal create: ${r.status} ${r.text}`);
  return id;
}
const get = (path: string) => call(broker, 'GET', `${NGSI}${path}`);
const BAD = 'https://uri.etsi.org/ngsi-ld/errors/BadRequestData';

t.test('POST /temporal/entities creates (201, Location) then adds instances to the same entity (204)', async (t) => {
  const id = newId();
  const c = await call(broker, 'POST', `${NGSI}/temporal/entities`, { body: { id, type: 'Meter', power: [obs(1, 0), obs(2, 1)] } });
  t.equal(c.status, 201, c.text);
  t.equal(c.headers.get('location'), `${NGSI}/temporal/entities/${id}`);
  const again = await call(broker, 'POST', `${NGSI}/temporal/entities`, { body: { id, type: 'Meter', power: obs(3, 2) } });
  t.equal(again.status, 204, again.text);
  const e = (await get(`/temporal/entities/${id}`)).json;
  t.same(
    e.power.map((i: any) => i.value),
    [1, 2, 3],
  );
  const current = await get(`/entities/${id}`);
  t.equal(current.status, 404, 'the temporal API writes history only, not the current state');
});

t.test("timerel before/after/between on observedAt select by the instances' observedAt", async (t) => {
  const id = await seeded([0, 1, 2, 3, 4]);
  const values = async (q: string): Promise<unknown[]> =>
    (await get(`/temporal/entities/${id}?${q}`)).json.power?.map((i: any) => i.value) ?? [];
  t.same(await values(`timerel=before&timeAt=${T(2)}`), [0, 1], 'before is strictly before');
  t.same(await values(`timerel=after&timeAt=${T(3)}`), [3, 4], 'after includes timeAt');
  t.same(await values(`timerel=between&timeAt=${T(1)}&endTimeAt=${T(3)}`), [1, 2]);
  t.same(await values(`timerel=after&timeAt=2030-01-01T00:00:00Z`), [], 'nothing after the last instance');
});

t.test('timeproperty createdAt selects by the time of recording', async (t) => {
  const id = await seeded([7, 8]);
  const past = (await get(`/temporal/entities/${id}?timeproperty=createdAt&timerel=before&timeAt=2000-01-01T00:00:00Z`)).json;
  t.equal(past.power, undefined, 'nothing was recorded before 2000');
  const all = (await get(`/temporal/entities/${id}?timeproperty=createdAt&timerel=after&timeAt=2000-01-01T00:00:00Z`)).json;
  t.same(
    all.power.map((i: any) => i.value),
    [7, 8],
  );
  t.ok(all.power[0].createdAt, 'the asked time property is shown');
});

t.test('lastN gives the most recent N instances, oldest first', async (t) => {
  const id = await seeded([0, 1, 2, 3, 4, 5]);
  const e = (await get(`/temporal/entities/${id}?lastN=2&timerel=after&timeAt=${T(0)}`)).json;
  t.same(
    e.power.map((i: any) => i.value),
    [4, 5],
  );
  const noWindow = (await get(`/temporal/entities/${id}?lastN=3`)).json;
  t.same(
    noWindow.power.map((i: any) => i.value),
    [3, 4, 5],
  );
});

t.test('without timerel, instances are ordered and lastN picked by observedAt, not by the order they were written', async (t) => {
  const id = newId();
  const at = (hour: string): Record<string, unknown> => ({ type: 'Property', value: hour, observedAt: `2024-03-01T${hour}:00:00.000Z` });
  t.equal(
    (await call(broker, 'POST', `${NGSI}/temporal/entities`, { body: { id, type: 'Meter', power: [at('10'), at('11')] } })).status,
    201,
  );
  t.equal(
    (await call(broker, 'POST', `${NGSI}/temporal/entities/${id}/attrs`, { body: { power: at('09') } })).status,
    204,
    'a late reading of 09:00',
  );
  t.same(
    (await get(`/temporal/entities/${id}`)).json.power.map((i: any) => i.value),
    ['09', '10', '11'],
  );
  t.same(
    (await get(`/temporal/entities/${id}?lastN=1`)).json.power.map((i: any) => i.value),
    ['11'],
    'the last one observed',
  );
  t.same(
    (await get(`/temporal/entities/${id}?lastN=2&options=temporalValues`)).json.power.values.map((v: unknown[]) => v[0]),
    ['10', '11'],
  );
  t.same(
    (await get(`/temporal/entities?type=Meter&id=${id}&lastN=1`)).json[0].power.map((i: any) => i.value),
    ['11'],
    'the query route too',
  );
  const byCreation = (await get(`/temporal/entities/${id}?timeproperty=createdAt&lastN=1`)).json;
  t.same(
    byCreation.power.map((i: any) => i.value),
    ['09'],
    'timeproperty=createdAt orders as written',
  );
});

t.test('temporalValues gives [value, time] pairs; format=temporalValues is the same', async (t) => {
  const id = await seeded([10, 11]);
  const a = (await get(`/temporal/entities/${id}?options=temporalValues`)).json;
  t.same(a.power, {
    type: 'Property',
    values: [
      [10, T(0)],
      [11, T(1)],
    ],
  });
  const b = (await get(`/temporal/entities/${id}?format=temporalValues`)).json;
  t.same(b.power, a.power);
});

t.test('temporalValues of a Relationship uses objects; several datasetIds give one object each', async (t) => {
  const id = newId();
  await call(broker, 'POST', `${NGSI}/temporal/entities`, {
    body: {
      id,
      type: 'Meter',
      owner: { type: 'Relationship', object: 'urn:ngsi-ld:P:1', observedAt: T(0) },
      power: [obs(1, 0), obs(2, 0, { datasetId: 'urn:ngsi-ld:Dataset:b' })],
    },
  });
  const e = (await get(`/temporal/entities/${id}?options=temporalValues`)).json;
  t.same(e.owner, { type: 'Relationship', objects: [['urn:ngsi-ld:P:1', T(0)]] });
  t.equal(e.power.length, 2);
  t.same(e.power.find((p: any) => p.datasetId === 'urn:ngsi-ld:Dataset:b').values, [[2, T(0)]]);
});

t.test('aggregatedValues over the whole range and per period of aggrPeriodDuration', async (t) => {
  const id = await seeded([1, 2, 3, 4]);
  // Period bounds are written to the second when they have no fraction (aggregate.ts periodBound).
  const B = (minute: number): string => T(minute).replace('.000Z', 'Z');
  const whole = (
    await get(
      `/temporal/entities/${id}?options=aggregatedValues&aggrMethods=totalCount,sum,avg,min,max,sumsq,distinctCount,stddev&timerel=between&timeAt=${T(0)}&endTimeAt=${T(4)}`,
    )
  ).json;
  t.equal(whole.power.type, 'Property');
  t.same(whole.power.totalCount, [[4, B(0), B(4)]]);
  t.same(whole.power.sum, [[10, B(0), B(4)]]);
  t.same(whole.power.avg, [[2.5, B(0), B(4)]]);
  t.same(whole.power.min, [[1, B(0), B(4)]]);
  t.same(whole.power.max, [[4, B(0), B(4)]]);
  t.same(whole.power.sumsq, [[30, B(0), B(4)]]);
  t.same(whole.power.distinctCount, [[4, B(0), B(4)]]);
  t.ok(Math.abs(whole.power.stddev[0][0] - 1.2909944) < 1e-6, 'sample standard deviation');
  const perTwo = (
    await get(
      `/temporal/entities/${id}?format=aggregatedValues&aggrMethods=sum&aggrPeriodDuration=PT2M&timerel=between&timeAt=${T(0)}&endTimeAt=${T(4)}`,
    )
  ).json;
  t.same(perTwo.power.sum, [
    [3, B(0), B(2)],
    [7, B(2), B(4)],
  ]);
});

t.test('GET /temporal/entities selects by type, idPattern, attrs and q; count gives NGSILD-Results-Count', async (t) => {
  const type = `Kind${n}`;
  const a = await seeded([1], type);
  const b = await seeded([2], type);
  const byType = await get(`/temporal/entities?type=${type}&count=true`);
  t.equal(byType.status, 200, byType.text);
  t.same(byType.json.map((e: any) => e.id).sort(), [a, b].sort());
  t.equal(byType.headers.get('ngsild-results-count'), '2');
  const byPattern = (await get(`/temporal/entities?type=${type}&idPattern=${encodeURIComponent(`${b}$`)}`)).json;
  t.same(
    byPattern.map((e: any) => e.id),
    [b],
  );
  const noSuchAttr = (await get(`/temporal/entities?type=${type}&attrs=nothing`)).json;
  t.same(noSuchAttr, [], 'attrs keeps only entities with history of one of them');
  // q is judged on the history: only a got a power above 10 (its entity write recorded 50).
  await call(broker, 'POST', `${NGSI}/entities`, { body: { id: a, type, power: { type: 'Property', value: 50 } } });
  const byQ = (await get(`/temporal/entities?type=${type}&q=power>10`)).json;
  t.same(
    byQ.map((e: any) => e.id),
    [a],
  );
});

t.test('POST /temporal/entityOperations/query takes entities, attrs and temporalQ', async (t) => {
  const type = `Post${n}`;
  const id = await seeded([1, 2, 3], type);
  const r = await call(broker, 'POST', `${NGSI}/temporal/entityOperations/query`, {
    body: {
      type: 'Query',
      entities: [{ type }],
      attrs: ['power'],
      temporalQ: { timerel: 'after', timeAt: T(1), lastN: 1 },
    },
  });
  t.equal(r.status, 200, r.text);
  t.equal(r.json.length, 1);
  t.equal(r.json[0].id, id);
  t.same(
    r.json[0].power.map((i: any) => i.value),
    [3],
  );
});

t.test('DELETE /temporal/entities/{id} removes the history; a second DELETE is 404', async (t) => {
  const id = await seeded([1]);
  t.equal((await call(broker, 'DELETE', `${NGSI}/temporal/entities/${id}`)).status, 204);
  t.equal((await get(`/temporal/entities/${id}`)).status, 404);
  t.equal((await call(broker, 'DELETE', `${NGSI}/temporal/entities/${id}`)).status, 404);
});

t.test('POST /temporal/entities/{id}/attrs adds instances; on an unknown entity it is 404', async (t) => {
  const id = await seeded([1]);
  const r = await call(broker, 'POST', `${NGSI}/temporal/entities/${id}/attrs`, { body: { power: [obs(2, 5)], voltage: obs(230, 5) } });
  t.equal(r.status, 204, r.text);
  const e = (await get(`/temporal/entities/${id}`)).json;
  t.same(
    e.power.map((i: any) => i.value),
    [1, 2],
  );
  t.same(
    e.voltage.map((i: any) => i.value),
    [230],
  );
  const missing = await call(broker, 'POST', `${NGSI}/temporal/entities/urn:ngsi-ld:Meter:none/attrs`, { body: { power: obs(1, 0) } });
  t.equal(missing.status, 404);
});

t.test('DELETE of a temporal attribute: default instances, one datasetId, or deleteAll', async (t) => {
  const id = newId();
  await call(broker, 'POST', `${NGSI}/temporal/entities`, {
    body: {
      id,
      type: 'Meter',
      power: [obs(1, 0), obs(2, 1, { datasetId: 'urn:ngsi-ld:Dataset:x' })],
      voltage: [obs(1, 0)],
    },
  });
  t.equal((await call(broker, 'DELETE', `${NGSI}/temporal/entities/${id}/attrs/power`)).status, 204);
  t.same(
    (await get(`/temporal/entities/${id}`)).json.power.map((i: any) => i.value),
    [2],
    'the datasetId instances stay',
  );
  t.equal((await call(broker, 'DELETE', `${NGSI}/temporal/entities/${id}/attrs/power?datasetId=urn:ngsi-ld:Dataset:x`)).status, 204);
  t.equal((await get(`/temporal/entities/${id}`)).json.power, undefined);
  t.equal((await call(broker, 'DELETE', `${NGSI}/temporal/entities/${id}/attrs/voltage?deleteAll=true`)).status, 204);
  t.equal((await call(broker, 'DELETE', `${NGSI}/temporal/entities/${id}/attrs/voltage`)).status, 404, 'nothing left to delete');
  t.equal((await call(broker, 'DELETE', `${NGSI}/temporal/entities/${id}/attrs/power?deleteAll=maybe`)).status, 400);
});

t.test('PATCH of one instance replaces its value and keeps its instanceId; DELETE removes it', async (t) => {
  const id = await seeded([1, 2]);
  const before = (await get(`/temporal/entities/${id}`)).json.power;
  const iid = before[0].instanceId;
  const p = await call(broker, 'PATCH', `${NGSI}/temporal/entities/${id}/attrs/power/${iid}`, {
    body: { type: 'Property', value: 100, observedAt: T(0) },
  });
  t.equal(p.status, 204, p.text);
  const after = (await get(`/temporal/entities/${id}`)).json.power;
  t.same(
    after.map((i: any) => [i.instanceId, i.value]),
    [
      [iid, 100],
      [before[1].instanceId, 2],
    ],
  );
  t.equal((await call(broker, 'DELETE', `${NGSI}/temporal/entities/${id}/attrs/power/${iid}`)).status, 204);
  t.same(
    (await get(`/temporal/entities/${id}`)).json.power.map((i: any) => i.value),
    [2],
  );
  t.equal((await call(broker, 'DELETE', `${NGSI}/temporal/entities/${id}/attrs/power/${iid}`)).status, 404);
});

t.test('a PATCH of an instance that does not exist is 404 ResourceNotFound', async (t) => {
  const id = await seeded([1]);
  const r = await call(broker, 'PATCH', `${NGSI}/temporal/entities/${id}/attrs/power/urn:ngsi-ld:attribute:instance:nope`, {
    body: { type: 'Property', value: 1 },
  });
  t.equal(r.status, 404);
  t.equal(r.json.type, 'https://uri.etsi.org/ngsi-ld/errors/ResourceNotFound');
});

t.test('an instance PATCH that changes the attribute type is 400 and changes nothing', async (t) => {
  const id = await seeded([1]);
  const iid = (await get(`/temporal/entities/${id}`)).json.power[0].instanceId;
  const r = await call(broker, 'PATCH', `${NGSI}/temporal/entities/${id}/attrs/power/${iid}`, {
    body: { type: 'Relationship', object: 'urn:ngsi-ld:X:1' },
  });
  t.equal(r.status, 400);
  t.equal(r.json.type, BAD);
  t.same(
    (await get(`/temporal/entities/${id}`)).json.power.map((i: any) => [i.type, i.value]),
    [['Property', 1]],
  );
});

t.test('bad temporal queries are 400 BadRequestData naming the fault', async (t) => {
  const id = await seeded([1]);
  const cases: Array<[string, RegExp]> = [
    ['timerel=before', /timeAt/],
    [`timerel=between&timeAt=${T(0)}`, /endTimeAt/],
    [`timerel=between&timeAt=${T(5)}&endTimeAt=${T(1)}`, /not before endTimeAt/],
    [`timerel=between&timeAt=${T(1)}&endTimeAt=${T(1)}`, /not before endTimeAt/],
    [`timerel=during&timeAt=${T(1)}`, /timerel/],
    [`timeAt=${T(1)}`, /need timerel/],
    ['timerel=after&timeAt=yesterday', /timeAt.*ISO 8601/],
    ['timerel=after&timeAt=2024-02-30T00:00:00Z', /timeAt.*ISO 8601/],
    [`timerel=between&timeAt=${T(0)}&endTimeAt=2024-13-01T00:00:00Z`, /endTimeAt.*ISO 8601/],
    ['timeproperty=expiresAt', /timeproperty/],
    ['lastN=0', /lastN/],
    ['lastN=-3', /lastN/],
    ['lastN=two', /lastN/],
    ['options=aggregatedValues&aggrMethods=median', /aggrMethods: 'median'/],
    ['options=aggregatedValues&aggrMethods=sum,bogus', /aggrMethods: 'bogus'/],
    ['options=aggregatedValues', /needs aggrMethods/],
    ['options=aggregatedValues&aggrMethods=sum&aggrPeriodDuration=P1H', /aggrPeriodDuration/],
    ['options=aggregatedValues&aggrMethods=sum&aggrPeriodDuration=PT', /aggrPeriodDuration/],
    ['options=aggregatedValues&aggrMethods=sum&aggrPeriodDuration=1D', /aggrPeriodDuration/],
    ['aggrMethods=sum', /aggregated representation/],
    ['options=temporalValues,aggregatedValues&aggrMethods=sum', /together/],
  ];
  for (const [q, detail] of cases) {
    const r = await get(`/temporal/entities/${id}?${q}`);
    t.equal(r.status, 400, q);
    t.equal(r.json?.type, BAD, q);
    t.match(r.json?.detail, detail, q);
  }
});

t.test('bad temporal writes are 400 and write nothing', async (t) => {
  const noId = await call(broker, 'POST', `${NGSI}/temporal/entities`, { body: { type: 'Meter', power: obs(1, 0) } });
  t.equal(noId.status, 400);
  const badInst = await call(broker, 'POST', `${NGSI}/temporal/entities`, {
    body: { id: 'urn:ngsi-ld:Meter:bad', type: 'Meter', power: [obs(1, 0), 5] },
  });
  t.equal(badInst.status, 400);
  const badObs = await call(broker, 'POST', `${NGSI}/temporal/entities`, {
    body: { id: 'urn:ngsi-ld:Meter:bad', type: 'Meter', power: { type: 'Property', value: 1, observedAt: 'noon' } },
  });
  t.equal(badObs.status, 400);
  t.equal((await get('/temporal/entities/urn:ngsi-ld:Meter:bad')).status, 404);
  const q = await get('/temporal/entities');
  t.equal(q.status, 400, 'a query needs a selection');
});

t.test("scopeQ selects on the temporal entity's scope; a geo-query on the current location", async (t) => {
  const type = `Geo${n}`;
  const near = newId();
  const far = newId();
  for (const [id, lon, scope] of [
    [near, 2.35, '/city/paris'],
    [far, 13.4, '/city/berlin'],
  ] as const) {
    const r = await call(broker, 'POST', `${NGSI}/entities`, {
      body: {
        id,
        type,
        scope,
        power: obs(1, 0),
        location: { type: 'GeoProperty', value: { type: 'Point', coordinates: [lon, 48.85] } },
      },
    });
    t.equal(r.status, 201, r.text);
  }
  const byScope = (await get(`/temporal/entities?type=${type}&scopeQ=/city/paris`)).json;
  t.same(
    byScope.map((e: any) => e.id),
    [near],
  );
  const byGeo = (await get(`/temporal/entities?type=${type}&georel=near;maxDistance==10000&geometry=Point&coordinates=[2.35,48.85]`)).json;
  t.same(
    byGeo.map((e: any) => e.id),
    [near],
  );
  const badGeo = await get(`/temporal/entities?type=${type}&georel=near&geometry=Point&coordinates=[2.35,48.85]`);
  t.equal(badGeo.status, 400, 'near needs a distance');
});

t.test('lang picks the language of a LanguageProperty in every instance', async (t) => {
  const id = newId();
  await call(broker, 'POST', `${NGSI}/temporal/entities`, {
    body: {
      id,
      type: 'Meter',
      label: [{ type: 'LanguageProperty', languageMap: { en: 'one', fr: 'un' }, observedAt: T(0) }],
    },
  });
  const e = (await get(`/temporal/entities/${id}?lang=fr`)).json;
  t.equal(e.label[0].value, 'un');
  t.equal(e.label[0].lang, 'fr');
});

t.test('a temporal create with NGSILD-Tenant creates the tenant; another tenant does not see it', async (t) => {
  const id = newId();
  const tenant = `hist${n}`;
  const c = await call(broker, 'POST', `${NGSI}/temporal/entities`, {
    body: { id, type: 'Meter', power: obs(1, 0) },
    headers: { 'NGSILD-Tenant': tenant },
  });
  t.equal(c.status, 201, c.text);
  const mine = await call(broker, 'GET', `${NGSI}/temporal/entities/${id}`, { headers: { 'NGSILD-Tenant': tenant } });
  t.equal(mine.status, 200);
  t.equal((await get(`/temporal/entities/${id}`)).status, 404, 'not in the default tenant');
  const unknown = await call(broker, 'GET', `${NGSI}/temporal/entities/${id}`, { headers: { 'NGSILD-Tenant': `${tenant}x` } });
  t.equal(unknown.status, 404);
  t.equal(unknown.json.type, 'https://uri.etsi.org/ngsi-ld/errors/NonexistentTenant');
});

t.test('the query routes refuse the same bad temporal input, GET and POST', async (t) => {
  const type = `Bad${n}`;
  await seeded([1], type);
  const cases: Array<[string, Record<string, unknown>, RegExp]> = [
    ['timerel=before', { timerel: 'before' }, /timeAt/],
    [`timerel=between&timeAt=${T(0)}`, { timerel: 'between', timeAt: T(0) }, /endTimeAt/],
    [`timerel=between&timeAt=${T(5)}&endTimeAt=${T(1)}`, { timerel: 'between', timeAt: T(5), endTimeAt: T(1) }, /not before endTimeAt/],
    ['timerel=after&timeAt=2024-01-01T25:00:00Z', { timerel: 'after', timeAt: '2024-01-01T25:00:00Z' }, /timeAt.*ISO 8601/],
    ['lastN=1.5', { lastN: '1.5' }, /lastN/],
  ];
  for (const [q, temporalQ, detail] of cases) {
    const g = await get(`/temporal/entities?type=${type}&${q}`);
    t.equal(g.status, 400, `GET ${q}`);
    t.match(g.json?.detail, detail, `GET ${q}`);
    const p = await call(broker, 'POST', `${NGSI}/temporal/entityOperations/query`, {
      body: { type: 'Query', entities: [{ type }], temporalQ },
    });
    t.equal(p.status, 400, `POST ${JSON.stringify(temporalQ)}`);
    t.match(p.json?.detail, detail, `POST ${JSON.stringify(temporalQ)}`);
  }
  const agg = await get(`/temporal/entities?type=${type}&options=aggregatedValues&aggrMethods=mode`);
  t.equal(agg.status, 400, 'an unknown aggregation method on a query');
  const dur = await get(`/temporal/entities?type=${type}&options=aggregatedValues&aggrMethods=sum&aggrPeriodDuration=P1Y2X`);
  t.equal(dur.status, 400, 'a malformed duration on a query');
});

t.test('instance routes: an entity without history is 404, an instanceId that is not a URI is 400', async (t) => {
  const none = await call(
    broker,
    'PATCH',
    `${NGSI}/temporal/entities/urn:ngsi-ld:Meter:nohistory/attrs/power/urn:ngsi-ld:attribute:instance:x`,
    { body: { type: 'Property', value: 1 } },
  );
  t.equal(none.status, 404);
  const id = await seeded([1]);
  const bad = await call(broker, 'PATCH', `${NGSI}/temporal/entities/${id}/attrs/power/not-a-uri`, {
    body: { type: 'Property', value: 1 },
  });
  t.equal(bad.status, 400);
  const otherAttr = (await get(`/temporal/entities/${id}`)).json.power[0].instanceId;
  const wrongAttr = await call(broker, 'PATCH', `${NGSI}/temporal/entities/${id}/attrs/voltage/${otherAttr}`, {
    body: { type: 'Property', value: 1 },
  });
  t.equal(wrongAttr.status, 404, 'the instance belongs to another attribute');
});
