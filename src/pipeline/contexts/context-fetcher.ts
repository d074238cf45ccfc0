// The remote @context documents of one thread (CIM 009 v1.8 §5.5.7), fetched so that slow servers cost little
// (issue 13): one fetch at a time per URL, shared by every load of it meanwhile; at most a few per host and in all,
// the rest queued under the same deadline; documents kept in an LRU; failures remembered a few seconds.
import { LRUCache } from 'lru-cache';
import { undici } from '../undici-lib.js';
import { LdError } from '../../ngsild/problem.js';
import { fetchContextDocument, notAvailable, type FetchLimits } from './context-fetch.js';
import { FetchSlots } from './fetch-slots.js';

export interface FetcherOptions extends FetchLimits {
  /** Fetches from one host (scheme-less host:port) running at once. */
  perHost: number;
  /** Fetches running at once in all. */
  total: number;
  /** Fetches waiting for a slot; past it a load fails at once. */
  maxQueued: number;
  /** How long a failed fetch is remembered (answered again without asking the server). */
  failureMemoryMs: number;
  /** Documents kept. */
  documents: number;
  /** Called once per document fetched (not for those served from the cache). */
  onFetched?: (url: string, doc: object) => void;
  /** Called once per failed fetch. */
  onFailed?: (url: string, error: LdError) => void;
  /** The clock of the failure memory (milliseconds). */
  now?: () => number;
  /** The deadline of one load, started before it waits for a slot (tests give their own). */
  deadline?: (timeoutMs: number) => AbortSignal;
}

export const FETCHER_DEFAULTS: Omit<FetcherOptions, 'onFetched' | 'onFailed' | 'now' | 'deadline'> = {
  timeoutMs: 5000,
  maxBytes: 2 * 1024 * 1024,
  perHost: 4,
  total: 16,
  maxQueued: 1024,
  failureMemoryMs: 3000,
  documents: 500,
};

interface Failure {
  error: LdError;
  until: number;
}

/** Failures that say nothing about the URL (the broker was busy): never remembered. */
const busyFailures = new WeakSet<LdError>();

export class ContextFetcher {
  private readonly opts: FetcherOptions;
  private readonly documents: LRUCache<string, object>;
  private readonly failures: LRUCache<string, Failure>;
  private readonly inFlight = new Map<string, Promise<object>>();
  private readonly slots: FetchSlots;
  private readonly now: () => number;
  private readonly deadline: (timeoutMs: number) => AbortSignal;

  constructor(opts: Partial<FetcherOptions> = {}) {
    this.opts = { ...FETCHER_DEFAULTS, ...opts };
    this.documents = new LRUCache({ max: this.opts.documents });
    this.failures = new LRUCache({ max: this.opts.documents });
    this.slots = new FetchSlots(this.opts.perHost, this.opts.total, this.opts.maxQueued);
    this.now = opts.now ?? Date.now;
    this.deadline = opts.deadline ?? ((ms) => AbortSignal.timeout(ms));
  }

  /** The document of `url` when this thread holds it. */
  cached(url: string): object | undefined {
    return this.documents.get(url);
  }

  /** The failure of `url` while it is remembered: a new error; a 503 says (Retry-After) when it will be forgotten. */
  failure(url: string): LdError | undefined {
    const f = this.failures.get(url);
    if (f === undefined) return undefined;
    const left = f.until - this.now();
    if (left <= 0) {
      this.failures.delete(url);
      return undefined;
    }
    const error = new LdError(f.error.kind, f.error.detail, f.error.status);
    if (error.status === 503) error.retryAfter = Math.ceil(left / 1000);
    return error;
  }

  /** The document of `url`: from the cache, a remembered failure, the fetch under way, or a new fetch. */
  load(url: string): Promise<object> {
    const doc = this.documents.get(url);
    if (doc !== undefined) return Promise.resolve(doc);
    const failed = this.failure(url);
    if (failed !== undefined) return Promise.reject(failed);
    let p = this.inFlight.get(url);
    if (p === undefined) {
      p = this.fetch(url)
        .then(
          (fetched) => {
            this.documents.set(url, fetched);
            this.opts.onFetched?.(url, fetched);
            return fetched;
          },
          (e: unknown) => {
            if (e instanceof LdError) {
              if (!busyFailures.has(e)) this.failures.set(url, { error: e, until: this.now() + this.opts.failureMemoryMs });
              this.opts.onFailed?.(url, e);
            }
            throw e;
          },
        )
        .finally(() => this.inFlight.delete(url));
      this.inFlight.set(url, p);
    }
    return p;
  }

  /**
   * Fetches `url` again whatever is cached or remembered (CIM 009 §5.13.5 reload); the new document replaces the
   * old. A failure leaves the old document in place and is not remembered: the caller hears of it.
   */
  async reload(url: string): Promise<object> {
    const doc = await this.fetch(url);
    this.failures.delete(url);
    this.documents.set(url, doc);
    return doc;
  }

  forget(url: string): void {
    this.documents.delete(url);
    this.failures.delete(url);
  }

  /** The URLs whose documents this thread holds. */
  urls(): string[] {
    return [...this.documents.keys()];
  }

  /** One fetch, after waiting for a slot of its host; the deadline runs from the start of the wait. */
  private async fetch(url: string): Promise<object> {
    const host = httpHost(url);
    // Not http(s), or no URL at all: fetchContextDocument refuses it without any I/O.
    if (host === undefined) return fetchContextDocument(url, this.opts, this.deadline(this.opts.timeoutMs));
    // The slots bound requests; the agent bounds connections too, idle keep-alive ones included. Made at the first
    // fetch (src/pipeline/undici-lib.ts: most threads never fetch an @context), before the deadline starts: the
    // library's load is no part of the server's time to answer.
    this.opts.dispatcher ??= new (undici().Agent)({ connections: this.opts.perHost });
    const signal = this.deadline(this.opts.timeoutMs);
    const grant = await this.slots.acquire(host, signal);
    if (grant !== 'granted') {
      const error = notAvailable(
        url,
        grant === 'expired'
          ? `no answer within ${this.opts.timeoutMs} ms (it waited for one of the ${this.opts.perHost} fetches allowed per host, ${this.opts.total} in all)`
          : `the broker is already waiting for ${this.opts.maxQueued} @context fetches; retry later`,
      );
      busyFailures.add(error);
      throw error;
    }
    try {
      return await fetchContextDocument(url, this.opts, signal);
    } finally {
      this.slots.release(host);
    }
  }
}

function httpHost(url: string): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return undefined;
  }
  return parsed.protocol === 'http:' || parsed.protocol === 'https:' ? parsed.host : undefined;
}
