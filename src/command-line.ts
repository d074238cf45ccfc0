// The command line read: argv and BROKER_* against the broker's option table and those of the plugins it names (the
// auth plugin, the store plugin, a history plugin: loaded to know them). Light on purpose: main.ts answers -u and
// refuses bad options without loading the broker.
import { brokerConfig, brokerOptions, earlyOption, parseBridgeNames, parseOptions, splitArgs, usage, OptionError } from './options.js';
import type { BrokerConfig } from './config.js';
import type { OptionSpec, OptionValues } from './plugin/contract.js';
import type { AuthPluginModule } from './auth/contract.js';
import type { StorePluginModule } from './store/contract.js';
import type { HistoryPluginModule } from './history/contract.js';
import type { BridgePluginModule } from './bridge/contract.js';
import { BridgeConfigError, loadBridgeModule, readBridgeConfig } from './bridge/loader.js';
import { loadStorePlugin } from './store/loader.js';
import { historyPlace, loadHistoryModule, type HistoryPlace } from './history/loader.js';
import { FEATURES } from './features.js';
import { CorsPolicy, parseCorsOrigin } from './front/cors.js';
import { loadUws } from './front/server-uws.js';

/** A start-up refusal. main.ts prints `ldbroker: <message>` (unless the reason is logged already) and exits 1. */
export class StartError extends Error {
  constructor(
    message: string,
    readonly logged = false,
  ) {
    super(message);
  }
}

/** The command line read: the option values against the broker's table and its plugins' (loaded to know them). */
export interface BrokerArgs {
  values: OptionValues;
  /** The text of -u for these tables. */
  usage: string;
  authModule: AuthPluginModule | undefined;
  storePlugin: StorePluginModule;
  /** Where --troe keeps history: nowhere, in the store, or in a history plugin (historyModule). */
  troePlace: HistoryPlace;
  historyModule: HistoryPluginModule | undefined;
  /** The values of each plugin's own options. */
  authOptions: Record<string, unknown>;
  storeOptions: Record<string, unknown>;
  historyOptions: Record<string, unknown>;
  /** The bridge plugins of --bridges, by name. */
  bridgeModules: Map<string, BridgePluginModule>;
}

/**
 * The command a table of options is read for: the broker's (every option, an auth plugin), or another program of
 * the broker's that takes its store and history options by the broker's names (the importer, seed 001 §4.3).
 */
export interface ArgsProgram {
  name: string;
  /** The program's own options: the broker's table, or a selection of it plus the program's own. */
  options: readonly OptionSpec[];
  /** Whether --auth loads an auth plugin (the broker only). */
  auth: boolean;
}

const BROKER_PROGRAM: ArgsProgram = { name: 'ldbroker', options: brokerOptions, auth: true };

/**
 * Reads argv as main.ts does; the auth plugin named there (or by BROKER_AUTH) is loaded for its options, the store
 * and history plugins named by --database and --troe for theirs.
 */
