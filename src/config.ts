// The broker's configuration as every layer reads it: the resolved options (src/options.ts fills it from the command
// line and the environment, and only main hands it down), and the error of an option value that cannot be used.

import type { BridgeSetup } from './bridge/contract.js';

/** An option value the broker cannot use: start-up stops with its message. */
export class OptionError extends Error {}

/** Options every thread of the broker needs, resolved (defaults that depend on others applied). */
export interface BrokerConfig {
  port: number;
  host: string;
  database: string;
  /** `--troe`: none, the store's name (its own history), or a history plugin's name or path. */
  troe: string;
  /** `--temporalInstanceCap`: instances per attribute in one temporal answer before it is paged (206). */
  temporalInstanceCap: number;
  /** `--snapshotMaxEntities`: entities one Snapshot holds (CIM 009 v1.9.1 §4.3.7; README "Snapshots"). */
  snapshotMaxEntities: number;
  connectionPoolSize: number;
  /** --frontOps, auto resolved: 'cheap' runs the one-entity operations on the front thread (split-runner.ts). */
  frontOps: 'none' | 'cheap';
  httpServer: 'uws' | 'node';
  healthPort?: number;
  /** `--metrics`: requests counted and timed per operation (README "Metrics"). */
  metrics: boolean;
  /** --subCacheIval: seconds between reloads of the subscriptions from the store (0: never). */
  subCacheIval: number;
  policyApiPort?: number;
  policyApiHost: string;
  logLevel: string;
  defaultUserContext?: string;
  contextDir?: string;
  /** --brokerUrl, as parseBrokerUrl gives it (no trailing slash, no default port). */
  brokerUrl?: string;
  corsOrigin?: string;
  corsMaxAge: number;
  maxBodySize: number;
  maxPendingRequests: number;
  /** WebSocket transport (front/ws/): requests running per connection, bytes waiting, unread bytes before closing. */
  wsMaxInFlight: number;
  wsMaxQueueBytes: number;
  wsMaxBackpressure: number;
  notificationQueueBytes: number;
  pluginDir?: string;
  auth?: string;
  coreContext: '1.6' | '1.7' | '1.8' | '1.9';
  /** `--bridges`: the bridge plugins loaded (seed 001 §1), by name; `mqtt` also delivers mqtt[s]:// notifications. */
  bridges: string[];
  /** `--bridgeConfig`: the bridges' configuration file (seed 001 §2.2). */
  bridgeConfig?: string;
  /** The configuration file as read and checked at start (command-line.ts); every thread gets it. */
  bridgeSetup?: BridgeSetup;
  /** `--insecureNotif`: an mqtts:// (or https://) notification endpoint's self-signed certificate is accepted (seed 001 §5). */
  insecureNotif: boolean;
  /**
   * --contextSourceAlias: this broker's name among context sources (CIM 009 v1.8.1 §5.15.1): the pseudonym of its Via
   * entries when it forwards (§6.3.18), by which it knows a request it forwarded once coming back.
   */
  contextSourceAlias: string;
  /** --forwardTimeout: milliseconds a context source has to answer a forwarded request, unless its registration says. */
  forwardTimeout: number;
  /**
   * --requestTimeout: milliseconds a request handed to the pool may take before it is answered 503 and cancelled
   * (pool-runner.ts, the watchdog of a lost reply); 0: none.
   */
  requestTimeout: number;
  /**
   * Set by createBroker (src/broker.ts): names this broker's BroadcastChannels, so brokers sharing a process (the
   * API tests run several) never hear each other.
   */
  instance?: string;
  /**
   * Set by createBroker: this broker among those sharing a store (random, as brokers on other hosts may share a pid),
   * naming its own subscription counters there (notify/shared-counters.ts).
   */
  brokerId?: string;
  /** The store is shared with other brokers (StorePluginModule.storeShared). */
  storeShared: boolean;
  /** Set by createBroker when the log goes elsewhere than standard output: the channel other threads send lines on. */
  logChannel?: string;
}
