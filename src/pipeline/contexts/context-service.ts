// The @context service of a thread (ARCHITECTURE.md step 6): the resolver of ngsild/context fed with documents from
// --contextDir, the files shipped with the broker and the network (bounded, cached, failures remembered), and the
// BroadcastChannel on which threads tell each other to drop what they resolved with a kept @context.
import { BroadcastChannel } from 'node:worker_threads';
import type { LdError } from '../../ngsild/problem.js';
import { ContextResolver, type ContextResolverOptions } from '../../ngsild/context/context-resolver.js';
import { checkContextDocument, type ContextBroadcast, type ContextDocuments } from '../../ngsild/context/context-document.js';
import { ContextFetcher, type FetcherOptions } from './context-fetcher.js';
import { loadContextDir } from './context-dir.js';
import { embeddedDocument } from './embedded.js';

export interface ContextServiceOptions extends ContextResolverOptions {
  /** Directory with index.json mapping context URLs to local files (see context-dir.ts). */
  contextDir?: string;
  /** Deadline of one remote context fetch, headers and body (default 5000 ms). */
  fetchTimeoutMs?: number;
  /** Largest remote context document accepted (default 2 MiB). */
  maxContextBytes?: number;
  /** Fetched context documents kept (default 500). */
  documentCacheSize?: number;
  /** Bounds of remote fetches and the failure memory (defaults in FETCHER_DEFAULTS, context-fetcher.ts). */
  fetches?: Partial<Pick<FetcherOptions, 'perHost' | 'total' | 'maxQueued' | 'failureMemoryMs' | 'now' | 'deadline'>>;
}

/** Channel on which threads tell each other to drop what they cached of a kept @context. */
const FORGET_CHANNEL = 'ldbroker:jsonldContexts';

/** The documents of one thread: --contextDir and the embedded files first, then the fetcher. */
class ContextDocumentSource implements ContextDocuments {
  private readonly fetcher: ContextFetcher;
  private localDocs = new Map<string, object>();

  constructor(private readonly opts: ContextServiceOptions) {
    this.fetcher = new ContextFetcher({
      ...opts.fetches,
      ...(opts.fetchTimeoutMs !== undefined ? { timeoutMs: opts.fetchTimeoutMs } : {}),
      ...(opts.maxContextBytes !== undefined ? { maxBytes: opts.maxContextBytes } : {}),
      ...(opts.documentCacheSize !== undefined ? { documents: opts.documentCacheSize } : {}),
      onFetched: (url) => opts.log?.debug({ url }, '@context fetched'),
      onFailed: (url, e) => opts.log?.debug({ url, err: e.detail }, '@context fetch failed'),
    });
  }

  open(): void {
    if (this.opts.contextDir !== undefined) this.localDocs = loadContextDir(this.opts.contextDir);
  }

  local(url: string): object | undefined {
    const local = this.localDocs.get(url);
    if (local !== undefined) return local;
    const embedded = embeddedDocument(url);
    return embedded === undefined ? undefined : checkContextDocument(url, embedded);
  }

  cached(url: string): object | undefined {
    return this.fetcher.cached(url);
  }

  failure(url: string): LdError | undefined {
    return this.fetcher.failure(url);
  }

  load(url: string): Promise<object> {
    return this.fetcher.load(url);
  }

  /** A local copy (--contextDir, shipped) is the document the broker uses: reloading it is reading it again. */
  reload(url: string): Promise<object> {
    const local = this.local(url);
    return local !== undefined ? Promise.resolve(local) : this.fetcher.reload(url);
  }

  forget(url: string): void {
    this.fetcher.forget(url);
  }

  urls(): string[] {
    return this.fetcher.urls();
  }
}

/** The channel is opened only when the resolver listens (it keeps @contexts in the store), and never holds a thread up. */
class ChannelBroadcast implements ContextBroadcast {
  private channel: BroadcastChannel | undefined;

  /** `instance`: the broker (BrokerConfig.instance) whose threads alone hear what this one forgets. */
  constructor(private readonly instance: string | undefined) {}

  post(url: string): void {
    this.channel?.postMessage(url);
  }

  listen(onForget: (url: string) => void): void {
    this.channel = new BroadcastChannel(this.instance === undefined ? FORGET_CHANNEL : `${FORGET_CHANNEL}:${this.instance}`);
    this.channel.unref();
    this.channel.onmessage = (m: unknown) => {
      const url = (m as { data?: unknown }).data;
      if (typeof url === 'string') onForget(url);
    };
  }
}

/** A thread's @context resolver with its document source and broadcast: what the pipeline and main construct. */
export class ContextService extends ContextResolver {
  constructor(opts: ContextServiceOptions = {}) {
    super(opts, new ContextDocumentSource(opts), new ChannelBroadcast(opts.instance));
  }
}
