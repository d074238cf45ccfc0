// --troe tsdb when QuestDB is away (issue 18 "Faults"): at start or in the middle of writes, the broker keeps serving
// the current state, entity writes still succeed, temporal reads answer 503 Unavailable with Retry-After, and the
// history buffered meanwhile is written once QuestDB answers again; past --troeBuffer rows, entity writes wait for
// it rather than drop history. QuestDB is taken away by a relay (helpers/tcp-gate.ts), not stopped.
import t, { type Test } from 'tap';
import { startBroker, call, NGSI, type Broker, type Reply } from './helpers/broker.js';
import { questDbPort, tsdbArgs } from './helpers/troe.js';
import { TcpGate } from './helpers/tcp-gate.js';

const UNAVAILABLE = 'https://uri.etsi.org/ngsi-ld/errors/Unavailable';

/** tsdb arguments whose QuestDB is reached through `gate`. */
function argsThrough(gate: TcpGate, extra: string[] = []): string[] {
  const args = tsdbArgs();
  args[args.indexOf('--troePort') + 1] = String(gate.port);
  return [...args, ...extra];
}

/** Reads the entity's history until QuestDB has it again (the writer retries every few seconds at most). */
async function historyOnceBack(broker: Broker, id: string): Promise<Reply> {
  for (;;) {
    const r = await call(broker, 'GET', `${NGSI}/temporal/entities/${id}`);
    if (r.status !== 503) return r;
    await new Promise((res) => setTimeout(res, 200));
  }
}

function expectUnavailable(t: Test, r: Reply): void {
  t.equal(r.status, 503, r.text);
  t.equal(r.json.type, UNAVAILABLE);
  t.match(r.json.detail, /QuestDB/);
  t.equal(r.headers.get('retry-after'), '5');
}

t.test('QuestDB down at start: the broker starts, serves the current state, answers 503 on history, and catches up', async (t) => {
  const gate = await TcpGate.reserve(questDbPort());
  t.teardown(() => gate.close());
  const broker = await startBroker(argsThrough(gate, ['--troeUser', 'admin', '--troePwd', 'never-in-a-log']));
  t.teardown(() => broker.stop());
  const id = 'urn:ngsi-ld:Pump:start';
  const created = await call(broker, 'POST', `${NGSI}/entities`, { body: { id, type: 'Pump', rpm: { type: 'Property', value: 1 } } });
  t.equal(created.status, 201, created.text);
  const patched = await call(broker, 'PATCH', `${NGSI}/entities/${id}/attrs`, { body: { rpm: { type: 'Property', value: 2 } } });
  t.equal(patched.status, 204, patched.text);
  const current = await call(broker, 'GET', `${NGSI}/entities/${id}`);
  t.equal(current.status, 200);
  t.equal(current.json.rpm.value, 2, 'the current state is served');
  expectUnavailable(t, await call(broker, 'GET', `${NGSI}/temporal/entities/${id}`));
  expectUnavailable(t, await call(broker, 'GET', `${NGSI}/temporal/entities?type=Pump`));
  await gate.open();
  const back = await historyOnceBack(broker, id);
  t.equal(back.status, 200, back.text);
  t.same(
    back.json.rpm.map((i: { value: number }) => i.value),
    [1, 2],
    'both writes made while QuestDB was down are in the history',
  );
  const logs = broker.logs.join('\n');
  t.match(logs, /QuestDB cannot be reached: entity writes go on/);
  t.match(logs, /QuestDB answers again: buffered history sent/);
  t.notMatch(logs, /never-in-a-log/, 'the password is never logged');
});

