// The bridge contract (seed 001 §1, §2.2, §9): what a bridge plugin (`--bridges <name>`) implements and what the
// bridge host gives it. A Bridge is one connection to one foreign server, fixed at start-up; a Channel ties one foreign
// endpoint (an MQTT topic, a Modbus register) to one entity attribute. Every call runs on the bridge-host thread.
import type { PluginLogger } from '../plugin/contract.js';

/**
 * The bridge ABI the broker speaks. Append-only, as the auth ABI: a plugin declares the version it was written for
 * and the host calls nothing newer. 9: channelInfo is handed to the plugin by channelAddInfo (seed 001 §9).
 */
export const BRIDGE_ABI_VERSION = 9;

/** One channelInfo entry (seed 001 §2.2): both strings, never interpreted by the broker. */
export interface ChannelInfoEntry {
  key: string;
  value: string;
}

/** A Channel as the configuration file describes it, under `<bridge>.ngsild.topics.<endpoint>` (seed 001 §2.2). */
export interface ChannelDescription {
  entityId: string;
  entityType: string;
  /** As written in the file: a term of the default @context, or an IRI. */
  attribute: string;
  channelInfo: ChannelInfoEntry[];
}

/**
 * What a bridge says of a Channel (seed 001 §3): active; dormant (listed by GET /channels with the reason, never
 * sampled or published); refused (not created: the reason is logged).
 */
export type ChannelVerdict = { state: 'active' } | { state: 'dormant'; reason: string } | { state: 'refused'; reason: string };

/** What goes with a sample besides its value (both optional: an MQTT message has neither). */
export interface SampleMeta {
  /** When the value was read (seed 001 §6.3 publishTime), ms since the epoch: the attribute's observedAt. */
  publishTime?: number;
  /** Sub-Properties of the attribute written with the value (Modbus: `modbusStatus`, seed 001 §2.4, §6.4). */
  subProperties?: Record<string, string | number | boolean>;
}

/** A write a bridge cannot send (seed 001 §7): logged by the host with its code; the attribute's write stands. */
export interface PublishRefusal {
  code: 'BRIDGE_BAD_INPUT';
  detail: string;
}

/** What the host gives a bridge. */
export interface BridgeHost {
  log: PluginLogger;
  /** An inbound sample (seed 001 §6.2): the Channel's attribute takes `value` through the broker's write path. */
  sample(endpoint: string, value: unknown, meta?: SampleMeta): void;
  /** A Channel's state changed after it was added (a subscription refused by the server, say). */
  channelState(endpoint: string, verdict: ChannelVerdict): void;
}

/** One Bridge: made by bridgeOpen, given its Channels, then started. */
export interface Bridge {
  /** A Channel of the configuration (before start). */
  channelAdd(endpoint: string, channel: ChannelDescription): ChannelVerdict;
  /** ABI 9: the Channel's channelInfo, unchanged (before start; after channelAdd accepted it). */
  channelAddInfo?(endpoint: string, info: readonly ChannelInfoEntry[]): ChannelVerdict;
  /** Opens the connection in the background: resolves at once, a server not up stops nothing (seed 001 §2.3 rule 1). */
  start(): Promise<void>;
  /**
   * A write of an active Channel's attribute (seed 001 §4.2): the value to send to the endpoint. Returns without
   * waiting for the foreign server; a value the endpoint cannot take is a PublishRefusal (BRIDGE_BAD_INPUT).
   */
  publish(endpoint: string, value: unknown): PublishRefusal | undefined | void;
  stop(): Promise<void>;
}

/** A bridge plugin module: `src/plugins/bridge/<name>/index.ts`, or `<pluginDir>/bridge/<name>.js`. */
export interface BridgePluginModule {
  /** The bridge ABI it was written for (BRIDGE_ABI_VERSION or older). */
  bridgeAbi: number;
  /**
   * Checks its member of the configuration file on the main thread at start; a refusal (a thrown Error) stops the
   * broker with its message. Undefined config: the file has no member for it.
   */
  bridgeCheckConfig?(config: unknown): void;
  /** Its Bridge on the bridge-host thread, from its member of the configuration file (undefined: none). */
  bridgeOpen(config: unknown, host: BridgeHost): Bridge;
}

/** A Channel of the configuration file, as every thread is handed it (plain data). */
export interface ConfiguredChannel extends ChannelDescription {
  bridge: string;
  endpoint: string;
}

/** The configuration file read (bridge/loader.ts): each bridge's member, and every Channel described. */
export interface BridgeSetup {
  members: Record<string, unknown>;
  channels: ConfiguredChannel[];
}
