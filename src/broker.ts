// A broker as a value: options → plugins → store → pipeline runner → notifier → servers, with inject() (a request
// through the real dispatcher without a socket), listen() and close(). main.ts adds argv, signals and the exit
// status; a program may run several in one process (the API tests do), each with channels of its own.
import { BroadcastChannel } from 'node:worker_threads';
import { randomBytes } from 'node:crypto';
import type { Server } from 'node:http';
import type { BrokerConfig } from './config.js';
import type { OptionValues } from './plugin/contract.js';
import { readArgs, readConfig, StartError, type BrokerArgs } from './command-line.js';
import { createLogger, type LogDestination, type Logger } from './logger.js';
import { createRunner, type PipelineRunner } from './runner.js';
import { dispatch, type FrontDeps } from './front/dispatch.js';
import { createUwsServer, loadUws } from './front/server-uws.js';
import { createNodeServer } from './front/server-node.js';
import { addWebSocketRoute, type WsRoute } from './front/ws/uws-websocket.js';
import { WsNotifications } from './front/ws/notifications.js';
import { channelName } from './notify/channel.js';
import { WEBSOCKET_CHANNEL, type WebSocketNotification } from './notify/websocket-sender.js';
import type { HttpServer } from './front/http-server.js';
import { startHealthServer, type HealthState } from './front/health.js';
import { RequestCounts } from './front/request-counts.js';
import { StoreSizesCache } from './front/store-sizes.js';
import { InjectExchange, type InjectReply, type InjectRequest } from './front/inject.js';
import type { WorkerInit } from './pipeline/worker-context.js';
import type { FrontAuth } from './front/front-auth.js';
import { ContextService } from './pipeline/contexts/context-service.js';
import type { Store } from './store/contract.js';
import type { History } from './history/contract.js';
import { openHistory } from './history/loader.js';
import { startNotifier, type NotifierHandle } from './notify/notifier.js';
import type { PolicyApiServer } from './policyapi/server.js';
import type { BridgeHostHandle } from './bridge/bridge-host.js';

export type { InjectReply, InjectRequest } from './front/inject.js';
export { readArgs, readConfig, StartError, type BrokerArgs } from './command-line.js';

export interface CreateOptions {
  /** Where BROKER_* options are read (default process.env). */
  env?: NodeJS.ProcessEnv;
  /**
   * Start the servers as the broker starts (main.ts): the health port first, so /live answers while the store opens.
   * Otherwise nothing listens until listen().
   */
  listen?: boolean;
  /** Where the log lines of every thread go; default standard output. */
  logDestination?: LogDestination;
  /**
   * The Node options the broker's threads start with; default this process's, as node:worker_threads has it. A
   * program whose own preloads the threads do not need (a test runner's TypeScript loader) passes [].
   */
  threadExecArgv?: string[];
}

export interface Ports {
  port: number;
  healthPort: number | undefined;
  policyApiPort: number | undefined;
}

export interface Broker {
  readonly config: BrokerConfig;
  readonly log: Logger;
  /** A request through the dispatcher and pipeline, as a server would hand it over; answered as it would write it. */
  inject(request: InjectRequest): Promise<InjectReply>;
  /** Starts the servers not yet listening (NGSI-LD API, --healthPort, --policyApiPort); resolves with their ports. */
  listen(): Promise<Ports>;
  /** Stops accepting, waits for requests in flight (10 s at most), stops the notifier and threads, flushes the store. */
  close(reason?: string): Promise<void>;
}

let brokersStarted = 0;

