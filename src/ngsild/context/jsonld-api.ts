// The slice of the `jsonld` package (v9, CommonJS, no type declarations) that @context processing uses,
// typed from what lib/context.js and lib/ContextResolver.js really do; nothing else imports jsonld untyped.
import { createRequire } from 'node:module';

/** One term definition of a processed active context (lib/context.js createTermDefinition). */
export interface JsonLdTermMapping {
  readonly '@id'?: string | null;
  readonly '@type'?: string;
  readonly '@container'?: readonly string[];
  readonly '@context'?: unknown;
  readonly reverse?: boolean;
  /** Usable as the prefix of a compact IRI (JSON-LD 1.1 §4.1.2: simple term ending in a gen-delim, or @prefix). */
  readonly _prefix?: boolean;
  readonly _termHasColon?: boolean;
  readonly protected?: boolean;
}

/** A processed active context; only the members verified against jsonld 9.0.0 are listed. */
export interface JsonLdActiveContext {
  readonly mappings: Map<string, JsonLdTermMapping | null | undefined>;
  readonly '@vocab'?: string;
  readonly protected: Record<string, boolean>;
}

/** What a documentLoader resolves to (jsonld README, "Custom document loaders"). */
export interface JsonLdRemoteDocument {
  contextUrl: string | null;
  documentUrl: string;
  document: unknown;
}

export type JsonLdDocumentLoader = (url: string) => Promise<JsonLdRemoteDocument>;

export interface JsonLdProcessOptions {
  documentLoader: JsonLdDocumentLoader;
  base?: string;
}

/** lib/context.js: the context processing algorithm (JSON-LD 1.1 API §4.1) and the initial context. */
interface JsonLdContextModule {
  process(args: { activeCtx: unknown; localCtx: unknown; options: InternalOptions }): Promise<JsonLdActiveContext>;
  getInitialContext(options: InternalOptions): JsonLdActiveContext;
}

/** The options lib/context.js reads, as jsonld.processContext completes them (lib/jsonld.js _setDefaults). */
interface InternalOptions extends JsonLdProcessOptions {
  base: string;
  contextResolver?: unknown;
  eventHandler: unknown;
}

type ContextResolverClass = new (opts: {
  sharedCache: { get(key: string): unknown; set(key: string, value: unknown): unknown };
}) => unknown;

/** A JsonLdError as thrown by the library: `name` like `jsonld.SyntaxError`, `details.code` the spec's error code. */
export interface JsonLdErrorLike {
  name: string;
  message: string;
  details?: { code?: string; term?: string; url?: string; cause?: unknown };
}

// The modules of context processing only, not the package's entry (lib/jsonld.js), which also loads expansion,
// compaction, framing, RDF canonicalisation and a Node document loader on an HTTP client of its own (a second undici)
// that the broker never uses (its documentLoader is always given): about 60 ms of CPU less at the start of every
// thread that processes contexts (the main one, each pipeline thread, the notifier).
const require = createRequire(import.meta.url);
const jsonldContext = require('jsonld/lib/context.js') as JsonLdContextModule;
const jsonldUtil = require('jsonld/lib/util.js') as { clone<T>(value: T): T };
const jsonldEvents = require('jsonld/lib/events.js') as { setupEventHandler(args: { options: object }): unknown };
const JsonLdContextResolver = require('jsonld/lib/ContextResolver.js') as ContextResolverClass;

/** The options as jsonld.processContext completes them (lib/jsonld.js _setDefaults): base '', its event handlers. */
function internalOptions(options: JsonLdProcessOptions & { contextResolver?: unknown }): InternalOptions {
  return { base: '', ...options, eventHandler: jsonldEvents.setupEventHandler({ options }) };
}

/** The empty initial active context (processing a null local context returns it). */
export function initialContext(): Promise<JsonLdActiveContext> {
  return Promise.resolve(jsonldContext.getInitialContext(internalOptions({ documentLoader: refuseLoad })));
}

/**
 * JSON-LD 1.1 context processing (API §9.4.2): `local` applied over `active`. What jsonld.processContext does (lib/
 * jsonld.js) with a non-null local context: a copy of it, as the value of @context, through lib/context.js.
 */
export function processContext(active: JsonLdActiveContext, local: unknown, options: JsonLdProcessOptions): Promise<JsonLdActiveContext> {
  // A resolver cache private to this run: jsonld's default one is process-wide, and its @import handling stores
  // a raw context where a processed one is expected (lib/context.js "this could potentially conflict"), which
  // breaks the next run over the same active context. Our own caches sit above this call.
  const contextResolver = new JsonLdContextResolver({ sharedCache: new Map() });
  const opts = internalOptions({ ...options, contextResolver });
  if (local === null) return Promise.resolve(jsonldContext.getInitialContext(opts));
  let localCtx = jsonldUtil.clone(local);
  // lib/types.js isObject: a plain object.
  if (!(Object.prototype.toString.call(localCtx) === '[object Object]' && '@context' in (localCtx as object)))
    localCtx = { '@context': localCtx };
  return jsonldContext.process({ activeCtx: active, localCtx, options: opts });
}

const refuseLoad: JsonLdDocumentLoader = (url) => Promise.reject(new Error(`no document loader for ${url}`));

export function isJsonLdError(e: unknown): e is JsonLdErrorLike {
  return e instanceof Error && e.name.startsWith('jsonld.');
}
