// The tsdb history of the instances table's layout before the order-time one (`<troeName>_inst_<tenant>`, designated
// timestamp createdAt, no created_at column) is carried over when a broker of this layout starts on that QuestDB
// (migrate-v1.ts): the temporal API answers what it answered before, the old table is dropped, and a second start
// copies nothing twice. QuestDB away at start: reads answer 503, the old table is kept, and the copy is made once it
// answers. The old tables are made here by the old DDL from the rows a broker wrote (test/services/questdb.sh).
import t, { type Test } from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startBroker, call, NGSI, type Broker } from './helpers/broker.js';
import { questDbPort, tsdbArgs } from './helpers/troe.js';
import { TcpGate } from './helpers/tcp-gate.js';

interface Answer {
  status: number;
  json: unknown;
}

async function sql(query: string): Promise<unknown[][]> {
  const r = (await (await fetch(`http://127.0.0.1:${questDbPort()}/exec?query=${encodeURIComponent(query)}`)).json()) as {
    dataset?: unknown[][];
    error?: string;
  };
  if (r.error !== undefined) throw new Error(`${query}: ${r.error}`);
  return r.dataset ?? [];
}

const tablesLike = async (prefix: string): Promise<string[]> =>
  (await sql('SELECT table_name FROM tables()'))
    .map((r) => String(r[0]))
    .filter((n) => n.startsWith(`${prefix}_`))
    .sort();

/** The instances table as the layout before made it (main's rows.ts tableDdl, before 9b033ca). */
const OLD_DDL = (inst: string): string =>
  `CREATE TABLE ${inst} (ts TIMESTAMP, entity SYMBOL INDEX, attr SYMBOL, ds SYMBOL, vtype SYMBOL, iid VARCHAR, ` +
  `num DOUBLE, str VARCHAR, val VARCHAR, body VARCHAR, observed_at TIMESTAMP, modified_at TIMESTAMP, deleted_at TIMESTAMP, gone BOOLEAN) ` +
  `TIMESTAMP(ts) PARTITION BY DAY WAL DEDUP UPSERT KEYS(ts, iid)`;
const COLS = 'entity, attr, ds, vtype, iid, num, str, val, body, observed_at, modified_at, deleted_at, gone';

/** Waits until QuestDB applied every commit of the table (WAL). */
async function applied(table: string): Promise<void> {
  for (;;) {
    const [r] = await sql(`SELECT writerTxn, sequencerTxn FROM wal_tables() WHERE name = '${table}'`);
    if (r !== undefined && Number(r[0]) >= Number(r[1])) return;
    await new Promise((res) => setTimeout(res, 20));
  }
}

/**
 * The tenant's instances put back in the old layout: the old table holds each instance's last version at its
 * createdAt (its dedup key was (createdAt, instanceId)); the new table's retraction of an update that moved
 * observedAt (gone) has no counterpart there (the test deletes no instance), and the new table is dropped.
 */
async function toOldLayout(prefix: string, key: string): Promise<number> {
  const old = `${prefix}_inst_${key}`;
  const v2 = `${prefix}_inst_v2_${key}`;
  await sql(OLD_DDL(old));
  await sql(`INSERT INTO ${old} (ts, ${COLS}) SELECT created_at, ${COLS} FROM ${v2} WHERE gone = false ORDER BY created_at`);
  await applied(old);
  await sql(`DROP TABLE ${v2}`);
  return Number((await sql(`SELECT count() FROM ${old}`))[0]![0]);
}

const ID = 'urn:ngsi-ld:Meter:old';
const TENANT = 'acme-old';
const QUERIES = [
  '',
  '?lastN=2',
  '?attrs=temp&lastN=3',
  '?timerel=between&timeAt=2024-01-01T00:00:01Z&endTimeAt=2024-01-01T00:00:04Z',
  '?timerel=before&timeAt=2000-01-01T00:00:00Z',
  '?timeproperty=createdAt&timerel=after&timeAt=2000-01-01T00:00:00Z',
  '?timeproperty=createdAt&timerel=after&timeAt=2000-01-01T00:00:00Z&lastN=2',
];

