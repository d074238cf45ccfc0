// URL parameters that choose how entities are rendered (CIM 009 v1.8 §6.3.x): format/options, attrs, pick, omit,
// lang, datasetId, sysAttrs; parsed once per request into the renderer's options.
import { badRequest, invalidRequest } from '../ngsild/problem.js';
import { checkDisjoint, parseProjection, type Projection } from '../ngsild/query/projection.js';
import type { LdRequest } from '../pipeline/ld-request.js';
import type { JoinRenderOptions } from '../ngsild/entity/linked-join.js';

export type Format = 'normalized' | 'concise' | 'keyValues';

/**
 * pick holds the members this level keeps (pick's names), omit those it leaves out (omit's plain names); projection
 * the parsed projections (§4.21), whose braces project the entities a join adds (ngsild/entity/linked-join.ts).
 */
export interface RenderOptions extends JoinRenderOptions {
  format: Format;
  sysAttrs: boolean;
}

// CIM 009 §4.5.3: `simplified` and `keyValues` name one representation, in `options` as in `format`.
const OPTION_WORDS = ['keyValues', 'simplified', 'concise', 'sysAttrs', 'normalized'] as const;

export function renderOptions(req: LdRequest): RenderOptions {
  const q = req.query;
  const words = q.options(OPTION_WORDS);
  let format: Format = 'normalized';
  const formatParam = q.get('format');
  if (formatParam !== undefined) {
    // CIM 009 v1.8.1 §6.3.20: a representation the operation does not support is InvalidRequest, asked by `format`
    // (§6.3.7) as by an `options` word.
    if (formatParam !== 'normalized' && formatParam !== 'concise' && formatParam !== 'keyValues' && formatParam !== 'simplified')
      throw invalidRequest(`format: '${formatParam.slice(0, 60)}' is not one of normalized, concise, keyValues, simplified`);
    format = formatParam === 'simplified' ? 'keyValues' : formatParam;
  } else if (words.has('keyValues') || words.has('simplified')) {
    if (words.has('concise')) throw badRequest('options: keyValues (simplified) and concise cannot be asked together');
    format = 'keyValues';
  } else if (words.has('concise')) {
    format = 'concise';
  }
  const opts: RenderOptions = { format, sysAttrs: words.has('sysAttrs') };
  const attrs = q.csv('attrs');
  if (attrs !== undefined) opts.attrs = new Set(attrs.map((a) => req.context.expandTerm(a)));
  const pickText = q.get('pick');
  const omitText = q.get('omit');
  setProjection(
    opts,
    pickText === undefined ? undefined : parseProjection(pickText, 'pick'),
    omitText === undefined ? undefined : parseProjection(omitText, 'omit'),
  );
  const lang = q.get('lang');
  if (lang !== undefined) {
    if (
      lang === '' ||
      !/^(\*|[A-Za-z]{1,8}(-[A-Za-z0-9]{1,8})*)(,(\*|[A-Za-z]{1,8}(-[A-Za-z0-9]{1,8})*)(;q=[01](\.\d{1,3})?)?)*$/.test(
        lang.replace(/;q=[01](\.\d{1,3})?/g, ''),
      )
    )
      throw badRequest(`lang: '${lang}' is not a language tag list`);
    opts.lang = lang;
  }
  const datasetId = q.csv('datasetId');
  if (datasetId !== undefined) opts.datasetId = new Set(datasetId);
  return opts;
}

/**
 * Sets pick and omit (either may be undefined), after the rules of CIM 009 v1.8.1 §4.21: neither goes with attrs
 * (attrs is the older projection of attributes alone), and no member is both picked and omitted (BadRequestData).
 */
export function setProjection(opts: RenderOptions, pick: Projection | undefined, omit: Projection | undefined): void {
  if (pick === undefined && omit === undefined) return;
  if (opts.attrs !== undefined)
    throw badRequest(`${pick !== undefined ? 'pick' : 'omit'} cannot be combined with attrs: name the attributes in pick`);
  if (pick !== undefined && omit !== undefined) checkDisjoint(pick, omit);
  opts.pick = pick?.names;
  opts.omit = omit?.plain;
  opts.projection = { pick, omit };
}
