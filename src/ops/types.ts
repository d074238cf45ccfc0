// Entity type discovery (CIM 009 v1.8 §5.7.5, §5.7.6, §6.25, §6.26): GET /types (EntityTypeList, or EntityType
// objects with details=true) and GET /types/{type} (EntityTypeInfo), per tenant, names compacted with the
// request's @context. Counts come from the store (its discovery index).
import { randomUUID } from 'node:crypto';
import { badRequest, notFound } from '../ngsild/problem.js';
import { checkNameSize } from '../ngsild/entity/limits.js';
import type { LdRequest } from '../pipeline/ld-request.js';
import type { OpHandler } from '../pipeline/handler.js';

/** `details` (and other boolean URL parameters): true, false or absent. */
export function boolParam(req: LdRequest, name: string): boolean {
  const v = req.query.get(name);
  if (v === undefined || v === 'false') return false;
  if (v === 'true') return true;
  throw badRequest(`${name}: '${v.slice(0, 80)}' is not true or false`);
}

const byName = (a: { name: string }, b: { name: string }): number => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

/** A name in a path segment: a term, compact IRI or IRI; nothing that cannot be one. */
export function nameParam(text: string, what: string): string {
  if (text === '' || /[\s<>"{}|\\^`]/.test(text)) throw badRequest(`${what} '${text.slice(0, 200)}' is not a valid name`);
  return text;
}

export const listTypes: OpHandler = async (req, ctx) => {
  const details = boolParam(req, 'details');
  boolParam(req, 'local');
  const stats = (await ctx.store.typeStats(req.tenant)).filter((s) => s.count > 0);
  const named = stats.map((s) => ({ name: req.context.compactIri(s.typeIri), stat: s })).sort(byName);
  if (!details) {
    return {
      status: 200,
      body: { id: `urn:ngsi-ld:EntityTypeList:${randomUUID()}`, type: 'EntityTypeList', typeList: named.map((n) => n.name) },
      withContext: true,
    };
  }
  const body = named.map(({ name, stat }) => ({
    id: stat.typeIri,
    type: 'EntityType',
    typeName: name,
    attributeNames: Object.keys(stat.attrs)
      .map((a) => req.context.compactIri(a))
      .sort(),
  }));
  return { status: 200, body, withContext: true };
};

export const retrieveType: OpHandler = async (req, ctx) => {
  boolParam(req, 'local');
  const typeTerm = nameParam(req.params[0]!, 'entity type');
  const typeIri = checkNameSize(req.context.expandTerm(typeTerm), 'entity type');
  const stat = (await ctx.store.typeStats(req.tenant, typeIri))[0];
  if (stat === undefined || stat.count <= 0) throw notFound(`no entity of type '${typeTerm}' exists`);
  const attributeDetails = Object.entries(stat.attrs)
    .map(([attrIri, use]) => ({ name: req.context.compactIri(attrIri), attrIri, use }))
    .sort(byName)
    .map(({ name, attrIri, use }) => ({ id: attrIri, type: 'Attribute', attributeName: name, attributeTypes: Object.keys(use.t).sort() }));
  return {
    status: 200,
    body: { id: typeIri, type: 'EntityTypeInfo', typeName: req.context.compactIri(typeIri), entityCount: stat.count, attributeDetails },
    withContext: true,
  };
};
