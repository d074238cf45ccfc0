// Fetches a remote @context document over http(s) with a deadline and a size cap enforced while streaming,
// so a slow or huge context costs the broker at most `timeoutMs` and `maxBytes` (CIM 009 v1.8 §5.5.7).
import type { Dispatcher, Response } from 'undici';
import { undici } from '../undici-lib.js';
import { LdError } from '../../ngsild/problem.js';
import { parseContextDocument } from '../../ngsild/context/context-document.js';

export interface FetchLimits {
  timeoutMs: number;
  maxBytes: number;
  /** The connection pools to fetch through (context-fetcher.ts bounds the connections per host with it). */
  dispatcher?: Dispatcher;
}

const ACCEPT = 'application/ld+json, application/json;q=0.9, */*;q=0.1';

export function notAvailable(url: string, why: string): LdError {
  return new LdError('LdContextNotAvailable', `@context '${url.slice(0, 300)}' is not available: ${why}`);
}

/**
 * The context document at `url`, parsed and checked to be a JSON object with an `@context` member.
 * Unreachable, refused, non-2xx, too slow or too big → LdContextNotAvailable (503): the broker could not obtain
 * it. Obtained but not JSON, or not a context document → InvalidRequest (400): the client named a bad context.
 * `signal` is the deadline when it started earlier (a fetch that waited for a slot has that much less time).
 */
export async function fetchContextDocument(
  url: string,
  limits: FetchLimits,
  signal = AbortSignal.timeout(limits.timeoutMs),
): Promise<object> {
  let scheme: string;
  try {
    scheme = new URL(url).protocol;
  } catch {
    throw new LdError('InvalidRequest', `@context '${url.slice(0, 300)}' is not an absolute URL`);
  }
  if (scheme !== 'http:' && scheme !== 'https:')
    throw notAvailable(url, `${scheme} URLs cannot be dereferenced and none is configured locally`);
  let res: Response;
  try {
    res = await undici().fetch(url, { signal, headers: { accept: ACCEPT }, redirect: 'follow', dispatcher: limits.dispatcher });
  } catch (e) {
    throw notAvailable(url, signal.aborted ? `no answer within ${limits.timeoutMs} ms` : describe(e));
  }
  if (!res.ok) {
    await discard(res);
    throw notAvailable(url, `the server answered ${res.status}`);
  }
  const declared = Number(res.headers.get('content-length') ?? '-1');
  if (declared > limits.maxBytes) {
    await discard(res);
    throw notAvailable(url, `it is ${declared} bytes, more than the ${limits.maxBytes} allowed`);
  }
  const text = await readCapped(url, res, limits, signal);
  return parseContextDocument(url, text);
}

async function readCapped(url: string, res: Response, limits: FetchLimits, signal: AbortSignal): Promise<string> {
  if (res.body === null) return '';
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > limits.maxBytes) {
        await reader.cancel().catch(() => undefined);
        throw notAvailable(url, `it is more than the ${limits.maxBytes} bytes allowed`);
      }
      chunks.push(value);
    }
  } catch (e) {
    if (e instanceof LdError) throw e;
    throw notAvailable(url, signal.aborted ? `it was not received within ${limits.timeoutMs} ms` : describe(e));
  }
  return Buffer.concat(chunks, size).toString('utf8');
}

async function discard(res: Response): Promise<void> {
  await res.body?.cancel().catch(() => undefined);
}

function describe(e: unknown): string {
  if (!(e instanceof Error)) return String(e);
  const cause = (e as { cause?: unknown }).cause;
  return cause instanceof Error ? `${e.message} (${cause.message})` : e.message;
}
