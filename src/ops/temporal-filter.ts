// The q / geo-query filter of a temporal query (CIM 009 v1.8 §5.7.4, §6.18.3.2) run on the history: reads the
// filtered attributes' instances of each candidate and replays them (ngsild/temporal/history-match.ts has the rule).
import { LdError } from '../ngsild/problem.js';
import type { StoredEntity } from '../ngsild/entity/model.js';
import { parseQ } from '../ngsild/query/q-parser.js';
import { attributesOf, compileQ } from '../ngsild/query/q-eval.js';
import { compileGeoQuery, type GeoQuery } from '../ngsild/query/geoq.js';
import { matchesAtSomeInstant } from '../ngsild/temporal/history-match.js';
import { instanceTime } from '../ngsild/temporal/temporal-render.js';
import type { TemporalQuery } from '../ngsild/temporal/temporal-query.js';
import type {
  History,
  HistoryInstance,
  InstanceSelection,
  TemporalEntityQuery,
  TemporalEntityRecord,
  TimeWindow,
} from '../history/contract.js';

/**
 * The bound on a filtered query's work (documented in README): the entities judged plus the instances read from the
 * history to judge q and geo-queries, in one request. A request that needs more is refused with 403 TooManyResults,
 * never answered from a part of the history; a narrower time window, selection or page (without count) needs fewer.
 */
export const HISTORY_FILTER_BUDGET = 200_000;
/** Instances read just before the window, per attribute, to carry its state in: the latest per datasetId of them. */
export const CARRY_IN = 16;
/** Candidates read from the history per round of a filtered scan (keyset paging on the entity id). */
const FILTER_ROUND = 256;

export interface HistoryFilterSpec {
  q?: string;
  geo?: GeoQuery;
  /**
   * The instances the answer shows, when they are a selection of the history: a time window (on its time property)
   * or datasetIds, and attrs. Only an entity holding at least one of them matches.
   */
  shown?: InstanceSelection;
}

type Expand = (term: string) => string;
export type HistoryJudge = (h: History, tenant: string, rec: TemporalEntityRecord, budget: Budget) => Promise<boolean>;

/**
 * Compiles the filter, or undefined when the query has neither q, a geo-query nor a selection of instances.
 * CIM 009 v1.8 §5.7.4: a temporal query answers the temporal evolution of the matching entities within the asked
 * time range; an entity with no instance there (or none of the asked datasetIds) has none to answer and is left out,
 * before paging, so that pages and counts hold only entities that have something to show.
 */
export function compileHistoryFilter(spec: HistoryFilterSpec, tq: TemporalQuery, expand: Expand): HistoryJudge | undefined {
  const shown = spec.shown;
  const state = compileStateFilter(spec, tq, expand);
  if (shown === undefined) return state;
  const selection: InstanceSelection = { ...shown, limit: 1 };
  return async (h, tenant, rec, budget) => {
    budget.spendOne();
    const page = await h.instances(tenant, rec.id, selection);
    let any = false;
    for (const attrIri in page.attrs)
      if (page.attrs[attrIri]!.length > 0) {
        any = true;
        break;
      }
    if (!any) return false;
    return state === undefined || state(h, tenant, rec, budget);
  };
}

/** q and the geo-query, judged on the state the history gives at each instant of the window. */
function compileStateFilter(spec: HistoryFilterSpec, tq: TemporalQuery, expand: Expand): HistoryJudge | undefined {
  if (spec.q === undefined && spec.geo === undefined) return undefined;
  const preds: Array<(e: StoredEntity) => boolean> = [];
  const attrs = new Set<string>();
  if (spec.q !== undefined) {
    const ast = parseQ(spec.q);
    preds.push(compileQ(ast, expand));
    for (const term of attributesOf(ast)) attrs.add(expand(term));
  }
  if (spec.geo !== undefined) {
    preds.push(compileGeoQuery(spec.geo));
    attrs.add(spec.geo.geopropertyIri);
  }
  const predicate = preds.length === 1 ? preds[0]! : (e: StoredEntity): boolean => preds.every((p) => p(e));
  const attrList = [...attrs];
  // deletedAt places only tombstones; a tombstone's createdAt is its deletedAt, so createdAt orders the replay.
  const prop = tq.window === undefined || tq.timeproperty === 'deletedAt' ? 'createdAt' : tq.timeproperty;
  const window: TimeWindow | undefined = tq.window === undefined ? undefined : { ...tq.window, timeproperty: prop };
  const timeOf = (inst: HistoryInstance): number => Date.parse(instanceTime(inst, prop));
  return async (h, tenant, rec, budget) => {
    budget.spendOne();
    const inside = await h.instances(tenant, rec.id, { attrs: attrList, window, limit: budget.left + 1 });
    budget.spend(inside);
    let before: Record<string, HistoryInstance[]> = {};
    if (window?.from !== undefined) {
      const carried = await h.instances(tenant, rec.id, {
        attrs: attrList,
        window: { timeproperty: prop, to: window.from },
        lastN: CARRY_IN,
        limit: CARRY_IN,
      });
      budget.spend(carried);
      before = carried.attrs;
    }
    return matchesAtSomeInstant({ rec, before, inside: inside.attrs, timeOf, start: window?.from }, predicate);
  };
}

/** What a filtered query still may read. */
export class Budget {
  left = HISTORY_FILTER_BUDGET;

  /** One entity judged: its reads cost even when they find nothing. */
  spendOne(): void {
    if (--this.left < 0) this.refuse();
  }

  spend(page: { attrs: Record<string, HistoryInstance[]>; truncated: string[] }): void {
    if (page.truncated.length > 0) this.refuse();
    for (const attrIri in page.attrs) this.left -= page.attrs[attrIri]!.length;
    if (this.left < 0) this.refuse();
  }

  private refuse(): never {
    throw new LdError(
      'TooManyResults',
      `q or the geo-query would judge entities and read instances of history past ${HISTORY_FILTER_BUDGET}: narrow the time window or the selection`,
    );
  }
}

/**
 * The page of a filtered query: candidates come from the history's indexes in id order, a round at a time, and are
 * judged until the page is full (or all of them with count, which needs the total).
 */
export async function filteredPage(
  h: History,
  tenant: string,
  base: Omit<TemporalEntityQuery, 'limit' | 'offset' | 'count' | 'afterId'>,
  judge: (h: History, tenant: string, rec: TemporalEntityRecord, budget: Budget) => Promise<boolean>,
  paging: { limit: number; offset: number; count: boolean },
): Promise<{ entities: TemporalEntityRecord[]; count: number }> {
  const budget = new Budget();
  const page: TemporalEntityRecord[] = [];
  const end = paging.offset + paging.limit;
  let matched = 0;
  let afterId: string | undefined;
  for (;;) {
    const round = base.ids !== undefined ? base.ids.length : FILTER_ROUND;
    const q: TemporalEntityQuery = { ...base, limit: round, offset: 0, count: false };
    if (afterId !== undefined) q.afterId = afterId;
    const { entities } = await h.queryTemporalEntities(tenant, q);
    for (const rec of entities) {
      if (!(await judge(h, tenant, rec, budget))) continue;
      if (matched >= paging.offset && matched < end) page.push(rec);
      matched++;
      if (!paging.count && matched >= end) return { entities: page, count: matched };
    }
    if (base.ids !== undefined || entities.length < round) return { entities: page, count: matched };
    afterId = entities[entities.length - 1]!.id;
  }
}
