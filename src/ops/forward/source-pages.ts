// The whole of a source's matches when an EntityMap is made (CIM 009 v1.9.1 §5.5.14: the map fixes every entity the
// query matches): a source answers one page at a time, so the pages after the first are asked (offset) until its
// NGSILD-Results-Count is reached, or, from a source that gives no count, until a page is not full. A map is never
// cut silently at a source's page size.
import type { SourceTarget } from '../../ngsild/registration/match.js';
import { MAX_MAP_ENTITIES } from '../../ngsild/entity-map/entity-map.js';
import type { LdRequest } from '../../pipeline/ld-request.js';
import type { WorkerContext } from '../../pipeline/worker-context.js';
import { fanOut } from './sources.js';
import { parseJson } from './entities-from-source.js';

/** Entities asked of a source in one request when a map is made (the most an NGSI-LD query answers, §6.3.10). */
export const SOURCE_PAGE = 1000;

/** The paging parameters of the request to a source at `offset`, counting on the first. */
export function sourcePageParams(offset: number): string {
  return offset === 0 ? `limit=${SOURCE_PAGE}&count=true` : `limit=${SOURCE_PAGE}&offset=${offset}`;
}

/**
 * Appends to `list` (the first page's entities) the source's further pages; stops past MAX_MAP_ENTITIES (the map is
 * then refused as too large by its maker). A page that fails is the source's failure, with its reason.
 */
export async function restOfSource(
  req: LdRequest,
  ctx: WorkerContext,
  target: SourceTarget,
  headers: Record<string, string | string[] | undefined>,
  list: unknown[],
  request: (t: SourceTarget, offset: number) => { method: string; url: URL; body?: string | Uint8Array; contentType?: string },
): Promise<string | undefined> {
  const header = headers['ngsild-results-count'];
  const counted = typeof header === 'string' && /^\d{1,9}$/.test(header) ? Number(header) : undefined;
  const total = counted ?? (list.length >= SOURCE_PAGE ? Infinity : list.length);
  while (list.length < total && list.length <= MAX_MAP_ENTITIES) {
    const [o] = await fanOut(req, ctx, [target], (t) => request(t, list.length));
    if (o === undefined || 'failure' in o) return `no answer for its entities from ${list.length} on`;
    if (o.reply.status !== 200 && o.reply.status !== 201) return `answered ${o.reply.status} for its entities from ${list.length} on`;
    const page = parseJson(o.reply.body);
    if (!Array.isArray(page)) return `answered no entity list for its entities from ${list.length} on`;
    if (page.length === 0) break;
    list.push(...(page as unknown[]));
    if (counted === undefined && page.length < SOURCE_PAGE) break;
  }
  return undefined;
}