export async function readArgs(
  argv: readonly string[],
  env: NodeJS.ProcessEnv = process.env,
  program: ArgsProgram = BROKER_PROGRAM,
): Promise<BrokerArgs> {
  let raw;
  try {
    raw = splitArgs(argv);
  } catch (e) {
    throw new StartError(e instanceof Error ? e.message : String(e));
  }
  // The auth plugin's options exist only when it is loaded (seed 000 §5.1 rule 4): load it before parsing.
  const authName = (raw.given.get('auth') as string | undefined) ?? env.BROKER_AUTH;
  let authModule: AuthPluginModule | undefined;
  if (program.auth && typeof authName === 'string' && authName !== '') {
    if (!FEATURES.auth) throw new StartError('--auth: this broker was built without authorization (FEATURES=noauth)');
    const { loadAuthModule } = await import('./auth/loader.js');
    try {
      authModule = await loadAuthModule(authName, (raw.given.get('pluginDir') as string | undefined) ?? env.BROKER_PLUGINDIR);
    } catch (e) {
      throw new StartError(e instanceof Error ? e.message : String(e));
    }
  }
  // The store plugin and a history plugin beside it declare their options too: loaded before parsing as well.
  let storePlugin: StorePluginModule;
  let troePlace: HistoryPlace;
  let historyModule: HistoryPluginModule | undefined;
  try {
    const pluginDir = (raw.given.get('pluginDir') as string | undefined) ?? env.BROKER_PLUGINDIR;
    const database = earlyOption(raw, 'database', env) as string;
    troePlace = historyPlace(earlyOption(raw, 'troe', env) as string, database);
    storePlugin = await loadStorePlugin(database, pluginDir);
    if (troePlace.kind === 'plugin') historyModule = await loadHistoryModule(troePlace.nameOrPath, pluginDir);
  } catch (e) {
    throw new StartError(e instanceof Error ? e.message : String(e));
  }
  const tables = [...program.options, ...(authModule?.options ?? []), ...(storePlugin.options ?? []), ...(historyModule?.options ?? [])];
  let values: OptionValues;
  try {
    values = parseOptions(raw, tables, env);
  } catch (e) {
    if (e instanceof OptionError) throw new StartError(e.message);
    throw e;
  }
  // seed 001 §1: the bridges of --bridges, loaded now so an unknown name stops the start.
  const bridgeModules = new Map<string, BridgePluginModule>();
  try {
    const pluginDir = values.pluginDir as string | undefined;
    for (const name of parseBridgeNames(values.bridges as string | undefined))
      bridgeModules.set(name, await loadBridgeModule(name, pluginDir));
  } catch (e) {
    if (e instanceof OptionError || e instanceof BridgeConfigError) throw new StartError(e.message);
    throw e;
  }
  const pick = (specs: readonly OptionSpec[] | undefined): Record<string, unknown> => {
    const picked: Record<string, unknown> = {};
    for (const spec of specs ?? []) picked[spec.name] = values[spec.name];
    return picked;
  };
  return {
    values,
    usage: usage(tables, program.name),
    authModule,
    storePlugin,
    troePlace,
    historyModule,
    authOptions: pick(authModule?.options),
    storeOptions: pick(storePlugin.options),
    historyOptions: pick(historyModule?.options),
    bridgeModules,
  };
}

/** The configuration of the option values, and the refusals that need more than one option (or the platform). */
export function readConfig(args: BrokerArgs): { config: BrokerConfig; cors: CorsPolicy | undefined } {
  let config: BrokerConfig;
  let cors: CorsPolicy | undefined;
  try {
    config = brokerConfig(
      args.values,
      args.storePlugin.storeInMemory?.(args.storeOptions) ?? false,
      args.storePlugin.storeShared?.(args.storeOptions) ?? false,
    );
    if (config.corsOrigin !== undefined) cors = new CorsPolicy(parseCorsOrigin(config.corsOrigin), config.corsMaxAge);
  } catch (e) {
    if (e instanceof OptionError) throw new StartError(e.message);
    throw e;
  }
  // seed 001 §2.2: the bridges' configuration file, checked whole before anything starts.
  try {
    const setup = readBridgeConfig(config.bridgeConfig, config.bridges);
    for (const [name, mod] of args.bridgeModules) mod.bridgeCheckConfig?.(setup.members[name]);
    config.bridgeSetup = setup;
  } catch (e) {
    throw new StartError(e instanceof Error ? e.message : String(e));
  }
  // seed 000 §4.1 rule 7: the policy API needs uWebSockets.js; the node:http front refuses it at start-up.
  if (config.policyApiPort !== undefined) {
    if (!FEATURES.policyApi) throw new StartError('--policyApiPort: this broker was built without the policy API (FEATURES=nopolicyApi)');
    if (config.httpServer === 'node')
      throw new StartError('--policyApiPort needs the uWebSockets.js server and cannot be used with --httpServer node');
    const { reason } = loadUws();
    if (reason !== undefined)
      throw new StartError(`--policyApiPort needs uWebSockets.js, which cannot be loaded on this platform: ${reason}`);
  }
  return { config, cors };
}
