// What a JSON-LD context document is (JSON-LD 1.1 API §9.4.3), checked the same way wherever one comes from: the
// network, --contextDir, the files shipped with the broker (src/pipeline/contexts reads them all).
import { LdError } from '../problem.js';
import { MAX_NESTING, tooDeepAt } from '../entity/depth.js';
import { protoMemberPath } from '../entity/proto-member.js';

/** Parses a context document's text; fetched documents and --contextDir files alike. */
export function parseContextDocument(url: string, text: string): object {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (e) {
    throw new LdError('InvalidRequest', `@context '${url.slice(0, 300)}' is not valid JSON: ${describe(e)}`);
  }
  // JSON-LD context processing recurses into scoped contexts: a document is bounded as a request body is.
  if (tooDeepAt(doc, MAX_NESTING) !== undefined)
    throw new LdError('InvalidRequest', `@context '${url.slice(0, 300)}' is nested deeper than ${MAX_NESTING} levels`);
  // jsonld would drop a term named __proto__, and the store could not keep the document as Cached.
  const proto = protoMemberPath(doc);
  if (proto !== undefined)
    throw new LdError(
      'InvalidRequest',
      `@context '${url.slice(0, 300)}' holds a member named "__proto__" (at ${proto.slice(1, 200)}), which this broker cannot process`,
    );
  return checkContextDocument(url, doc);
}

/** A context document is a JSON object with an `@context` member (JSON-LD 1.1 API §9.4.3 "loading remote context"). */
export function checkContextDocument(url: string, doc: unknown): object {
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc) || !('@context' in doc))
    throw new LdError(
      'InvalidRequest',
      `@context '${url.slice(0, 300)}' is not a JSON-LD context document (a JSON object with an @context member)`,
    );
  return doc;
}

function describe(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/**
 * Where the @context resolver (context-resolver.ts) gets documents from. The thread's context service implements it
 * (src/pipeline/contexts/context-service.ts): every read of a file and every fetch happens there, none here.
 */
export interface ContextDocuments {
  /** Reads what is local (--contextDir), once, before the first document is asked for; throws an Error naming it. */
  open(): void;
  /** A document served without the network (--contextDir, the files shipped with the broker), else undefined. */
  local(url: string): object | undefined;
  /** A remote document this thread holds. */
  cached(url: string): object | undefined;
  /** The failure of `url` while it is remembered (a 503 says in Retry-After when it will be forgotten). */
  failure(url: string): LdError | undefined;
  /** The remote document: from the cache, a remembered failure, the fetch under way, or a new fetch. */
  load(url: string): Promise<object>;
  /** Fetches `url` again whatever is cached or remembered (CIM 009 §5.13.5 reload); a failure is not remembered. */
  reload(url: string): Promise<object>;
  /** Drops what this thread holds of `url`. */
  forget(url: string): void;
  /** The URLs of the remote documents this thread holds. */
  urls(): string[];
}

/** How threads tell each other to drop what they resolved with a kept @context (a BroadcastChannel in the service). */
export interface ContextBroadcast {
  post(url: string): void;
  listen(onForget: (url: string) => void): void;
}
