// GET /entities compiles its query string once per @context and thread: the selection, rendering and join options
// and the store query depend on nothing else, and clients poll the same queries (bench query rows: ~4 µs a request).
import type { ResolvedContext } from '../ngsild/context/resolved.js';
import type { LdRequest } from '../pipeline/ld-request.js';
import type { JoinOptions } from './linked.js';
import type { RenderOptions } from './render-options.js';
import type { Selection } from './selection.js';
import type { CompiledQuery } from './query.js';

/** What GET /entities makes of its query string: shared by every request with the same one (frozen). */
export interface CompiledGet {
  readonly opts: RenderOptions;
  readonly sel: Selection;
  readonly join: JoinOptions | undefined;
  readonly query: CompiledQuery;
  /** The start of its page links (page-links.ts pageLinkBase). */
  readonly linkBase: string;
  /** What its rendered entities depend on but the media type (query-fragments.ts formKeyOf). */
  readonly formKey: string;
}

/** Query strings kept per @context: a client sending ever new ones replaces the oldest, never grows the map. */
export const COMPILED_PER_CONTEXT = 64;

/** By context (a context the resolver drops takes its queries along). */
const compiled = new WeakMap<ResolvedContext, Map<string, CompiledGet>>();

/**
 * The compiled form of the request's query string under its @context: kept from an earlier request, else built by
 * `build` (which throws the request's 400 on bad input: nothing is kept then). Frozen, so a handler that changed a
 * part shared with other requests fails its test instead of changing their answers.
 */
export function compiledGet(req: LdRequest, build: () => CompiledGet): CompiledGet {
  let byQuery = compiled.get(req.context);
  if (byQuery === undefined) compiled.set(req.context, (byQuery = new Map()));
  const text = req.task.query;
  const known = byQuery.get(text);
  if (known !== undefined) return known;
  const made = build();
  Object.freeze(made.opts);
  Object.freeze(made.sel);
  Object.freeze(made.query.storeQuery);
  Object.freeze(made.query.readOnlyQuery);
  Object.freeze(made.query);
  if (byQuery.size >= COMPILED_PER_CONTEXT) byQuery.delete(byQuery.keys().next().value!);
  byQuery.set(text, Object.freeze(made));
  return made;
}
