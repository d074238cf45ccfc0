// Resolves the @context of a request into a ResolvedContext (ARCHITECTURE.md step 6): JSON-LD 1.1 context
// processing by the jsonld package, flattened into Maps for the hot path and cached by key. One per thread.
//
// Order of processing: core, then the user context(s), then core again. The leading core makes a user context
// that redefines a protected core term (v1.8+ core is @protected) fail as JSON-LD 1.1 says it must; the
// trailing core makes core terms win over user terms in every version (CIM 009 v1.8 §5.5.7: the core context
// comes last). Any NGSI-LD core context URL met inside a user context stands for the broker's own core
// (--coreContext): clients pin other versions in compound contexts, and loading two core versions together
// would break on their protected terms. Nothing is ever fetched for a core or other embedded URL.
//
// A request that has to wait for a remote document is told so (FetchWaiter.park) the moment its resolution goes
// to the network: the pipeline then lets it wait off the thread's capacity (issue 13, src/pipeline/context-wait.ts).
//
// The documents come through ContextDocuments, which the thread's context service implements
// (src/pipeline/contexts/context-service.ts): files and fetches are its business, none is done here.
import { createHash } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import { LdError } from '../problem.js';
import { tenantLocalId, type ResolvedContext } from './resolved.js';
import { CORE_URLS, isCoreContextUrl, type CoreVersion } from './core-contexts.js';
import { FlatContext, type ContextKeeps } from './flat-context.js';
import type { ContextBroadcast, ContextDocuments } from './context-document.js';
import { checkNoProtoMember } from '../entity/proto-member.js';
import { SharedBuild, type FetchWaiter } from './shared-build.js';
import { initialContext, isJsonLdError, processContext, type JsonLdActiveContext, type JsonLdDocumentLoader } from './jsonld-api.js';

/** The pino-like logger the resolver writes to (fetches at debug level only: they follow client input). */
export interface ContextLog {
  debug(obj: object | string, msg?: string): void;
  info(obj: object | string, msg?: string): void;
  warn(obj: object | string, msg?: string): void;
  error(obj: object | string, msg?: string): void;
}

export interface ContextResolverOptions {
  /** The core context version applied to every request (default 1.8). */
  coreVersion?: CoreVersion;
  /** URL of the user context used when a request carries none (with the core, as always). */
  defaultUserContext?: string;
  /** Resolved contexts kept (default 1000). */
  cacheSize?: number;
  log?: ContextLog;
  /**
   * Hook for hosting inline contexts (CIM 009 v1.8 §5.13.4, a later issue): the URL at which the broker serves
   * `contextValue`, for the Link header of application/json responses. Without it (or when it answers undefined)
   * such responses link the core context.
   */
  inlineContextUrl?: (key: string, contextValue: unknown) => string | undefined;
  /**
   * The store's collections of @contexts the broker keeps (CIM 009 v1.8 §5.13), found by local id: Hosted ones are
   * served from it (never fetched from the broker itself). With it, inline request contexts get an
   * ImplicitlyCreated id and fetched ones are noted, for keptFor(). Shared by every thread through the store.
   */
  hosted?: HostedContexts;
  /** Scheme, host and port under which clients reach the broker, for the URLs of the @contexts it serves. */
  brokerUrl?: string;
  /** The broker instance (BrokerConfig.instance): only its own threads hear what this resolver forgets. */
  instance?: string;
}

/** The store collection the resolver keeps @contexts in (a DocCollection of the store contract). */
export interface HostedContexts {
  get(localId: string): Promise<Record<string, unknown> | undefined>;
  insert(localId: string, doc: Record<string, unknown>): Promise<boolean>;
}

/** How a kept @context came to the broker (CIM 009 v1.8 §5.13.1). */
export type ContextKind = 'Hosted' | 'Cached' | 'ImplicitlyCreated';

/** A kept @context as the store holds it; `context` is the value of the document's @context member. */
export interface KeptContext {
  kind: ContextKind;
  context: unknown;
  /** When it was added (ISO 8601). */
  timestamp: string;
  /** The URL it was fetched from (Cached only). */
  url?: string;
}

