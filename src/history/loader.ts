// The history of `--troe` (CIM 009 v1.8 §5.5): none; the store's own, kept in its write transactions when `--troe`
// names the store (embdb); or a history plugin beside the store, by name from <pluginDir>/history/<name>.js (the
// built-in ones from dist/src/plugins/history/<name>/index.js) or by path, fed the committed writes.
import { pathToFileURL } from 'node:url';
import { isAbsolute, join, resolve } from 'node:path';
import type { History, HistoryOpenParams, HistoryPluginModule } from './contract.js';
import type { Store } from '../store/contract.js';
import type { PluginLogger } from '../plugin/contract.js';

export type HistoryPlace = { kind: 'none' } | { kind: 'store' } | { kind: 'plugin'; nameOrPath: string };

/** Histories that live inside a store of the same name: they need that store. */
const IN_STORE = new Set(['embdb']);
/** Histories of the architecture not built yet, with the issue that brings them. */
const NOT_BUILT: ReadonlyMap<string, string> = new Map();

/** Where the history of `--troe <troe>` lives with the store plugin `storeName`; a choice that cannot work throws. */
export function historyPlace(troe: string, storeName: string): HistoryPlace {
  if (troe === 'none') return { kind: 'none' };
  if (troe === storeName) return { kind: 'store' };
  if (IN_STORE.has(troe)) throw new Error(`--troe ${troe}: that history lives inside the ${troe} store; it needs --database ${troe}`);
  if (troe === '') throw new Error('--troe: empty (none, embdb, or a history plugin)');
  return { kind: 'plugin', nameOrPath: troe };
}

function historyPluginUrl(nameOrPath: string, pluginDir?: string): string {
  if (nameOrPath.includes('/') || nameOrPath.endsWith('.js')) return pathToFileURL(resolve(nameOrPath)).href;
  if (pluginDir !== undefined)
    return pathToFileURL(join(isAbsolute(pluginDir) ? pluginDir : resolve(pluginDir), 'history', `${nameOrPath}.js`)).href;
  return new URL(`../plugins/history/${nameOrPath}/index.js`, import.meta.url).href;
}

export async function loadHistoryModule(nameOrPath: string, pluginDir?: string): Promise<HistoryPluginModule> {
  const url = historyPluginUrl(nameOrPath, pluginDir);
  let mod: Partial<HistoryPluginModule>;
  try {
    mod = (await import(url)) as Partial<HistoryPluginModule>;
  } catch (e) {
    const missing = NOT_BUILT.get(nameOrPath);
    if (missing !== undefined && pluginDir === undefined)
      throw new Error(`--troe: '${nameOrPath}' is not one of none, embdb: ${missing} is not in this build yet`);
    throw new Error(`history plugin '${nameOrPath}' cannot be loaded from ${url}: ${e instanceof Error ? e.message : String(e)}`);
  }
  if (typeof mod.historyOpen !== 'function') throw new Error(`history plugin '${nameOrPath}' (${url}) exports no historyOpen`);
  return mod as HistoryPluginModule;
}

/**
 * The history of a thread: the store's own (opened with `keepHistory`), or the plugin's instance opened with its
 * options; undefined with `--troe none`. A store that keeps no history of its own, asked for one, is an error.
 */
export async function openHistory(
  place: HistoryPlace,
  store: Store,
  params: {
    options: Record<string, unknown>;
    primary: boolean;
    log: PluginLogger;
    instance?: string;
    pluginDir?: string;
    module?: HistoryPluginModule;
  },
): Promise<History | undefined> {
  if (place.kind === 'none') return undefined;
  if (place.kind === 'store') {
    if (store.history === undefined) throw new Error(`--troe ${store.name}: the ${store.name} store keeps no history`);
    return store.history;
  }
  const mod = params.module ?? (await loadHistoryModule(place.nameOrPath, params.pluginDir));
  const open: HistoryOpenParams = { options: params.options, primary: params.primary, log: params.log };
  if (params.instance !== undefined) open.instance = params.instance;
  return mod.historyOpen(open);
}