/** tsdb arguments of a fresh prefix, with a store kept on disk across the test's brokers (the entity's tenant). */
function argsOf(t: Test): { args: string[]; prefix: string } {
  const dir = mkdtempSync(join(tmpdir(), 'ldbroker-migrate-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const a = tsdbArgs();
  return { args: [...a, '--dbDir', dir], prefix: a[a.indexOf('--troeName') + 1]! };
}

/** Writes the history: observed instances, unobserved ones, one observed before 1970, one updated (§6.22). */
async function seed(b: Broker, headers: Record<string, string>): Promise<void> {
  const ok = (r: { status: number; text: string }, what: string): void => {
    if (r.status >= 300) throw new Error(`${what}: ${r.status} ${r.text}`);
  };
  const at = (s: number): string => new Date(Date.parse('2024-01-01T00:00:00Z') + s * 1000).toISOString();
  ok(
    await call(b, 'POST', `${NGSI}/entities`, {
      headers,
      body: {
        id: ID,
        type: 'Meter',
        temp: { type: 'Property', value: 20, observedAt: at(1) },
        note: { type: 'Property', value: 'first' },
      },
    }),
    'create',
  );
  for (let i = 2; i <= 5; i++) {
    await new Promise((res) => setTimeout(res, 3));
    ok(
      await call(b, 'PATCH', `${NGSI}/entities/${ID}/attrs`, {
        headers,
        body: { temp: { type: 'Property', value: 20 + i, observedAt: at(i) }, note: { type: 'Property', value: `n${i}` } },
      }),
      `patch ${i}`,
    );
  }
  ok(
    await call(b, 'PATCH', `${NGSI}/entities/${ID}/attrs`, {
      headers,
      body: { temp: { type: 'Property', value: -1, observedAt: '1969-07-20T20:17:40.000Z' } },
    }),
    'pre-1970',
  );
  const r = await call(b, 'GET', `${NGSI}/temporal/entities/${ID}?attrs=temp`, { headers });
  const third = (r.json as { temp: Array<{ instanceId: string; value: number }> }).temp.find((i) => i.value === 23)!;
  ok(
    await call(b, 'PATCH', `${NGSI}/temporal/entities/${ID}/attrs/temp/${encodeURIComponent(third.instanceId)}`, {
      headers,
      body: { type: 'Property', value: 230, observedAt: at(7) },
    }),
    'instance update',
  );
}

async function answers(b: Broker, headers: Record<string, string>): Promise<Answer[]> {
  const out: Answer[] = [];
  for (const q of QUERIES) {
    const r = await call(b, 'GET', `${NGSI}/temporal/entities/${ID}${q}`, { headers });
    out.push({ status: r.status, json: r.json });
  }
  return out;
}

t.test('the old layout is carried over at start: the same answers, the old table dropped, nothing copied twice', async (t) => {
  const { args, prefix } = argsOf(t);
  const tenants = [{}, { 'NGSILD-Tenant': TENANT }];
  const before: Answer[][] = [];
  const writer = await startBroker(args);
  for (const h of tenants) {
    await seed(writer, h);
    before.push(await answers(writer, h));
  }
  await writer.stop();
  t.equal(before[0]![1]!.status, 200);
  t.equal((before[0]![0]!.json as { temp: unknown[] }).temp.length, 6, 'six temperatures in the history');
  const keys = ['d', `x_${Buffer.from(TENANT).toString('hex')}`];
  const rows: number[] = [];
  for (const k of keys) rows.push(await toOldLayout(prefix, k));
  t.same(rows, [11, 11], 'the old tables hold every instance');
  t.same(await tablesLike(prefix), [`${prefix}_ent_d`, `${prefix}_ent_${keys[1]}`, `${prefix}_inst_d`, `${prefix}_inst_${keys[1]}`].sort());

  const upgraded = await startBroker(args);
  t.teardown(() => upgraded.stop());
  for (const [i, h] of tenants.entries()) t.same(await answers(upgraded, h), before[i], `tenant ${i}: the same history as before`);
  const logs = upgraded.logs.join('\n');
  for (const k of keys)
    t.match(logs, new RegExp(`"from":"${prefix}_inst_${k}","to":"${prefix}_inst_v2_${k}","rows":11,.*carried over; old table dropped`));
  t.same(
    await tablesLike(prefix),
    [`${prefix}_ent_d`, `${prefix}_ent_${keys[1]}`, `${prefix}_inst_v2_d`, `${prefix}_inst_v2_${keys[1]}`].sort(),
  );
  await upgraded.stop();

  const again = await startBroker(args);
  t.teardown(() => again.stop());
  for (const [i, h] of tenants.entries()) t.same(await answers(again, h), before[i], `tenant ${i}: the same history on a second start`);
  t.notMatch(again.logs.join('\n'), /carried over/, 'nothing to carry over on the second start');
  for (const k of keys) t.same(await sql(`SELECT count() FROM ${prefix}_inst_v2_${k}`), [[11]], `${k}: every row once`);
});

t.test('QuestDB away at start: 503, the old table kept; carried over once it answers, before any new row', async (t) => {
  const { args, prefix } = argsOf(t);
  const writer = await startBroker(args);
  await seed(writer, {});
  const before = await answers(writer, {});
  await writer.stop();
  await toOldLayout(prefix, 'd');

  const gate = await TcpGate.reserve(questDbPort());
  t.teardown(() => gate.close());
  const through = [...args];
  through[through.indexOf('--troePort') + 1] = String(gate.port);
  const broker = await startBroker(through);
  t.teardown(() => broker.stop());
  const down = await call(broker, 'GET', `${NGSI}/temporal/entities/${ID}`);
  t.equal(down.status, 503, down.text);
  // A write meanwhile: its rows wait in the writer behind the copy, and land beside the old ones.
  const patched = await call(broker, 'PATCH', `${NGSI}/entities/${ID}/attrs`, {
    body: { note: { type: 'Property', value: 'after the upgrade' } },
  });
  t.equal(patched.status, 204, patched.text);
  t.ok((await tablesLike(prefix)).includes(`${prefix}_inst_d`), 'the old table is kept while the copy could not be made');
  await gate.open();
  let r = await call(broker, 'GET', `${NGSI}/temporal/entities/${ID}`);
  while (r.status === 503) {
    await new Promise((res) => setTimeout(res, 200));
    r = await call(broker, 'GET', `${NGSI}/temporal/entities/${ID}`);
  }
  t.equal(r.status, 200, r.text);
  const was = before[0]!.json as { temp: unknown[]; note: Array<{ value: string }> };
  const now = r.json as { temp: unknown[]; note: Array<{ value: string }> };
  t.same(now.temp, was.temp, 'the temperatures as before');
  t.same(
    now.note.map((n) => n.value),
    [...was.note.map((n) => n.value), 'after the upgrade'],
    'the old notes, then the new one',
  );
  t.notOk((await tablesLike(prefix)).includes(`${prefix}_inst_d`), 'the old table dropped after the copy');
});

t.test('tables that only look like the old layout are left alone; one QuestDB cannot copy is kept; an empty one is dropped', async (t) => {
  const { args, prefix } = argsOf(t);
  const NEW_DDL_COLS = 'ts TIMESTAMP, iid VARCHAR, body VARCHAR, observed_at TIMESTAMP, created_at TIMESTAMP';
  // A tenant key's shape but a created_at column (another program's table, or a v2 one by some other name).
  await sql(`CREATE TABLE ${prefix}_inst_t_lookalike (${NEW_DDL_COLS}) TIMESTAMP(ts) PARTITION BY DAY WAL`);
  // The old columns, but no tenant key after the head (another prefix's table: `<prefix>_inst` + `_zz_d`).
  await sql(OLD_DDL(`${prefix}_inst_zz_d`));
  await sql(`INSERT INTO ${prefix}_inst_zz_d (ts, iid, body, gone) VALUES ('2024-01-01', 'i', '{}', false)`);
  await sql(OLD_DDL(`${prefix}_inst_t_empty`));
  // The old layout but a value QuestDB cannot convert (num as text): the copy is refused, the table must stay.
  await sql(OLD_DDL(`${prefix}_inst_t_broken`).replace('num DOUBLE', 'num VARCHAR'));
  await sql(`INSERT INTO ${prefix}_inst_t_broken (ts, iid, num, body, gone) VALUES ('2024-01-01', 'i', 'abc', '{}', false)`);
  await applied(`${prefix}_inst_t_broken`);
  await applied(`${prefix}_inst_zz_d`);
  const broker = await startBroker(args);
  t.teardown(() => broker.stop());
  // A read syncs with the writer, which carries the old tables over before anything else.
  t.equal((await call(broker, 'GET', `${NGSI}/temporal/entities/${ID}`)).status, 404);
  t.same(
    await tablesLike(prefix),
    [
      `${prefix}_ent_t_broken`,
      `${prefix}_ent_t_empty`,
      `${prefix}_inst_t_broken`,
      `${prefix}_inst_t_lookalike`,
      `${prefix}_inst_v2_t_broken`,
      `${prefix}_inst_v2_t_empty`,
      `${prefix}_inst_zz_d`,
    ].sort(),
  );
  t.same(await sql(`SELECT count() FROM ${prefix}_inst_t_broken`), [[1]], 'the table QuestDB could not copy keeps its row');
  t.same(await sql(`SELECT count() FROM ${prefix}_inst_v2_t_broken`), [[0]], 'and none of it was half copied');
  t.match(
    broker.logs.join('\n'),
    /"level":50.*inconvertible value.*"from":"[a-z0-9]+_inst_t_broken".*could not be carried over: it is kept/,
  );
  // The history of the other tenants is still written.
  const body = { id: ID, type: 'Meter', v: { type: 'Property', value: 1 } };
  t.equal((await call(broker, 'POST', `${NGSI}/entities`, { body })).status, 201);
  t.equal((await call(broker, 'GET', `${NGSI}/temporal/entities/${ID}`)).status, 200);
  t.same(await sql(`SELECT count() FROM ${prefix}_inst_zz_d`), [[1]], 'the other table keeps its row');
  t.match(broker.logs.join('\n'), new RegExp(`"from":"${prefix}_inst_t_empty","to":"${prefix}_inst_v2_t_empty","rows":0,`));
  t.notMatch(broker.logs.join('\n'), /lookalike|zz_d/, 'the other tables are not named in the log');
});
