// The Modbus TCP bridge (`--bridges modbus`, seed 001 §2.2, §2.4, §9 version 1): its member of --bridgeConfig is
// checked on the main thread at start; the Bridge (bridge.ts) runs on the bridge-host thread.
import type { Bridge, BridgeHost } from '../../../bridge/contract.js';
import { BRIDGE_ABI_VERSION } from '../../../bridge/contract.js';
import { ModbusBridge } from './bridge.js';
import { modbusServerConfig } from './server-config.js';

export const bridgeAbi = BRIDGE_ABI_VERSION;

export function bridgeCheckConfig(config: unknown): void {
  if (config === undefined) throw new Error('--bridgeConfig: the modbus bridge needs a member modbus with its server');
  modbusServerConfig(config);
}

export function bridgeOpen(config: unknown, host: BridgeHost): Bridge {
  return new ModbusBridge(modbusServerConfig(config), host);
}
