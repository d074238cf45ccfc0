// Temporal representation of an entity (CIM 009 v1.8 §4.5.7 normalized, §4.5.8 concise, §4.5.9 simplified
// `temporalValues`, §4.5.19 aggregated `aggregatedValues`), projected by pick/omit (§4.5.23). No I/O.
import type { ResolvedContext } from '../context/resolved.js';
import { VALUE_MEMBER, type AttrType } from '../entity/model.js';
import { renderAttribute } from '../entity/render.js';
import type { HistoryInstance, TemporalEntityRecord, TimeProperty } from './history-model.js';
import { aggregate, type AggrMethod, type Sample, type Triple } from './aggregate.js';
import type { Duration } from './duration.js';

export type TemporalFormat = 'normalized' | 'concise' | 'temporalValues' | 'aggregatedValues';

export interface TemporalRenderOptions {
  format: TemporalFormat;
  sysAttrs: boolean;
  timeproperty: TimeProperty;
  lang?: string;
  /** Compact member names to keep (id, type, scope and attributes), and to leave out (§4.21). */
  pick?: ReadonlySet<string>;
  omit?: ReadonlySet<string>;
  aggrMethods?: readonly AggrMethod[];
  aggrPeriod?: Duration;
  /** Bounds of the asked time range in ms (aggregation periods start and end there). */
  from?: number;
  to?: number;
}

/** An attribute's datasetId group aggregated by the history (history/contract.ts AggregatedGroup). */
export interface PreAggregated {
  datasetId?: string;
  type: AttrType;
  results: Partial<Record<AggrMethod, Triple[]>>;
}

/** §4.5.9: the member holding the [value, time] pairs of each attribute type. */
const SIMPLIFIED_MEMBER: Record<AttrType, string> = {
  Property: 'values',
  GeoProperty: 'values',
  Relationship: 'objects',
  LanguageProperty: 'languageMaps',
  VocabProperty: 'vocabs',
  JsonProperty: 'jsons',
  ListProperty: 'valueLists',
  ListRelationship: 'objectLists',
};

/** The instance's time on the time property; createdAt for an instance without it (e.g. no observedAt). */
export function instanceTime(inst: HistoryInstance, prop: TimeProperty): string {
  const t = inst[prop];
  return typeof t === 'string' ? t : inst.createdAt;
}

/**
 * `emptied`: attributes with instances in the asked range that all fall past a paged answer's cut (CIM 009 v1.8
 * §6.3.10), by type. Each is rendered with no instance, so the page still says it exists: an empty array, or its
 * simplified or aggregated object with empty lists.
 */
export function renderTemporalEntity(
  rec: TemporalEntityRecord,
  attrs: Record<string, HistoryInstance[]>,
  ctx: ResolvedContext,
  opts: TemporalRenderOptions,
  emptied?: Readonly<Record<string, AttrType>>,
  preAggregated?: Readonly<Record<string, readonly PreAggregated[]>>,
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  // CIM 009 v1.8.1 §4.21: pick keeps, omit leaves out; given together (on different members), both apply.
  const shown = (name: string): boolean =>
    (opts.pick === undefined || opts.pick.has(name)) && (opts.omit === undefined || !opts.omit.has(name));
  if (shown('id')) out.id = rec.id;
  if (shown('type')) out.type = rec.type.length === 1 ? ctx.compactIri(rec.type[0]!) : rec.type.map((t) => ctx.compactIri(t));
  if (rec.scope !== undefined && shown('scope')) out.scope = rec.scope.length === 1 ? rec.scope[0] : rec.scope;
  if (opts.sysAttrs) {
    out.createdAt = rec.createdAt;
    out.modifiedAt = rec.modifiedAt;
  }
  if (rec.deletedAt !== undefined) out.deletedAt = rec.deletedAt;
  for (const attrIri in attrs) {
    const instances = attrs[attrIri]!;
    if (instances.length === 0) continue;
    const name = ctx.compactIri(attrIri);
    if (!shown(name)) continue;
    if (opts.format === 'normalized' || opts.format === 'concise') out[name] = instances.map((i) => instanceOf(i, ctx, opts));
    else
      out[name] = perDataset(instances, (group) =>
        opts.format === 'temporalValues' ? simplified(group, opts, ctx) : aggregated(group, opts),
      );
  }
  // Aggregated by the history (History.aggregate): the same members as aggregated() builds from instances.
  for (const attrIri in preAggregated ?? {}) {
    const groups = preAggregated![attrIri]!;
    const name = ctx.compactIri(attrIri);
    if (groups.length === 0 || !shown(name)) continue;
    const built = groups.map((g) => {
      const o: Record<string, unknown> = { type: g.type };
      for (const m of opts.aggrMethods ?? []) o[m] = g.results[m] ?? [];
      if (g.datasetId !== undefined) o.datasetId = g.datasetId;
      return o;
    });
    out[name] = built.length === 1 ? built[0] : built;
  }
  if (emptied !== undefined) {
    for (const attrIri in emptied) {
      const name = ctx.compactIri(attrIri);
      if (shown(name)) out[name] = emptyAttribute(emptied[attrIri]!, opts);
    }
  }
  return out;
}

