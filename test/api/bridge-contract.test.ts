// The bridge contract (seed 001 §1, §2.2, §9) with a plugin of the tests (test/fixtures/bridge/recorder.js) from
// --pluginDir: channelInfo reaches the plugin by channelAddInfo from bridge ABI 9 only; its verdicts show in
// GET /channels; its samples become writes; a write of a bound attribute reaches its publish; an ABI newer than the
// broker's and a refusal of its bridgeCheckConfig stop the start.
import t from 'tap';
import { copyFileSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startBroker, runBroker, runBrokerHere, call, NGSI } from './helpers/broker.js';
import { repoPath } from '../helpers/repo.js';

const FIXTURES = repoPath('test/fixtures/bridge/');
const EMBDB = repoPath('dist/src/plugins/store/embdb/index.js');
const pluginDir = mkdtempSync(join(tmpdir(), 'ldbroker-bridge-plugins-'));
mkdirSync(join(pluginDir, 'bridge'));
mkdirSync(join(pluginDir, 'store'));
for (const f of ['recorder.js', 'recorder8.js', 'recorder10.js']) copyFileSync(join(FIXTURES, f), join(pluginDir, 'bridge', f));
// --pluginDir names every plugin's folder: the store is the built-in embdb. ES modules, as the broker's.
writeFileSync(join(pluginDir, 'package.json'), '{"type": "module"}\n');
writeFileSync(join(pluginDir, 'store', 'embdb.js'), `export * from ${JSON.stringify(EMBDB)};\n`);

let n = 0;
function configFile(doc: unknown): string {
  const file = join(pluginDir, `config-${++n}.json`);
  writeFileSync(file, JSON.stringify(doc));
  return file;
}

const topics = (bridge: string): Record<string, unknown> => ({
  [bridge]: {
    ngsild: {
      topics: {
        'a/active': {
          entityId: 'urn:ngsi-ld:Thing:a',
          entityType: 'Thing',
          attribute: 'level',
          channelInfo: [{ key: 'sample', value: '{"x": [1, 2]}' }],
        },
        'a/dormant': {
          entityId: 'urn:ngsi-ld:Thing:b',
          entityType: 'Thing',
          attribute: 'level',
          channelInfo: [{ key: 'verdict', value: 'dormant' }],
        },
        'a/refused': {
          entityId: 'urn:ngsi-ld:Thing:c',
          entityType: 'Thing',
          attribute: 'level',
          channelInfo: [{ key: 'verdict', value: 'refused' }],
        },
      },
    },
  },
});

t.test('bridge ABI 9: channelInfo is handed over unchanged; dormant and refused verdicts; samples written; writes published', async (t) => {
  const broker = await startBroker(['--pluginDir', pluginDir, '--bridges', 'recorder', '--bridgeConfig', configFile(topics('recorder'))]);
  t.teardown(() => broker.stop());
  const list = JSON.parse((await call(broker, 'GET', `${NGSI}/channels`)).text) as Array<Record<string, unknown>>;
  t.same(
    list.map((c) => [c.endpoint, c.state, c.reason]),
    [
      ['a/active', 'active', undefined],
      ['a/dormant', 'dormant', 'asked by channelInfo (1 entries)'],
    ],
  );
  t.same(list[0]!.channelInfo, [{ key: 'sample', value: '{"x": [1, 2]}' }], 'GET /channels shows the channelInfo as written');
  let r = await call(broker, 'GET', `${NGSI}/entities/urn:ngsi-ld:Thing:a?options=keyValues`);
  for (let i = 0; i < 100 && r.status !== 200; i++) {
    await new Promise((res) => setTimeout(res, 50));
    r = await call(broker, 'GET', `${NGSI}/entities/urn:ngsi-ld:Thing:a?options=keyValues`);
  }
  t.same(JSON.parse(r.text), { id: 'urn:ngsi-ld:Thing:a', type: 'Thing', level: { x: [1, 2] } }, 'the sample is the value');
  const put = await call(broker, 'PATCH', `${NGSI}/entities/urn:ngsi-ld:Thing:a/attrs`, {
    body: { level: { type: 'Property', value: 5 } },
  });
  t.equal(put.status, 204);
  const deadline = Date.now() + 5000;
  while (!broker.logs.some((l) => l.includes('recorder publish')) && Date.now() < deadline) await new Promise((res) => setTimeout(res, 20));
  const published = broker.logs.filter((l) => l.includes('recorder publish')).map((l) => JSON.parse(l) as Record<string, unknown>);
  t.match(published, [{ endpoint: 'a/active', value: 5 }], 'the write is published, the sample was not');
  const b = await call(broker, 'POST', `${NGSI}/entities`, {
    body: { id: 'urn:ngsi-ld:Thing:b', type: 'Thing', level: { type: 'Property', value: 1 } },
  });
  t.equal(b.status, 201);
  await new Promise((res) => setTimeout(res, 300));
  t.notOk(
    broker.logs.some((l) => l.includes('recorder publish') && l.includes('a/dormant')),
    'a dormant Channel publishes nothing',
  );
});

