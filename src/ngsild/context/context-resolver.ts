// Resolves the @context of a request into a ResolvedContext: term definitions of the user context(s) with the
// core context applied last (so core terms win, CIM 009 v1.8 §5.5.7), flattened into Maps for the hot path and
// cached by key. Remote contexts are fetched with a timeout and a size cap, and cached; --contextDir maps URLs to
// local files (air-gapped deployments); the core contexts are embedded and never fetched.
import { readFileSync } from 'node:fs';
import { join, isAbsolute, resolve as resolvePath } from 'node:path';
import { LRUCache } from 'lru-cache';
import { LdError } from '../problem.js';
import type { ResolvedContext } from './resolved.js';
import { CORE_URLS, embeddedDocument, type CoreVersion } from './core-contexts.js';

export interface ContextResolverOptions {
  coreVersion?: CoreVersion;
  defaultUserContext?: string;
  /** A directory with index.json: `{ "<context URL>": "<file relative to the directory>", ... }`. */
  contextDir?: string;
  fetchTimeoutMs?: number;
  maxContextBytes?: number;
  cacheSize?: number;
  log?: { warn(obj: object | string, msg?: string): void };
}

interface TermDef {
  /** Raw IRI as written (may be a compact IRI or a term) until the context is built. */
  raw: string;
  iri: string;
  type: string | undefined;
  core: boolean;
}

const MAX_IMPORT_DEPTH = 16;
const KEYWORDS = new Set(['@vocab', '@version', '@protected', '@propagate', '@base', '@language', '@direction', '@import', '@type']);

class Built implements ResolvedContext {
  private readonly expanded = new Map<string, string>();
  private readonly compacted = new Map<string, string>();
  private readonly reverse = new Map<string, string>();
  /** Prefix IRIs (ending in a gen-delim) and their terms, longest first. */
  private readonly prefixes: Array<[string, string]> = [];

  constructor(
    readonly key: string,
    private readonly terms: Map<string, TermDef>,
    private readonly vocab: string | undefined,
    readonly contextValue: unknown,
    readonly linkUrl: string,
  ) {
    for (const def of terms.values()) def.iri = this.resolveRaw(def.raw, 0);
    // Compaction prefers a user term over a core term for the same IRI.
    for (const pass of [true, false]) {
      for (const [term, def] of terms) {
        if (def.core !== pass || def.iri.startsWith('@')) continue;
        this.reverse.set(def.iri, term);
      }
    }
    for (const [term, def] of terms) {
      if (term.includes(':')) continue;
      const last = def.iri[def.iri.length - 1];
      if (last === '/' || last === '#' || last === ':') this.prefixes.push([def.iri, term]);
    }
    this.prefixes.sort((a, b) => b[0].length - a[0].length);
  }

  private resolveRaw(raw: string, depth: number): string {
    if (depth > 8 || raw.startsWith('@')) return raw;
    const def = this.terms.get(raw);
    if (def !== undefined && def.raw !== raw) return this.resolveRaw(def.raw, depth + 1);
    const colon = raw.indexOf(':');
    if (colon > 0) {
      const prefix = raw.slice(0, colon);
      const suffix = raw.slice(colon + 1);
      if (suffix.startsWith('//')) return raw;
      const p = this.terms.get(prefix);
      if (p !== undefined) return this.resolveRaw(p.raw, depth + 1) + suffix;
      return raw;
    }
    return this.vocab !== undefined ? this.vocab + raw : raw;
  }

  expandTerm(term: string): string {
    let iri = this.expanded.get(term);
    if (iri === undefined) {
      const def = this.terms.get(term);
      iri = def !== undefined ? def.iri : this.resolveRaw(term, 0);
      if (this.expanded.size < 100_000) this.expanded.set(term, iri);
    }
    return iri;
  }

