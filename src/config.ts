// The broker's configuration as every layer reads it: the resolved options (src/options.ts fills it from the command
// line and the environment, and only main hands it down), and the error of an option value that cannot be used.

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
  connectionPoolSize: number;
  httpServer: 'uws' | 'node';
  healthPort?: number;
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
  notificationQueueBytes: number;
  pluginDir?: string;
  auth?: string;
  coreContext: '1.6' | '1.7' | '1.8' | '1.9';
  /**
   * --contextSourceAlias: this broker's name among context sources (CIM 009 v1.8.1 §5.15.1): the pseudonym of its Via
   * entries when it forwards (§6.3.18), by which it knows a request it forwarded once coming back.
   */
  contextSourceAlias: string;
  /** --forwardTimeout: milliseconds a context source has to answer a forwarded request, unless its registration says. */
  forwardTimeout: number;
  /**
   * Set by createBroker (src/broker.ts): names this broker's BroadcastChannels, so brokers sharing a process (the
   * API tests run several) never hear each other.
   */
  instance?: string;
  /** Set by createBroker when the log goes elsewhere than standard output: the channel other threads send lines on. */
  logChannel?: string;
}
