// The Modbus bridge's member of --bridgeConfig (seed 001 §2.2; the defaults are ours: README) and its poll schedule
// (seed 001 §2.4 `poll`) and status names (§2.4, §7), in-process.
import t from 'tap';
import { bridgeCheckConfig } from '../../src/plugins/bridge/modbus/index.js';
import { modbusServerConfig } from '../../src/plugins/bridge/modbus/server-config.js';
import { PollSchedule } from '../../src/plugins/bridge/modbus/poll-schedule.js';
import { statusOfError } from '../../src/plugins/bridge/modbus/status.js';

t.test('modbus.server: host needed; port 502, unit 1, pollMs 1000, timeoutMs 1000 by default', async (t) => {
  t.same(modbusServerConfig({ server: { host: 'plc-1.local' } }), {
    host: 'plc-1.local',
    port: 502,
    unit: 1,
    pollMs: 1000,
    timeoutMs: 1000,
  });
  t.same(modbusServerConfig({ server: { host: '::1', port: 5020, unit: 0, pollMs: 10, timeoutMs: 60000 } }), {
    host: '::1',
    port: 5020,
    unit: 0,
    pollMs: 10,
    timeoutMs: 60000,
  });
  t.same(modbusServerConfig({ server: { host: '10.0.0.2', unit: 255 }, ngsild: { topics: {} } }).unit, 255);
});

t.test('a server of the wrong shape stops the broker with one line naming the member', async (t) => {
  const bad: Array<[unknown, RegExp]> = [
    [undefined, /needs a member modbus with its server/],
    [null, /modbus must be an object/],
    [[], /modbus must be an object/],
    [{}, /modbus.server is needed/],
    [{ server: 'plc:502' }, /modbus.server must be an object/],
    [{ server: { host: 'h' }, topics: {} }, /modbus.topics: not a member \(server, ngsild\)/],
    [{ Server: { host: 'h' } }, /modbus.Server: not a member/],
    [{ server: {} }, /modbus.server.host: a host name or IP address is needed/],
    [{ server: { host: '' } }, /host: a host name/],
    [{ server: { host: 'a b' } }, /host: a host name/],
    [{ server: { host: 'h/x' } }, /host: a host name/],
    [{ server: { host: 'h\n' } }, /host: a host name/],
    [{ server: { host: 'h'.repeat(254) } }, /host: a host name/],
    [{ server: { host: 5 } }, /host: a host name/],
    [{ server: { host: 'h', port: 0 } }, /modbus.server.port: an integer 1-65535 is needed/],
    [{ server: { host: 'h', port: 65536 } }, /port: an integer 1-65535/],
    [{ server: { host: 'h', port: '502' } }, /port: an integer/],
    [{ server: { host: 'h', port: 502.5 } }, /port: an integer/],
    [{ server: { host: 'h', unit: 256 } }, /unit: an integer 0-255/],
    [{ server: { host: 'h', unit: -1 } }, /unit: an integer 0-255/],
    [{ server: { host: 'h', pollMs: 9 } }, /pollMs: an integer 10-86400000/],
    [{ server: { host: 'h', pollMs: null } }, /pollMs: an integer/],
    [{ server: { host: 'h', timeoutMs: 0 } }, /timeoutMs: an integer 10-60000/],
    [{ server: { host: 'h', timeoutMs: 60001 } }, /timeoutMs: an integer 10-60000/],
    [{ server: { host: 'h', retries: 3 } }, /modbus.server.retries: not a member/],
    [{ server: { host: 'h', uri: 'modbus://h' } }, /modbus.server.uri: not a member/],
  ];
  for (const [config, line] of bad) t.throws(() => bridgeCheckConfig(config), { message: line }, JSON.stringify(config) ?? 'undefined');
});

t.test('the poll schedule: each period in turn, the earliest first, late Channels round robin', async (t) => {
  const s = new PollSchedule<{ name: string; due: number; pollMs: number }>();
  t.equal(s.peek(), undefined, 'empty');
  const a = { name: 'a', due: 0, pollMs: 100 };
  const b = { name: 'b', due: 0, pollMs: 100 };
  const c = { name: 'c', due: 0, pollMs: 30 };
  s.add(a);
  s.add(b);
  s.add(c);
  const order: string[] = [];
  let now = 0;
  for (let i = 0; i < 9; i++) {
    const next = s.peek()!;
    now = Math.max(now, next.due);
    order.push(`${s.take(now)!.name}@${now}`);
  }
  t.same(order, ['a@0', 'b@0', 'c@0', 'c@30', 'c@60', 'c@90', 'a@100', 'b@100', 'c@120'], 'each at its own period');
  // Late (a device slower than the polls): due again now, in turn.
  const late = new PollSchedule<{ name: string; due: number; pollMs: number }>();
  for (const name of ['x', 'y', 'z']) late.add({ name, due: 0, pollMs: 10 });
  const turns: string[] = [];
  for (let i = 0; i < 6; i++) turns.push(late.take(1000 + i * 50)!.name);
  t.same(turns, ['x', 'y', 'z', 'x', 'y', 'z'], 'round robin: none starves');
  // Many takes: the queue compacts and keeps its order.
  const big = new PollSchedule<{ name: string; due: number; pollMs: number }>();
  for (let i = 0; i < 3; i++) big.add({ name: String(i), due: 0, pollMs: 1 });
  let seen = '';
  for (let i = 0; i < 3000; i++) seen = big.take(i)!.name;
  t.equal(seen, '2', 'the 3000th take is the third Channel');
});

t.test('modbusStatus of each failure', async (t) => {
  const codes: Array<[number, string]> = [
    [1, 'illegalFunction'],
    [2, 'illegalAddress'],
    [3, 'illegalValue'],
    [4, 'deviceFailure'],
    [5, 'acknowledge'],
    [6, 'deviceBusy'],
    [7, 'negativeAcknowledge'],
    [8, 'memoryParityError'],
    [10, 'gatewayPathUnavailable'],
    [11, 'gatewayTargetFailed'],
    [9, 'exception'],
    [99, 'exception'],
  ];
  for (const [modbusCode, status] of codes) t.equal(statusOfError({ modbusCode, message: 'x' }), status, `exception ${modbusCode}`);
  t.equal(statusOfError({ errno: 'ETIMEDOUT', message: 'Timed out' }), 'timeout');
  t.equal(statusOfError({ errno: 'ECONNREFUSED', message: 'Port Not Open' }), 'timeout', 'no connection: no answer');
  t.equal(statusOfError(new Error('Data length error, expected 7 got 5')), 'badResponse');
  t.equal(statusOfError(null), 'badResponse');
});