  compactIri(iri: string): string {
    let term = this.compacted.get(iri);
    if (term === undefined) {
      term = this.compactUncached(iri);
      if (this.compacted.size < 100_000) this.compacted.set(iri, term);
    }
    return term;
  }

  private compactUncached(iri: string): string {
    const exact = this.reverse.get(iri);
    if (exact !== undefined) return exact;
    if (this.vocab !== undefined && iri.startsWith(this.vocab)) {
      const rest = iri.slice(this.vocab.length);
      if (rest !== '' && !rest.includes(':') && !this.terms.has(rest)) return rest;
    }
    for (const [prefixIri, prefix] of this.prefixes) {
      if (iri.length > prefixIri.length && iri.startsWith(prefixIri)) {
        const candidate = `${prefix}:${iri.slice(prefixIri.length)}`;
        if (!this.terms.has(candidate) && this.expandTerm(candidate) === iri) return candidate;
      }
    }
    return iri;
  }

  termType(term: string): string | undefined {
    return this.terms.get(term)?.type;
  }
}

export class ContextResolver {
  readonly coreUrl: string;
  private readonly opts: Required<Pick<ContextResolverOptions, 'fetchTimeoutMs' | 'maxContextBytes'>> & ContextResolverOptions;
  private readonly documents: LRUCache<string, object>;
  private readonly resolved: LRUCache<string, ResolvedContext>;
  private readonly pending = new Map<string, Promise<ResolvedContext>>();
  private readonly localFiles = new Map<string, string>();
  private coreTerms = new Map<string, TermDef>();
  private coreVocab: string | undefined;
  private defaultCtx: ResolvedContext | undefined;

  constructor(opts: ContextResolverOptions = {}) {
    this.opts = { fetchTimeoutMs: 5000, maxContextBytes: 2 * 1024 * 1024, ...opts };
    this.coreUrl = CORE_URLS[opts.coreVersion ?? '1.8'];
    const size = opts.cacheSize ?? 1000;
    this.documents = new LRUCache({ max: size });
    this.resolved = new LRUCache({ max: size });
  }

  async init(): Promise<void> {
    if (this.opts.contextDir !== undefined) this.loadContextDir(this.opts.contextDir);
    const core = embeddedDocument(this.coreUrl) as { '@context': unknown };
    const state: ProcessState = { terms: new Map(), vocab: undefined };
    await this.process(core['@context'], state, 0, new Set([this.coreUrl]));
    for (const def of state.terms.values()) def.core = true;
    this.coreTerms = state.terms;
    this.coreVocab = state.vocab;
    const coreOnly = this.build('core', undefined);
    this.defaultCtx = this.opts.defaultUserContext === undefined ? coreOnly : await this.resolveUncached(this.opts.defaultUserContext);
  }

  get defaultContext(): ResolvedContext {
    if (this.defaultCtx === undefined) throw new Error('ContextResolver.init() was not called');
    return this.defaultCtx;
  }

  resolveCachedUrl(url: string): ResolvedContext | undefined {
    return this.resolved.get(url);
  }

  /** A request's @context: undefined (the default), a URL, an object or an array of those. */
  resolve(ctx: unknown): Promise<ResolvedContext> {
    if (ctx === undefined || ctx === null) return Promise.resolve(this.defaultContext);
    if (ctx === this.coreUrl || (Array.isArray(ctx) && ctx.length === 1 && ctx[0] === this.coreUrl)) return Promise.resolve(this.build('core', undefined));
    const key = typeof ctx === 'string' ? ctx : JSON.stringify(ctx);
    const hit = this.resolved.get(key);
    if (hit !== undefined) return Promise.resolve(hit);
    let p = this.pending.get(key);
    if (p === undefined) {
      p = this.resolveUncached(ctx).finally(() => this.pending.delete(key));
      this.pending.set(key, p);
    }
    return p;
  }

