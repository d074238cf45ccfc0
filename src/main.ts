#!/usr/bin/env node
// Start-up: options → plugins → store → pool → servers; clean shutdown on SIGTERM/SIGINT
// (stop accepting, finish in-flight requests, flush the store, exit 0).
import { brokerOptions, brokerConfig, earlyOption, parseOptions, splitArgs, usage, OptionError, type BrokerConfig } from './options.js';
import type { OptionSpec, OptionValues } from './plugin/contract.js';
import { createLogger, type Logger } from './logger.js';
import { loadStorePlugin } from './store/loader.js';
import { createRunner, type PipelineRunner } from './runner.js';
import { dispatch, type FrontDeps } from './front/dispatch.js';
import { createUwsServer, loadUws } from './front/server-uws.js';
import { createNodeServer } from './front/server-node.js';
import type { HttpServer } from './front/http-server.js';
import { startHealthServer, type HealthState } from './front/health.js';
import { CorsPolicy, parseCorsOrigin } from './front/cors.js';
import type { WorkerInit } from './pipeline/worker-context.js';
import type { FrontAuth } from './front/front-auth.js';
import { FEATURES } from './features.js';
import { ContextService } from './pipeline/contexts/context-service.js';
import type { Store, StorePluginModule } from './store/contract.js';
import type { History, HistoryPluginModule } from './history/contract.js';
import { historyPlace, loadHistoryModule, openHistory, type HistoryPlace } from './history/loader.js';
import { startNotifier, type NotifierHandle } from './notify/notifier.js';
import type { PolicyApiServer } from './policyapi/server.js';

function fail(message: string): never {
  process.stderr.write(`ldbroker: ${message}\n`);
  process.exit(1);
}

