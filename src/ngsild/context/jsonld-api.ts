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

interface JsonLdModule {
  processContext(
    activeCtx: unknown,
    localCtx: unknown,
    options: JsonLdProcessOptions & { contextResolver?: unknown },
  ): Promise<JsonLdActiveContext>;
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

const require = createRequire(import.meta.url);
const jsonld = require('jsonld') as JsonLdModule;
const JsonLdContextResolver = require('jsonld/lib/ContextResolver.js') as ContextResolverClass;

/** The empty initial active context (processing a null local context returns it). */
export function initialContext(): Promise<JsonLdActiveContext> {
  return jsonld.processContext({}, null, { documentLoader: refuseLoad });
}

/** JSON-LD 1.1 context processing (API §9.4.2): `local` applied over `active`. */
export function processContext(active: JsonLdActiveContext, local: unknown, options: JsonLdProcessOptions): Promise<JsonLdActiveContext> {
  // A resolver cache private to this run: jsonld's default one is process-wide, and its @import handling stores
  // a raw context where a processed one is expected (lib/context.js "this could potentially conflict"), which
  // breaks the next run over the same active context. Our own caches sit above this call.
  const contextResolver = new JsonLdContextResolver({ sharedCache: new Map() });
  return jsonld.processContext(active, local, { ...options, contextResolver });
}

const refuseLoad: JsonLdDocumentLoader = (url) => Promise.reject(new Error(`no document loader for ${url}`));

export function isJsonLdError(e: unknown): e is JsonLdErrorLike {
  return e instanceof Error && e.name.startsWith('jsonld.');
}
