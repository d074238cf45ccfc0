// Bridges' configuration refused at start (seed 001 §1, §2.2): an unknown bridge, a file that does not parse or names
// a bridge not loaded, a server or a Channel description of the wrong shape: one line on standard error, exit 1.
import t from 'tap';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runBrokerHere, runBroker } from './helpers/broker.js';

const dir = mkdtempSync(join(tmpdir(), 'ldbroker-bridge-config-'));
let n = 0;
function file(text: string): string {
  const path = join(dir, `c${++n}.json`);
  writeFileSync(path, text);
  return path;
}
const sensor = { entityId: 'urn:ngsi-ld:Sensor:1', entityType: 'Sensor', attribute: 'temperature' };

const refused: Array<[string, string[], RegExp]> = [
  ['an unknown bridge', ['--bridges', 'modbus2'], /--bridges: unknown bridge 'modbus2'/],
  ['a bridge name of the wrong shape', ['--bridges', 'mqtt,../x'], /--bridges: '..\/x' is not a bridge name/],
  [
    'a file that cannot be read',
    ['--bridges', 'mqtt', '--bridgeConfig', join(dir, 'missing.json')],
    /--bridgeConfig: cannot read .*ENOENT/,
  ],
  ['a file that is not JSON', ['--bridges', 'mqtt', '--bridgeConfig', file('{"mqtt": ')], /--bridgeConfig: .* is not JSON/],
  ['a file that is no object', ['--bridges', 'mqtt', '--bridgeConfig', file('[]')], /must hold a JSON object/],
  [
    'a member naming a bridge not loaded',
    ['--bridges', 'mqtt', '--bridgeConfig', file('{"modbus": {}}')],
    /member 'modbus' names no bridge loaded by --bridges \(mqtt\)/,
  ],
  ['a config without --bridges', ['--bridgeConfig', file('{"mqtt": {}}')], /names no bridge loaded by --bridges \(none\)/],
  [
    'a server URI with a topic',
    ['--bridges', 'mqtt', '--bridgeConfig', file(JSON.stringify({ mqtt: { server: { uri: 'mqtt://u:secret@127.0.0.1/t' } } }))],
    /mqtt.server: a server URI has no topic/,
  ],
  [
    'a server URI that is no MQTT URI, its password unsaid',
    ['--bridges', 'mqtt', '--bridgeConfig', file(JSON.stringify({ mqtt: { server: { uri: 'http://u:secret@h' } } }))],
    /mqtt.server: the uri is not mqtt/,
  ],
  [
    'an unknown MQTT-Version',
    ['--bridges', 'mqtt', '--bridgeConfig', file(JSON.stringify({ mqtt: { server: { uri: 'mqtt://h', 'MQTT-Version': '4' } } }))],
    /MQTT-Version must be mqtt3.1.1 or mqtt5.0/,
  ],
  [
    'an unknown server member',
    ['--bridges', 'mqtt', '--bridgeConfig', file(JSON.stringify({ mqtt: { server: { uri: 'mqtt://h', keepalive: 5 } } }))],
    /mqtt.server.keepalive: not a member/,
  ],
  [
    'topics that are no object',
    ['--bridges', 'mqtt', '--bridgeConfig', file(JSON.stringify({ mqtt: { ngsild: { topics: [] } } }))],
    /mqtt.ngsild.topics must be an object/,
  ],
  [
    'a Channel without entityId',
    ['--bridges', 'mqtt', '--bridgeConfig', file(JSON.stringify({ mqtt: { ngsild: { topics: { a: { ...sensor, entityId: '' } } } } }))],
    /topics\['a'\].entityId: a non-empty string is needed/,
  ],
  [
    'a Channel whose entityId is no URI',
    [
      '--bridges',
      'mqtt',
      '--bridgeConfig',
      file(JSON.stringify({ mqtt: { ngsild: { topics: { a: { ...sensor, entityId: 'sensor 1' } } } } })),
    ],
    /entityId: 'sensor 1' is not a URI/,
  ],
  [
    'a Channel with an unknown member',
    ['--bridges', 'mqtt', '--bridgeConfig', file(JSON.stringify({ mqtt: { ngsild: { topics: { a: { ...sensor, qos: 1 } } } } }))],
    /topics\['a'\].qos: not a member of a Channel/,
  ],
  [
    'channelInfo values that are not strings',
    [
      '--bridges',
      'mqtt',
      '--bridgeConfig',
      file(JSON.stringify({ mqtt: { ngsild: { topics: { a: { ...sensor, channelInfo: [{ key: 'MQTT-QoS', value: 1 }] } } } } })),
    ],
    /channelInfo: each entry must be \{key: string, value: string\}/,
  ],
  ['the modbus bridge without its member', ['--bridges', 'modbus'], /the modbus bridge needs a member modbus with its server/],
  [
    'the modbus bridge without a server',
    ['--bridges', 'modbus', '--bridgeConfig', file(JSON.stringify({ modbus: { ngsild: { topics: { 'holding/0': sensor } } } }))],
    /modbus.server is needed/,
  ],
  [
    'a modbus server port out of range',
    ['--bridges', 'modbus', '--bridgeConfig', file(JSON.stringify({ modbus: { server: { host: '127.0.0.1', port: 70000 } } }))],
    /modbus.server.port: an integer 1-65535 is needed/,
  ],
  [
    'a modbus Channel of the wrong shape (checked by the broker as any bridge)',
    [
      '--bridges',
      'modbus',
      '--bridgeConfig',
      file(
        JSON.stringify({
          modbus: { server: { host: '127.0.0.1' }, ngsild: { topics: { 'holding/0': { ...sensor, channelInfo: [{ key: 'type' }] } } } },
        }),
      ),
    ],
    /channelInfo: each entry must be \{key: string, value: string\}/,
  ],
];

// The first refusal from the command itself (a process: its exit status and standard error); the others as main.ts
// gives them, in this process (runBrokerHere), which spares a process start each.
for (const [i, [what, args, line]] of refused.entries()) {
  t.test(`${what}: one line, exit 1`, async (t) => {
    const r = await (i === 0 ? runBroker : runBrokerHere)(['--port', '0', ...args]);
    t.equal(r.code, 1);
    const lines = r.stderr.trim().split('\n');
    t.equal(lines.length, 1, r.stderr);
    t.match(lines[0], /^ldbroker: /);
    t.match(lines[0], line);
    t.notMatch(r.stderr, /secret/, 'no password in the line');
  });
}