t.test('a plugin of bridge ABI 8 is not handed channelInfo', async (t) => {
  const broker = await startBroker(['--pluginDir', pluginDir, '--bridges', 'recorder8', '--bridgeConfig', configFile(topics('recorder8'))]);
  t.teardown(() => broker.stop());
  const list = JSON.parse((await call(broker, 'GET', `${NGSI}/channels`)).text) as Array<Record<string, unknown>>;
  t.same(
    list.map((c) => [c.endpoint, c.state]),
    [
      ['a/active', 'active'],
      ['a/dormant', 'active'],
      ['a/refused', 'active'],
    ],
    'no channelAddInfo: no verdict from the channelInfo',
  );
  t.same(list[1]!.channelInfo, [{ key: 'verdict', value: 'dormant' }], 'listed with its channelInfo all the same');
});

t.test('a bridge ABI newer than the broker, or a refusal of bridgeCheckConfig, stops the start: one line, exit 1', async (t) => {
  const newer = await runBroker(['--port', '0', '--pluginDir', pluginDir, '--bridges', 'recorder10']);
  t.equal(newer.code, 1);
  t.match(newer.stderr.trim(), /^ldbroker: --bridges: bridge 'recorder10' wants bridge ABI 10; this broker speaks 9$/);
  // As main.ts runs the command, in this process (no process start); the one above is the spawned command.
  const refused = await runBrokerHere([
    '--port',
    '0',
    '--pluginDir',
    pluginDir,
    '--bridges',
    'recorder',
    '--bridgeConfig',
    configFile({ recorder: { refuse: true } }),
  ]);
  t.equal(refused.code, 1);
  t.match(refused.stderr.trim(), /^ldbroker: --bridgeConfig: recorder.refuse is set$/);
});

t.test(
  'every route that writes the attribute publishes it; a temporal append, another instance or another attribute does not',
  async (t) => {
    const doc = {
      recorder: {
        ngsild: { topics: { 'r/level': { entityId: 'urn:ngsi-ld:Thing:r', entityType: 'Thing', attribute: 'level' } } },
      },
    };
    const broker = await startBroker([
      '--pluginDir',
      pluginDir,
      '--bridges',
      'recorder',
      '--bridgeConfig',
      configFile(doc),
      '--troe',
      'embdb',
    ]);
    t.teardown(() => broker.stop());
    const published = async (n: number): Promise<unknown[]> => {
      const deadline = Date.now() + 3000;
      for (;;) {
        const got = broker.logs.filter((l) => l.includes('recorder publish')).map((l) => (JSON.parse(l) as { value: unknown }).value);
        if (got.length >= n || Date.now() > deadline) return got;
        await new Promise((r) => setTimeout(r, 20));
      }
    };
    const id = 'urn:ngsi-ld:Thing:r';
    const P = (value: unknown): Record<string, unknown> => ({ type: 'Property', value });
    const steps: Array<[string, string, unknown]> = [
      ['POST', `${NGSI}/entities`, { id, type: 'Thing', level: P(1) }],
      ['PATCH', `${NGSI}/entities/${id}/attrs/level`, P(2)],
      ['PATCH', `${NGSI}/entities/${id}/attrs`, { level: P(3) }],
      ['POST', `${NGSI}/entities/${id}/attrs`, { level: P(4) }],
      ['PUT', `${NGSI}/entities/${id}/attrs/level`, P(5)],
      ['PATCH', `${NGSI}/entities/${id}`, { level: P(6) }],
      ['PUT', `${NGSI}/entities/${id}`, { id, type: 'Thing', level: P(7) }],
      ['POST', `${NGSI}/entityOperations/upsert`, [{ id, type: 'Thing', level: P(8) }]],
      ['POST', `${NGSI}/entityOperations/update`, [{ id, type: 'Thing', level: P(9) }]],
      ['POST', `${NGSI}/entityOperations/merge`, [{ id, type: 'Thing', level: P(10) }]],
      ['PUT', `${NGSI}/entities/${id}/attrs/level`, { type: 'Relationship', object: 'urn:ngsi-ld:Thing:other' }],
    ];
    for (const [method, path, body] of steps) {
      const r = await call(broker, method, path, { body });
      t.ok(r.status < 300, `${method} ${path}: ${r.status} ${r.text}`);
    }
    t.same(await published(11), [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 'urn:ngsi-ld:Thing:other'], 'each write published, in order');
    const quiet: Array<[string, string, unknown]> = [
      ['POST', `${NGSI}/temporal/entities/${id}/attrs`, { level: [{ ...P(99), observedAt: '2020-01-01T00:00:00Z' }] }],
      ['POST', `${NGSI}/entities/${id}/attrs`, { level: { ...P(98), datasetId: 'urn:ngsi-ld:Dataset:x' } }],
      ['POST', `${NGSI}/entities/${id}/attrs`, { other: P(97) }],
      ['DELETE', `${NGSI}/entities/${id}/attrs/level`, undefined],
    ];
    for (const [method, path, body] of quiet) {
      const r = await call(broker, method, path, body === undefined ? {} : { body });
      t.ok(r.status < 300, `${method} ${path}: ${r.status} ${r.text}`);
    }
    await new Promise((r) => setTimeout(r, 300));
    t.equal((await published(12)).length, 11, 'none of those is published');
  },
);