  private async resolveUncached(ctx: unknown): Promise<ResolvedContext> {
    const key = typeof ctx === 'string' ? ctx : JSON.stringify(ctx);
    const state: ProcessState = { terms: new Map(), vocab: undefined };
    await this.process(ctx, state, 0, new Set());
    const built = this.build(key, ctx, state);
    this.resolved.set(key, built);
    return built;
  }

  /** The user terms with the core terms applied over them (the core context comes last). */
  private build(key: string, given: unknown, user?: ProcessState): ResolvedContext {
    if (user === undefined) {
      const cached = this.resolved.get(`core:${key}`);
      if (cached !== undefined) return cached;
    }
    const terms = new Map<string, TermDef>();
    if (user !== undefined) for (const [t, d] of user.terms) terms.set(t, { ...d });
    for (const [t, d] of this.coreTerms) terms.set(t, { ...d });
    const vocab = this.coreVocab ?? user?.vocab;
    let contextValue: unknown = this.coreUrl;
    let linkUrl = this.coreUrl;
    if (given !== undefined) {
      const list = Array.isArray(given) ? given.filter((c) => c !== this.coreUrl) : [given];
      contextValue = [...list, this.coreUrl];
      if (list.length === 1 && typeof list[0] === 'string') linkUrl = list[0];
    }
    const built = new Built(`${this.coreUrl}|${key}`, terms, vocab, contextValue, linkUrl);
    if (user === undefined) this.resolved.set(`core:${key}`, built);
    return built;
  }

  private async process(value: unknown, state: ProcessState, depth: number, seen: Set<string>): Promise<void> {
    if (depth > MAX_IMPORT_DEPTH) throw new LdError('InvalidRequest', '@context: contexts nest too deeply');
    if (value === null) {
      state.terms.clear();
      state.vocab = undefined;
      return;
    }
    if (typeof value === 'string') {
      if (seen.has(value)) return;
      seen.add(value);
      const doc = await this.load(value);
      await this.process((doc as { '@context': unknown })['@context'], state, depth + 1, seen);
      return;
    }
    if (Array.isArray(value)) {
      for (const item of value) await this.process(item, state, depth + 1, seen);
      return;
    }
    if (typeof value !== 'object') throw new LdError('InvalidRequest', `@context: ${JSON.stringify(value)?.slice(0, 100)} is not a context`);
    const obj = value as Record<string, unknown>;
    if (obj['@import'] !== undefined) {
      if (typeof obj['@import'] !== 'string') throw new LdError('InvalidRequest', '@context: @import must be a URL');
      await this.process(obj['@import'], state, depth + 1, seen);
    }
    if (obj['@vocab'] !== undefined) {
      const v = obj['@vocab'];
      if (v !== null && typeof v !== 'string') throw new LdError('InvalidRequest', '@context: @vocab must be a string');
      state.vocab = v === null ? undefined : v;
    }
    for (const term of Object.keys(obj)) {
      if (term.startsWith('@')) {
        if (!KEYWORDS.has(term)) throw new LdError('InvalidRequest', `@context: '${term}' is not a context keyword`);
        continue;
      }
      if (term === '') throw new LdError('InvalidRequest', '@context: an empty term');
      const def = obj[term];
      if (def === null) {
        state.terms.delete(term);
      } else if (typeof def === 'string') {
        state.terms.set(term, { raw: def, iri: def, type: undefined, core: false });
      } else if (typeof def === 'object' && !Array.isArray(def)) {
        const d = def as Record<string, unknown>;
        const id = d['@id'] ?? d['@reverse'];
        if (id !== undefined && id !== null && typeof id !== 'string') throw new LdError('InvalidRequest', `@context: the @id of '${term}' is not a string`);
        if (d['@type'] !== undefined && typeof d['@type'] !== 'string') throw new LdError('InvalidRequest', `@context: the @type of '${term}' is not a string`);
        const raw = typeof id === 'string' ? id : term.includes(':') ? term : (state.vocab ?? '') + term;
        state.terms.set(term, { raw, iri: raw, type: d['@type'] as string | undefined, core: false });
      } else {
        throw new LdError('InvalidRequest', `@context: the definition of '${term}' is neither a string nor an object`);
      }
    }
  }

