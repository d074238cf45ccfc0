// Attribute discovery (CIM 009 v1.8 §5.7.7, §5.7.8, §6.27, §6.28): GET /attributes (AttributeList, or Attribute
// objects with details=true) and GET /attributes/{attrId} (Attribute), per tenant, names compacted with the
// request's @context.
import { randomUUID } from 'node:crypto';
import { notFound } from '../ngsild/problem.js';
import { checkNameSize } from '../ngsild/entity/limits.js';
import type { AttrStat } from '../store/contract.js';
import type { ResolvedContext } from '../ngsild/context/resolved.js';
import type { OpHandler } from '../pipeline/handler.js';
import { boolParam, nameParam } from './types.js';

function attribute(stat: AttrStat, name: string, ctx: ResolvedContext): Record<string, unknown> {
  return {
    id: stat.attrIri,
    type: 'Attribute',
    attributeName: name,
    attributeCount: stat.count,
    attributeTypes: Object.keys(stat.attrTypes).sort(),
    typeNames: Object.keys(stat.typeIris)
      .map((t) => ctx.compactIri(t))
      .sort(),
  };
}

export const listAttributes: OpHandler = async (req, ctx) => {
  const details = boolParam(req, 'details');
  boolParam(req, 'local');
  const named = (await ctx.store.attributeStats(req.tenant))
    .filter((s) => s.count > 0)
    .map((stat) => ({ name: req.context.compactIri(stat.attrIri), stat }))
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  if (!details) {
    return {
      status: 200,
      body: { id: `urn:ngsi-ld:AttributeList:${randomUUID()}`, type: 'AttributeList', attributeList: named.map((n) => n.name) },
      withContext: true,
    };
  }
  return { status: 200, body: named.map(({ name, stat }) => attribute(stat, name, req.context)), withContext: true };
};

export const retrieveAttribute: OpHandler = async (req, ctx) => {
  boolParam(req, 'local');
  const attrTerm = nameParam(req.params[0]!, 'attribute');
  const attrIri = checkNameSize(req.context.expandTerm(attrTerm), 'attribute');
  const stat = (await ctx.store.attributeStats(req.tenant, attrIri))[0];
  if (stat === undefined || stat.count <= 0) throw notFound(`no entity has an attribute '${attrTerm}'`);
  return { status: 200, body: attribute(stat, req.context.compactIri(attrIri), req.context), withContext: true };
};
