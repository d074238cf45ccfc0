// URL parameters that choose how entities are rendered (CIM 009 v1.8 §6.3.x): format/options, attrs, pick, omit,
// lang, datasetId, sysAttrs; parsed once per request into the renderer's options.
import { badRequest } from '../ngsild/problem.js';
import type { LdRequest } from '../pipeline/ld-request.js';

export type Format = 'normalized' | 'concise' | 'keyValues';

export interface RenderOptions {
  format: Format;
  sysAttrs: boolean;
  attrs?: ReadonlySet<string>;
  pick?: ReadonlySet<string>;
  omit?: ReadonlySet<string>;
  lang?: string;
  datasetId?: ReadonlySet<string>;
}

// CIM 009 §4.5.3: `simplified` and `keyValues` name one representation, in `options` as in `format`.
const OPTION_WORDS = ['keyValues', 'simplified', 'concise', 'sysAttrs', 'normalized'] as const;

export function renderOptions(req: LdRequest): RenderOptions {
  const q = req.query;
  const words = q.options(OPTION_WORDS);
  let format: Format = 'normalized';
  const formatParam = q.get('format');
  if (formatParam !== undefined) {
    if (formatParam !== 'normalized' && formatParam !== 'concise' && formatParam !== 'keyValues' && formatParam !== 'simplified')
      throw badRequest(`format: '${formatParam.slice(0, 60)}' is not one of normalized, concise, keyValues, simplified`);
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
  const pick = q.csv('pick');
  const omit = q.csv('omit');
  if (pick !== undefined && omit !== undefined) throw badRequest('pick and omit cannot be given together');
  if (pick !== undefined) opts.pick = new Set(pick);
  if (omit !== undefined) opts.omit = new Set(omit);
  const lang = q.get('lang');
  if (lang !== undefined) {
    if (lang === '' || !/^(\*|[A-Za-z]{1,8}(-[A-Za-z0-9]{1,8})*)(,(\*|[A-Za-z]{1,8}(-[A-Za-z0-9]{1,8})*)(;q=[01](\.\d{1,3})?)?)*$/.test(lang.replace(/;q=[01](\.\d{1,3})?/g, '')))
      throw badRequest(`lang: '${lang}' is not a language tag list`);
    opts.lang = lang;
  }
  const datasetId = q.csv('datasetId');
  if (datasetId !== undefined) opts.datasetId = new Set(datasetId);
  return opts;
}