  /** A context document by URL: embedded, --contextDir, cache, then the network. */
  private async load(url: string): Promise<object> {
    const embedded = embeddedDocument(url);
    if (embedded !== undefined) return checkDocument(url, embedded);
    const cached = this.documents.get(url);
    if (cached !== undefined) return cached;
    const local = this.localFiles.get(url);
    const doc = checkDocument(url, local !== undefined ? parseJson(url, readFileSync(local, 'utf8')) : await this.fetchDocument(url));
    this.documents.set(url, doc);
    return doc;
  }

  private async fetchDocument(url: string): Promise<unknown> {
    if (!/^https?:\/\//i.test(url)) throw new LdError('LdContextNotAvailable', `@context '${url}' is not an http(s) URL and is not known locally`);
    let res: Response;
    try {
      res = await fetch(url, { signal: AbortSignal.timeout(this.opts.fetchTimeoutMs), headers: { accept: 'application/ld+json, application/json' }, redirect: 'follow' });
    } catch (e) {
      throw new LdError('LdContextNotAvailable', `@context '${url}' cannot be fetched: ${e instanceof Error ? e.message : String(e)}`);
    }
    if (!res.ok) {
      await res.body?.cancel();
      throw new LdError('LdContextNotAvailable', `@context '${url}' answered ${res.status}`);
    }
    const declared = Number(res.headers.get('content-length') ?? -1);
    if (declared > this.opts.maxContextBytes) {
      await res.body?.cancel();
      throw new LdError('LdContextNotAvailable', `@context '${url}' is larger than ${this.opts.maxContextBytes} bytes`);
    }
    const chunks: Uint8Array[] = [];
    let size = 0;
    try {
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        size += chunk.byteLength;
        if (size > this.opts.maxContextBytes) throw new LdError('LdContextNotAvailable', `@context '${url}' is larger than ${this.opts.maxContextBytes} bytes`);
        chunks.push(chunk);
      }
    } catch (e) {
      if (e instanceof LdError) throw e;
      throw new LdError('LdContextNotAvailable', `@context '${url}' could not be read: ${e instanceof Error ? e.message : String(e)}`);
    }
    return parseJson(url, Buffer.concat(chunks).toString('utf8'));
  }

  private loadContextDir(dir: string): void {
    const base = isAbsolute(dir) ? dir : resolvePath(dir);
    let index: unknown;
    try {
      index = JSON.parse(readFileSync(join(base, 'index.json'), 'utf8'));
    } catch (e) {
      throw new Error(`--contextDir ${dir}: index.json cannot be read: ${e instanceof Error ? e.message : String(e)}`);
    }
    if (typeof index !== 'object' || index === null || Array.isArray(index)) throw new Error(`--contextDir ${dir}: index.json must map URLs to files`);
    for (const [url, file] of Object.entries(index)) {
      if (typeof file !== 'string') throw new Error(`--contextDir ${dir}: the entry for ${url} is not a file name`);
      const path = isAbsolute(file) ? file : join(base, file);
      try {
        readFileSync(path);
      } catch {
        throw new Error(`--contextDir ${dir}: ${file} (for ${url}) cannot be read`);
      }
      this.localFiles.set(url, path);
    }
  }
}

interface ProcessState {
  terms: Map<string, TermDef>;
  vocab: string | undefined;
}

function parseJson(url: string, text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new LdError('InvalidRequest', `@context '${url}' is not valid JSON`);
  }
}

function checkDocument(url: string, doc: unknown): object {
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc) || !('@context' in doc))
    throw new LdError('InvalidRequest', `@context '${url}' is not a JSON-LD context document (no @context member)`);
  return doc;
}
