// Create EntityMap for Query Entities (CIM 009 v1.9.1 §5.14.4, §6.34.3.1 and §6.34.3.2): the query of GET
// /entityMaps (URL parameters, as GET /entities takes them) or POST /entityMaps (a Query body, as POST
// /entityOperations/query takes it) is run over the broker and its sources; its matches become an EntityMap, which
// the answer holds (201, NGSILD-EntityMap naming it). No entity is rendered.
import type { OpHandler } from '../pipeline/handler.js';
import { renderEntityMap } from '../ngsild/entity-map/entity-map.js';
import { compileQuery, QUERY_MEMBERS } from './query.js';
import { selectionFromBody, selectionFromParams } from './selection.js';
import { makeMap, mapLocation } from './entity-maps.js';

export const createEntityMap: OpHandler = async (req, ctx) => {
  const sel = req.method === 'POST' ? selectionFromBody(req, req.jsonObject(), QUERY_MEMBERS) : selectionFromParams(req);
  const { storeQuery } = compileQuery(req, sel, undefined);
  const made = await makeMap(req, ctx, sel, storeQuery);
  const headers = ['NGSILD-EntityMap', mapLocation(made.doc.id)];
  for (const w of made.warnings) headers.push('NGSILD-Warning', w);
  return { status: 201, body: renderEntityMap(made.doc), headers, withContext: true };
};
