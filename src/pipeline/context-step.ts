// Step 6: the request's @context (CIM 009 v1.8 §6.3.5): the Link header for application/json and bodiless
// requests, the body's @context for application/ld+json; the core context always applies.
import { badRequest } from '../ngsild/problem.js';
import { parseLinkHeader } from '../ngsild/context/link-header.js';
import type { LdRequest } from './ld-request.js';
import type { WorkerContext } from './worker-context.js';
import { LD_JSON } from './media.js';

export async function resolveRequestContext(req: LdRequest, ctx: WorkerContext, hasBody: boolean): Promise<void> {
  const link = req.task.headers.link;
  if (hasBody && req.task.body !== null) {
    const body = req.json();
    const bodyIsObject = typeof body === 'object' && body !== null && !Array.isArray(body);
    if (req.bodyMediaType === LD_JSON) {
      if (link !== undefined && parseLinkHeader(link) !== undefined)
        throw badRequest('a Link header naming a @context is not allowed with Content-Type application/ld+json');
      if (bodyIsObject) {
        const given = (body as Record<string, unknown>)['@context'];
        if (given === undefined) throw badRequest('an application/ld+json body must carry @context');
        req.context = await ctx.contexts.resolve(given, req.wait);
        return;
      }
      // A batch: every entry carries its own @context, which the batch operation resolves entry by entry.
      req.context = ctx.contexts.defaultContext;
      return;
    }
    if (bodyIsObject && '@context' in (body as object))
      throw badRequest('@context is not allowed in an application/json body: send it in a Link header or use application/ld+json');
  }
  const url = link === undefined ? undefined : parseLinkHeader(link);
  if (url === undefined) {
    req.context = ctx.contexts.defaultContext;
    return;
  }
  req.context = ctx.contexts.resolveCachedUrl(url) ?? (await ctx.contexts.resolve(url, req.wait));
}
