// Builds a thread's WorkerContext from the plain WorkerInit: opens the store, starts the @context resolver,
// loads the auth plugin's worker instance, and keeps the subscription index that matches committed changes.
// Used by each pipeline worker, and by the front when it runs inline.
import { loadStorePlugin } from '../store/loader.js';
import { ContextService } from './contexts/context-service.js';
import { threadLogger, type Logger } from '../logger.js';
import { keptContextStore } from './contexts/kept-contexts.js';
import { brokerUrlOf } from './contexts/served-url.js';
import type { Store } from '../store/contract.js';
import { historyPlace, openHistory } from '../history/loader.js';
import { SubscriptionSync } from '../notify/subscription-sync.js';
import { SubscriptionSink } from '../notify/subscription-sink.js';
import { CounterReader } from '../notify/counter-reader.js';
import { BridgeSink } from '../bridge/bridge-sink.js';
import { ChannelReader } from '../bridge/channel-reader.js';
import type { WorkerContext, WorkerInit } from './worker-context.js';

/** The store handle and @context resolver of a thread (pipeline workers, the notifier). */
export async function openStoreAndContexts(init: WorkerInit, logger: Logger): Promise<{ store: Store; contexts: ContextService }> {
  const plugin = await loadStorePlugin(init.config.database, init.config.pluginDir);
  const keepHistory = historyPlace(init.config.troe, init.config.database).kind === 'store';
  const store = await plugin.storeOpen({ options: init.storeOptions, primary: false, log: logger, keepHistory });
  const contexts = new ContextService({
    coreVersion: init.config.coreContext,
    defaultUserContext: init.config.defaultUserContext,
    contextDir: init.config.contextDir,
    log: logger,
    // CIM 009 v1.8 §5.13: kept @contexts live in the store, so every thread serves what any thread added.
    hosted: keptContextStore(store),
    brokerUrl: brokerUrlOf(init.config),
    instance: init.config.instance,
  });
  await contexts.init();
  return { store, contexts };
}

export async function createWorkerContext(init: WorkerInit, thread: string, log?: Logger): Promise<WorkerContext> {
  const logger = log ?? threadLogger(init.config, thread);
  const { store, contexts } = await openStoreAndContexts(init, logger);
  const history = await openHistory(historyPlace(init.config.troe, init.config.database), store, {
    options: init.historyOptions ?? {},
    primary: false,
    log: logger,
    instance: init.config.instance,
    pluginDir: init.config.pluginDir,
  });
  // Loaded only when asked, so a build without the auth feature has no auth code to load.
  const auth = init.config.auth === undefined ? undefined : await (await import('./auth-load.js')).loadPipelineAuth(init, contexts, logger);
  // Subscriptions are matched in this thread against its own index (issue 4), refreshed by broadcast.
  const sync = new SubscriptionSync(
    store,
    contexts,
    logger,
    init.config.instance,
    undefined,
    init.config.brokerUrl,
    init.subscriptionChanges === undefined ? undefined : new Int32Array(init.subscriptionChanges),
  );
  await sync.start();
  sync.refreshEvery(init.config.subCacheIval);
  const changes = new SubscriptionSink(sync, logger);
  changes.ownerFiltered = auth?.keepsOwners === true;
  return {
    config: init.config,
    store,
    history,
    contexts,
    log: logger,
    auth,
    changes,
    counters: new CounterReader(store, init.config.instance, init.config.storeShared ? init.config.brokerId : undefined),
    ...bridgeParts(init.config, contexts.defaultContext.expandTerm.bind(contexts.defaultContext)),
  };
}

/** seed 001 §1: with bridges loaded, the sink of bound attributes' writes and the reader of GET /channels. */
function bridgeParts(config: WorkerInit['config'], expand: (term: string) => string): Pick<WorkerContext, 'bridges' | 'channels'> {
  if (config.bridges.length === 0) return {};
  const channels = config.bridgeSetup?.channels ?? [];
  return {
    bridges: channels.length === 0 ? undefined : new BridgeSink(channels, expand, config.instance),
    channels: new ChannelReader(config.instance),
  };
}
