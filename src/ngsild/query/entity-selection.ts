// What a query for entities selects (CIM 009 v1.8 §5.7.2), as data: the store contract's EntityQuery is this plus
// order and paging, and a compiled subscription keeps one for its periodic notifications. Every name is an expanded IRI.
import type { QNode } from './q-ast.js';
import type { ScopeQuery } from './scopeq.js';
import type { TypeExpression } from './type-expression.js';
import type { GeoQuery } from './geoq.js';

export interface EntitySelectionQuery {
  /** Only these ids. Without orderBy the page follows this order (ids that are not stored are left out). */
  ids?: readonly string[];
  /** The type expression (§4.17), every type name an expanded IRI (ngsild/query/type-expression.ts). */
  type?: TypeExpression;
  /** idPattern (§5.7.2): an RE2 expression that matches anywhere in the id (ngsild/query/id-pattern.ts). */
  idPattern?: string;
  /**
   * Several entity selectors (a Query's `entities`, §5.2.23): an entity matches when it meets one of them whole. One
   * selector is better given as ids/type/idPattern above (a store can use its indexes for those alone).
   */
  entities?: readonly EntitySelector[];
  /** Only entities holding at least one of these attributes (§5.7.2 attrs). */
  attrs?: readonly string[];
  /**
   * q (§4.9) as its syntax tree with names resolved (ngsild/query/q-resolve.ts): attribute paths expanded, strings
   * carrying their expansion, comparisons on expandValues' attributes marked `vocab`.
   */
  q?: QNode;
  /** scopeQ (§4.19) as its syntax tree (ngsild/query/scopeq.ts). */
  scopeQ?: ScopeQuery;
  /**
   * The geo-query (§4.10) as parsed (ngsild/query/geoq.ts), its geoproperty expanded (`geopropertyIri`). The search
   * box its matches lie in, for a spatial index, is `geoQuerySearchBox(geo)` (undefined: anywhere).
   */
  geo?: GeoQuery;
  /** pick/omit (§4.21): only entities that keep a member under them (see EntityProjection). */
  projection?: EntityProjection;
}

/** One entity selector of `EntityQuery.entities`: an entity meets it when it meets every member given. */
export interface EntitySelector {
  ids?: readonly string[];
  type?: TypeExpression;
  idPattern?: string;
}

/**
 * CIM 009 v1.8.1 §4.21: an entity that pick and omit leave with no member is not an answer, and is left out before
 * paging (so pages stay full). Members are named as an entity has them: `id`, `type`, `scope`, `expiresAt`, and
 * attributes by expanded IRI. An entity keeps a member it has that pick (when given) names and omit does not; with
 * `datasetIds`, an attribute counts only when it has an instance of one of them (`@none`: the default instance).
 */
export interface EntityProjection {
  pick?: readonly string[];
  omit?: readonly string[];
  datasetIds?: readonly string[];
}
