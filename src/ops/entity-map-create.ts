// Create EntityMap for Query Entities (CIM 009 v1.9.1 §5.14.4, §6.34.3.1 and §6.34.3.2): the query of GET
// /entityMaps (URL parameters, as GET /entities takes them) or POST /entityMaps (a Query body, as POST
// /entityOperations/query takes it) is run over the broker and its sources; its matches become an EntityMap, which
// the answer holds (201, NGSILD-EntityMap naming it). No entity is rendered.
import type { OpHandler } from '../pipeline/handler.js';
import { mapIdOfHeader, renderEntityMap } from '../ngsild/entity-map/entity-map.js';
import { badRequest } from '../ngsild/problem.js';
import { API_PREFIX } from '../ngsild/operations.js';
import { boolParam } from './types.js';
import { compileQuery, QUERY_MEMBERS } from './query.js';
import { selectionFromBody, selectionFromParams } from './selection.js';
import { makeMap, mapLocation } from './entity-maps.js';

export const createEntityMap: OpHandler = async (req, ctx) => {
  // The parameters of Query Entities are taken; a map is made whatever entityMap says, but a value that is no
  // boolean and an NGSILD-EntityMap that names no map are the request's 400 as they are for a query.
  boolParam(req, 'entityMap');
  const header = req.header('ngsild-entitymap');
  if (header !== undefined && mapIdOfHeader(header, API_PREFIX) === undefined)
    throw badRequest('NGSILD-EntityMap: names no EntityMap (a URI, or the resource URI the broker answered)');
  const sel = req.method === 'POST' ? selectionFromBody(req, req.jsonObject(), QUERY_MEMBERS) : selectionFromParams(req);
  const { storeQuery } = compileQuery(req, sel, undefined);
  const made = await makeMap(req, ctx, sel, storeQuery);
  const headers = ['NGSILD-EntityMap', mapLocation(made.doc.id)];
  for (const w of made.warnings) headers.push('NGSILD-Warning', w);
  return { status: 201, body: renderEntityMap(made.doc), headers, withContext: true };
};
