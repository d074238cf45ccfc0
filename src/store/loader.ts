// Loads a store plugin by name: the built-in ones under dist/src/plugins/store/<name>/, or <pluginDir>/store/<name>.js.
import { pathToFileURL } from 'node:url';
import { join, isAbsolute } from 'node:path';
import type { StorePluginModule } from './contract.js';

export async function loadStorePlugin(name: string, pluginDir?: string): Promise<StorePluginModule> {
  const url =
    pluginDir !== undefined
      ? pathToFileURL(join(isAbsolute(pluginDir) ? pluginDir : join(process.cwd(), pluginDir), 'store', `${name}.js`)).href
      : new URL(`../plugins/store/${name}/index.js`, import.meta.url).href;
  const mod = (await import(url)) as Partial<StorePluginModule>;
  if (typeof mod.storeOpen !== 'function') throw new Error(`store plugin '${name}' (${url}) exports no storeOpen`);
  return mod as StorePluginModule;
}
