// What a pipeline thread holds for its whole life: the store handle, the @context resolver, the auth
// plugin's worker instance and the logger. Built once per thread from plain data (workerData).
import type { BrokerConfig } from '../config.js';
import type { Store } from '../store/contract.js';
import type { History } from '../history/contract.js';
import type { ResolvedContext } from '../ngsild/context/resolved.js';
import type { Logger } from '../logger.js';
import type { PipelineAuth } from './auth-step.js';
import type { ChangeSink } from './change-sink.js';
import type { FetchWaiter } from '../ngsild/context/shared-build.js';
import type { CounterReader } from '../notify/counter-reader.js';
import type { ChannelReader } from '../bridge/channel-reader.js';

/** The @context services the pipeline needs (implemented by the thread's ContextService, contexts/context-service.ts). */
export interface ContextSource {
  readonly defaultContext: ResolvedContext;
  /** `wait` is told when the request has to wait for a remote document (see context-wait.ts). */
  resolve(ctx: unknown, wait?: FetchWaiter): Promise<ResolvedContext>;
  /** Sync fast path for a URL already resolved (the same Link header request after request). */
  resolveCachedUrl(url: string): ResolvedContext | undefined;
}

export interface WorkerContext {
  config: BrokerConfig;
  store: Store;
  /** The history of `--troe` (the store's own, or a plugin's beside it); undefined without one. */
  history: History | undefined;
  contexts: ContextSource;
  log: Logger;
  auth: PipelineAuth | undefined;
  /** Committed entity changes go here (subscriptions, bridges); undefined when nothing listens. */
  changes: ChangeSink | undefined;
  /** Subscriptions' counters as the notifier has them now; undefined: read the store's copy. */
  counters?: CounterReader;
  /** Committed writes of attributes bound to bridge Channels go here (bridge/bridge-sink.ts); undefined: no Channel. */
  bridges?: ChangeSink;
  /** The Channels as the bridge host has them (GET /channels); undefined: no bridge loaded. */
  channels?: ChannelReader;
}

/** Plain data handed to every pipeline thread. */
export interface WorkerInit {
  config: BrokerConfig;
  /**
   * One Int32: the subscription changes announced so far by every thread of the broker. A thread that has applied
   * fewer waits for them before it runs a request (SubscriptionSync.caughtUp): a write right after a subscription's
   * 201 is matched against it whichever thread runs each.
   */
  subscriptionChanges?: SharedArrayBuffer;
  /**
   * The pool's RequestFlags (request-flags.ts): requests the front cancelled, which a thread skips if it has not
   * started them. Only a pool's threads have it.
   */
  requestFlags?: SharedArrayBuffer;
  /** Options for the store plugin, including what the primary's storePrepare returned. */
  storeOptions: Record<string, unknown>;
  /** Options of the auth plugin, parsed by the primary. */
  authOptions?: Record<string, unknown>;
  /** Options of the history plugin beside the store (`--troe <plugin>`), parsed by the primary. */
  historyOptions?: Record<string, unknown>;
}
