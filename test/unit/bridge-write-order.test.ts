// Issue 20: writes of a bound attribute reach the device in the store's commit order. Each pipeline thread posts its
// writes to the bridge host after its own commit (bridge/bridge-sink.ts), so two writes committed A then B on two
// threads can arrive B then A; the host (bridge/host-thread.ts, in this process with a recording bridge plugin)
// must then leave B, the last committed value, on the device. The two sinks' messages are put out of order here by
// hand, which is what two threads did in the CI run that flaked.
import t, { type Test } from 'tap';
import { tempEmbdb } from './helpers/embdb.js';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BroadcastChannel, MessageChannel } from 'node:worker_threads';
import { runBridgeHost } from '../../src/bridge/host-thread.js';
import { BridgeSink } from '../../src/bridge/bridge-sink.js';
import { BRIDGE_OUT_CHANNEL, bridgeChannelName, type OutboundWrite } from '../../src/bridge/wire.js';
import type { BrokerConfig } from '../../src/config.js';
import type { ConfiguredChannel } from '../../src/bridge/contract.js';
import type { WriteEvent } from '../../src/store/contract.js';

const ATTR = 'https://example.org/level';
const ID = 'urn:ngsi-ld:Tank:1';

/** What the recording plugin saw: [endpoint, value] per publish; and a way to make it send a sample. */
interface Recorded {
  published: Array<[string, unknown]>;
  sample?: (endpoint: string, value: unknown) => void;
}
const g = globalThis as unknown as { __orderRecorded?: Recorded };

const pluginDir = mkdtempSync(join(tmpdir(), 'ldbroker-write-order-'));
mkdirSync(join(pluginDir, 'bridge'));
writeFileSync(join(pluginDir, 'package.json'), '{"type": "module"}');
writeFileSync(
  join(pluginDir, 'bridge', 'rec.js'),
  `export const bridgeAbi = 9;
export function bridgeOpen(config, host) {
  const rec = globalThis.__orderRecorded;
  rec.sample = (endpoint, value) => host.sample(endpoint, value);
  return {
    channelAdd: () => ({ state: 'active' }),
    start: async () => {},
    publish: (endpoint, value) => { rec.published.push([endpoint, value]); },
    stop: async () => {},
  };
}
`,
);
t.teardown(() => rmSync(pluginDir, { recursive: true, force: true }));

const channels: ConfiguredChannel[] = [
  { bridge: 'rec', endpoint: 'holding/1', entityId: ID, entityType: 'Tank', attribute: ATTR, channelInfo: [] },
  { bridge: 'rec', endpoint: 'holding/2', entityId: 'urn:ngsi-ld:Tank:2', entityType: 'Tank', attribute: ATTR, channelInfo: [] },
  { bridge: 'rec', endpoint: 'sentinel', entityId: 'urn:ngsi-ld:Sentinel', entityType: 'Tank', attribute: ATTR, channelInfo: [] },
];

let instances = 0;

/** A bridge host in this process; `post` writes on its outbound channel, `flush` waits until it handled them. */
async function startHost(t: Test): Promise<{
  rec: Recorded;
  instance: string;
  post: (writes: OutboundWrite[]) => void;
  flush: () => Promise<Array<[string, unknown]>>;
}> {
  const rec: Recorded = { published: [] };
  g.__orderRecorded = rec;
  const instance = `write-order-${process.pid}-${++instances}`;
  const config = {
    bridges: ['rec'],
    pluginDir,
    bridgeSetup: { members: {}, channels },
    instance,
    logLevel: 'silent',
    maxBodySize: 1 << 20,
  } as unknown as BrokerConfig;
  const { port1, port2 } = new MessageChannel();
  const ready = new Promise<void>((resolve) => port1.on('message', (m: { kind?: string }) => m.kind === 'ready' && resolve()));
  await runBridgeHost({ config }, port2);
  await ready;
  const out = new BroadcastChannel(bridgeChannelName(BRIDGE_OUT_CHANNEL, instance));
  let sentinels = 0;
  t.teardown(async () => {
    out.close();
    const stopped = new Promise<void>((resolve) => port1.on('message', (m: { kind?: string }) => m.kind === 'stopped' && resolve()));
    port1.postMessage({ kind: 'stop' });
    await stopped;
    port1.close();
  });
  return {
    rec,
    instance,
    post: (writes) => out.postMessage({ writes }),
    // Messages of one sender arrive in the order posted: once the sentinel is published, those before it were handled.
    flush: async () => {
      const n = ++sentinels;
      out.postMessage({ writes: [{ bridge: 'rec', endpoint: 'sentinel', value: n, seq: n }] });
      const deadline = Date.now() + 5000;
      while (!rec.published.some(([e, v]) => e === 'sentinel' && v === n) && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 5));
      return rec.published.filter(([e]) => e !== 'sentinel');
    },
  };
}

