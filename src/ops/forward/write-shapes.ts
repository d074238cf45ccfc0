// What each entity write names, for ops/forward/write.ts: read from the request as its handler reads it (the path's
// entity id, the body's attributes), so an invalid one is the request's 400 before anything is sent anywhere.
import { badRequest } from '../../ngsild/problem.js';
import { isUri } from '../../ngsild/entity/syntax.js';
import type { LdRequest } from '../../pipeline/ld-request.js';
import type { WriteShape } from './write.js';
import { bodyAttrs } from './write.js';
import { entityIdParam } from '../entities.js';

/** POST /entities: the body's id, types and attributes. */
export async function createShape(req: LdRequest): Promise<WriteShape> {
  const body = req.jsonObject();
  if (typeof body.id !== 'string' || !isUri(body.id)) throw badRequest('id: the entity id is missing or not a URI');
  const rawTypes = Array.isArray(body.type) ? body.type : [body.type];
  const types = rawTypes.filter((x): x is string => typeof x === 'string').map((x) => req.context.expandTerm(x));
  return { id: body.id, types, attrs: bodyAttrs(req), hasBody: true };
}

/** /entities/{id} with an entity or fragment body (PUT, PATCH, POST and PATCH .../attrs). */
export async function fragmentShape(req: LdRequest): Promise<WriteShape> {
  return { id: entityIdParam(req), attrs: bodyAttrs(req), hasBody: true };
}

/** DELETE /entities/{id}: the whole entity. */
export async function entityShape(req: LdRequest): Promise<WriteShape> {
  return { id: entityIdParam(req), hasBody: false };
}

/** /entities/{id}/attrs/{attrId}: one attribute; its body, when there is one, is that attribute. */
export function attributeShape(hasBody: boolean) {
  return async (req: LdRequest): Promise<WriteShape> => {
    const name = req.params[1] ?? '';
    return { id: entityIdParam(req), attrs: [{ key: name, iri: req.context.expandTerm(name) }], hasBody, bodyIsAttribute: true };
  };
}
