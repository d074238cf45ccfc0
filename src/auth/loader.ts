// Loads the auth plugin (seed 000 §1, §5.1 rule 4, §9): at most one, by name from <pluginDir>/auth/<name>.js
// (the built-in ones from dist/src/plugins/auth/<name>/index.js) or by path; registers it and checks its ABI.
import { pathToFileURL } from 'node:url';
import { isAbsolute, join, resolve } from 'node:path';
import { AUTH_ABI_VERSION, type AuthDriver, type AuthPluginModule } from './contract.js';
import type { PluginHost } from '../plugin/contract.js';

export function authPluginUrl(nameOrPath: string, pluginDir?: string): string {
  if (nameOrPath.includes('/') || nameOrPath.endsWith('.js')) return pathToFileURL(resolve(nameOrPath)).href;
  if (pluginDir !== undefined)
    return pathToFileURL(join(isAbsolute(pluginDir) ? pluginDir : resolve(pluginDir), 'auth', `${nameOrPath}.js`)).href;
  return new URL(`../plugins/auth/${nameOrPath}/index.js`, import.meta.url).href;
}

export async function loadAuthModule(nameOrPath: string, pluginDir?: string): Promise<AuthPluginModule> {
  const url = authPluginUrl(nameOrPath, pluginDir);
  let mod: Partial<AuthPluginModule>;
  try {
    mod = (await import(url)) as Partial<AuthPluginModule>;
  } catch (e) {
    throw new Error(`auth plugin '${nameOrPath}' cannot be loaded from ${url}: ${e instanceof Error ? e.message : String(e)}`);
  }
  if (typeof mod.authRegister !== 'function') throw new Error(`auth plugin '${nameOrPath}' (${url}) exports no authRegister`);
  return mod as AuthPluginModule;
}

/**
 * Calls authRegister with a driver whose abiVersion the broker wrote first. A plugin built for an older ABI
 * still loads: the slots its ABI did not have are ignored. A newer ABI than the broker's is refused.
 */
export async function registerAuth(mod: AuthPluginModule, host: PluginHost): Promise<AuthDriver> {
  const driver: AuthDriver = { abiVersion: AUTH_ABI_VERSION, name: '' };
  await mod.authRegister(driver, host);
  const abi = driver.abiVersion;
  if (!Number.isInteger(abi) || abi < 1) throw new Error(`auth plugin '${driver.name}' reports no valid abiVersion`);
  if (abi > AUTH_ABI_VERSION) throw new Error(`auth plugin '${driver.name}' needs auth ABI ${abi}; this broker has ${AUTH_ABI_VERSION}`);
  if (abi < 2) {
    driver.entity = undefined;
    driver.identitySave = undefined;
    driver.identityRestore = undefined;
  }
  if (abi < 3) driver.authorizeBeforeContext = false;
  return driver;
}
