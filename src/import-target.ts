// What the importer (seed 001 §4.3) writes into, opened as the broker opens it: the store plugin and history that
// --database and --troe name, with their own options by the broker's names, and the code of a live write's create
// routines that lives above the migration layer (the @context service, the notification schemes, the registration
// conflict check), handed to runImport as ImportDeps.
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { brokerOptions } from './options.js';
import type { BrokerArgs, ArgsProgram } from './command-line.js';
import type { OptionSpec } from './plugin/contract.js';
import type { History } from './history/contract.js';
import type { Store } from './store/contract.js';
import { openHistory } from './history/loader.js';
import { ContextService } from './pipeline/contexts/context-service.js';
import { embeddedDocument } from './pipeline/contexts/embedded.js';
import { CORE_URLS } from './ngsild/context/core-contexts.js';
import { notificationSchemes } from './notify/transports.js';
import { registrationConflicts } from './ops/registrations.js';
import type { ImportDeps } from './migrate/import/run-import.js';

const broker = (name: string): OptionSpec => brokerOptions.find((s) => s.name === name)!;

/** The importer's options: its own `--file`, and the broker's store, history and plugin options by their names. */
export const IMPORTER: ArgsProgram = {
  name: 'ldbroker-import',
  auth: false,
  options: [
    { name: 'file', type: 'string', help: 'the broker-migration stream to import: a file, or - for standard input (required)' },
    broker('database'),
    broker('troe'),
    broker('pluginDir'),
    broker('contextDir'),
    broker('logLevel'),
    broker('u'),
  ],
};

/** The stream's core terms (seed 001 §2.5 name rule): every term of the v1.8 core @context but the `ngsi-ld` prefix. */
export function coreTerms(): Set<string> {
  const doc = embeddedDocument(CORE_URLS['1.8']) as { '@context': Record<string, unknown> };
  return new Set(Object.keys(doc['@context']).filter((k) => !k.startsWith('@') && k !== 'ngsi-ld'));
}

export class ImportTargetError extends Error {}

export interface ImportTarget {
  deps: ImportDeps;
  close(): Promise<void>;
}

/** Opens the store and history of the arguments; an ImportTargetError says why it cannot be imported into. */
export async function openImportTarget(args: BrokerArgs, log: Logger): Promise<ImportTarget> {
  const plugin = args.storePlugin;
  if (plugin.storeInMemory?.(args.storeOptions) === true)
    throw new ImportTargetError(
      `--database ${String(args.values.database)} without --dbDir is a store in memory, gone when the importer exits: give the broker's --dbDir`,
    );
  const params = { options: args.storeOptions, primary: true, log, keepHistory: args.troePlace.kind === 'store' };
  params.options = { ...params.options, ...((await plugin.storePrepare?.(params)) ?? {}) };
  // seed 001, importer behaviour 1: into stores nothing else uses (a broker writing beside the import would see
  // entities appear under it, and its own writes would be refused or overwritten by none of ours). Asked first of a
  // store opened as a broker's worker thread opens it: the primary's open may write (embdb rebuilds an older store's
  // indexes), which must not happen under a running broker. Asked again after the primary's open, for a broker that
  // started in between.
  const inUse = async (s: Store): Promise<void> => {
    const elsewhere = await s.openElsewhere?.();
    if (elsewhere === undefined) return;
    await s.close();
    throw new ImportTargetError(`the store is in use by another process (${elsewhere}): stop the broker before importing`);
  };
  const probe = await plugin.storeOpen({ ...params, primary: false });
  await inUse(probe);
  await probe.close();
  const store = await plugin.storeOpen(params);
  await inUse(store);
  let history: History | undefined;
  try {
    history = await openHistory(args.troePlace, store, {
      options: args.historyOptions,
      primary: true,
      log,
      module: args.historyModule,
      pluginDir: args.values.pluginDir as string | undefined,
      // Names what the history's threads share (tsdb's writer channel): this process's own.
      instance: `import-${process.pid}-${randomUUID()}`,
    });
  } catch (e) {
    await store.close();
    throw new ImportTargetError(e instanceof Error ? e.message : String(e));
  }
  const contexts = new ContextService({ coreVersion: '1.8', contextDir: args.values.contextDir as string | undefined, log });
  await contexts.init();
  const core = contexts.coreContext;
  const deps: ImportDeps = {
    store,
    history,
    core,
    coreTerms: coreTerms(),
    // Orion-LD's MQTT subscriptions are imported: the broker serves them once started with --bridges mqtt (without
    // it their notifications fail, each counted as a failure, as the README's importer section says).
    schemes: notificationSchemes(['mqtt']),
    resolveJsonldContext: async (url) => {
      await contexts.resolve(url);
    },
    registrationConflicts: (tenant, body) =>
      registrationConflicts({ store, tenant, context: core, contextOf: (doc) => contexts.resolve(doc.context) }, body),
    log,
  };
  return {
    deps,
    close: async () => {
      if (history !== undefined && history !== store.history) await history.close?.();
      await store.close();
    },
  };
}
