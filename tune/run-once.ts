// One run of the tuner: a fresh broker (an empty store), seeded as the workload says, its subscriptions notifying the
// run's receiver, a warm-up, then the measured load (bench/load.ts: autocannon at load.concurrency).
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startServer, type ServerProcess } from '../bench/server-process.js';
import { runLoad, failedRequests, type LoadRequest } from '../bench/load.js';
import { NGSI, JSON_HEADERS, expectStatus, send } from '../bench/ngsi-client.js';
import { entitiesPerType, type Workload } from './workload.js';
import { entityBody, entityId, attributeBody, patchedAttributes, subscriptionBodies, mixSlots, prng } from './entities.js';
import type { Receiver } from './receiver.js';

const BROKER_SCRIPT = fileURLToPath(new URL('../src/main.js', import.meta.url));
const SEED_BATCH = 100;
/** How long notifications of the measured run may still arrive after its last request. */
const DRAIN_MS = 2000;

/** The runtime profile the training step picks (tune/README.md says why each matters). Absent: the broker's default. */
export interface Profile {
  connectionPoolSize?: number;
  httpServer: 'uws' | 'node';
  maxOldSpaceMb?: number;
  maxSemiSpaceMb?: number;
}

export interface Allocator {
  name: string;
  /** The shared library LD_PRELOAD loads; absent for the system allocator. */
  library?: string;
}

export interface RunSpec {
  lockPrefer: 'reads' | 'writes';
  allocator: Allocator;
  profile: Profile;
  durationS: number;
  warmupS: number;
}

export interface RunResult {
  rps: number;
  p99us: number;
  notified: number;
  failedRequests: number;
  /** The answers' status codes, when some failed (what failed, for the operator). */
  statusCodes?: Record<string, number>;
  /** Why the run could not be measured (the broker did not start, seeding failed, ...): the run counts as failed. */
  error?: string;
}

/** What every run of one tuning shares. */
export interface RunContext {
  workload: Workload;
  receiver: Receiver;
  /** Arguments and request headers of the workload's auth plugin. */
  auth: { args: string[]; headers: Record<string, string> };
  brokerCpus?: string;
  /** Says what happened to the operator once (e.g. a query that answers nothing). */
  note(line: string): void;
}

/** The broker's options of a profile (they are its command line: `--name value`). */
export function profileOptions(p: Profile): Record<string, string | number> {
  const o: Record<string, string | number> = {};
  if (p.connectionPoolSize !== undefined) o.connectionPoolSize = p.connectionPoolSize;
  o.httpServer = p.httpServer;
  return o;
}

/** The node flags of a profile (NODE_OPTIONS accepts both). */
export function profileNodeFlags(p: Profile): string[] {
  const flags: string[] = [];
  if (p.maxOldSpaceMb !== undefined) flags.push(`--max-old-space-size=${p.maxOldSpaceMb}`);
  if (p.maxSemiSpaceMb !== undefined) flags.push(`--max-semi-space-size=${p.maxSemiSpaceMb}`);
  return flags;
}

/** docdb's --dbName is at most 12 characters: `t` and the run's tag (process id and run, base 36). */
const docdbName = (runTag: string): string => `t${runTag}`.slice(0, 12);

export function brokerArgs(
  w: Workload,
  spec: Pick<RunSpec, 'lockPrefer' | 'profile'>,
  dbDir: string | undefined,
  runTag: string,
): string[] {
  const args = ['--port', '0', '--host', '127.0.0.1', '--logLevel', 'info', '--database', w.store.database, '--troe', w.store.history];
  // --dbLockPrefer is the embedded store's option; docdb has no such choice (the runs of both values are alike).
  if (w.store.database === 'embdb') args.push('--dbLockPrefer', spec.lockPrefer);
  if (dbDir !== undefined) args.push('--dbDir', dbDir);
  // docdb: a database of its own per run, so every run starts on an empty store.
  if (w.store.database === 'docdb') args.push('--dbName', docdbName(runTag));
  for (const [k, v] of Object.entries(profileOptions(spec.profile))) args.push(`--${k}`, String(v));
  return args;
}

