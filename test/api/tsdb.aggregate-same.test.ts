// --troe tsdb aggregates in QuestDB (History.aggregate, a SAMPLE BY or a GROUP BY per period) what --troe embdb aggregates in the
// worker (ngsild/temporal/aggregate.ts): the same history on both brokers gives the same aggregatedValues for every
// method, period, time range, datasetId and value kind (numbers, strings, booleans, objects, tombstones).
import t from 'tap';
import { startBroker, call, NGSI, type Broker } from './helpers/broker.js';
import { tsdbArgs } from './helpers/troe.js';

const id = 'urn:ngsi-ld:Meter:same';
const at = (h: number, m: number): string =>
  `2021-03-0${1 + Math.floor(h / 24)}T${String(h % 24).padStart(2, '0')}:${String(m).padStart(2, '0')}:00Z`;

const body = {
  id,
  type: 'Meter',
  power: [
    ...[3, 7.5, -2, 11, 0.1, 0.2, 42, 5].map((value, i) => ({ type: 'Property', value, observedAt: at(i * 5, 7 * i) })),
    { type: 'Property', value: 9, observedAt: at(3, 1), datasetId: 'urn:ds:b' },
    { type: 'Property', value: 1, observedAt: at(30, 59), datasetId: 'urn:ds:b' },
  ],
  label: ['b', 'a', 'c', 'a'].map((value, i) => ({ type: 'Property', value, observedAt: at(i * 9, i) })),
  on: [true, false, true].map((value, i) => ({ type: 'Property', value, observedAt: at(i * 12, 0) })),
  shape: [{ a: 1 }, { a: 1 }, { a: 2 }].map((value, i) => ({ type: 'Property', value, observedAt: at(i, 30) })),
  owner: ['urn:p:1', 'urn:p:2', 'urn:p:1'].map((object, i) => ({ type: 'Relationship', object, observedAt: at(i * 2, 0) })),
};

let embdb: Broker;
let tsdb: Broker;
t.before(async () => {
  [embdb, tsdb] = await Promise.all([startBroker(['--troe', 'embdb']), startBroker(tsdbArgs())]);
  for (const b of [embdb, tsdb]) {
    const r = await call(b, 'POST', `${NGSI}/temporal/entities`, { body });
    if (r.status !== 201) throw new Error(`seed: ${r.status} ${r.text}`);
  }
});
t.teardown(async () => {
  await Promise.all([embdb.stop(), tsdb.stop()]);
});

const METHODS = 'totalCount,distinctCount,sum,avg,min,max,stddev,sumsq';
const QUERIES = [
  `aggrMethods=${METHODS}`,
  `aggrMethods=${METHODS}&aggrPeriodDuration=PT1H`,
  `aggrMethods=${METHODS}&aggrPeriodDuration=PT7H30M`,
  `aggrMethods=${METHODS}&aggrPeriodDuration=P1D`,
  `aggrMethods=${METHODS}&aggrPeriodDuration=P1W`,
  `aggrMethods=${METHODS}&aggrPeriodDuration=P1M`,
  `aggrMethods=${METHODS}&aggrPeriodDuration=PT0S`,
  // Periods in each of SAMPLE BY's units (tsdb-history.ts sampleUnit), from an origin off the unit's grid, and past
  // the count QuestDB takes in one (30 days in ms; 600,000 hours and a second in s: GROUP BY then).
  `aggrMethods=${METHODS}&aggrPeriodDuration=PT1.5S&timerel=after&timeAt=2021-03-01T04:59:59.123Z`,
  `aggrMethods=${METHODS}&aggrPeriodDuration=PT7M&timerel=after&timeAt=2021-03-01T00:00:01.001Z`,
  `aggrMethods=${METHODS}&aggrPeriodDuration=P3DT1M`,
  `aggrMethods=${METHODS}&aggrPeriodDuration=P30D&timerel=after&timeAt=2021-02-01T12:34:56.789Z`,
  `aggrMethods=${METHODS}&aggrPeriodDuration=PT600000H1S`,
  `aggrMethods=${METHODS}&aggrPeriodDuration=PT6H&timerel=after&timeAt=2021-03-01T04:00:00Z`,
  `aggrMethods=${METHODS}&aggrPeriodDuration=PT6H&timerel=between&timeAt=2021-02-28T23:00:00Z&endTimeAt=2021-03-02T01:30:00Z`,
  `aggrMethods=${METHODS}&timerel=before&timeAt=2021-03-02T00:00:00Z`,
  `aggrMethods=sum,max&aggrPeriodDuration=PT2H&attrs=power&datasetId=urn:ds:b`,
  `aggrMethods=totalCount&aggrPeriodDuration=PT12H&pick=id,power,on`,
];

for (const q of QUERIES) {
  t.test(`the same aggregatedValues on both: ${q}`, async (t) => {
    const path = `${NGSI}/temporal/entities/${id}?format=aggregatedValues&${q}`;
    const [a, b] = await Promise.all([call(embdb, 'GET', path), call(tsdb, 'GET', path)]);
    t.equal(a.status, 200, a.text);
    t.equal(b.status, a.status, b.text);
    t.same(b.json, a.json);
  });
}

t.test('a query of several entities aggregates each the same way', async (t) => {
  const path = `${NGSI}/temporal/entities?type=Meter&format=aggregatedValues&aggrMethods=avg,stddev&aggrPeriodDuration=PT3H`;
  const [a, b] = await Promise.all([call(embdb, 'GET', path), call(tsdb, 'GET', path)]);
  t.equal(a.status, 200, a.text);
  t.same(b.json, a.json);
});
