// The bytes of an answer's JSON body as the pipeline sends it (step 10): the rendered value with @context where the
// negotiated media type carries it. One function for run.ts and for an operation that keeps what it sent.
import type { LdRequest } from './ld-request.js';
import { LD_JSON, GEO_JSON } from './media.js';

const encoder = new TextEncoder();

/**
 * CIM 009 §6.3.6: an application/ld+json body carries @context in each top-level object; §6.3.15: a GeoJSON answer
 * (a Feature or a FeatureCollection) carries it as a member of its own. application/json names it in a Link header.
 */
export function bodyBytes(req: LdRequest, body: unknown, withContext: boolean | undefined, geoJson: boolean | undefined): Uint8Array {
  if (withContext === true) {
    if (req.media === LD_JSON) body = withContextMember(body, req.context.contextValue);
    else if (req.media === GEO_JSON && geoJson === true)
      body = { ...(body as Record<string, unknown>), '@context': req.context.contextValue as object };
  }
  return encoder.encode(JSON.stringify(body));
}

function withContextMember(body: unknown, contextValue: unknown): unknown {
  if (Array.isArray(body)) return body.map((item) => withContextMember(item, contextValue));
  if (typeof body === 'object' && body !== null) return { ...(body as Record<string, unknown>), '@context': contextValue as object };
  return body;
}
