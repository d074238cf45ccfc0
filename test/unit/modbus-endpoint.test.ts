// The Modbus Channel endpoint (seed 001 §2.4): [unit/<n>/]coil|discrete|holding|input/<address>, 0-based or the 1-based
// 1xxxx / 3xxxx / 4xxxx forms recognised by their range; anything else a reason (the Channel is dormant with it).
import t from 'tap';
import { ModbusEndpointError, parseModbusEndpoint } from '../../src/plugins/bridge/modbus/endpoint.js';

t.test('0-based addresses of every table, the unit from the Bridge or from unit/<n>/', async (t) => {
  t.same(parseModbusEndpoint('coil/0', 1), { unit: 1, table: 'coil', address: 0 });
  t.same(parseModbusEndpoint('discrete/17', 1), { unit: 1, table: 'discrete', address: 17 });
  t.same(parseModbusEndpoint('holding/65535', 3), { unit: 3, table: 'holding', address: 65535 });
  t.same(parseModbusEndpoint('input/9999', 1), { unit: 1, table: 'input', address: 9999 });
  t.same(parseModbusEndpoint('unit/7/holding/2', 1), { unit: 7, table: 'holding', address: 2 });
  t.same(parseModbusEndpoint('unit/0/coil/2', 1), { unit: 0, table: 'coil', address: 2 });
  t.same(parseModbusEndpoint('unit/255/input/0', 1), { unit: 255, table: 'input', address: 0 });
});

t.test('the 1-based forms of device manuals, by their range', async (t) => {
  t.same(parseModbusEndpoint('holding/40001', 1).address, 0, '40001 is holding register 0');
  t.same(parseModbusEndpoint('holding/49999', 1).address, 9998);
  t.same(parseModbusEndpoint('input/30001', 1).address, 0);
  t.same(parseModbusEndpoint('input/30010', 1).address, 9);
  t.same(parseModbusEndpoint('discrete/10001', 1).address, 0);
  t.same(parseModbusEndpoint('discrete/19999', 1).address, 9998);
  t.same(parseModbusEndpoint('holding/400001', 1).address, 0, '6 digits: 400001-465536');
  t.same(parseModbusEndpoint('holding/465536', 1).address, 65535);
  t.same(parseModbusEndpoint('input/300100', 1).address, 99);
  t.same(parseModbusEndpoint('discrete/165536', 1).address, 65535);
  t.same(parseModbusEndpoint('holding/40000', 1).address, 40000, 'below the range: 0-based');
  t.same(parseModbusEndpoint('holding/50000', 1).address, 50000, 'above the range: 0-based');
  t.same(parseModbusEndpoint('holding/30001', 1).address, 30001, "another table's range: 0-based");
  t.same(parseModbusEndpoint('coil/10001', 1).address, 10001, 'a coil address is always 0-based (0xxxx is not told by range)');
});

t.test('what is no endpoint is a reason', async (t) => {
  const bad: Array<[string, RegExp]> = [
    ['', /is needed/],
    ['holding', /is needed/],
    ['holding/', /address must be/],
    ['register/1', /is needed/],
    ['Holding/1', /is needed/],
    ['holding/1/2', /is needed/],
    ['holding/-1', /address must be/],
    ['holding/1.5', /address must be/],
    ['holding/0x10', /address must be/],
    ['holding/ 1', /address must be/],
    ['holding/1e3', /address must be/],
    ['holding/65536', /out of the holding table/],
    ['coil/65536', /out of the coil table/],
    ['holding/465537', /address must be/],
    ['input/400001', /out of the input table/],
    ['holding/1234567', /address must be/],
    ['unit/256/holding/1', /unit must be/],
    ['unit/-1/holding/1', /unit must be/],
    ['unit//holding/1', /unit must be/],
    ['unit/1/holding', /is needed/],
    ['unit/1/unit/2/holding/1', /is needed/],
    ['/holding/1', /is needed/],
    ['holding//1', /is needed/],
  ];
  for (const [endpoint, reason] of bad)
    t.throws(() => parseModbusEndpoint(endpoint, 1), { constructor: ModbusEndpointError, message: reason }, `'${endpoint}'`);
  const long = 'holding/' + '1'.repeat(5000);
  let reason = '';
  try {
    parseModbusEndpoint(long, 1);
  } catch (e) {
    reason = (e as Error).message;
  }
  t.ok(reason.length > 0 && reason.length < 300, 'a long endpoint is refused, cut in the reason');
});