async function main(): Promise<void> {
  let raw;
  try {
    raw = splitArgs(process.argv.slice(2));
  } catch (e) {
    fail(e instanceof Error ? e.message : String(e));
  }
  // The auth plugin's options exist only when it is loaded (seed 000 §5.1 rule 4): load it before parsing.
  const authName = (raw.given.get('auth') as string | undefined) ?? process.env.BROKER_AUTH;
  let authModule;
  if (typeof authName === 'string' && authName !== '') {
    if (!FEATURES.auth) fail('--auth: this broker was built without authorization (FEATURES=noauth)');
    const { loadAuthModule } = await import('./auth/loader.js');
    try {
      authModule = await loadAuthModule(authName, (raw.given.get('pluginDir') as string | undefined) ?? process.env.BROKER_PLUGINDIR);
    } catch (e) {
      fail(e instanceof Error ? e.message : String(e));
    }
  }
  // The store plugin and a history plugin beside it declare their options too: loaded before parsing as well.
  let storePlugin: StorePluginModule;
  let troePlace: HistoryPlace;
  let historyModule: HistoryPluginModule | undefined;
  try {
    const pluginDir = (raw.given.get('pluginDir') as string | undefined) ?? process.env.BROKER_PLUGINDIR;
    const database = earlyOption(raw, 'database') as string;
    troePlace = historyPlace(earlyOption(raw, 'troe') as string, database);
    storePlugin = await loadStorePlugin(database, pluginDir);
    if (troePlace.kind === 'plugin') historyModule = await loadHistoryModule(troePlace.nameOrPath, pluginDir);
  } catch (e) {
    fail(e instanceof Error ? e.message : String(e));
  }
  const authSpecs: OptionSpec[] = authModule?.options ?? [];
  const tables = [...brokerOptions, ...authSpecs, ...(storePlugin.options ?? []), ...(historyModule?.options ?? [])];
  let values: OptionValues;
  try {
    values = parseOptions(raw, tables);
  } catch (e) {
    if (e instanceof OptionError) fail(e.message);
    throw e;
  }
  if (values.u === true) {
    process.stdout.write(usage(tables));
    process.exit(0);
  }
  const pick = (specs: readonly OptionSpec[] | undefined): Record<string, unknown> => {
    const picked: Record<string, unknown> = {};
    for (const spec of specs ?? []) picked[spec.name] = values[spec.name];
    return picked;
  };
  const storeOptions = pick(storePlugin.options);
  let config: BrokerConfig;
  let cors: CorsPolicy | undefined;
  try {
    config = brokerConfig(values, storePlugin.storeInMemory?.(storeOptions) ?? false);
    if (config.corsOrigin !== undefined) cors = new CorsPolicy(parseCorsOrigin(config.corsOrigin), config.corsMaxAge);
  } catch (e) {
    if (e instanceof OptionError) fail(e.message);
    throw e;
  }
  // seed 000 §4.1 rule 7: the policy API needs uWebSockets.js; the node:http front refuses it at start-up.
  if (config.policyApiPort !== undefined) {
    if (!FEATURES.policyApi) fail('--policyApiPort: this broker was built without the policy API (FEATURES=nopolicyApi)');
    if (config.httpServer === 'node') fail('--policyApiPort needs the uWebSockets.js server and cannot be used with --httpServer node');
    const { reason } = loadUws();
    if (reason !== undefined) fail(`--policyApiPort needs uWebSockets.js, which cannot be loaded on this platform: ${reason}`);
  }
  const log = createLogger(config.logLevel, 'front');
  const authOptions = pick(authSpecs);
  const historyOptions = pick(historyModule?.options);

  const health: HealthState = { ready: false, startedAt: Date.now() };
  let healthServer: import('node:http').Server | undefined;
  if (config.healthPort !== undefined) {
    const started = await startHealthServer(health, config.host, config.healthPort);
    healthServer = started.server;
    log.info({ port: started.port }, 'health port listening');
  }

  const storeParams = { options: storeOptions, primary: true, log, keepHistory: troePlace.kind === 'store' };
  const prepared = (await storePlugin.storePrepare?.(storeParams)) ?? {};
  storeParams.options = { ...storeParams.options, ...prepared };
  const store = await storePlugin.storeOpen(storeParams);
  health.store = store;
  // From here a start-up failure also closes the store and removes a RAM store's directory (it would stay on tmpfs).
  const failWithStore = async (message: string): Promise<never> => {
    await store.close();
    await storePlugin.storeDispose?.(storeParams);
    fail(message);
  };
  // The history's primary instance: opened here first, so a history that cannot open stops the start.
  let history: History | undefined;
  try {
    history = await openHistory(troePlace, store, { options: historyOptions, primary: true, log, module: historyModule });
  } catch (e) {
    await failWithStore(e instanceof Error ? e.message : String(e));
  }

  let policyApi: PolicyApiServer | undefined;
  if (config.policyApiPort !== undefined) {
    const { startPolicyApi } = await import('./policyapi/server.js');
    try {
      policyApi = await startPolicyApi(loadUws().uws!, store, { host: config.policyApiHost, port: config.policyApiPort, maxBodySize: config.maxBodySize, log });
    } catch (e) {
      log.error({ err: e }, 'the policy API cannot start');
      await store.close();
      await storePlugin.storeDispose?.(storeParams);
      process.exit(1);
    }
  }

  const contexts = new ContextService({ coreVersion: config.coreContext, defaultUserContext: config.defaultUserContext, contextDir: config.contextDir, log });
  try {
    await contexts.init();
  } catch (e) {
    await failWithStore(e instanceof Error ? e.message : String(e));
  }

  let frontAuth: FrontAuth | undefined;
  if (authModule !== undefined) {
    const expandDefault = (term: string): string => contexts.defaultContext.expandTerm(term);
    const { registerAuth } = await import('./auth/loader.js');
    const { createFrontAuth } = await import('./front/front-auth.js');
    try {
      const driver = await registerAuth(authModule, { options: authOptions as OptionValues, primary: true, log, expandDefault });
      const shutdown = (authModule as { authShutdown?: () => Promise<void> | void }).authShutdown;
      frontAuth = createFrontAuth(driver, expandDefault, async () => { await shutdown?.(); });
      log.info({ plugin: driver.name, abi: driver.abiVersion }, 'auth plugin loaded');
    } catch (e) {
      await failWithStore(e instanceof Error ? e.message : String(e));
    }
  }

  // The server is chosen before the threads start, so what they report (GET /version) is the server that runs.
  let uws: ReturnType<typeof loadUws>['uws'];
  if (config.httpServer === 'uws') {
    const loaded = loadUws();
    uws = loaded.uws;
    if (uws === undefined) {
      log.warn({ reason: loaded.reason }, 'uWebSockets.js cannot be loaded on this platform: serving with node:http');
      config.httpServer = 'node';
    }
  }

  const init: WorkerInit = { config, storeOptions: storeParams.options, authOptions, historyOptions };
  let runner: PipelineRunner;
  try {
    runner = await createRunner(init, log);
  } catch (e) {
    log.error({ err: e }, 'the pipeline cannot start');
    await store.close();
    await storePlugin.storeDispose?.(storeParams);
    process.exit(1);
  }
  health.runner = runner;
  let notifier: NotifierHandle;
  try {
    notifier = await startNotifier(init, log);
  } catch (e) {
    log.error({ err: e }, 'the notifier cannot start');
    await runner.close();
    await store.close();
    await storePlugin.storeDispose?.(storeParams);
    process.exit(1);
  }
  health.notifier = notifier;

  const deps: FrontDeps = { runner, auth: frontAuth, cors, log, inFlight: { count: 0 } };
  const handler = (ex: Parameters<typeof dispatch>[0]): void => { void dispatch(ex, deps); };
  const server: HttpServer = uws !== undefined
    ? createUwsServer(uws, handler, { maxBodySize: config.maxBodySize })
    : createNodeServer(handler, { maxBodySize: config.maxBodySize });
  let port: number;
  try {
    port = await server.listen(config.host, config.port);
  } catch (e) {
    log.error({ err: e }, 'cannot listen');
    await runner.close();
    await store.close();
    await storePlugin.storeDispose?.(storeParams);
    process.exit(1);
  }
  health.ready = true;
  log.info({ port, host: config.host, server: server.kind, pool: runner.stats(), store: store.status() }, 'listening');

  let stopping = false;
  const stop = async (signal: string): Promise<void> => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'shutting down');
    health.ready = false;
    server.close();
    await policyApi?.close();
    const deadline = Date.now() + 10_000;
    while (deps.inFlight.count > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    if (deps.inFlight.count > 0) log.warn({ requests: deps.inFlight.count }, 'requests still in flight at the shutdown deadline');
    await notifier.stop();
    await shutdownAll(log, runner, store, frontAuth, history);
    await storePlugin.storeDispose?.(storeParams);
    healthServer?.close();
    server.closeAll();
    log.info('stopped');
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
}

async function shutdownAll(log: Logger, runner: PipelineRunner, store: Store, auth: FrontAuth | undefined, history: History | undefined): Promise<void> {
  try {
    await runner.close();
    await auth?.close();
    if (history !== store.history) await history?.close?.();
    await store.flush();
    await store.close();
  } catch (e) {
    log.error({ err: e }, 'error during shutdown');
  }
}

void main();
