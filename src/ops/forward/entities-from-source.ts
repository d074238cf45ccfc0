// What a source answered, as entities of the stored model: its JSON read and each entity expanded with the request's
// @context (the forwarded request carried its Link, so the source compacted with it). An entity that does not expand
// is the source's fault: it is left out and warned about, never the client's 400.
import { expandEntity } from '../../ngsild/entity/expand.js';
import type { StoredEntity } from '../../ngsild/entity/model.js';
import type { LdRequest } from '../../pipeline/ld-request.js';

export function entityFromSource(req: Pick<LdRequest, 'context'>, raw: unknown, now: string): StoredEntity | undefined {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return undefined;
  const { ['@context']: _ignored, ...body } = raw as Record<string, unknown>;
  try {
    const e = expandEntity(body, req.context, { now });
    // The source's system attributes, when it gave them, are its own: kept as given where they are timestamps.
    for (const k of ['createdAt', 'modifiedAt'] as const) if (typeof body[k] === 'string') e[k] = body[k] as string;
    return e;
  } catch {
    return undefined;
  }
}

export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
