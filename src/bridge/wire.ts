// What crosses threads for bridges (seed 001 §1, §4.2): writes of bound attributes from pipeline threads to the
// bridge host, questions about the Channels (GET /channels) and their answer, and samples from the bridge host to the
// main thread, which runs them as writes. Plain data only.
import type { ChannelInfoEntry } from './contract.js';

/** Pipeline threads post OutboundWrites here; the bridge host publishes them. */
export const BRIDGE_OUT_CHANNEL = 'ldbroker:bridge-out';
/** Pipeline threads ask the bridge host for its Channels here (ChannelsAsked); it answers on the same channel. */
export const CHANNELS_CHANNEL = 'ldbroker:channels';

/** A channel of one broker (BrokerConfig.instance): brokers sharing a process never hear each other. */
export function bridgeChannelName(channel: string, instance: string | undefined): string {
  return instance === undefined ? channel : `${channel}:${instance}`;
}

/** One write of a bound attribute: the value of its default instance, to publish on the Channel's endpoint. */
export interface OutboundWrite {
  bridge: string;
  endpoint: string;
  value: unknown;
  /**
   * The write's sequence in the store (WriteEvent.seq: of two writes of one entity, the later committed has the
   * greater): pipeline threads post after their own commit, so writes can arrive out of commit order, and the host
   * publishes a Channel's write only when it is not older than the last it saw (bridge/write-order.ts).
   */
  seq: number;
}

export interface OutboundWrites {
  writes: OutboundWrite[];
}

/** A Channel as GET /channels lists it (seed 001 §2.2, §4.1). */
export interface ChannelListing {
  bridge: string;
  endpoint: string;
  entityId: string;
  entityType: string;
  attribute: string;
  channelInfo: ChannelInfoEntry[];
  state: 'active' | 'dormant';
  /** Why it is dormant. */
  reason?: string;
}

export interface ChannelsAsked {
  kind: 'ask';
  asker: number;
  seq: number;
}

export interface ChannelsAnswered {
  kind: 'answer';
  asker: number;
  seq: number;
  channels: ChannelListing[];
}

/** From the bridge-host thread to the main thread. */
export type BridgeHostMessage =
  | { kind: 'ready' }
  | { kind: 'stopped' }
  | { kind: 'failed'; error: string }
  | {
      kind: 'sample';
      entityId: string;
      entityType: string;
      attribute: string;
      value: unknown;
      /** ISO 8601: the read's time (SampleMeta.publishTime). */
      observedAt?: string;
      subProperties?: Record<string, string | number | boolean>;
    };