/** The allocator really is in the broker's process (a wrong path would otherwise measure the system allocator). */
function checkAllocator(server: ServerProcess, a: Allocator): void {
  if (a.library === undefined || server.proc.pid === undefined) return;
  const maps = readFileSync(`/proc/${server.proc.pid}/maps`, 'utf8');
  if (!maps.includes(a.library.split('/').pop()!)) throw new Error(`${a.library} is not loaded in the broker (LD_PRELOAD ignored?)`);
}

/** Keys and policies reach every pipeline thread by broadcast: wait until a run of requests is decided. */
async function waitForAuth(url: string, headers: Record<string, string>): Promise<void> {
  for (let i = 0, decided = 0; i < 300 && decided < 20; i++) {
    decided = (await send(url, 'GET', `${NGSI}/entities/urn:x:none`, undefined, headers)).status === 503 ? 0 : decided + 1;
    if (decided === 0) await new Promise((r) => setTimeout(r, 100));
  }
}

async function seed(ctx: RunContext, url: string): Promise<void> {
  const w = ctx.workload;
  const headers = { ...JSON_HEADERS, ...ctx.auth.headers };
  const perType = entitiesPerType(w);
  for (let k = 0; k < perType.length; k++) {
    for (let n = 0; n < perType[k]!; n += SEED_BATCH) {
      const batch: Record<string, unknown>[] = [];
      for (let i = n; i < Math.min(n + SEED_BATCH, perType[k]!); i++) batch.push(entityBody(w, k, i, perType[k]!));
      await expectStatus(
        `seeding ${entityId(w.entities.types[k]!.type, k, n)}..`,
        send(url, 'POST', `${NGSI}/entityOperations/create`, JSON.stringify(batch), headers),
        [201],
      );
    }
  }
  for (const s of subscriptionBodies(w, ctx.receiver.url))
    await expectStatus('creating a subscription', send(url, 'POST', `${NGSI}/subscriptions`, JSON.stringify(s), headers), [201]);
}

/** The request mix of load.mix over the seeded entities (the same stream in every run: a fixed PRNG seed). */
export function mixRequests(w: Workload, headers: Record<string, string>, runTag: string): LoadRequest[] {
  const perType = entitiesPerType(w);
  const total = perType.reduce((a, b) => a + b, 0);
  const random = prng(25);
  const pickEntity = (): [number, number] => {
    let r = Math.floor(random() * total);
    for (let k = 0; k < perType.length; k++) {
      if (r < perType[k]!) return [k, r];
      r -= perType[k]!;
    }
    return [0, 0];
  };
  const withBody = { ...JSON_HEADERS, ...headers };
  let v = 0;
  let created = 0;
  const q = w.load.query;
  const queryPath = `${NGSI}/entities?type=${encodeURIComponent(q.type)}&limit=${q.limit}${q.q === undefined ? '' : `&q=${encodeURIComponent(q.q)}`}`;
  const make: Record<string, () => LoadRequest> = {
    patch: () => {
      const next = (): { path: string; body: string } => {
        const [k, n] = pickEntity();
        const t = w.entities.types[k]!;
        const body: Record<string, unknown> = {};
        const now = new Date().toISOString();
        for (const a of patchedAttributes(w, t)) body[a.name] = attributeBody(a, t.type, k, n, perType[k]!, ++v, now);
        return { path: `${NGSI}/entities/${entityId(t.type, k, n)}/attrs`, body: JSON.stringify(body) };
      };
      return { method: 'PATCH', headers: withBody, ...next(), next };
    },
    retrieve: () => {
      const next = (): { path: string } => {
        const [k, n] = pickEntity();
        return { path: `${NGSI}/entities/${entityId(w.entities.types[k]!.type, k, n)}` };
      };
      return { method: 'GET', headers, ...next(), next };
    },
    query: () => ({ method: 'GET', headers, path: queryPath }),
    create: () => {
      const next = (): { body: string } => {
        const [k, n] = pickEntity();
        return { body: JSON.stringify(entityBody(w, k, n, perType[k]!, `urn:ngsi-ld:TuneNew${k}:${runTag}-${++created}`)) };
      };
      return { method: 'POST', headers: withBody, path: `${NGSI}/entities`, ...next(), next };
    },
  };
  return mixSlots(w.load.mix).map((kind) => make[kind]!());
}

