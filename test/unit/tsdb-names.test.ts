// The tsdb history's SQL literals, literal groups, table names and settings (plugins/history/tsdb sql.ts,
// settings.ts): what a client sends is only ever a quoted literal, each tenant has tables of its own, and a bad
// option value is refused at start with a message naming the option. Instance ids name their time.
import t from 'tap';
import { newInstanceId } from '../../src/plugins/history/tsdb/rows.js';
import { MAX_SQL, lit, literalGroups } from '../../src/plugins/history/tsdb/sql.js';
import { settingsOf, tablesOf, tenantKey } from '../../src/plugins/history/tsdb/settings.js';

t.test('a literal is one quoted SQL value whatever it holds', async (t) => {
  t.equal(lit('urn:a'), "'urn:a'");
  t.equal(lit("o'brien"), "('o' || '''' || 'brien')");
  t.equal(lit("'"), "('' || '''' || '')");
  t.equal(lit("x'); DROP TABLE y; --"), "('x' || '''' || '); DROP TABLE y; --')");
  // Outside the quotes there are only the concatenations and the quote literal.
  const outside = lit("a'b'c").replace(/'[^']*'/g, '');
  t.equal(outside, '( ||  ||  ||  || )');
});

t.test('literal groups keep every value once, in order, each group within its budget', async (t) => {
  const values = Array.from({ length: 5000 }, (_, i) => `urn:ngsi-ld:E:${i}'${'x'.repeat(i % 50)}`);
  const groups = literalGroups(values);
  t.ok(groups.length > 1);
  t.same(groups.flat(), values.map(lit));
  for (const g of groups) t.ok(g.join(',').length <= MAX_SQL / 2, 'within the budget');
  t.same(literalGroups([]), []);
  const huge = 'y'.repeat(MAX_SQL);
  t.same(literalGroups([huge]), [[lit(huge)]], 'a single value longer than the budget is a group of its own');
});

t.test('tenant keys are names QuestDB takes, and two tenants never share one', async (t) => {
  const tenants = ['', 'd', 'a', 'a-b', 'a_b', 'ab', 't_a', 'x_61', '0', '-', '_', 'a'.repeat(50), 'a-'.repeat(25)];
  const keys = tenants.map(tenantKey);
  t.equal(new Set(keys).size, tenants.length, 'distinct');
  for (const k of keys) t.match(k, /^[a-z0-9_]+$/);
  const { inst, ent } = tablesOf('ldbroker', 'a-b');
  t.equal(inst, `ldbroker_inst_v2_${tenantKey('a-b')}`);
  t.equal(ent, `ldbroker_ent_${tenantKey('a-b')}`);
  t.ok(inst.length <= 127, "within QuestDB's name length");
  t.ok(tablesOf('a'.repeat(40), 'a-'.repeat(25)).inst.length <= 127, 'the longest prefix and tenant too');
});

t.test('settings: defaults, and each bad value refused with its option named', async (t) => {
  t.same(settingsOf({}), { host: '127.0.0.1', port: 9000, name: 'ldbroker', buffer: 200_000 });
  t.same(settingsOf({ troeName: 'Hist', troeUser: 'u', troePwd: 'p' }), {
    host: '127.0.0.1',
    port: 9000,
    name: 'hist',
    buffer: 200_000,
    user: 'u',
    pwd: 'p',
  });
  t.throws(() => settingsOf({ troeHost: 'a b' }), /--troeHost/);
  t.throws(() => settingsOf({ troeHost: 'h/x' }), /--troeHost/);
  t.throws(() => settingsOf({ troePort: 65536 }), /--troePort/);
  t.throws(() => settingsOf({ troeName: '1x' }), /--troeName/);
  t.throws(() => settingsOf({ troeName: 'a;b' }), /--troeName/);
  t.throws(() => settingsOf({ troeName: 'a'.repeat(41) }), /--troeName/);
  t.throws(() => settingsOf({ troePwd: 'p' }), /--troePwd needs --troeUser/);
  t.doesNotThrow(() => settingsOf({ troeHost: '[::1]' }));
  t.doesNotThrow(() => settingsOf({ troeHost: 'questdb.example.org' }));
});

t.test('instance ids carry the ms they are made for, in order, and never repeat within or across ms', async (t) => {
  const times = [1_700_000_000_123, 1_700_000_000_123, 5, 1_700_000_000_123, 0, 0, 2 ** 44];
  const ids = times.map((ms) => newInstanceId(ms));
  t.equal(new Set(ids).size, ids.length);
  ids.forEach((id, i) =>
    t.match(id, new RegExp(`^urn:ngsi-ld:attribute:instance:${times[i]!.toString(16).padStart(12, '0')}-[0-9a-f]{6}-[0-9a-f]{16}$`)),
  );
  // Ids of later ms sort after (the hex time is fixed width).
  t.ok(newInstanceId(16) > newInstanceId(15));
});
