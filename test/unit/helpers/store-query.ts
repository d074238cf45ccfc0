// Parts of declarative store queries (store/contract.ts EntityQuery) for tests that call a store directly: types,
// q and a geo-query on a box, names given as IRIs (a term without ':' is expanded under `ns`).
import { anyTypeOf } from '../../../src/ngsild/query/type-expression.js';
import type { TypeExpression } from '../../../src/ngsild/query/type-expression.js';
import { parseQ } from '../../../src/ngsild/query/q-parser.js';
import { resolveQ } from '../../../src/ngsild/query/q-resolve.js';
import type { QNode } from '../../../src/ngsild/query/q-ast.js';
import { parseGeoQueryObject, type GeoQuery } from '../../../src/ngsild/query/geoq.js';

/** An entity of any of these types. */
export function ofTypes(...typeIris: string[]): TypeExpression {
  return anyTypeOf(typeIris);
}

/** q as a store query carries it: terms without ':' are `ns` + term. */
export function qOf(text: string, ns: string): QNode {
  return resolveQ(parseQ(text), (term) => (term.includes(':') ? term : ns + term));
}

/** A geo-query matching the entities whose `attrIri` geometry meets the box [west, south, east, north], edges included. */
export function inBox(attrIri: string, [w, s, e, n]: readonly [number, number, number, number]): GeoQuery {
  return parseGeoQueryObject(
    {
      georel: 'intersects',
      geometry: 'Polygon',
      coordinates: [
        [
          [w, s],
          [e, s],
          [e, n],
          [w, n],
          [w, s],
        ],
      ],
      geoproperty: attrIri,
    },
    (name) => name,
  );
}
