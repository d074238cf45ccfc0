// Media types of the NGSI-LD API (CIM 009 v1.8 §6.3.4, §6.3.6): request Content-Type and Accept negotiation.
import { LdError } from '../ngsild/problem.js';

export const JSON_TYPE = 'application/json';
export const LD_JSON = 'application/ld+json';
export const GEO_JSON = 'application/geo+json';
export const MERGE_PATCH = 'application/merge-patch+json';

export type ResponseMedia = typeof JSON_TYPE | typeof LD_JSON | typeof GEO_JSON;

/** The media type of a request body without parameters, lower-case; '' when absent. */
export function baseMediaType(contentType: string | undefined): string {
  if (contentType === undefined) return '';
  const semi = contentType.indexOf(';');
  return (semi < 0 ? contentType : contentType.slice(0, semi)).trim().toLowerCase();
}

/** 415 unless the body's type is JSON or JSON-LD (and merge-patch where the operation takes it). */
export function checkContentType(contentType: string | undefined, allowMergePatch: boolean): string {
  const base = baseMediaType(contentType);
  if (base === JSON_TYPE || base === LD_JSON || (allowMergePatch && base === MERGE_PATCH)) return base;
  throw new LdError(
    'UnsupportedMediaType',
    base === ''
      ? 'a Content-Type header is required: application/json or application/ld+json'
      : `Content-Type '${base}' is not supported: use application/json or application/ld+json`,
  );
}

const cache = new Map<string, ResponseMedia | null>();

/**
 * Picks the response type from Accept (q-values honoured). geo+json only where the operation renders GeoJSON.
 * A missing Accept or `*\/*` gives application/json. Nothing acceptable: 406.
 */
export function negotiate(accept: string | undefined, geoAllowed: boolean): ResponseMedia {
  if (accept === undefined || accept === '' || accept === '*/*') return JSON_TYPE;
  const key = geoAllowed ? accept : '!' + accept;
  let chosen = cache.get(key);
  if (chosen === undefined) {
    chosen = pick(accept, geoAllowed);
    if (cache.size > 1000) cache.clear();
    cache.set(key, chosen);
  }
  if (chosen === null)
    throw new LdError(
      'NotAcceptable',
      `none of '${accept}' can be produced: application/json, application/ld+json${geoAllowed ? ', application/geo+json' : ''}`,
    );
  return chosen;
}

function pick(accept: string, geoAllowed: boolean): ResponseMedia | null {
  let best: ResponseMedia | null = null;
  let bestQ = 0;
  for (const part of accept.split(',')) {
    const [rawType, ...paramList] = part.split(';');
    const type = rawType!.trim().toLowerCase();
    let q = 1;
    for (const p of paramList) {
      const [k, v] = p.split('=');
      if (k!.trim() === 'q') q = Number(v);
    }
    if (!(q > 0)) continue;
    let media: ResponseMedia | null = null;
    if (type === JSON_TYPE || type === '*/*' || type === 'application/*') media = JSON_TYPE;
    else if (type === LD_JSON) media = LD_JSON;
    else if (type === GEO_JSON && geoAllowed) media = GEO_JSON;
    if (media !== null && q > bestQ) {
      best = media;
      bestQ = q;
    }
  }
  return best;
}