export async function createBroker(argv: readonly string[] | BrokerArgs, opts: CreateOptions = {}): Promise<Broker> {
  const args = Array.isArray(argv) ? await readArgs(argv as readonly string[], opts.env) : (argv as BrokerArgs);
  const { authModule, storePlugin, troePlace, authOptions, historyOptions } = args;
  const { config, cors } = readConfig(args);
  config.instance = `${process.pid}.${++brokersStarted}`;
  config.brokerId = randomBytes(6).toString('hex');
  const relay = opts.logDestination === undefined ? undefined : new LogRelay(config, opts.logDestination);
  const log = createLogger(config.logLevel, 'front', opts.logDestination);

  const counts = config.metrics ? new RequestCounts() : undefined;
  const health: HealthState = { ready: false, startedAt: Date.now(), metrics: { counts }, log };
  let healthServer: Server | undefined;
  let healthPort: number | undefined;
  const listenHealth = async (): Promise<void> => {
    if (config.healthPort === undefined || healthServer !== undefined) return;
    const started = await startHealthServer(health, config.host, config.healthPort);
    healthServer = started.server;
    healthPort = started.port;
    log.info({ port: started.port }, 'health port listening');
  };
  try {
    if (opts.listen === true) await listenHealth();
  } catch (e) {
    relay?.close();
    throw e;
  }

  // From here a start-up failure also closes what is open, and removes a RAM store's directory (it would stay on tmpfs).
  const undo: Array<() => Promise<void> | void> = [
    () => relay?.close(),
    () => {
      healthServer?.close();
    },
  ];
  const failed = async (error: unknown, logAs?: string): Promise<never> => {
    if (logAs !== undefined) log.error({ err: error }, logAs);
    for (const step of undo.reverse()) await step();
    if (error instanceof StartError) throw error;
    throw logAs !== undefined
      ? new StartError(`${logAs}: ${error instanceof Error ? error.message : String(error)}`, true)
      : new StartError(error instanceof Error ? error.message : String(error));
  };

  const storeParams = {
    options: args.storeOptions,
    primary: true,
    log,
    keepHistory: troePlace.kind === 'store',
    brokerId: config.brokerId,
  };
  // A store that cannot open (a bad --dbName, an unusable --dbDir) refuses the start in one line, as a bad option.
  let store: Store;
  try {
    const prepared = (await storePlugin.storePrepare?.(storeParams)) ?? {};
    storeParams.options = { ...storeParams.options, ...prepared };
    store = await storePlugin.storeOpen(storeParams);
  } catch (e) {
    return failed(e);
  }
  health.store = store;
  health.metrics.sizes = new StoreSizesCache(store, log);
  undo.push(async () => {
    await store.close();
    await storePlugin.storeDispose?.(storeParams);
  });
  // The history's primary instance: opened here first, so a history that cannot open stops the start.
  let history: History | undefined;
  try {
    history = await openHistory(troePlace, store, {
      options: historyOptions,
      primary: true,
      log,
      instance: config.instance,
      module: args.historyModule,
    });
  } catch (e) {
    return failed(e);
  }
  undo.push(async () => {
    if (history !== store.history) await history?.close?.();
  });
  health.metrics.history = history;

  let policyApi: PolicyApiServer | undefined;
  const listenPolicyApi = async (): Promise<void> => {
    if (config.policyApiPort === undefined || policyApi !== undefined) return;
    const { startPolicyApi } = await import('./policyapi/server.js');
    policyApi = await startPolicyApi(loadUws().uws!, store, {
      host: config.policyApiHost,
      port: config.policyApiPort,
      maxBodySize: config.maxBodySize,
      log,
      shared: config.storeShared,
    });
    undo.push(() => policyApi?.close());
  };
  if (opts.listen === true) {
    try {
      await listenPolicyApi();
    } catch (e) {
      return failed(e, 'the policy API cannot start');
    }
  }

  const contexts = new ContextService({
    coreVersion: config.coreContext,
    defaultUserContext: config.defaultUserContext,
    contextDir: config.contextDir,
    log,
    instance: config.instance,
  });
  try {
    await contexts.init();
  } catch (e) {
    return failed(e);
  }

  let frontAuth: FrontAuth | undefined;
  if (authModule !== undefined) {
    const expandDefault = (term: string): string => contexts.defaultContext.expandTerm(term);
    const { registerAuth } = await import('./auth/loader.js');
    const { createFrontAuth } = await import('./front/front-auth.js');
    try {
      const driver = await registerAuth(authModule, { options: authOptions as OptionValues, primary: true, log, expandDefault });
      const shutdown = (authModule as { authShutdown?: () => Promise<void> | void }).authShutdown;
      frontAuth = createFrontAuth(driver, expandDefault, async () => {
        await shutdown?.();
      });
      log.info({ plugin: driver.name, abi: driver.abiVersion }, 'auth plugin loaded');
    } catch (e) {
      return failed(e);
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

  const init: WorkerInit = {
    config,
    storeOptions: storeParams.options,
    authOptions,
    historyOptions,
    subscriptionChanges: new SharedArrayBuffer(Int32Array.BYTES_PER_ELEMENT),
  };
  let runner: PipelineRunner;
  try {
    runner = await createRunner(init, log, opts.threadExecArgv);
  } catch (e) {
    return failed(e, 'the pipeline cannot start');
  }
  health.runner = runner;
  health.metrics.runner = runner;
  undo.push(() => runner.close());
  let notifier: NotifierHandle;
  try {
    notifier = await startNotifier(init, log, opts.threadExecArgv);
  } catch (e) {
    return failed(e, 'the notifier cannot start');
  }
  health.notifier = notifier;
  health.metrics.notificationHosts = () => notifier.hostStats();
  undo.push(() => notifier.stop());
  // seed 001 §1: the bridges' I/O on a thread of its own; their samples are written through the runner.
  let bridgeHost: BridgeHostHandle | undefined;
  if (config.bridges.length > 0) {
    try {
      const { startBridgeHost } = await import('./bridge/bridge-host.js');
      bridgeHost = await startBridgeHost(config, runner, log, opts.threadExecArgv);
    } catch (e) {
      return failed(e, 'the bridge host cannot start');
    }
    undo.push(() => bridgeHost?.stop());
  }

  const deps: FrontDeps = { runner, auth: frontAuth, cors, log, inFlight: { count: 0 }, counts };
  const handler = (ex: Parameters<typeof dispatch>[0]): void => {
    void dispatch(ex, deps);
  };
  const wsNotifications = new WsNotifications(
    (deliver) => {
      const channel = new BroadcastChannel(channelName(WEBSOCKET_CHANNEL, config.instance));
      channel.unref();
      channel.onmessage = (e) => deliver((e as MessageEvent).data as WebSocketNotification);
      return () => channel.close();
    },
    runner,
    log,
  );
  undo.push(() => wsNotifications.close());
  // seed 000 §5.1 rule 2: each message of the WebSocket transport runs the request path of an HTTP request.
  const wsRoute: WsRoute = {
    limits: {
      maxBodySize: config.maxBodySize,
      maxInFlight: config.wsMaxInFlight,
      maxQueueBytes: config.wsMaxQueueBytes,
      maxBackpressure: config.wsMaxBackpressure,
    },
    run: (ex) => dispatch(ex, deps),
    log,
    opened: (c) => wsNotifications.opened(c),
    closed: (c) => wsNotifications.closed(c),
  };
  let server: HttpServer | undefined;
  let port: number | undefined;
  const listen = async (): Promise<Ports> => {
    await listenHealth();
    await listenPolicyApi();
    if (server === undefined) {
      const created =
        uws !== undefined
          ? createUwsServer(uws, handler, {
              maxBodySize: config.maxBodySize,
              websocket: (app) => addWebSocketRoute(app, wsRoute),
            })
          : createNodeServer(handler, { maxBodySize: config.maxBodySize });
      port = await created.listen(config.host, config.port);
      server = created;
      health.ready = true;
      log.info({ port, host: config.host, server: created.kind, pool: runner.stats(), store: store.status() }, 'listening');
    }
    return { port: port!, healthPort, policyApiPort: policyApi?.port };
  };
  if (opts.listen === true) {
    try {
      await listen();
    } catch (e) {
      return failed(e, 'cannot listen');
    }
  }

  let closing: Promise<void> | undefined;
  const close = async (reason = 'close'): Promise<void> => {
    log.info({ signal: reason }, 'shutting down');
    health.ready = false;
    server?.close();
    await policyApi?.close();
    const deadline = Date.now() + 10_000;
    while (deps.inFlight.count > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    if (deps.inFlight.count > 0) log.warn({ requests: deps.inFlight.count }, 'requests still in flight at the shutdown deadline');
    // WebSocket connections end while the pipeline still runs, so the subscriptions they made are deleted.
    if (wsNotifications.connectionCount() > 0) {
      server?.closeAll();
      await wsNotifications.settled();
    }
    wsNotifications.close();
    await bridgeHost?.stop();
    await notifier.stop();
    await shutdownAll(log, runner, store, frontAuth, history);
    await storePlugin.storeDispose?.(storeParams);
    healthServer?.close();
    server?.closeAll();
    policyApi?.closeAll();
    log.info('stopped');
    await relay?.drain();
  };

  return {
    config,
    log,
    inject: (request) => InjectExchange.run(request, config.maxBodySize, handler),
    listen,
    close: (reason) => (closing ??= close(reason)),
  };
}

async function shutdownAll(
  log: Logger,
  runner: PipelineRunner,
  store: Store,
  auth: FrontAuth | undefined,
  history: History | undefined,
): Promise<void> {
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

/** The log lines of the broker's other threads (config.logChannel), written to the destination the front writes to. */
class LogRelay {
  private readonly channel: BroadcastChannel;

  constructor(
    config: BrokerConfig,
    private readonly destination: LogDestination,
  ) {
    config.logChannel = `ldbroker:log:${config.instance}`;
    this.channel = new BroadcastChannel(config.logChannel);
    this.channel.unref();
    this.channel.onmessage = (m: unknown) => {
      const line = (m as { data?: unknown }).data;
      if (typeof line === 'string') this.destination.write(line);
    };
  }

  /** Lines the threads sent before they ended are delivered in the turns after: they are written, then the channel closes. */
  async drain(): Promise<void> {
    await new Promise((r) => setImmediate(r));
    await new Promise((r) => setTimeout(r, 0));
    this.close();
  }

  close(): void {
    this.channel.close();
  }
}
