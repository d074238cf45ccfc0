// A history line QuestDB refuses must not stall the history (issue 18). Through the API a client can send an
// observedAt past 9999-12-31 (a DateTime with an offset, `9999-12-31T23:00:00-14:00`): the broker takes it (a valid
// DateTime), but QuestDB holds no designated timestamp past 9999, and it answers the ILP request 400 and rolls it
// back whole (ilp.ts writes that one in ns, which QuestDB refuses, where µs made it answer 500). An observedAt past
// 2262 was refused so too, in ns; in µs it is written (the last test). Before the fix the writer sent that request again for ever: every later history row of every
// tenant stayed behind it. Now the refused line is dropped (a warn line, /metrics), and the lines before and after
// it in the same request, another tenant's among them, are written. Against the real QuestDB (test/services).
import t, { type Test } from 'tap';
import { startBroker, call, NGSI, type Broker } from './helpers/broker.js';
import { tsdbArgs } from './helpers/troe.js';

let broker: Broker;
t.before(async () => {
  broker = await startBroker(tsdbArgs());
});
t.teardown(async () => {
  await broker.stop();
});

const ID = 'urn:ngsi-ld:Sensor:refused-line';
/** A time past QuestDB's last designated timestamp: 10000-01-01T13:00:00Z. */
const PAST_9999 = '9999-12-31T23:00:00-14:00';
const patch = (value: number, observedAt: string, tenant?: string): Promise<{ status: number; text: string }> =>
  call(broker, 'PATCH', `${NGSI}/entities/${ID}/attrs`, {
    headers: tenant === undefined ? {} : { 'NGSILD-Tenant': tenant },
    body: { v: { type: 'Property', value, observedAt } },
  });
const values = async (t: Test, tenant?: string): Promise<unknown[]> => {
  const r = await call(broker, 'GET', `${NGSI}/temporal/entities/${ID}?options=temporalValues`, {
    headers: tenant === undefined ? {} : { 'NGSILD-Tenant': tenant },
  });
  t.equal(r.status, 200, r.text);
  return (r.json.v.values as Array<[unknown, string]>).map((p) => p[0]).sort();
};

/** ldbroker_history_rows_refused_total once it reads `expected` (the writer tells its count within a second), or its last value. */
async function refusedCount(expected: number): Promise<number | undefined> {
  let refused: number | undefined;
  for (let i = 0; i < 40 && refused !== expected; i++) {
    const text = await (await fetch(`http://127.0.0.1:${broker.healthPort}/metrics`)).text();
    refused = Number(/^ldbroker_history_rows_refused_total (\S+)$/m.exec(text)?.[1]);
    if (refused !== expected) await new Promise((r) => setTimeout(r, 50));
  }
  return refused;
}

t.test('the refused line is dropped; the lines around it in the same request are written; the writer goes on', async (t) => {
  for (const tenant of [undefined, 'other']) {
    const r = await call(broker, 'POST', `${NGSI}/entities`, {
      headers: tenant === undefined ? {} : { 'NGSILD-Tenant': tenant },
      body: { id: ID, type: 'Sensor', v: { type: 'Property', value: 0, observedAt: '2024-01-01T00:00:00Z' } },
    });
    t.equal(r.status, 201, r.text);
  }
  t.same(await values(t), [0], 'written before: the history works');
  // No read between these: the writer sends them in one ILP request (a read's sync sends what waits).
  t.equal((await patch(1, '2024-01-01T00:00:01Z')).status, 204);
  t.equal((await patch(2, PAST_9999)).status, 204, 'the broker takes the time: it is a valid DateTime');
  t.equal((await patch(3, '2024-01-01T00:00:03Z')).status, 204);
  t.equal((await patch(30, '2024-01-01T00:00:03Z', 'other')).status, 204);
  t.same(await values(t), [0, 1, 3], 'the lines before and after the refused one are written; it is not');
  t.same(await values(t, 'other'), [0, 30], "another tenant's line of the same request is written");

  t.equal((await patch(4, '2024-01-01T00:00:04Z')).status, 204);
  t.same(await values(t), [0, 1, 3, 4], 'a later write is read back: the writer is not stuck');

  const warns = broker.logs.filter((l) => l.includes('QuestDB refused a history row'));
  t.equal(warns.length, 1, 'one warn line per refused line');
  const w = JSON.parse(warns[0]!) as Record<string, unknown>;
  t.equal(w.level, 40);
  t.equal(w.tenant, '');
  t.match(w.table, /_inst_v2_/);
  t.equal(w.entity, ID);
  t.match(w.err, /timestamp/i, "QuestDB's message");

  t.equal(await refusedCount(1), 1, '/metrics counts the refused row');
});

t.test('a client whose every row is refused cannot fill the log: 10 warn lines a minute, one notice, all counted', async (t) => {
  const before = broker.logs.filter((l) => l.includes('QuestDB refused a history row')).length;
  for (let i = 0; i < 25; i++) t.equal((await patch(100 + i, `9999-12-31T23:00:${String(i).padStart(2, '0')}-14:00`)).status, 204);
  t.same(await values(t), [0, 1, 3, 4], 'none of them written, the earlier history intact');
  const rows = broker.logs.filter((l) => l.includes('QuestDB refused a history row')).length - before;
  // The first test's refusal was the first of this minute's ten, unless a minute passed since.
  t.ok(rows === 9 || rows === 10, `${rows} warn lines for 25 refused rows`);
  t.equal(broker.logs.filter((l) => l.includes('more history rows refused this minute')).length, 1, 'one notice');
  t.equal(await refusedCount(26), 26, '/metrics counts every refused row');
});

t.test('an observedAt after 2262 is written and read back (its designated timestamp in µs; in ns QuestDB refused it)', async (t) => {
  const id = 'urn:ngsi-ld:Sensor:after-2262';
  const r = await call(broker, 'POST', `${NGSI}/entities`, {
    body: { id, type: 'Sensor', v: { type: 'Property', value: 7, observedAt: '2300-01-01T00:00:00Z' } },
  });
  t.equal(r.status, 201, r.text);
  const before = await refusedCount(26);
  const got = await call(broker, 'GET', `${NGSI}/temporal/entities/${id}?options=temporalValues`);
  t.equal(got.status, 200, got.text);
  t.same(got.json.v.values, [[7, '2300-01-01T00:00:00Z']], 'the instance, at its time');
  t.equal(await refusedCount(26), before, 'nothing refused');
});
