// The order of a temporal answer's instances, and lastN as the newest of that order (CIM 009 v1.8 §4.5.10, §6.3.x):
// instances that share a time (written by one request) are ordered by instanceId, and lastN=k is always the last k of
// the whole list, whichever history serves it; instances without observedAt take their createdAt in the default order.
// Also the type of an aggregated attribute: that of its latest instance (§4.5.19).
import t from 'tap';
import { startBroker, call, NGSI, type Broker } from './helpers/broker.js';
import { troeArgs } from './helpers/troe.js';

let broker: Broker;
const id = 'urn:ngsi-ld:Meter:order';
const START = Date.parse('2024-01-01T00:00:00.000Z');
const at = (i: number): string => new Date(START + i * 1000).toISOString();

t.before(async () => {
  broker = await startBroker(troeArgs());
  // One request: every instance shares its createdAt. Half have an observedAt, two of them the same one.
  const power = Array.from({ length: 12 }, (_, i) =>
    i % 2 === 0 ? { type: 'Property', value: i, observedAt: at(i === 4 ? 2 : i) } : { type: 'Property', value: i },
  );
  const r = await call(broker, 'POST', `${NGSI}/temporal/entities`, { body: { id, type: 'Meter', power } });
  if (r.status !== 201) throw new Error(`seed: ${r.status} ${r.text}`);
});
t.teardown(async () => {
  await broker.stop();
});

type Instance = { value: number; instanceId: string; observedAt?: string };
const instances = async (query: string): Promise<Instance[]> => {
  const r = await call(broker, 'GET', `${NGSI}/temporal/entities/${id}?attrs=power${query}`);
  if (r.status !== 200) throw new Error(`${query}: ${r.status} ${r.text}`);
  return r.json.power as Instance[];
};

for (const [what, query] of [
  ['the default order (observedAt, createdAt when it has none)', ''],
  ['createdAt', '&timeproperty=createdAt&timerel=after&timeAt=2000-01-01T00:00:00Z'],
  ['observedAt', '&timerel=after&timeAt=2000-01-01T00:00:00Z'],
] as const) {
  t.test(`${what}: lastN=k is the last k of the whole list, ties in instanceId order`, async (t) => {
    const all = await instances(query);
    t.equal(all.length, what === 'observedAt' ? 6 : 12);
    for (let k = 1; k <= all.length; k++) {
      const last = await instances(`${query}&lastN=${k}`);
      t.same(
        last.map((i) => i.instanceId),
        all.slice(-k).map((i) => i.instanceId),
        `lastN=${k}`,
      );
    }
  });
}

t.test('instances of one time are in instanceId order; those without observedAt follow at their createdAt', async (t) => {
  const byCreated = await instances('&timeproperty=createdAt&timerel=after&timeAt=2000-01-01T00:00:00Z');
  const ids = byCreated.map((i) => i.instanceId);
  t.same(ids, [...ids].sort(), 'one createdAt for all: instanceId order');
  const byDefault = await instances('');
  const observed = byDefault.slice(0, 6).map((i) => i.value);
  t.same(
    [observed[0], [observed[1], observed[2]].sort(), ...observed.slice(3)],
    [0, [2, 4], 6, 8, 10],
    'those with observedAt first, in its order',
  );
  t.ok(
    byDefault.slice(6).every((i) => i.observedAt === undefined),
    'those without, at their createdAt (now), after',
  );
  const tied = byDefault.filter((i) => i.value === 2 || i.value === 4).map((i) => i.instanceId);
  t.same(tied, [...tied].sort(), 'the two of one observedAt in instanceId order');
});