/** Two writes of the level, committed one after the other by embdb: their events, with the store's own seq. */
async function committedTwice(t: Test, a: number, b: number): Promise<[WriteEvent, WriteEvent]> {
  const store = tempEmbdb(t, { troe: 'none' });
  const write = async (value: number): Promise<WriteEvent> => {
    const events: WriteEvent[] = [];
    await store.mutateEntity(
      '',
      ID,
      (current) => ({
        next: {
          id: ID,
          type: ['https://example.org/Tank'],
          createdAt: current?.createdAt ?? '2024-01-01T00:00:00.000Z',
          modifiedAt: '2024-01-01T00:00:00.000Z',
          [ATTR]: [{ type: 'Property', value }],
        },
        result: undefined,
      }),
      { events },
    );
    return events[0]!;
  };
  return [await write(a), await write(b)];
}

t.test('two threads post A then B out of order: the device gets B, the last committed, and not A after it', async (t) => {
  const host = await startHost(t);
  const [a, b] = await committedTwice(t, 7, 8);
  t.ok(a.seq < b.seq, 'embdb: the later write has the greater seq');
  t.same(a.change.written[ATTR], ['@none'], 'the default instance was written');
  // One sink per pipeline thread; thread 2 (which committed B) posts first.
  const thread1 = new BridgeSink(channels, (term) => term, host.instance);
  const thread2 = new BridgeSink(channels, (term) => term, host.instance);
  t.teardown(() => {
    thread1.close();
    thread2.close();
  });
  thread2.publish([b]);
  await host.flush();
  thread1.publish([a]);
  t.same(await host.flush(), [['holding/1', 8]], 'only B reached the device: A came late and was older');
});

t.test('the sink tags each write with the store sequence of its event', async (t) => {
  const [a] = await committedTwice(t, 1, 2);
  const instance = `write-order-sink-${process.pid}`;
  const listener = new BroadcastChannel(bridgeChannelName(BRIDGE_OUT_CHANNEL, instance));
  const got = new Promise<unknown>((resolve) => {
    listener.onmessage = (m: unknown) => resolve((m as { data: unknown }).data);
  });
  const sink = new BridgeSink(channels, (term) => term, instance);
  t.teardown(() => {
    sink.close();
    listener.close();
  });
  sink.publish([a]);
  t.same(await got, { writes: [{ bridge: 'rec', endpoint: 'holding/1', value: 1, seq: a.seq }] });
});

t.test('in order, every write goes out; writes of one call share a seq and go out in their order', async (t) => {
  const host = await startHost(t);
  host.post([{ bridge: 'rec', endpoint: 'holding/1', value: 1, seq: 10 }]);
  host.post([{ bridge: 'rec', endpoint: 'holding/1', value: 2, seq: 11 }]);
  host.post([
    { bridge: 'rec', endpoint: 'holding/1', value: 3, seq: 12 },
    { bridge: 'rec', endpoint: 'holding/1', value: 4, seq: 12 },
  ]);
  t.same(await host.flush(), [
    ['holding/1', 1],
    ['holding/1', 2],
    ['holding/1', 3],
    ['holding/1', 4],
  ]);
});

t.test('the order is per Channel: a late write of one Channel is not held back by another Channel', async (t) => {
  const host = await startHost(t);
  host.post([{ bridge: 'rec', endpoint: 'holding/1', value: 1, seq: 1_000_000 }]);
  host.post([{ bridge: 'rec', endpoint: 'holding/2', value: 2, seq: 5 }]);
  host.post([{ bridge: 'rec', endpoint: 'holding/1', value: 3, seq: 999_999 }]);
  host.post([{ bridge: 'rec', endpoint: 'holding/1', value: 4, seq: 1_000_001 }]);
  t.same(await host.flush(), [
    ['holding/1', 1],
    ['holding/2', 2],
    ['holding/1', 4],
  ]);
});

t.test("a sample's own write counts in the order: a client write committed before it and arriving after it is dropped", async (t) => {
  const host = await startHost(t);
  host.rec.sample!('holding/1', 42);
  // The sample's write (seq 20) comes back first, then a client's write committed before it (seq 19), then a later one.
  host.post([{ bridge: 'rec', endpoint: 'holding/1', value: 42, seq: 20 }]);
  host.post([{ bridge: 'rec', endpoint: 'holding/1', value: 5, seq: 19 }]);
  host.post([{ bridge: 'rec', endpoint: 'holding/1', value: 6, seq: 21 }]);
  t.same(await host.flush(), [['holding/1', 6]], 'no echo, nothing older than the device value in the store');
});

t.test('writes of unknown Channels and messages of the wrong shape are ignored', async (t) => {
  const host = await startHost(t);
  host.post([{ bridge: 'rec', endpoint: 'holding/9', value: 1, seq: 1 }]);
  host.post([{ bridge: 'other', endpoint: 'holding/1', value: 1, seq: 1 }]);
  host.post(undefined as unknown as OutboundWrite[]);
  host.post([{ bridge: 'rec', endpoint: 'holding/1', value: 2, seq: 2 }]);
  t.same(await host.flush(), [['holding/1', 2]]);
});
