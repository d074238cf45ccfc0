// Language selection for LanguageProperties (CIM 009 v1.8 §4.15, §4.5.18): the `lang` parameter is a list of
// language ranges with optional q weights (as in Accept-Language); the best matching string of a languageMap wins.

export interface LanguageRange {
  /** Lowercased range, or `*`. */
  range: string;
  q: number;
}

let lastText: string | undefined;
let lastRanges: LanguageRange[] = [];

/** The ranges of a `lang` value, most preferred first (stable for equal weights); q=0 ranges are dropped. */
export function parseLangRanges(text: string): LanguageRange[] {
  if (text === lastText) return lastRanges;
  const ranges: LanguageRange[] = [];
  for (const part of text.split(',')) {
    const semi = part.indexOf(';');
    const range = (semi < 0 ? part : part.slice(0, semi)).trim().toLowerCase();
    if (range === '') continue;
    let q = 1;
    if (semi >= 0) {
      const m = /^\s*q\s*=\s*([0-9.]+)\s*$/.exec(part.slice(semi + 1));
      if (m !== null) q = Number(m[1]);
    }
    if (q > 0 && Number.isFinite(q)) ranges.push({ range, q });
  }
  ranges.sort((a, b) => b.q - a.q);
  lastText = text;
  lastRanges = ranges;
  return ranges;
}

/**
 * The key of `languageMap` that best matches `ranges`: for each range in order an exact (case-insensitive) tag,
 * then a tag the range is a prefix of (`fr` → `fr-CH`), then the range truncated (`fr-CH` → `fr`); `*` takes the
 * first language. Without any match, `@none` when present, else the first key (CIM 009 §4.15: a value is always given).
 */
export function bestLanguage(languageMap: Record<string, unknown>, ranges: readonly LanguageRange[]): string | undefined {
  let first: string | undefined;
  let firstTagged: string | undefined;
  for (const k in languageMap) {
    if (first === undefined) first = k;
    if (firstTagged === undefined && k !== '@none') firstTagged = k;
  }
  if (first === undefined) return undefined;
  for (const { range } of ranges) {
    if (range === '*') return firstTagged ?? first;
    let prefixed: string | undefined;
    for (const k in languageMap) {
      const lower = k.toLowerCase();
      if (lower === range) return k;
      if (prefixed === undefined && lower.startsWith(range) && lower.charCodeAt(range.length) === 45 /* - */) prefixed = k;
    }
    if (prefixed !== undefined) return prefixed;
    let truncated = range;
    for (let dash = truncated.lastIndexOf('-'); dash > 0; dash = truncated.lastIndexOf('-')) {
      truncated = truncated.slice(0, dash);
      for (const k in languageMap) if (k.toLowerCase() === truncated) return k;
    }
  }
  return '@none' in languageMap ? '@none' : first;
}