/** The path under which the broker serves the @contexts it keeps (CIM 009 v1.8 §6.30, §6.31). */
export const HOSTED_PATH = '/ngsi-ld/v1/jsonldContexts/';
const HOSTED_URL = /^https?:\/\/[^/?#]+\/ngsi-ld\/v1\/jsonldContexts\/([^/?#]+)$/;

/** The local id of a URL naming a kept @context, else undefined. */
export function hostedLocalId(url: string): string | undefined {
  const m = HOSTED_URL.exec(url);
  if (m === null) return undefined;
  try {
    return decodeURIComponent(m[1]!);
  } catch {
    return undefined;
  }
}

/** The local id under which a fetched URL is recorded as Cached. */
export function cachedLocalId(url: string): string {
  return 'cached-' + createHash('sha256').update(url).digest('base64url').slice(0, 22);
}

const NOTHING_TO_KEEP: readonly ContextToKeep[] = [];

/** A @context to keep in a tenant's collection: its local id there and the document. */
export interface ContextToKeep {
  localId: string;
  doc: KeptContext;
}

/** The normalized user part of a request's @context. */
interface UserContext {
  /** '' for none; the URL for a single URL; '#' + digest of the JSON otherwise. */
  userKey: string;
  /** What is processed between the two cores; core URLs removed. */
  elements: unknown[];
  contextValue: unknown;
  /** The single URL, when the user context is one. */
  url: string | undefined;
}

const CORE_ONLY = '';

export class ContextResolver {
  readonly coreVersion: CoreVersion;
  readonly coreUrl: string;
  private readonly opts: ContextResolverOptions;
  private readonly resolved: LRUCache<string, FlatContext>;
  private readonly pending = new Map<string, SharedBuild>();
  private coreDoc: object | undefined;
  private coreActive: JsonLdActiveContext | undefined;
  private coreCtx: FlatContext | undefined;
  /** Every core term is @protected (v1.8+): then the trailing core changes nothing but @vocab (see build()). */
  private coreAllProtected = false;
  private defaultCtx: FlatContext | undefined;
  private initializing: Promise<void> | undefined;
  /** URL of a kept @context → the timestamp of the version its resolved entry was built from. */
  private readonly hostedVersions = new Map<string, string>();
  /** Set once this thread listens to the others (it keeps @contexts in the store): then it tells them too. */
  private broadcasting = false;
  /** Local ids (tenant's included) this thread has kept: a request finding its @contexts here writes nothing. */
  private readonly keptIds = new LRUCache<string, true>({ max: 10_000 });

  /**
   * `documents`: where every document comes from; `broadcast`: how the threads keeping @contexts in the store
   * (`hosted`) tell each other to drop one.
   */
  constructor(
    opts: ContextResolverOptions,
    private readonly documents: ContextDocuments,
    private readonly broadcast?: ContextBroadcast,
  ) {
    this.opts = opts;
    this.coreVersion = opts.coreVersion ?? '1.8';
    this.coreUrl = CORE_URLS[this.coreVersion];
    if (this.coreUrl === undefined) throw new Error(`unknown core context version '${String(opts.coreVersion)}'`);
    this.resolved = new LRUCache({ max: opts.cacheSize ?? 1000 });
  }

  /** Opens the local documents, processes the core and resolves --defaultUserContext; throws an Error naming the option. */
  init(): Promise<void> {
    this.initializing ??= this.initOnce();
    return this.initializing;
  }

  /** The context of a request that carries none; valid after init(). */
  get defaultContext(): ResolvedContext {
    if (this.defaultCtx === undefined) throw new Error('ContextResolver.init() has not completed');
    return this.defaultCtx;
  }

  /** The core context alone; valid after init(). */
  get coreContext(): ResolvedContext {
    if (this.coreCtx === undefined) throw new Error('ContextResolver.init() has not completed');
    return this.coreCtx;
  }

  /** Hot path: the context of a Link header URL already resolved, else undefined (then call resolve). */
  resolveCachedUrl(url: string): ResolvedContext | undefined {
    // A kept @context may be deleted through another thread: resolve() checks the store each time.
    if (this.hostedVersions.has(url)) return undefined;
    return this.resolved.get(url) ?? (isCoreContextUrl(url) ? this.coreCtx : undefined);
  }

  /** The documents this thread fetched and still caches, by URL. */
  cachedUrls(): string[] {
    return this.documents.urls();
  }

  /**
   * Drops what this thread (and, through the channel, every other thread) cached of `url`: the fetched document
   * and every resolved context, since any of them may include it.
   */
  forget(url: string, tellOthers = true): void {
    this.documents.forget(url);
    this.dropResolved(url, tellOthers);
  }

  private dropResolved(url: string, tellOthers: boolean): void {
    this.resolved.clear();
    this.hostedVersions.delete(url);
    // A kept @context of some tenant was deleted: the next request using it keeps it again.
    this.keptIds.clear();
    if (tellOthers && this.broadcasting) this.broadcast!.post(url);
  }

  /**
   * Fetches `url` again (DELETE ?reload=true, §5.13.5), whatever is cached or remembered of it: 503
   * LdContextNotAvailable when it cannot be obtained. `waiter` parks at once: a reload always goes to the network.
   */
  async reload(url: string, waiter?: FetchWaiter): Promise<object> {
    waiter?.park();
    const doc = await this.documents.reload(url);
    this.dropResolved(url, true);
    return doc;
  }

  /**
   * What a request of `tenant` that used `ctx` makes the broker keep in that tenant (CIM 009 v1.8 §5.13.1): the
   * inline context as ImplicitlyCreated (unless `implicit` is false), the URLs fetched as Cached; each tenant has
   * its own records, listed and deleted there only. Leaves out what this thread has already kept; call kept() once
   * the store has them.
   */
  keptFor(tenant: string, ctx: ResolvedContext, implicit = true): readonly ContextToKeep[] {
    const keeps = ctx instanceof FlatContext ? ctx.keeps : undefined;
    if (keeps === undefined) return NOTHING_TO_KEEP;
    const out: ContextToKeep[] = [];
    if (implicit && keeps.implicitId !== undefined) {
      const localId = tenantLocalId(tenant, keeps.implicitId);
      if (!this.keptIds.has(localId))
        out.push({ localId, doc: { kind: 'ImplicitlyCreated', context: keeps.implicitContext, timestamp: new Date().toISOString() } });
    }
    for (const { url, cachedId } of keeps.fetched) {
      const localId = tenantLocalId(tenant, cachedId);
      if (this.keptIds.has(localId)) continue;
      const doc = (this.documents.cached(url) ?? this.documents.local(url)) as Record<string, unknown> | undefined;
      out.push({ localId, doc: { kind: 'Cached', url, context: doc?.['@context'], timestamp: new Date().toISOString() } });
    }
    return out;
  }

  /** Notes that the store keeps these (see keptFor). */
  kept(localIds: readonly string[]): void {
    for (const id of localIds) this.keptIds.set(id, true);
  }

  /** A context resolved earlier, by its ResolvedContext.key, while it is cached. */
  cached(key: string): ResolvedContext | undefined {
    const prefix = this.keyOf(CORE_ONLY);
    if (key === prefix) return this.coreCtx;
    if (!key.startsWith(prefix + ' ')) return undefined;
    return this.resolved.get(key.slice(prefix.length + 1));
  }

  /**
   * A request's @context: undefined or null (none: the default context), a URL, a context object, or an array
   * of those. Rejects with LdError: InvalidRequest (400) for a context that is not valid, LdContextNotAvailable
   * (503) for a URL that cannot be obtained, or what `waiter.park()` threw.
   */
  resolve(ctx: unknown, waiter?: FetchWaiter): Promise<ResolvedContext> {
    if (this.coreActive === undefined) return this.init().then(() => this.resolve(ctx, waiter));
    if (ctx === undefined || ctx === null) return Promise.resolve(this.defaultContext);
    if (typeof ctx === 'string') {
      if (this.opts.hosted !== undefined) {
        const localId = hostedLocalId(ctx);
        if (localId !== undefined) return this.resolveHosted(ctx, localId, waiter);
      }
      const hit = this.resolved.get(ctx);
      if (hit !== undefined) return Promise.resolve(hit);
    }
    let user: UserContext;
    try {
      user = this.normalize(ctx);
    } catch (e) {
      return Promise.reject(e);
    }
    if (user.userKey === CORE_ONLY) return Promise.resolve(this.coreCtx!);
    const hit = this.resolved.get(user.userKey);
    if (hit !== undefined) return Promise.resolve(hit);
    let b = this.pending.get(user.userKey);
    if (b === undefined) {
      const key = user.userKey;
      b = new SharedBuild();
      b.start(this.build(user, b).finally(() => this.pending.delete(key)));
      this.pending.set(key, b);
    }
    return b.join(waiter);
  }

  /** A Link header URL naming a kept @context: resolved from the store's current version, cached while it lasts. */
  private async resolveHosted(url: string, localId: string, waiter: FetchWaiter | undefined): Promise<ResolvedContext> {
    const doc = (await this.opts.hosted!.get(localId)) as KeptContext | undefined;
    if (doc === undefined) {
      this.hostedVersions.delete(url);
      throw new LdError('LdContextNotAvailable', `@context '${url.slice(0, 300)}': the broker keeps no @context '${localId}'`);
    }
    const hit = this.resolved.get(url);
    if (hit !== undefined && this.hostedVersions.get(url) === doc.timestamp) return hit;
    this.resolved.delete(url);
    this.hostedVersions.set(url, doc.timestamp);
    const b = new SharedBuild();
    b.start(this.build(this.normalize(url), b));
    return b.join(waiter);
  }

  private async initOnce(): Promise<void> {
    if (this.opts.hosted !== undefined && this.broadcast !== undefined) {
      this.broadcast.listen((url) => this.forget(url, false));
      this.broadcasting = true;
    }
    this.documents.open();
    this.coreDoc = this.documents.local(this.coreUrl);
    if (this.coreDoc === undefined) throw new Error(`core context ${this.coreUrl} is not available locally`);
    const failures: LdError[] = [];
    try {
      this.coreActive = await processContext(await initialContext(), this.coreUrl, {
        documentLoader: this.loader(failures, undefined, undefined),
      });
    } catch (e) {
      throw new Error(`core context ${this.coreUrl} cannot be processed: ${failures[0]?.detail ?? describeJsonLdError(e)}`);
    }
    this.coreAllProtected = [...this.coreActive.mappings.values()].every((m) => m?.protected === true);
    const coreInfo = { key: this.keyOf(CORE_ONLY), contextValue: this.coreUrl, linkUrl: this.coreUrl, vocab: this.coreActive['@vocab'] };
    this.coreCtx = new FlatContext(coreInfo, this.coreActive, this.coreActive);
    const given = this.opts.defaultUserContext;
    if (given === undefined) {
      this.defaultCtx = this.coreCtx;
      return;
    }
    try {
      const user = this.normalize(given);
      this.defaultCtx = user.userKey === CORE_ONLY ? this.coreCtx : await this.build(user);
    } catch (e) {
      throw new Error(`--defaultUserContext ${given}: ${e instanceof LdError ? e.detail : String(e)}`);
    }
  }

  private keyOf(userKey: string): string {
    return userKey === CORE_ONLY ? `core-${this.coreVersion}` : `core-${this.coreVersion} ${userKey}`;
  }

  /**
   * The user context of a request's @context. `contextValue` is the @context as the request gave it (the core alone
   * when it gave only the core): answers echo it (ETSI's suite pins the response @context to the request's; the core
   * applies anyway, CIM 009 §5.5.7). Two spellings of one context (`X`, `[X]`, `[X, core]`) are processed alike but
   * echo differently, so the spelling is part of the key.
   */
  private normalize(ctx: unknown): UserContext {
    // jsonld drops a term named __proto__ (its clone assigns it as a prototype) and the store could not keep it.
    checkNoProtoMember(ctx, '@context');
    const user = this.normalizeElements(ctx);
    if (user.userKey === CORE_ONLY || typeof ctx === 'string' || (!Array.isArray(ctx) && user.elements.length === 1)) return user;
    const canonical = user.elements.length === 1 ? user.elements[0] : user.elements;
    const spelling = JSON.stringify(ctx);
    if (spelling === JSON.stringify(canonical)) return user;
    return { ...user, userKey: `${user.userKey} as ${digestKey(ctx)}`, contextValue: ctx };
  }

  private normalizeElements(ctx: unknown): UserContext {
    if (typeof ctx === 'string') {
      if (isCoreContextUrl(ctx)) return { userKey: CORE_ONLY, elements: [], contextValue: this.coreUrl, url: undefined };
      checkUrl(ctx);
      return { userKey: ctx, elements: [ctx], contextValue: ctx, url: ctx };
    }
    if (Array.isArray(ctx)) {
      const elements: unknown[] = [];
      for (const item of ctx) {
        if (typeof item === 'string') {
          if (isCoreContextUrl(item)) continue;
          checkUrl(item);
        } else if (item !== null && (typeof item !== 'object' || Array.isArray(item))) {
          throw new LdError('InvalidRequest', '@context: an array may hold only URLs and context objects');
        }
        elements.push(item);
      }
      if (elements.length === 0) return { userKey: CORE_ONLY, elements, contextValue: this.coreUrl, url: undefined };
      if (elements.length === 1 && typeof elements[0] === 'string') return this.normalizeElements(elements[0]);
      return {
        userKey: digestKey(elements.length === 1 ? elements[0] : elements),
        elements,
        contextValue: elements.length === 1 ? elements[0] : elements,
        url: undefined,
      };
    }
    if (typeof ctx === 'object' && ctx !== null) return { userKey: digestKey(ctx), elements: [ctx], contextValue: ctx, url: undefined };
    throw new LdError('InvalidRequest', '@context must be a URL, a context object, or an array of those');
  }

  /** Processes a user context; `b`, when given, hears when it waits for the network. */
  private async build(user: UserContext, b?: SharedBuild): Promise<FlatContext> {
    const failures: LdError[] = [];
    const fetched: string[] = [];
    const early = this.loadSideBySide(user.elements, b, fetched);
    // With an all-protected core, a user context that got past the leading core redefined no core term (or
    // redefined it identically), so the trailing core would only restore the core's @vocab: set that instead of
    // processing the core a second time (most of the cost of a new context).
    const local = this.coreAllProtected ? user.elements : [...user.elements, this.coreUrl];
    let active: JsonLdActiveContext;
    try {
      active = await processContext(this.coreActive!, local, { documentLoader: this.loader(failures, b, early, fetched) });
    } catch (e) {
      // jsonld wraps (or, in scoped contexts, replaces) the loader's error: the loader's own verdict wins.
      if (failures.length > 0) throw failures[0]!;
      throw new LdError('InvalidRequest', describeJsonLdError(e));
    }
    const key = this.keyOf(user.userKey);
    let linkUrl = user.url ?? this.opts.inlineContextUrl?.(key, user.contextValue);
    const fetchedIds = fetched.map((url) => ({ url, cachedId: cachedLocalId(url) }));
    let keeps: ContextKeeps | undefined = fetched.length > 0 ? { fetched: fetchedIds } : undefined;
    const implicitId = linkUrl === undefined ? this.implicitIdOf(user) : undefined;
    if (implicitId !== undefined) {
      linkUrl = this.opts.brokerUrl! + HOSTED_PATH + implicitId;
      keeps = { implicitId, implicitContext: user.elements.length === 1 ? user.elements[0] : user.elements, fetched: fetchedIds };
    }
    const vocab = this.coreAllProtected ? this.coreActive!['@vocab'] : active['@vocab'];
    const flat = new FlatContext(
      { key, contextValue: user.contextValue, linkUrl: linkUrl ?? this.coreUrl, vocab, keeps },
      active,
      this.coreActive,
    );
    this.resolved.set(user.userKey, flat);
    return flat;
  }

  /**
   * CIM 009 v1.8 §5.13.1: an inline request context is kept as ImplicitlyCreated, so that application/json answers
   * can link it. The id derives from the context itself: every thread names it alike, and a second insert is a no-op.
   */
  private implicitIdOf(user: UserContext): string | undefined {
    if (this.opts.hosted === undefined || this.opts.brokerUrl === undefined) return undefined;
    return 'implicit-' + user.userKey.slice(1, 23);
  }

  /**
   * Starts loading every URL a context names at its top level at once: jsonld loads them one after another, and a
   * context naming n slow URLs would wait n deadlines. The loader takes them from here, in context order.
   */
  private loadSideBySide(
    elements: readonly unknown[],
    b: SharedBuild | undefined,
    fetched: string[],
  ): Map<string, Promise<object>> | undefined {
    let early: Map<string, Promise<object>> | undefined;
    for (const element of elements) {
      if (typeof element !== 'string' || early?.has(element)) continue;
      const p = this.loadDocument(element, b, fetched);
      // Its failure is the loader's to report, when processing reaches it (or never, if an earlier one fails).
      p.catch(() => undefined);
      (early ??= new Map()).set(element, p);
    }
    return early;
  }

  /**
   * A documentLoader for one processing run; it records its failures, which jsonld may swallow, and the URLs it
   * took from the network or the fetch cache (`fetched`).
   */
  private loader(
    failures: LdError[],
    b: SharedBuild | undefined,
    early: Map<string, Promise<object>> | undefined,
    fetched?: string[],
  ): JsonLdDocumentLoader {
    return async (url) => {
      try {
        // A fresh copy: jsonld merges @import into the document it is given.
        const document = structuredClone(await (early?.get(url) ?? this.loadDocument(url, b, fetched)));
        return { contextUrl: null, documentUrl: url, document };
      } catch (e) {
        const err = e instanceof LdError ? e : new LdError('LdContextNotAvailable', `@context '${url.slice(0, 300)}': ${String(e)}`);
        failures.push(err);
        throw err;
      }
    };
  }

  /**
   * A context document by URL: the core, a kept one, a local one (--contextDir, embedded files), the cache, a failure
   * remembered, then the network, where the build (and every request awaiting it) is told it waits. URLs taken from
   * a local copy, the cache or the network are noted in `fetched` (they are kept as Cached for the request's tenant).
   */
  private async loadDocument(url: string, b: SharedBuild | undefined, fetched?: string[]): Promise<object> {
    if (isCoreContextUrl(url)) return this.coreDoc!;
    if (this.opts.hosted !== undefined) {
      const localId = hostedLocalId(url);
      if (localId !== undefined) return this.keptDocument(url, localId);
    }
    // CIM 009 v1.8 §5.13.1: a copy the broker holds of a remote @context (from --contextDir or shipped with it) is
    // Cached as a fetched one is, listed and managed in the tenants that use it; only the core is everyone's.
    if (fetched !== undefined && !fetched.includes(url)) fetched.push(url);
    const local = this.documents.local(url);
    if (local !== undefined) return local;
    const cached = this.documents.cached(url);
    if (cached !== undefined) return cached;
    const failed = this.documents.failure(url);
    if (failed !== undefined) throw failed;
    b?.goRemote();
    return this.documents.load(url);
  }

  /** A kept @context as a context document, from the store (the broker never fetches from itself). */
  private async keptDocument(url: string, localId: string): Promise<object> {
    const doc = (await this.opts.hosted!.get(localId)) as KeptContext | undefined;
    if (doc === undefined)
      throw new LdError('LdContextNotAvailable', `@context '${url.slice(0, 300)}': the broker keeps no @context '${localId}'`);
    return { '@context': doc.context };
  }
}

function checkUrl(url: string): void {
  // JSON-LD 1.1 would resolve a relative reference against the document base; a request has none to offer.
  if (!/^[A-Za-z][A-Za-z0-9+\-.]*:\S+$/.test(url))
    throw new LdError('InvalidRequest', `@context '${url.slice(0, 300)}' is not an absolute URL`);
}

function digestKey(value: unknown): string {
  return '#' + createHash('sha256').update(JSON.stringify(value)).digest('base64url');
}

function describeJsonLdError(e: unknown): string {
  if (isJsonLdError(e)) {
    const code = e.details?.code;
    const term = e.details?.term;
    if (code === 'protected term redefinition' && term !== undefined) return `@context redefines the protected core term '${term}'`;
    if (code === 'invalid context nullification') return '@context: null would remove the protected core terms';
    return `invalid @context: ${e.message}${code !== undefined ? ` (${code}${term !== undefined ? `, term '${term}'` : ''})` : ''}`;
  }
  return `invalid @context: ${e instanceof Error ? e.message : String(e)}`;
}