t.test('an aggregated attribute has the type of its latest instance', async (t) => {
  const e = 'urn:ngsi-ld:Meter:typed';
  const body = {
    id: e,
    type: 'Meter',
    link: [
      { type: 'Property', value: 1, observedAt: at(1) },
      { type: 'Relationship', object: 'urn:ngsi-ld:X:1', observedAt: at(2) },
    ],
    other: [
      { type: 'Relationship', object: 'urn:ngsi-ld:X:1', observedAt: at(1) },
      { type: 'Property', value: 5, observedAt: at(2) },
    ],
  };
  t.equal((await call(broker, 'POST', `${NGSI}/temporal/entities`, { body })).status, 201);
  const r = await call(
    broker,
    'GET',
    `${NGSI}/temporal/entities/${e}?format=aggregatedValues&aggrMethods=totalCount&aggrPeriodDuration=PT1H`,
  );
  t.equal(r.status, 200, r.text);
  t.equal(r.json.link.type, 'Relationship');
  t.equal(r.json.other.type, 'Property');
  t.same(r.json.other.totalCount, [
    [2, at(1).replace('.000Z', 'Z'), new Date(START + 1000 + 3600_000).toISOString().replace('.000Z', 'Z')],
  ]);
});

// tsdb keeps instances in the order of observedAt (its designated timestamp, rows.ts), which QuestDB refuses before
// 1970: such instances must still be kept, ordered and picked by lastN like any other.
t.test('instances observed before 1970 are kept and ordered, by lastN and in a window', async (t) => {
  const e = 'urn:ngsi-ld:Meter:old';
  const times = ['1960-05-01T00:00:00.000Z', '1969-12-31T23:59:59.000Z', '1950-01-01T00:00:00.000Z', '2024-01-01T00:00:00.000Z'];
  const power = times.map((observedAt, i) => ({ type: 'Property', value: i, observedAt }));
  t.equal((await call(broker, 'POST', `${NGSI}/temporal/entities`, { body: { id: e, type: 'Meter', power } })).status, 201);
  const get = async (q: string): Promise<Instance[]> => {
    const r = await call(broker, 'GET', `${NGSI}/temporal/entities/${e}?attrs=power${q}`);
    t.equal(r.status, 200, r.text);
    return r.json.power as Instance[];
  };
  t.same(
    (await get('')).map((i) => i.value),
    [2, 0, 1, 3],
    'observedAt order',
  );
  t.same(
    (await get('&lastN=3')).map((i) => i.value),
    [0, 1, 3],
  );
  t.same(
    (await get('&lastN=1&timerel=before&timeAt=1970-01-01T00:00:00Z')).map((i) => i.value),
    [1],
  );
  t.same(
    (await get('&timerel=between&timeAt=1955-01-01T00:00:00Z&endTimeAt=1970-01-01T00:00:00Z')).map((i) => i.value),
    [0, 1],
  );
  const r = await call(broker, 'GET', `${NGSI}/temporal/entities/${e}?format=aggregatedValues&aggrMethods=totalCount,min`);
  t.equal(r.status, 200, r.text);
  const [[count, from]] = r.json.power.totalCount as [[number, string]];
  t.equal(count, 4);
  t.match(from, /^1950-01-01T00:00:00/, 'the aggregation starts at the first observedAt');
  t.equal((r.json.power.min as [[number]])[0][0], 0);
});

t.test('an instance whose observedAt an update moves is listed once, at its new time', async (t) => {
  const e = 'urn:ngsi-ld:Meter:moved';
  const power = [0, 1, 2].map((i) => ({ type: 'Property', value: i, observedAt: at(i) }));
  t.equal((await call(broker, 'POST', `${NGSI}/temporal/entities`, { body: { id: e, type: 'Meter', power } })).status, 201);
  const list = async (q = ''): Promise<Instance[]> => {
    const r = await call(broker, 'GET', `${NGSI}/temporal/entities/${e}?attrs=power${q}`);
    t.equal(r.status, 200, r.text);
    return (r.json.power ?? []) as Instance[];
  };
  const first = (await list())[0]!;
  const path = `${NGSI}/temporal/entities/${e}/attrs/power/${encodeURIComponent(first.instanceId)}`;
  const u = await call(broker, 'PATCH', path, { body: { type: 'Property', value: 10, observedAt: at(5) } });
  t.equal(u.status, 204, u.text);
  t.same(
    (await list()).map((i) => i.value),
    [1, 2, 10],
  );
  t.same(
    (await list('&lastN=1')).map((i) => i.instanceId),
    [first.instanceId],
  );
  t.same(
    (await list('&timerel=before&timeAt=' + at(1))).map((i) => i.value),
    [],
    'nothing left at the old time',
  );
});
