// A declarative entity query (store/contract.ts EntityQuery, TemporalEntityQuery) compiled for a store that
// evaluates it itself: which index lookups can find the candidates, and one predicate for what they leave open,
// built from ngsild/query's evaluators. Part of the store kit: store and history plugins may import it.
import type { AttrInstance, StoredEntity } from '../../ngsild/entity/model.js';
import { compileQ, numberRangeOf, type QNumberRange } from '../../ngsild/query/q-eval.js';
import { asWritten } from '../../ngsild/query/q-resolve.js';
import { compileScopeQ } from '../../ngsild/query/scopeq.js';
import { compileGeoQuery, geoQuerySearchBox, type BBox } from '../../ngsild/query/geoq.js';
import { geoBoxTest, type GeoBoxTest } from '../../ngsild/query/geo-box-test.js';
import { compileIdPattern } from '../../ngsild/query/id-pattern.js';
import { compileTypeExpression } from '../../ngsild/query/type-expression.js';
import { ENTITY_CORE_MEMBERS } from '../../ngsild/entity/model.js';
import type { EntityProjection, EntityQuery, EntitySelectionQuery, EntitySelector } from '../contract.js';
import type { TemporalEntityQuery } from '../../history/contract.js';

/** What a selection needs of a candidate: an entity, or the history's record of one. */
interface Selectable {
  id: string;
  type: readonly string[];
  scope?: readonly string[];
}

/**
 * How to find the matches: read `ids` one by one (in that order), else the entities of any of `typeIris` (a type
 * index), else every entity; `filter` then decides on each candidate (undefined: every candidate matches). The
 * candidates of `ids` are not known to have the types: `filter` tests them. `geo` narrows any of the three to the
 * entities that have a geometry of `attrIri` meeting `box` (a spatial index), and `test` rules out a candidate on the
 * box of its geometries (an index that keeps them, geo-box-test.ts); `filter` still holds the exact relation, and
 * `rest` is `filter` without it, for the candidates whose box `test` found meeting it (GEO_YES).
 * `numbers` narrows the entities of `typeIris` to those holding a number in an interval in one attribute (the `q`
 * asks it, q-eval.ts numberRangeOf: a value index); `filter` still holds the whole `q`.
 */
export interface QueryPlan<T> {
  ids: readonly string[] | undefined;
  typeIris: readonly string[] | undefined;
  geo: { attrIri: string; box: BBox; test: GeoBoxTest; rest: ((candidate: T) => boolean) | undefined } | undefined;
  numbers: QNumberRange | undefined;
  filter: ((candidate: T) => boolean) | undefined;
}

type Pred<T> = (x: T) => boolean;

/** The plan of an entity query. Throws the LdError a bad idPattern is (400), as the caller's own check would. */
export function planEntityQuery(query: EntitySelectionQuery): QueryPlan<StoredEntity> {
  const preds: Array<Pred<StoredEntity>> = [];
  const { ids, typeIris } = planSelection<StoredEntity>(query, preds, true);
  if (query.attrs !== undefined) {
    // CIM 009 §5.7.2: with attrs, only entities holding at least one of them.
    const iris = query.attrs;
    preds.push((e) => iris.some((iri) => e[iri] !== undefined));
  }
  let numbers: QNumberRange | undefined;
  if (query.q !== undefined) {
    preds.push(compileQ(query.q, asWritten));
    numbers = numberRangeOf(query.q);
  }
  if (query.scopeQ !== undefined) {
    const scope = compileScopeQ(query.scopeQ);
    preds.push((e) => scope(e.scope));
  }
  if (query.projection !== undefined) preds.push(keepsAMember(query.projection));
  let geo: QueryPlan<StoredEntity>['geo'];
  if (query.geo !== undefined) {
    const box = geoQuerySearchBox(query.geo);
    if (box !== undefined) geo = { attrIri: query.geo.geopropertyIri, box, test: geoBoxTest(query.geo, box), rest: all([...preds]) };
    preds.push(compileGeoQuery(query.geo));
  }
  return { ids, typeIris, geo, numbers, filter: all(preds) };
}

/** The plan of a query on the history's temporal entities (its attrs member is the history's own index). */
export function planTemporalQuery(query: TemporalEntityQuery): QueryPlan<Selectable> {
  const preds: Array<Pred<Selectable>> = [];
  // Several selectors scan the history in id order, which its keyset paging (afterId) follows.
  const { ids, typeIris } = planSelection<Selectable>(query, preds, false);
  if (query.scopeQ !== undefined) {
    // The history keeps an entity's scope on its temporal entity (the last one recorded), not per instant.
    const scope = compileScopeQ(query.scopeQ);
    preds.push((r) => scope(r.scope));
  }
  return { ids, typeIris, geo: undefined, numbers: undefined, filter: all(preds) };
}

