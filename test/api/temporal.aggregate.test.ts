// The aggregated temporal representation over the API (CIM 009 v1.8 §4.5.19, §6.3.x): every period spans
// aggrPeriodDuration (the last one too, unless the asked range ends it), its bounds are written to the second, a far
// range start costs nothing, and `format` overrides an `options=aggregatedValues` whose aggrMethods then go unused.
import t from 'tap';
import { startBroker, call, NGSI, type Broker } from './helpers/broker.js';
import { troeArgs } from './helpers/troe.js';

let broker: Broker;
const id = 'urn:ngsi-ld:Vehicle:aggr';
const BAD = 'https://uri.etsi.org/ngsi-ld/errors/BadRequestData';

t.before(async () => {
  broker = await startBroker(troeArgs());
  const obs = (value: number, at: string): Record<string, unknown> => ({ type: 'Property', value, observedAt: at });
  const r = await call(broker, 'POST', `${NGSI}/temporal/entities`, {
    body: {
      id,
      type: 'Vehicle',
      speed: [obs(120, '2020-08-01T12:03:00Z'), obs(80, '2020-08-01T12:05:00Z'), obs(100, '2020-08-01T12:07:00Z')],
      fuel: [obs(67, '2020-08-01T12:03:00Z'), obs(53, '2020-08-01T13:05:00Z'), obs(40, '2020-08-01T14:07:00Z')],
    },
  });
  if (r.status !== 201) throw new Error(`seed: ${r.status} ${r.text}`);
});
t.teardown(async () => {
  await broker.stop();
});
const get = (q: string) => call(broker, 'GET', `${NGSI}/temporal/entities/${id}?${q}`);

t.test('periods of PT1H start at the first instance and the last one spans a whole hour', async (t) => {
  const r = await get('options=aggregatedValues&aggrMethods=avg,max&aggrPeriodDuration=PT1H');
  t.equal(r.status, 200, r.text);
  t.same(r.json.speed, {
    type: 'Property',
    avg: [[100, '2020-08-01T12:03:00Z', '2020-08-01T13:03:00Z']],
    max: [[120, '2020-08-01T12:03:00Z', '2020-08-01T13:03:00Z']],
  });
  t.same(r.json.fuel.avg, [
    [67, '2020-08-01T12:03:00Z', '2020-08-01T13:03:00Z'],
    [53, '2020-08-01T13:03:00Z', '2020-08-01T14:03:00Z'],
    [40, '2020-08-01T14:03:00Z', '2020-08-01T15:03:00Z'],
  ]);
});

t.test('a day period with timerel=after starts at timeAt and ends a day later, not at the last instance', async (t) => {
  const r = await get('options=aggregatedValues&aggrMethods=min,max&aggrPeriodDuration=P1D&timerel=after&timeAt=2020-08-01T12:03:00Z');
  t.equal(r.status, 200, r.text);
  t.same(r.json.fuel.min, [[40, '2020-08-01T12:03:00Z', '2020-08-02T12:03:00Z']]);
  t.same(r.json.speed.max, [[120, '2020-08-01T12:03:00Z', '2020-08-02T12:03:00Z']]);
});

t.test('the asked range end still ends the last period', async (t) => {
  const r = await get(
    'options=aggregatedValues&aggrMethods=totalCount&aggrPeriodDuration=PT1H&timerel=between&timeAt=2020-08-01T12:00:00Z&endTimeAt=2020-08-01T14:30:00Z',
  );
  t.equal(r.status, 200, r.text);
  t.same(r.json.fuel.totalCount, [
    [1, '2020-08-01T12:00:00Z', '2020-08-01T13:00:00Z'],
    [1, '2020-08-01T13:00:00Z', '2020-08-01T14:00:00Z'],
    [1, '2020-08-01T14:00:00Z', '2020-08-01T14:30:00Z'],
  ]);
});

t.test('one-second periods from the year 1 are answered at once: empty periods are skipped, not walked', async (t) => {
  const r = await get('options=aggregatedValues&aggrMethods=totalCount&aggrPeriodDuration=PT1S&timerel=after&timeAt=0001-01-01T00:00:00Z');
  t.equal(r.status, 200, r.text);
  t.same(r.json.speed.totalCount[0], [1, '2020-08-01T12:03:00Z', '2020-08-01T12:03:01Z']);
  t.equal(r.json.speed.totalCount.length, 3);
});

t.test('format=temporalValues overrides options=aggregatedValues; its aggrMethods go unused', async (t) => {
  const r = await get('format=temporalValues&options=aggregatedValues&aggrMethods=sum');
  t.equal(r.status, 200, r.text);
  t.same(r.json.speed, {
    type: 'Property',
    values: [
      [120, '2020-08-01T12:03:00Z'],
      [80, '2020-08-01T12:05:00Z'],
      [100, '2020-08-01T12:07:00Z'],
    ],
  });
  const q = await call(
    broker,
    'GET',
    `${NGSI}/temporal/entities?type=Vehicle&format=temporalValues&options=aggregatedValues&aggrMethods=sum&aggrPeriodDuration=PT1H`,
  );
  t.equal(q.status, 200, q.text);
  t.same(q.json[0].fuel.values.length, 3);
});

t.test('unused aggregation parameters are still checked, and refused when no aggregation was asked at all', async (t) => {
  for (const [query, detail] of [
    ['format=temporalValues&options=aggregatedValues&aggrMethods=median', /aggrMethods: 'median'/],
    ['format=temporalValues&options=aggregatedValues&aggrMethods=sum&aggrPeriodDuration=P1H', /aggrPeriodDuration/],
    ['format=temporalValues&aggrMethods=sum', /aggregated representation/],
    ['options=aggregatedValues&aggrMethods=sum&aggrPeriodDuration=PT0.0001S', /shorter than a millisecond/],
  ] as const) {
    const r = await get(query);
    t.equal(r.status, 400, query);
    t.equal(r.json?.type, BAD, query);
    t.match(r.json?.detail, detail, query);
  }
});