async function drainNotifications(receiver: Receiver): Promise<void> {
  const end = Date.now() + DRAIN_MS;
  let last = -1;
  while (Date.now() < end && receiver.count() !== last) {
    last = receiver.count();
    await new Promise((r) => setTimeout(r, 250));
  }
}

/**
 * A docdb run's database, dropped after it. The server is the one the broker was given by the environment
 * (BROKER_DBURI, else BROKER_DBHOST, else the broker's default): the tuner passes the store's options through it.
 */
async function dropDocdb(name: string, note: (line: string) => void): Promise<void> {
  const url = process.env.BROKER_DBURI ?? `mongodb://${process.env.BROKER_DBHOST ?? '127.0.0.1:27017'}/`;
  const { MongoClient } = await import('mongodb');
  const client = new MongoClient(url, { serverSelectionTimeoutMS: 5000 });
  try {
    await client.db(name).dropDatabase();
  } catch (e) {
    note(`could not drop the docdb database ${name}: ${(e as Error).message}`);
  } finally {
    await client.close();
  }
}

let runs = 0;

export async function runOnce(ctx: RunContext, spec: RunSpec): Promise<RunResult> {
  const w = ctx.workload;
  const runTag = `${process.pid.toString(36)}x${(++runs).toString(36)}`;
  const dbDir = w.store.persistent ? mkdtempSync(join(tmpdir(), 'ldbroker-tune-')) : undefined;
  let server: ServerProcess | undefined;
  try {
    const env: Record<string, string> = spec.allocator.library === undefined ? {} : { LD_PRELOAD: spec.allocator.library };
    const start: Parameters<typeof startServer>[3] = { env, nodeFlags: profileNodeFlags(spec.profile) };
    if (ctx.brokerCpus !== undefined) start.cores = ctx.brokerCpus;
    server = await startServer('broker', BROKER_SCRIPT, [...brokerArgs(w, spec, dbDir, runTag), ...ctx.auth.args], start);
    checkAllocator(server, spec.allocator);
    if (w.auth === 'dsec') await waitForAuth(server.url, ctx.auth.headers);
    await seed(ctx, server.url);
    if (runs === 1 && w.load.mix.query > 0) {
      const a = await send(
        server.url,
        'GET',
        mixRequests(w, {}, runTag).find((r) => r.path.includes('?'))!.path,
        undefined,
        ctx.auth.headers,
      );
      if (a.status !== 200 || a.body === '[]')
        ctx.note(`load.query answers ${a.status} with ${a.body === '[]' ? 'no entity' : a.body.slice(0, 200)}`);
    }
    const requests = mixRequests(w, ctx.auth.headers, runTag);
    const load = { url: server.url, connections: w.load.concurrency, warmupS: 0 };
    if (spec.warmupS > 0) await runLoad(requests, { ...load, durationS: spec.warmupS });
    await drainNotifications(ctx.receiver);
    const before = ctx.receiver.count();
    const r = await runLoad(mixRequests(w, ctx.auth.headers, `${runTag}m`), { ...load, durationS: spec.durationS });
    await drainNotifications(ctx.receiver);
    if (server.proc.exitCode !== null || server.proc.signalCode !== null)
      throw new Error(`the broker exited during the run\n${server.tail()}`);
    const out: RunResult = {
      rps: Math.round(r.requestsPerSecond),
      p99us: Math.round(r.p99Ms * 1000),
      notified: ctx.receiver.count() - before,
      failedRequests: failedRequests(r),
    };
    if (out.failedRequests > 0) out.statusCodes = r.statusCodes;
    return out;
  } catch (e) {
    return { rps: 0, p99us: 0, notified: 0, failedRequests: 0, error: (e as Error).message.split('\n').slice(0, 12).join('\n') };
  } finally {
    await server?.stop();
    if (dbDir !== undefined) rmSync(dbDir, { recursive: true, force: true });
    if (w.store.database === 'docdb') await dropDocdb(docdbName(runTag), ctx.note);
  }
}
