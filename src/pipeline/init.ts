// Builds a thread's WorkerContext from the plain WorkerInit: opens the store, starts the @context resolver,
// loads the auth plugin's worker instance. Used by each pipeline worker, and by the front when it runs inline.
import { loadStorePlugin } from '../store/loader.js';
import { ContextResolver } from '../ngsild/context/context-resolver.js';
import { createLogger, type Logger } from '../logger.js';
import { brokerUrlOf } from '../ops/contexts.js';
import type { WorkerContext, WorkerInit } from './worker-context.js';

export async function createWorkerContext(init: WorkerInit, thread: string, log?: Logger): Promise<WorkerContext> {
  const logger = log ?? createLogger(init.config.logLevel, thread);
  const plugin = await loadStorePlugin(init.config.database, init.config.pluginDir);
  const store = await plugin.storeOpen({ options: init.storeOptions, primary: false, log: logger });
  const contexts = new ContextResolver({
    coreVersion: init.config.coreContext,
    defaultUserContext: init.config.defaultUserContext,
    contextDir: init.config.contextDir,
    log: logger,
    // CIM 009 v1.8 §5.13: kept @contexts live in the store, so every thread serves what any thread added.
    hosted: store.collection('', 'jsonldContexts'),
    brokerUrl: brokerUrlOf(init.config),
  });
  await contexts.init();
  // Loaded only when asked, so a build without the auth feature has no auth code to load.
  const auth = init.config.auth === undefined ? undefined : await (await import('./auth-load.js')).loadPipelineAuth(init, contexts, logger);
  return { config: init.config, store, contexts, log: logger, auth, changes: undefined };
}
