// Bridge plugins by name (`--bridges`: built in from dist/src/plugins/bridge/<name>/index.js, else
// <pluginDir>/bridge/<name>.js) and the configuration file (`--bridgeConfig`, seed 001 §2.2), read on the main thread
// at start: a file that does not parse, a member naming no loaded bridge or a Channel description of the wrong shape
// stops the broker with one line (main.ts: exit 1).
import { readFileSync } from 'node:fs';
import { isAbsolute, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { isUri } from '../ngsild/entity/syntax.js';
import {
  BRIDGE_ABI_VERSION,
  type BridgePluginModule,
  type BridgeSetup,
  type ChannelDescription,
  type ChannelInfoEntry,
  type ConfiguredChannel,
} from './contract.js';

/** Channels of one bridge at most (a bound of ours: seed 001 §8 gives none). */
export const MAX_CHANNELS = 10_000;

export class BridgeConfigError extends Error {}

export async function loadBridgeModule(name: string, pluginDir?: string): Promise<BridgePluginModule> {
  const builtIn = new URL(`../plugins/bridge/${name}/index.js`, import.meta.url).href;
  const url =
    pluginDir === undefined
      ? builtIn
      : pathToFileURL(join(isAbsolute(pluginDir) ? pluginDir : resolve(pluginDir), 'bridge', `${name}.js`)).href;
  let mod: Partial<BridgePluginModule>;
  try {
    mod = (await import(url)) as Partial<BridgePluginModule>;
  } catch (e) {
    const missing = (e as { code?: string }).code === 'ERR_MODULE_NOT_FOUND';
    throw new BridgeConfigError(
      missing ? `--bridges: unknown bridge '${name}'` : `--bridges: bridge '${name}' cannot be loaded: ${(e as Error).message}`,
    );
  }
  if (typeof mod.bridgeOpen !== 'function' || typeof mod.bridgeAbi !== 'number')
    throw new BridgeConfigError(`--bridges: '${name}' is not a bridge plugin (no bridgeAbi and bridgeOpen)`);
  if (mod.bridgeAbi > BRIDGE_ABI_VERSION || mod.bridgeAbi < 1)
    throw new BridgeConfigError(`--bridges: bridge '${name}' wants bridge ABI ${mod.bridgeAbi}; this broker speaks ${BRIDGE_ABI_VERSION}`);
  return mod as BridgePluginModule;
}

/** Reads and checks the configuration file against the loaded bridges' names; no file: no member, no Channel. */
export function readBridgeConfig(file: string | undefined, bridges: readonly string[]): BridgeSetup {
  if (file === undefined) return { members: {}, channels: [] };
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    throw new BridgeConfigError(`--bridgeConfig: cannot read '${file}': ${(e as { code?: string }).code ?? (e as Error).message}`);
  }
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (e) {
    throw new BridgeConfigError(`--bridgeConfig: '${file}' is not JSON: ${(e as Error).message}`);
  }
  if (!isObject(doc)) throw new BridgeConfigError(`--bridgeConfig: '${file}' must hold a JSON object, a member per bridge`);
  const channels: ConfiguredChannel[] = [];
  for (const [bridge, member] of Object.entries(doc)) {
    if (!bridges.includes(bridge))
      throw new BridgeConfigError(
        `--bridgeConfig: member '${bridge.slice(0, 64)}' names no bridge loaded by --bridges (${bridges.join(', ') || 'none'})`,
      );
    if (!isObject(member)) throw new BridgeConfigError(`--bridgeConfig: ${bridge} must be an object`);
    const ngsild = member.ngsild;
    if (ngsild === undefined) continue;
    if (!isObject(ngsild) || (ngsild.topics !== undefined && !isObject(ngsild.topics)))
      throw new BridgeConfigError(`--bridgeConfig: ${bridge}.ngsild.topics must be an object (endpoint → Channel)`);
    const topics = (ngsild.topics ?? {}) as Record<string, unknown>;
    if (Object.keys(topics).length > MAX_CHANNELS)
      throw new BridgeConfigError(`--bridgeConfig: ${bridge} has more than ${MAX_CHANNELS} Channels`);
    for (const [endpoint, description] of Object.entries(topics))
      channels.push({ bridge, endpoint, ...channelOf(bridge, endpoint, description) });
  }
  return { members: doc, channels };
}

function channelOf(bridge: string, endpoint: string, v: unknown): ChannelDescription {
  const at = `--bridgeConfig: ${bridge}.ngsild.topics['${endpoint.slice(0, 100)}']`;
  if (!isObject(v)) throw new BridgeConfigError(`${at} must be an object {entityId, entityType, attribute, channelInfo}`);
  for (const k of Object.keys(v))
    if (k !== 'entityId' && k !== 'entityType' && k !== 'attribute' && k !== 'channelInfo')
      throw new BridgeConfigError(`${at}.${k.slice(0, 64)}: not a member of a Channel`);
  for (const k of ['entityId', 'entityType', 'attribute'] as const)
    if (typeof v[k] !== 'string' || v[k] === '' || (v[k] as string).length > 2048)
      throw new BridgeConfigError(`${at}.${k}: a non-empty string is needed`);
  if (!isUri(v.entityId as string)) throw new BridgeConfigError(`${at}.entityId: '${(v.entityId as string).slice(0, 100)}' is not a URI`);
  const info: ChannelInfoEntry[] = [];
  if (v.channelInfo !== undefined) {
    if (!Array.isArray(v.channelInfo)) throw new BridgeConfigError(`${at}.channelInfo: must be an array of {key, value}`);
    for (const kv of v.channelInfo) {
      if (!isObject(kv) || typeof kv.key !== 'string' || typeof kv.value !== 'string')
        throw new BridgeConfigError(`${at}.channelInfo: each entry must be {key: string, value: string}`);
      info.push({ key: kv.key, value: kv.value });
    }
  }
  return { entityId: v.entityId as string, entityType: v.entityType as string, attribute: v.attribute as string, channelInfo: info };
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
