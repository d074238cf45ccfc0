// The bridge-host thread (seed 001 §1: all bridge I/O runs here, never on the front or a pipeline thread): it opens
// every bridge of --bridges with its member of --bridgeConfig, adds the configured Channels (channelAdd, then from
// bridge ABI 9 channelAddInfo with the channelInfo unchanged), starts the bridges, posts inbound samples to the main
// thread (which runs them as writes), publishes the writes pipeline threads report (per Channel in the store's commit
// order, write-order.ts), and answers GET /channels.
import { BroadcastChannel, type MessagePort } from 'node:worker_threads';
import { threadLogger } from '../logger.js';
import type { BrokerConfig } from '../config.js';
import type { Bridge, BridgeHost, ChannelVerdict, ConfiguredChannel } from './contract.js';
import { loadBridgeModule } from './loader.js';
import { admitWrite, newWriteOrder, type WriteOrder } from './write-order.js';
import {
  BRIDGE_OUT_CHANNEL,
  CHANNELS_CHANNEL,
  bridgeChannelName,
  type BridgeHostMessage,
  type ChannelListing,
  type ChannelsAnswered,
  type ChannelsAsked,
  type OutboundWrites,
} from './wire.js';

/** Samples written and not yet seen back as writes, per Channel: their own writes are not published (echo). */
const PENDING_MAX = 64;
/** Oversized samples logged per Channel: the first, then one in this many. */
const OVERSIZED_LOGGED_EVERY = 1000;

interface HostedChannel {
  configured: ConfiguredChannel;
  bridge: Bridge;
  listing: ChannelListing;
  /** JSON of the samples written whose write events have not come back yet. */
  pending: string[];
  /** Samples dropped for their size. */
  oversized: number;
  /** The store sequence of the last write seen: writes reach the device in commit order (write-order.ts). */
  order: WriteOrder;
}

export interface BridgeHostData {
  config: BrokerConfig;
}

