// Pagination links of the query operations (CIM 009 v1.8 §5.5.9, §6.3.10): `Link` headers (RFC 8288) with rel="prev"
// and rel="next" naming the neighbouring pages, built from the request's own route and parameters.
import { queryPart } from '../ngsild/uri-encode.js';
import type { LdRequest } from '../pipeline/ld-request.js';

/**
 * The Link headers (flat name/value list) of a page of `limit` items from `offset`; `more` says whether items follow
 * it. rel="prev" when the page does not start at 0: the `limit` items before it (fewer at the start, so the two
 * pages never overlap); rel="next" when items follow. `limit=0` (a count alone) has no pages.
 *
 * The target is the route itself (no client text) with the request's other parameters in their order, each made a
 * valid query part (uri-encode.ts), then `limit` and `offset`; its type is the media type of this answer. A relative
 * reference (RFC 8288 §3.1: resolved against the request's URI), so it holds behind a proxy that keeps the path.
 */
export function pageLinks(req: LdRequest, limit: number, offset: number, more: boolean, linkBase?: string): string[] {
  if (limit === 0 || (offset === 0 && !more)) return [];
  const base = linkBase ?? pageLinkBase(req);
  const type = `; type="${req.media}"`;
  const links: string[] = [];
  if (offset > 0) {
    const prev = Math.max(0, offset - limit);
    links.push('Link', `<${base}limit=${offset - prev}&offset=${prev}>; rel="prev"${type}`);
  }
  if (more) links.push('Link', `<${base}limit=${limit}&offset=${offset + limit}>; rel="next"${type}`);
  return links;
}

/** What every page link of a request starts with: its route and its other parameters (the same for its query string). */
export function pageLinkBase(req: LdRequest): string {
  return `${req.route}?${otherParams(req.task.query)}`;
}

/** The raw query without `limit` and `offset`, each remaining part followed by '&'. */
function otherParams(raw: string): string {
  let out = '';
  if (raw === '') return out;
  for (const part of raw.split('&')) {
    if (part === '') continue;
    const eq = part.indexOf('=');
    const name = decodedName(eq < 0 ? part : part.slice(0, eq));
    if (name === 'limit' || name === 'offset') continue;
    out += queryPart(part) + '&';
  }
  return out;
}

/** The parameter name as query-params.ts reads it ('+' literal); text that does not decode is no paging name. */
function decodedName(s: string): string {
  if (!s.includes('%')) return s;
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}