/** The whole query as one predicate, the plan's lookups included: for a re-check of a candidate found earlier. */
export function entityQueryPredicate(query: EntitySelectionQuery): (entity: StoredEntity) => boolean {
  const plan = planEntityQuery(query);
  const ids = plan.ids === undefined ? undefined : new Set(plan.ids);
  const typeIris = plan.typeIris;
  const filter = plan.filter;
  return (e) =>
    (ids === undefined || ids.has(e.id)) &&
    (typeIris === undefined || typeIris.some((t) => e.type.includes(t))) &&
    (filter === undefined || filter(e));
}

/**
 * ids, type, idPattern and entities into index lookups and predicates (pushed on `preds`). One selector (the members
 * themselves, or `entities` of one) uses the ids or the types of a plain OR of types; several are tested together,
 * and with `unionTypes` found by the union of their types when each is such an OR.
 */
function planSelection<T extends Selectable>(
  sel: Pick<EntityQuery, 'ids' | 'type' | 'idPattern' | 'entities'>,
  preds: Array<Pred<T>>,
  unionTypes: boolean,
): { ids: readonly string[] | undefined; typeIris: readonly string[] | undefined } {
  let { ids, type, idPattern } = sel;
  let entities = sel.entities;
  if (entities !== undefined && entities.length <= 1 && ids === undefined && type === undefined && idPattern === undefined) {
    ({ ids, type, idPattern } = entities[0] ?? {});
    entities = undefined;
  }
  let typeIris: readonly string[] | undefined;
  if (type !== undefined) {
    const compiled = compileTypeExpression(type, asWritten);
    typeIris = compiled.typeIris;
    if (typeIris === undefined || ids !== undefined) preds.push((e) => compiled.matches(e.type));
  }
  if (idPattern !== undefined) {
    const match = compileIdPattern(idPattern);
    preds.push((e) => match(e.id));
  }
  if (entities !== undefined && entities.length > 0) {
    const each = entities.map(selectorTest);
    if (unionTypes && ids === undefined && typeIris === undefined) typeIris = unionOfTypes(entities);
    preds.push((e) => each.some((f) => f(e)));
  }
  return { ids, typeIris };
}

function selectorTest(s: EntitySelector): (e: Selectable) => boolean {
  const idSet = s.ids === undefined ? undefined : new Set(s.ids);
  const type = s.type === undefined ? undefined : compileTypeExpression(s.type, asWritten);
  const pattern = s.idPattern === undefined ? undefined : compileIdPattern(s.idPattern);
  return (e) =>
    (idSet === undefined || idSet.has(e.id)) && (type === undefined || type.matches(e.type)) && (pattern === undefined || pattern(e.id));
}

/** The types of every selector, when each is a plain OR of types: every match has one of them. */
function unionOfTypes(entities: readonly EntitySelector[]): string[] | undefined {
  const union = new Set<string>();
  for (const s of entities) {
    if (s.type === undefined) return undefined;
    const iris = compileTypeExpression(s.type, asWritten).typeIris;
    if (iris === undefined) return undefined;
    for (const t of iris) union.add(t);
  }
  return [...union];
}

/** CIM 009 v1.8.1 §4.21 (see EntityProjection): true when the entity keeps at least one member. */
function keepsAMember(p: EntityProjection): Pred<StoredEntity> {
  const pick = p.pick === undefined ? undefined : new Set(p.pick);
  const omit = p.omit === undefined ? undefined : new Set(p.omit);
  const datasetIds = p.datasetIds === undefined ? undefined : new Set(p.datasetIds);
  const kept = (name: string): boolean => (pick === undefined || pick.has(name)) && (omit === undefined || !omit.has(name));
  const always = kept('id') || kept('type');
  const scope = kept('scope');
  const expiresAt = kept('expiresAt');
  return (e) => {
    if (always) return true;
    if (scope && e.scope !== undefined) return true;
    if (expiresAt && e.expiresAt !== undefined) return true;
    for (const attrIri in e) {
      if (ENTITY_CORE_MEMBERS.has(attrIri) || !kept(attrIri)) continue;
      if (datasetIds === undefined) return true;
      for (const inst of e[attrIri] as AttrInstance[]) if (datasetIds.has(inst.datasetId ?? '@none')) return true;
    }
    return false;
  };
}

function all<T>(preds: Array<Pred<T>>): Pred<T> | undefined {
  if (preds.length === 0) return undefined;
  if (preds.length === 1) return preds[0];
  return (x) => {
    for (const p of preds) if (!p(x)) return false;
    return true;
  };
}