export async function runBridgeHost(data: BridgeHostData, parent: MessagePort): Promise<void> {
  const config = data.config;
  const log = threadLogger(config, 'bridge-host');
  const setup = config.bridgeSetup ?? { members: {}, channels: [] };
  const channels = new Map<string, HostedChannel>();
  const key = (bridge: string, endpoint: string): string => `${bridge}\n${endpoint}`;
  const bridges: Bridge[] = [];

  for (const name of config.bridges) {
    const mod = await loadBridgeModule(name, config.pluginDir);
    const host: BridgeHost = {
      log: log.child({ bridge: name }),
      sample: (endpoint, value, meta) => {
        const hosted = channels.get(key(name, endpoint));
        if (hosted === undefined || hosted.listing.state !== 'active') return;
        const json = JSON.stringify(value) ?? 'null';
        // A sample is a request body of the broker's own: held to --maxBodySize as a client's would be.
        const bytes = Buffer.byteLength(json);
        if (bytes > config.maxBodySize) {
          if (hosted.oversized++ % OVERSIZED_LOGGED_EVERY === 0)
            log.warn(
              { bridge: name, endpoint, bytes, max: config.maxBodySize, dropped: hosted.oversized },
              'sample larger than --maxBodySize dropped',
            );
          return;
        }
        if (hosted.pending.push(json) > PENDING_MAX) hosted.pending.shift();
        const c = hosted.configured;
        const message: BridgeHostMessage = {
          kind: 'sample',
          entityId: c.entityId,
          entityType: c.entityType,
          attribute: c.attribute,
          value,
        };
        if (meta?.publishTime !== undefined && Number.isFinite(meta.publishTime))
          message.observedAt = new Date(meta.publishTime).toISOString();
        if (meta?.subProperties !== undefined) message.subProperties = meta.subProperties;
        parent.postMessage(message);
      },
      channelState: (endpoint, verdict) => {
        const hosted = channels.get(key(name, endpoint));
        if (hosted === undefined) return;
        if (verdict.state === 'refused') {
          channels.delete(key(name, endpoint));
          log.warn({ bridge: name, endpoint, reason: verdict.reason }, 'Channel refused');
          return;
        }
        hosted.listing.state = verdict.state;
        if (verdict.state === 'dormant') hosted.listing.reason = verdict.reason;
        else delete hosted.listing.reason;
      },
    };
    const bridge = mod.bridgeOpen(setup.members[name], host);
    bridges.push(bridge);
    for (const c of setup.channels) {
      if (c.bridge !== name) continue;
      let verdict: ChannelVerdict = bridge.channelAdd(c.endpoint, c);
      // seed 001 §9: channelInfo is handed over from bridge ABI 9, unchanged.
      if (verdict.state === 'active' && mod.bridgeAbi >= 9 && bridge.channelAddInfo !== undefined)
        verdict = bridge.channelAddInfo(c.endpoint, c.channelInfo);
      if (verdict.state === 'refused') {
        // seed 001 §3, §7: not created; said once, at start.
        log.warn({ bridge: name, endpoint: c.endpoint, reason: verdict.reason }, 'Channel refused');
        continue;
      }
      const listing: ChannelListing = {
        bridge: name,
        endpoint: c.endpoint,
        entityId: c.entityId,
        entityType: c.entityType,
        attribute: c.attribute,
        channelInfo: c.channelInfo,
        state: verdict.state,
      };
      if (verdict.state === 'dormant') {
        listing.reason = verdict.reason;
        log.warn({ bridge: name, endpoint: c.endpoint, reason: verdict.reason }, 'Channel dormant');
      }
      channels.set(key(name, c.endpoint), { configured: c, bridge, listing, pending: [], oversized: 0, order: newWriteOrder() });
    }
  }
  for (const bridge of bridges) await bridge.start();

  const out = new BroadcastChannel(bridgeChannelName(BRIDGE_OUT_CHANNEL, config.instance));
  out.onmessage = (m: unknown) => {
    const batch = (m as { data?: OutboundWrites }).data;
    if (batch === undefined || !Array.isArray(batch.writes)) return;
    for (const w of batch.writes) {
      const hosted = channels.get(key(w.bridge, w.endpoint));
      if (hosted === undefined || hosted.listing.state !== 'active') continue;
      // A sample's own write: not sent back to where it came from. It still counts in the order: a client's write
      // committed before it and arriving after it is older than the device's value now in the store.
      const i = hosted.pending.indexOf(JSON.stringify(w.value));
      if (i >= 0) {
        hosted.pending.splice(0, i + 1);
        admitWrite(hosted.order, w.seq);
        continue;
      }
      if (!admitWrite(hosted.order, w.seq)) {
        log.debug(
          { bridge: w.bridge, endpoint: w.endpoint, seq: w.seq, last: hosted.order.lastSeq },
          'bridge write superseded by a later one',
        );
        continue;
      }
      try {
        const refusal = hosted.bridge.publish(w.endpoint, w.value);
        // seed 001 §7: the write stands in the broker; what the bridge could not send is said in the log.
        if (refusal)
          log.warn({ bridge: w.bridge, endpoint: w.endpoint, code: refusal.code, detail: refusal.detail }, 'bridge write refused');
      } catch (e) {
        log.error({ err: e, bridge: w.bridge, endpoint: w.endpoint }, 'bridge publish failed');
      }
    }
  };
  const asks = new BroadcastChannel(bridgeChannelName(CHANNELS_CHANNEL, config.instance));
  asks.onmessage = (m: unknown) => {
    const ask = (m as { data?: ChannelsAsked }).data;
    if (ask?.kind !== 'ask') return;
    const answer: ChannelsAnswered = {
      kind: 'answer',
      asker: ask.asker,
      seq: ask.seq,
      channels: [...channels.values()].map((c) => c.listing),
    };
    asks.postMessage(answer);
  };

  parent.on('message', (msg: { kind?: string }) => {
    if (msg.kind !== 'stop') return;
    void (async () => {
      out.close();
      asks.close();
      await Promise.allSettled(bridges.map((b) => b.stop()));
      parent.postMessage({ kind: 'stopped' } satisfies BridgeHostMessage);
      parent.close();
    })();
  });
  log.debug({ channels: channels.size }, 'bridge host ready');
  parent.postMessage({ kind: 'ready' } satisfies BridgeHostMessage);
}
