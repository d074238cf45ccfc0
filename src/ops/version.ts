// GET /version and GET /ngsi-ld/v1/version: what is running, for operators and for bug reports (Orion and Orion-LD
// answer GET /version). No NGSI-LD operation (brokerOwn in ngsild/operations.ts): the auth plugin sees it as LdOp 0.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { OpHandler } from '../pipeline/handler.js';

/** The version of ETSI GS CIM 009 the broker implements. */
export const NGSI_LD_SPEC_VERSION = '1.8.1';

export interface VersionInfo {
  name: string;
  version: string;
  ngsiLdSpec: string;
  node: string;
  /** The HTTP server serving the API (uws, or node where uWebSockets.js cannot load or --httpServer node). */
  httpServer: string;
  /** Versions of the installed packages; null where one cannot be read. */
  uws: string | null;
  lmdbJs: string | null;
  /** The LMDB C library inside lmdb-js, as its `version` export gives it. */
  lmdb: string | null;
}

const require = createRequire(import.meta.url);

/** The `version` of the nearest package.json named `name` at or above `from`. */
function packageVersion(from: string, name: string): string | null {
  let dir = from;
  for (;;) {
    try {
      const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: unknown; version?: unknown };
      if (pkg.name === name && typeof pkg.version === 'string') return pkg.version;
    } catch {
      /* no package.json here */
    }
    const up = dirname(dir);
    if (up === dir) return null;
    dir = up;
  }
}

/** An installed dependency's version; its package.json is not always exported (lmdb's is not), so it is found on disk. */
function dependencyVersion(name: string): string | null {
  try {
    return packageVersion(dirname(require.resolve(name)), name);
  } catch {
    return null;
  }
}

async function lmdbVersion(): Promise<string | null> {
  try {
    const { version } = (await import('lmdb')) as { version?: { major?: unknown; minor?: unknown; patch?: unknown } };
    if (version === undefined) return null;
    return `${String(version.major)}.${String(version.minor)}.${String(version.patch)}`;
  } catch {
    return null;
  }
}

/**
 * Read once per thread and server kind: nothing in it changes while the broker runs, and brokers sharing a thread
 * (createBroker in tests) may run different servers.
 */
const infos = new Map<string, Promise<VersionInfo>>();

export function versionInfo(httpServer: string): Promise<VersionInfo> {
  let info = infos.get(httpServer);
  if (info === undefined) {
    info = lmdbVersion().then((lmdb) => ({
      name: 'ldbroker',
      version: packageVersion(dirname(fileURLToPath(import.meta.url)), 'ldbroker') ?? 'unknown',
      ngsiLdSpec: NGSI_LD_SPEC_VERSION,
      node: process.versions.node,
      httpServer,
      uws: dependencyVersion('@trufflesuite/uws-js-unofficial'),
      lmdbJs: dependencyVersion('lmdb'),
      lmdb,
    }));
    infos.set(httpServer, info);
  }
  return info;
}

export const brokerVersion: OpHandler = async (req, ctx) => {
  return { status: 200, body: await versionInfo(ctx.config.httpServer) };
};
