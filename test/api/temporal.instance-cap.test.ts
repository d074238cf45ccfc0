// --temporalInstanceCap (CIM 009 v1.8 §6.3.10): the instances of one attribute a temporal answer holds before it is
// paged (206 with Content-Range). Counted per attribute: 20 instances of each of two attributes page under a cap of
// 10, five of each never do; an attribute the page's cut leaves without instances is still named, empty.
import t from 'tap';
import { startBroker, runBroker, runBrokerHere, call, NGSI, type Broker } from './helpers/broker.js';
import { troeArgs } from './helpers/troe.js';

let broker: Broker;
const DAY1 = Date.parse('2020-01-01T01:00:00Z');
const DAY2 = Date.parse('2020-01-02T01:00:00Z');
const LATER = Date.parse('2020-09-01T12:00:00Z');
const iso = (ms: number): string => new Date(ms).toISOString();
const minute = (base: number, m: number): string => iso(base + m * 60_000);
const series = (n: number, base: number, from = 1): Array<Record<string, unknown>> =>
  Array.from({ length: n }, (_, i) => ({ type: 'Property', value: i + from, observedAt: minute(base, i + from) }));

const twenty = 'urn:ngsi-ld:Car:twenty';
const five = 'urn:ngsi-ld:Car:five';
const later = 'urn:ngsi-ld:Car:later';
const unsync = 'urn:ngsi-ld:Truck:unsync';

async function create(body: Record<string, unknown>): Promise<void> {
  const r = await call(broker, 'POST', `${NGSI}/temporal/entities`, { body });
  if (r.status !== 201) throw new Error(`seed ${String(body.id)}: ${r.status} ${r.text}`);
}

t.before(async () => {
  broker = await startBroker([...troeArgs(), '--temporalInstanceCap', '10']);
  // speed 01:01..01:20, fuel 01:03..01:22: two attributes of 20 instances, not in step.
  await create({ id: twenty, type: 'Car', speed: series(20, DAY1), fuel: series(20, DAY1, 3) });
  await create({ id: five, type: 'Van', speed: series(5, DAY1), fuel: series(5, DAY1) });
  await create({ id: later, type: 'Car', speed: series(3, LATER), fuel: series(3, LATER) });
  // speed only on day 1, fuel only on day 2, 30 each.
  await create({ id: unsync, type: 'Truck', speed: series(30, DAY1), fuel: series(30, DAY2) });
});
t.teardown(async () => {
  await broker.stop();
});

const get = (path: string) => call(broker, 'GET', `${NGSI}${path}`);
const times = (instances: Array<{ observedAt: string }>): string[] => instances.map((i) => i.observedAt);

t.test('two attributes of 20 instances under a cap of 10: 206, every attribute cut at the earliest truncation', async (t) => {
  const r = await get(`/temporal/entities/${twenty}`);
  t.equal(r.status, 206, r.text);
  t.same(
    times(r.json.speed),
    Array.from({ length: 10 }, (_, i) => minute(DAY1, i + 1)),
    'the first 10 speeds',
  );
  t.same(
    times(r.json.fuel),
    Array.from({ length: 8 }, (_, i) => minute(DAY1, i + 3)),
    'fuel up to the same instant',
  );
  t.equal(r.headers.get('content-range'), `date-time ${minute(DAY1, 1)}-${minute(DAY1, 10)}/*`);
});

t.test('with timerel the range starts at timeAt; the next page continues after the range end', async (t) => {
  const from = '2019-01-01T00:00:00.000Z';
  const r = await get(`/temporal/entities/${twenty}?timerel=after&timeAt=${from}`);
  t.equal(r.status, 206);
  t.equal(r.headers.get('content-range'), `date-time ${from}-${minute(DAY1, 10)}/*`);
});

