// What a temporal request asks for (CIM 009 v1.8 §6.3.x, §6.18 to §6.24): the temporal query, the representation
// (format/options), aggregation, pick/omit, attrs, datasetId and lang, checked and parsed once per request.
import { badRequest, invalidRequest } from '../ngsild/problem.js';
import { checkNameSize } from '../ngsild/entity/limits.js';
import { checkDisjoint, parseProjection, parseProjectionList, type Projection } from '../ngsild/query/projection.js';
import { parseTemporalQuery, type TemporalQuery, type TemporalQueryInput } from '../ngsild/temporal/temporal-query.js';
import { parseAggrMethods, parseAggrPeriod } from '../ngsild/temporal/aggregate.js';
import type { TemporalFormat, TemporalRenderOptions } from '../ngsild/temporal/temporal-render.js';
import type { LdRequest } from '../pipeline/ld-request.js';

const OPTION_WORDS = [
  'temporalValues',
  'aggregatedValues',
  'concise',
  'keyValues',
  'simplified',
  'sysAttrs',
  'normalized',
  'count',
] as const;

export interface Asked {
  tq: TemporalQuery;
  render: TemporalRenderOptions;
  attrs?: string[];
  /** The attributes whose instances are read: attrs, narrowed by pick when it names attributes. */
  loadAttrs?: string[];
  datasetIds?: Set<string>;
}

/** §6.3.x `format` values (and keyValues, the options word's name) → the temporal representation they ask for. */
const FORMATS: Readonly<Record<string, TemporalFormat>> = {
  normalized: 'normalized',
  concise: 'concise',
  simplified: 'temporalValues',
  keyValues: 'temporalValues',
  temporalValues: 'temporalValues',
  aggregatedValues: 'aggregatedValues',
};
const ENTITY_MEMBERS = new Set(['id', 'type', 'scope']);

/** The representation asked by `format` (which wins, §6.3.x) or by the words of `options` (one at most). */
function formatOf(formatParam: string | undefined, words: ReadonlySet<string>): TemporalFormat {
  if (formatParam !== undefined) {
    const f = FORMATS[formatParam];
    // CIM 009 v1.8.1 §6.3.20: a representation the operation does not support is InvalidRequest, as on the entity routes.
    if (f === undefined) throw invalidRequest(`format: '${formatParam.slice(0, 60)}' is not one of ${Object.keys(FORMATS).join(', ')}`);
    return f;
  }
  const asked = ['concise', 'temporalValues', 'keyValues', 'simplified', 'aggregatedValues'].filter((w) => words.has(w));
  if (asked.length > 1) throw badRequest(`options: ${asked.join(' and ')} cannot be asked together`);
  return asked.length === 0 ? 'normalized' : FORMATS[asked[0]!]!;
}

/** §4.15: `lang` is a list of language ranges (BCP 47 tags or `*`), each with an optional q weight. */
function checkLang(lang: string): string {
  const ok = lang
    .split(',')
    .every((part) => /^\s*(\*|[A-Za-z]{1,8}(-[A-Za-z0-9]{1,8})*)\s*(;\s*q\s*=\s*(0(\.\d{0,3})?|1(\.0{0,3})?))?\s*$/.test(part));
  if (lang === '' || !ok) throw badRequest(`lang: '${lang.slice(0, 60)}' is not a language range list`);
  return lang;
}

export function asked(
  req: LdRequest,
  temporal: TemporalQueryInput,
  attrs: string[] | undefined,
  lang: string | undefined,
  projection: { pick?: Projection; omit?: Projection },
): Asked {
  const q = req.query;
  const words = q.options(OPTION_WORDS);
  const format = formatOf(q.get('format'), words);
  const tq = parseTemporalQuery(temporal);
  const render: TemporalRenderOptions = {
    format,
    sysAttrs: words.has('sysAttrs'),
    timeproperty: tq.timeproperty,
    from: tq.from,
    to: tq.to,
  };
  if (format === 'aggregatedValues') {
    render.aggrMethods = parseAggrMethods(q.get('aggrMethods'));
    render.aggrPeriod = parseAggrPeriod(q.get('aggrPeriodDuration'));
  } else if (q.has('aggrMethods') || q.has('aggrPeriodDuration')) {
    // CIM 009 v1.8.1 §6.3.x: format takes precedence over the representation asked in options, and the aggregation
    // parameters of an options=aggregatedValues it overrode go unused; given with no aggregation asked at all, they
    // are a mistake worth telling. Either way a malformed one is refused.
    if (!words.has('aggregatedValues'))
      throw badRequest('aggrMethods and aggrPeriodDuration are for the aggregated representation (format=aggregatedValues)');
    const methods = q.get('aggrMethods');
    if (methods !== undefined) parseAggrMethods(methods);
    parseAggrPeriod(q.get('aggrPeriodDuration'));
  }
  if (lang !== undefined) render.lang = checkLang(lang);
  // CIM 009 v1.8.1 §4.21: pick and omit name compact members (id, type, scope and attributes); neither goes with
  // attrs, and no member is in both. Braces (linked entities) have nothing to project here: there is no join.
  const { pick, omit } = projection;
  if ((pick !== undefined || omit !== undefined) && attrs !== undefined)
    throw badRequest(`${pick !== undefined ? 'pick' : 'omit'} cannot be combined with attrs: name the attributes in pick`);
  if (pick !== undefined && omit !== undefined) checkDisjoint(pick, omit);
  if (pick !== undefined) render.pick = pick.names;
  if (omit !== undefined) render.omit = omit.plain;
  const out: Asked = { tq, render };
  if (attrs !== undefined) out.attrs = attrs.map((a) => checkNameSize(req.context.expandTerm(a), 'attrs'));
  out.loadAttrs = out.attrs;
  if (pick !== undefined)
    out.loadAttrs = [...pick.names]
      .filter((name) => !ENTITY_MEMBERS.has(name))
      .map((a) => checkNameSize(req.context.expandTerm(a), 'pick'));
  const datasetIds = q.csv('datasetId');
  if (datasetIds !== undefined) out.datasetIds = new Set(datasetIds);
  return out;
}

export function projectionParams(req: LdRequest): { pick?: Projection; omit?: Projection } {
  const pick = req.query.get('pick');
  const omit = req.query.get('omit');
  return {
    pick: pick === undefined ? undefined : parseProjection(pick, 'pick'),
    omit: omit === undefined ? undefined : parseProjection(omit, 'omit'),
  };
}

/** A Query body's pick or omit (§5.2.23): an array of names, or one comma-separated string as in the URL. */
export function projectionMember(body: Record<string, unknown>, k: 'pick' | 'omit'): Projection | undefined {
  return body[k] === undefined ? undefined : parseProjectionList(body[k], k);
}

export function temporalParams(req: LdRequest): TemporalQueryInput {
  const q = req.query;
  return {
    timerel: q.get('timerel'),
    timeAt: q.get('timeAt'),
    endTimeAt: q.get('endTimeAt'),
    timeproperty: q.get('timeproperty'),
    lastN: q.get('lastN'),
  };
}