t.test('QuestDB gone in the middle of writes: writes go on, nothing is lost, no crash', async (t) => {
  const gate = await TcpGate.reserve(questDbPort());
  await gate.open();
  t.teardown(() => gate.close());
  const broker = await startBroker(argsThrough(gate), {}, { pool: true });
  t.teardown(() => broker.stop());
  const id = 'urn:ngsi-ld:Pump:mid';
  t.equal(
    (await call(broker, 'POST', `${NGSI}/entities`, { body: { id, type: 'Pump', rpm: { type: 'Property', value: 0 } } })).status,
    201,
  );
  t.equal((await call(broker, 'GET', `${NGSI}/temporal/entities/${id}`)).status, 200, 'history served while QuestDB is there');
  await gate.close();
  for (let v = 1; v <= 20; v++) {
    const r = await call(broker, 'PATCH', `${NGSI}/entities/${id}/attrs`, { body: { rpm: { type: 'Property', value: v } } });
    t.equal(r.status, 204, `write ${v} while QuestDB is away`);
  }
  expectUnavailable(t, await call(broker, 'GET', `${NGSI}/temporal/entities/${id}?lastN=1`));
  t.equal((await call(broker, 'GET', `${NGSI}/entities/${id}`)).json.rpm.value, 20);
  await gate.open();
  const back = await historyOnceBack(broker, id);
  t.equal(back.status, 200, back.text);
  t.same(
    back.json.rpm.map((i: { value: number }) => i.value),
    Array.from({ length: 21 }, (_, i) => i),
    'every write, in order',
  );
  t.match(broker.logs.join('\n'), /QuestDB is not taking the history: rows are kept and sent again/);
});

t.test('past --troeBuffer rows, entity writes wait for QuestDB instead of dropping history', async (t) => {
  const gate = await TcpGate.reserve(questDbPort());
  t.teardown(() => gate.close());
  const broker = await startBroker(argsThrough(gate, ['--troeBuffer', '100']));
  t.teardown(() => broker.stop());
  const id = 'urn:ngsi-ld:Pump:full';
  const attrs: Record<string, unknown> = {};
  for (let i = 0; i < 60; i++) attrs[`a${i}`] = { type: 'Property', value: i };
  t.equal((await call(broker, 'POST', `${NGSI}/entities`, { body: { id, type: 'Pump', ...attrs } })).status, 201);
  // 60 rows buffered, then 60 more: past 100, the writer says full.
  const second = call(broker, 'PATCH', `${NGSI}/entities/${id}/attrs`, { body: attrs });
  t.equal((await second).status, 204);
  while (!broker.logs.some((l) => l.includes('the history buffer is full'))) await new Promise((res) => setTimeout(res, 50));
  // The next write waits for room; it is answered once QuestDB took the rows.
  const third = call(broker, 'PATCH', `${NGSI}/entities/${id}/attrs`, { body: { a0: { type: 'Property', value: 'last' } } });
  await gate.open();
  t.equal((await third).status, 204);
  const back = await historyOnceBack(broker, id);
  t.equal(back.status, 200, back.text);
  t.same(
    back.json.a0.map((i: { value: unknown }) => i.value),
    [0, 0, 'last'],
    'no history row was dropped',
  );
  t.equal(back.json.a59.length, 2);
});

t.test('stopped while QuestDB is away, the broker says how many history rows it could not write', async (t) => {
  const gate = await TcpGate.reserve(questDbPort());
  t.teardown(() => gate.close());
  const broker = await startBroker(argsThrough(gate));
  const id = 'urn:ngsi-ld:Pump:stop';
  const r = await call(broker, 'POST', `${NGSI}/entities`, {
    body: { id, type: 'Pump', rpm: { type: 'Property', value: 1 }, temp: { type: 'Property', value: 2 } },
  });
  t.equal(r.status, 201, r.text);
  t.equal(await broker.stop(), 0, 'a clean stop');
  const lost = broker.logs.map((l) => JSON.parse(l)).find((l) => /history rows not written to QuestDB at exit are lost/.test(l.msg));
  t.ok(lost, 'an error line names the loss');
  t.equal(lost.level, 50);
  t.equal(lost.rows, 3, 'the created event and the two instances');
});