t.test('lastN above the cap pages backwards, from the most recent, with lastN as the size', async (t) => {
  const r = await get(`/temporal/entities/${twenty}?lastN=20`);
  t.equal(r.status, 206, r.text);
  t.same(
    times(r.json.fuel),
    Array.from({ length: 10 }, (_, i) => minute(DAY1, i + 13)),
    'the last 10 fuels',
  );
  t.same(
    times(r.json.speed),
    Array.from({ length: 8 }, (_, i) => minute(DAY1, i + 13)),
    'speed from the same instant',
  );
  t.equal(r.headers.get('content-range'), `date-time ${minute(DAY1, 22)}-${minute(DAY1, 13)}/20`);
  const before = await get(`/temporal/entities/${twenty}?lastN=20&timerel=before&timeAt=2021-01-01T00:00:00Z`);
  t.equal(before.headers.get('content-range'), `date-time 2021-01-01T00:00:00.000Z-${minute(DAY1, 13)}/20`, 'the range ends at timeAt');
});

t.test('five instances per attribute fit: 200 and no Content-Range, alone or in a query', async (t) => {
  const r = await get(`/temporal/entities/${five}`);
  t.equal(r.status, 200);
  t.equal(r.headers.get('content-range'), null);
  t.equal(r.json.speed.length, 5);
  const q = await get('/temporal/entities?type=Van&timerel=after&timeAt=2019-01-01T00:00:00Z');
  t.equal(q.status, 200);
  t.equal(q.headers.get('content-range'), null);
});

t.test('a query cuts every entity at the same instant; one whose instances all fall after it is still answered, empty', async (t) => {
  const r = await get('/temporal/entities?type=Car&timerel=after&timeAt=2019-01-01T00:00:00Z');
  t.equal(r.status, 206, r.text);
  t.equal(r.headers.get('content-range'), `date-time 2019-01-01T00:00:00.000Z-${minute(DAY1, 10)}/*`);
  const byId = new Map(r.json.map((e: any) => [e.id, e]));
  t.same((byId.get(later) as any)?.speed, [], 'attributes of the later entity are named, without instances');
  t.same((byId.get(later) as any)?.fuel, []);
  t.equal((byId.get(twenty) as any)?.speed.length, 10);
  const simplified = await get('/temporal/entities?type=Car&timerel=after&timeAt=2019-01-01T00:00:00Z&format=temporalValues');
  const laterSimplified = simplified.json.find((e: any) => e.id === later);
  t.same(laterSimplified.speed, { type: 'Property', values: [] });
});

t.test('attributes out of step: forwards, the later attribute is left empty; backwards, the earlier one', async (t) => {
  const forwards = await get(`/temporal/entities/${unsync}?timerel=after&timeAt=2019-01-01T00:00:00Z`);
  t.equal(forwards.status, 206);
  t.equal(forwards.json.speed.length, 10);
  t.same(forwards.json.fuel, []);
  const backwards = await get(`/temporal/entities/${unsync}?lastN=100&timerel=before&timeAt=2021-01-01T00:00:00Z`);
  t.equal(backwards.status, 206);
  t.equal(backwards.json.fuel.length, 10);
  t.same(backwards.json.speed, []);
});

t.test('lastN within the cap is the whole answer (200)', async (t) => {
  const r = await get(`/temporal/entities/${twenty}?lastN=10`);
  t.equal(r.status, 200);
  t.equal(r.json.speed.length, 10);
  t.equal(r.headers.get('content-range'), null);
});

t.test('--temporalInstanceCap takes a positive integer: anything else stops the start with one line', async (t) => {
  for (const value of ['0', '-3', 'many', '2.5']) {
    // The first from the spawned command, the others as main.ts runs them, in this process (no process start each).
    const r = await (value === '0' ? runBroker : runBrokerHere)(['--troe', 'embdb', '--temporalInstanceCap', value]);
    t.equal(r.code, 1, value);
    t.match(r.stderr, /temporalInstanceCap/, value);
    t.equal(r.stderr.trim().split('\n').length, 1, `one line for ${value}`);
  }
  const u = await runBrokerHere(['-u']);
  t.match(u.stdout, /--temporalInstanceCap\s+int\s+.*\(default: 1000\)/);
});
