// Requests to context sources (CIM 009 v1.8.1 §4.3.6, §5.7 distributed behaviour): forwarded requests, csource
// notifications and subordinate subscriptions. One undici keep-alive pool per source origin in each thread, made on
// first use. A request waits only for the network: the thread goes on with other work meanwhile, so a slow source
// holds up only the requests sent to it, each at most its timeout.
import type { Pool } from 'undici';
import { undici } from './undici-lib.js';

/** The answer of a context source, its body read whole (at most MAX_BODY bytes). */
export interface SourceReply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** Why a source gave no answer: unreachable, too slow, or an answer too large to merge. */
export class SourceFailure extends Error {
  constructor(
    readonly reason: 'unreachable' | 'timeout' | 'too large' | 'cooling down',
    detail: string,
  ) {
    super(detail);
  }
}

/** Most bytes of one source's answer: a bound on what one forward may hold in memory. */
const MAX_BODY = 16 * 1024 * 1024;
/** Pools kept per thread; past it the oldest is closed (a registration churn must not leak sockets). */
const MAX_POOLS = 256;
const pools = new Map<string, Pool>();

function poolOf(origin: string): Pool {
  let pool = pools.get(origin);
  if (pool === undefined) {
    if (pools.size >= MAX_POOLS) {
      const [oldest, p] = pools.entries().next().value as [string, Pool];
      pools.delete(oldest);
      void p.close().catch(() => undefined);
    }
    pool = new (undici().Pool)(origin, { connections: 16, keepAliveTimeout: 10_000 });
    pools.set(origin, pool);
  }
  return pool;
}

export interface SourceRequest {
  method: string;
  url: URL;
  headers: Record<string, string>;
  body?: string | Uint8Array;
  timeoutMs: number;
}

export async function sendToSource(r: SourceRequest): Promise<SourceReply> {
  // undici's load (at its first use in a thread) is no part of the source's time to answer.
  undici();
  const signal = AbortSignal.timeout(r.timeoutMs);
  try {
    const res = await poolOf(r.url.origin).request({
      method: r.method as 'GET',
      path: r.url.pathname + r.url.search,
      headers: r.headers,
      body: r.body,
      signal,
      headersTimeout: r.timeoutMs,
      bodyTimeout: r.timeoutMs,
    });
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of res.body as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > MAX_BODY) {
        res.body.destroy();
        throw new SourceFailure('too large', `the answer is larger than ${MAX_BODY} bytes`);
      }
      chunks.push(chunk);
    }
    return { status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') };
  } catch (e) {
    if (e instanceof SourceFailure) throw e;
    if (signal.aborted) throw new SourceFailure('timeout', `no answer within ${r.timeoutMs} ms`);
    throw new SourceFailure('unreachable', e instanceof Error ? e.message : String(e));
  }
}
