// Paging of temporal results (CIM 009 v1.8 §6.3.10): above the instance cap per attribute (--temporalInstanceCap,
// 1000 by default) the answer is 206 with Content-Range; forwards in time without lastN, backwards from the most
// recent with it.
import t from 'tap';
import { startBroker, call, NGSI, type Broker } from './helpers/broker.js';
import { troeArgs } from './helpers/troe.js';

let broker: Broker;
const id = 'urn:ngsi-ld:Meter:paged';
const START = Date.parse('2024-01-01T00:00:00.000Z');
const at = (i: number): string => new Date(START + i * 1000).toISOString();
const TOTAL = 1500;

t.before(async () => {
  broker = await startBroker(troeArgs());
  const power = Array.from({ length: TOTAL }, (_, i) => ({ type: 'Property', value: i, observedAt: at(i) }));
  const r = await call(broker, 'POST', `${NGSI}/temporal/entities`, {
    body: { id, type: 'Meter', power, small: { type: 'Property', value: 'x', observedAt: at(1400) } },
  });
  if (r.status !== 201) throw new Error(`seed: ${r.status} ${r.text}`);
});
t.teardown(async () => {
  await broker.stop();
});

t.test('more instances than the cap: 206, the first 1000 in time order and a forward Content-Range', async (t) => {
  const r = await call(broker, 'GET', `${NGSI}/temporal/entities/${id}?timerel=after&timeAt=${at(0)}&attrs=power`);
  t.equal(r.status, 206);
  t.equal(r.json.power.length, 1000);
  t.equal(r.json.power[0].value, 0);
  t.equal(r.json.power[999].value, 999);
  t.equal(r.headers.get('content-range'), `date-time ${at(0)}-${at(999)}/*`);
});

t.test('the next page starts where the Content-Range ended', async (t) => {
  const r = await call(broker, 'GET', `${NGSI}/temporal/entities/${id}?timerel=after&timeAt=${at(1000)}&attrs=power`);
  t.equal(r.status, 200, 'the rest fits in one page');
  t.equal(r.json.power.length, TOTAL - 1000);
  t.equal(r.headers.get('content-range'), null);
});

t.test('other attributes are cut at the same instant as the truncated one, and shown empty when nothing is left', async (t) => {
  const r = await call(broker, 'GET', `${NGSI}/temporal/entities/${id}?timerel=after&timeAt=${at(0)}`);
  t.equal(r.status, 206);
  t.same(r.json.small, [], 'an instance after the range end is left for the next page; the attribute is still named');
  const simplified = await call(broker, 'GET', `${NGSI}/temporal/entities/${id}?timerel=after&timeAt=${at(0)}&format=temporalValues`);
  t.same(simplified.json.small, { type: 'Property', values: [] });
});

t.test('lastN above the cap pages backwards: the most recent 1000 and a Content-Range from the latest', async (t) => {
  const r = await call(broker, 'GET', `${NGSI}/temporal/entities/${id}?timerel=after&timeAt=${at(0)}&lastN=1200&attrs=power`);
  t.equal(r.status, 206);
  t.equal(r.json.power.length, 1000);
  t.equal(r.json.power[0].value, 500);
  t.equal(r.json.power[999].value, TOTAL - 1);
  t.equal(r.headers.get('content-range'), `date-time ${at(TOTAL - 1)}-${at(500)}/1200`);
});

t.test('lastN within the cap is a complete answer (200)', async (t) => {
  const r = await call(broker, 'GET', `${NGSI}/temporal/entities/${id}?timerel=after&timeAt=${at(0)}&lastN=100&attrs=power`);
  t.equal(r.status, 200);
  t.equal(r.json.power.length, 100);
  t.equal(r.json.power[99].value, TOTAL - 1);
});

t.test('aggregation reads past the instance cap (up to its own) and answers 200', async (t) => {
  const r = await call(
    broker,
    'GET',
    `${NGSI}/temporal/entities/${id}?timerel=after&timeAt=${at(0)}&attrs=power&options=aggregatedValues&aggrMethods=totalCount,max`,
  );
  t.equal(r.status, 200);
  t.equal(r.json.power.totalCount[0][0], TOTAL);
  t.equal(r.json.power.max[0][0], TOTAL - 1);
});