function emptyAttribute(type: AttrType, opts: TemporalRenderOptions): unknown {
  if (opts.format === 'normalized' || opts.format === 'concise') return [];
  const o: Record<string, unknown> = { type };
  if (opts.format === 'temporalValues') o[SIMPLIFIED_MEMBER[type]] = [];
  else for (const m of opts.aggrMethods ?? []) o[m] = [];
  return o;
}

/**
 * One instance, normalized or concise (§4.5.8: the entity's concise rules per instance, so `type` goes where the
 * value tells it; an instance stays an object, as it carries its instanceId and time).
 */
function instanceOf(inst: HistoryInstance, ctx: ResolvedContext, opts: TemporalRenderOptions): Record<string, unknown> {
  const o = renderAttribute([inst], ctx, {
    format: opts.format === 'concise' ? 'concise' : 'normalized',
    sysAttrs: opts.sysAttrs,
    lang: inst.deletedAt === undefined ? opts.lang : undefined,
  }) as Record<string, unknown>;
  // The asked time property and a tombstone's deletedAt are what place an instance in time: always shown.
  if (inst.deletedAt !== undefined) o.deletedAt = inst.deletedAt;
  const prop = opts.timeproperty;
  if (prop !== 'observedAt' && prop !== 'deletedAt' && o[prop] === undefined) o[prop] = inst[prop];
  return o;
}

/** One object per datasetId (§4.5.9, §4.5.19): an array of them when the attribute has several. */
function perDataset(instances: readonly HistoryInstance[], build: (group: HistoryInstance[]) => Record<string, unknown>): unknown {
  const groups = new Map<string | undefined, HistoryInstance[]>();
  for (const inst of instances) {
    const g = groups.get(inst.datasetId);
    if (g === undefined) groups.set(inst.datasetId, [inst]);
    else g.push(inst);
  }
  const out: Record<string, unknown>[] = [];
  for (const [datasetId, group] of groups) {
    const o = build(group);
    if (datasetId !== undefined) o.datasetId = datasetId;
    out.push(o);
  }
  return out.length === 1 ? out[0] : out;
}

function typeOf(group: readonly HistoryInstance[]): AttrType {
  for (let i = group.length - 1; i >= 0; i--) if (group[i]!.deletedAt === undefined) return group[i]!.type;
  return group[group.length - 1]!.type;
}

function simplified(group: readonly HistoryInstance[], opts: TemporalRenderOptions, ctx: ResolvedContext): Record<string, unknown> {
  const type = typeOf(group);
  const pairs: unknown[] = [];
  for (const inst of group) pairs.push([simplifiedValue(inst, ctx), instanceTime(inst, opts.timeproperty)]);
  return { type, [SIMPLIFIED_MEMBER[type]]: pairs };
}

/**
 * The value of a [value, time] pair (§4.5.9, v1.8.1). languageMaps, vocabs and jsons are `@list` containers in the
 * core @context, so a bare language map would read as a node object, a bare vocab as a plain string and a bare JSON
 * value as JSON-LD: each value is wrapped in the member that gives it its kind (languageMap: `@language`, vocab:
 * `@vocab`, json: `@json`), and a vocab is compacted with the request's @context as in the other representations.
 */
function simplifiedValue(inst: HistoryInstance, ctx: ResolvedContext): unknown {
  switch (inst.type) {
    case 'LanguageProperty':
      return { languageMap: inst.languageMap };
    case 'VocabProperty': {
      const v = inst.vocab as string | string[] | undefined;
      return { vocab: typeof v === 'string' ? ctx.compactIri(v) : v?.map((iri) => ctx.compactIri(iri)) };
    }
    case 'JsonProperty':
      return { json: inst.json };
    default:
      return inst[VALUE_MEMBER[inst.type]];
  }
}

function aggregated(group: readonly HistoryInstance[], opts: TemporalRenderOptions): Record<string, unknown> {
  const type = typeOf(group);
  const samples: Sample[] = [];
  // Tombstones mark an absence of value: they take no part in aggregation.
  for (const inst of group)
    if (inst.deletedAt === undefined)
      samples.push({ value: inst[VALUE_MEMBER[inst.type]], t: Date.parse(instanceTime(inst, opts.timeproperty)) });
  samples.sort((a, b) => a.t - b.t);
  return { type, ...aggregate(samples, opts.aggrMethods ?? [], opts.aggrPeriod, opts.from, opts.to) };
}
