// A query page's JSON body assembled from each entity's rendered bytes, kept from an earlier query of this thread
// (issue 24: rendering and serialising 20 entities was a third of a query's pipeline time, for entities that rarely
// change between two polls). Only for entities a store hands out again while their stored bytes are unchanged
// (EntityPage.kept, embdb entity-cache.ts): a changed entity is a new object, so a form kept on the old one is
// never found again, and goes with it.
import type { StoredEntity } from '../ngsild/entity/model.js';
import type { ResolvedContext } from '../ngsild/context/resolved.js';
import { renderEntity } from '../ngsild/entity/render.js';
import type { LdRequest } from '../pipeline/ld-request.js';
import { LD_JSON } from '../pipeline/media.js';
import type { RenderOptions } from './render-options.js';

/** URL parameters a rendered entity depends on (render-options.ts): the rest select or page, never change one. */
const RENDER_PARAMS = ['format', 'options', 'attrs', 'pick', 'omit', 'lang', 'datasetId'] as const;

/** Forms kept per entity (media types, representations): a client cycling through more replaces the oldest. */
export const FORMS_PER_ENTITY = 4;

const forms = new WeakMap<StoredEntity, Map<string, Uint8Array>>();
/**
 * The last body assembled, by its first entity's form, with the forms it joined: a page asked again with the same
 * forms (a polled query whose entities did not change) is answered with the same bytes, not a new buffer copied
 * again (a body of 20 entities: its allocation and copy were a tenth of a query's front time, issue 24). A body is
 * never changed once made; one a pool thread transferred to the front is detached (byteLength 0) and made anew.
 */
const bodies = new WeakMap<Uint8Array, { parts: Uint8Array[]; body: Uint8Array }>();
/** A number per resolved @context object: a @context resolved again (changed, refetched) starts afresh. */
const contextIds = new WeakMap<ResolvedContext, number>();
let nextContextId = 0;
const encoder = new TextEncoder();
const OPEN = 0x5b; // [
const COMMA = 0x2c;
const CLOSE = 0x5d; // ]

/**
 * What the rendered bytes of an entity depend on besides the entity, but for the media type: the @context the names
 * are compacted with and the rendering parameters. Made once per compiled query string (query-compiled.ts).
 */
export function formKeyOf(req: LdRequest): string {
  let n = contextIds.get(req.context);
  if (n === undefined) {
    n = nextContextId++;
    contextIds.set(req.context, n);
  }
  return `${n}\u0000${JSON.stringify(RENDER_PARAMS.map((name) => req.query.get(name) ?? null))}`;
}

/**
 * The page's body, byte for byte what bodyBytes (pipeline/body-bytes.ts) makes of the rendered array: JSON.stringify
 * of an array is its items' JSON joined by commas in brackets, and an application/ld+json item carries @context.
 * Only for application/json and application/ld+json (a GeoJSON body is one FeatureCollection).
 */
export function encodedPage(req: LdRequest, entities: readonly StoredEntity[], opts: RenderOptions, formKey: string): Uint8Array {
  const key = `${req.media}\u0000${formKey}`;
  const parts: Uint8Array[] = [];
  let size = 2 + Math.max(0, entities.length - 1);
  for (const entity of entities) {
    let byKey = forms.get(entity);
    let bytes = byKey?.get(key);
    if (bytes === undefined) {
      const item = renderEntity(entity, req.context, opts);
      bytes = encoder.encode(JSON.stringify(req.media === LD_JSON ? { ...item, '@context': req.context.contextValue } : item));
      if (byKey === undefined) forms.set(entity, (byKey = new Map()));
      else if (byKey.size >= FORMS_PER_ENTITY) byKey.delete(byKey.keys().next().value!);
      byKey.set(key, bytes);
    }
    parts.push(bytes);
    size += bytes.byteLength;
  }
  const first = parts[0];
  if (first !== undefined) {
    const kept = bodies.get(first);
    if (kept !== undefined && kept.body.byteLength === size && sameParts(kept.parts, parts)) return kept.body;
  }
  // Its own buffer (not a slice of a shared pool): a pool thread transfers the body to the front.
  const out = new Uint8Array(size);
  let at = 0;
  out[at++] = OPEN;
  for (let i = 0; i < parts.length; i++) {
    if (i > 0) out[at++] = COMMA;
    out.set(parts[i]!, at);
    at += parts[i]!.byteLength;
  }
  out[at] = CLOSE;
  if (first !== undefined) bodies.set(first, { parts, body: out });
  return out;
}

function sameParts(a: readonly Uint8Array[], b: readonly Uint8Array[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
