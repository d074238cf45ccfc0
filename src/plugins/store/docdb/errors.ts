// The driver's failures as the broker answers them: the server out of reach (down, a network cut, no primary
// elected yet, a timeout) is 503 Unavailable with a Retry-After, and the request may be sent again; anything else
// is the broker's own failure (500), logged here. The driver's messages never reach a client: they can name hosts.
import { MongoNetworkError, MongoServerSelectionError, MongoNotConnectedError, MongoTopologyClosedError, MongoError } from 'mongodb';
import { LdError } from '../../../ngsild/problem.js';
import type { PluginLogger } from '../../../plugin/contract.js';

/** Seconds a client is told to wait before it sends a request refused for an unreachable database. */
const RETRY_AFTER_S = 2;

/**
 * Socket errors the driver (7.x) lets through unwrapped when the server goes away mid-write (EPIPE from a write after
 * the peer's FIN, seen in test/api/docdb-faults.test.ts).
 */
const SOCKET_CODES = new Set(['EPIPE', 'ECONNRESET', 'ECONNREFUSED', 'ECONNABORTED', 'ETIMEDOUT', 'ENOTCONN', 'EHOSTUNREACH']);

export function isUnreachable(e: unknown): boolean {
  if (typeof (e as { code?: unknown })?.code === 'string' && SOCKET_CODES.has((e as { code: string }).code)) return true;
  if (e instanceof MongoNetworkError || e instanceof MongoServerSelectionError || e instanceof MongoNotConnectedError) return true;
  if (e instanceof MongoTopologyClosedError) return true;
  // NotWritablePrimary, PrimarySteppedDown, ShutdownInProgress, InterruptedDueToReplStateChange and the like.
  return e instanceof MongoError && (e.hasErrorLabel('RetryableWriteError') || e.hasErrorLabel('ResetPool'));
}

export function asStoreError(e: unknown, log: PluginLogger): unknown {
  if (e instanceof LdError) return e;
  if (isUnreachable(e)) {
    log.warn({ err: { name: (e as Error).name, message: (e as Error).message } }, 'docdb: the database is not reachable');
    const err = new LdError('Unavailable', 'the database is not reachable: try again later');
    err.retryAfter = RETRY_AFTER_S;
    return err;
  }
  return e;
}
