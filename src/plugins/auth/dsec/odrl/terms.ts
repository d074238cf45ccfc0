// JSON-LD terms of a policy brought to the one spelling the evaluator knows (`odrl:permission`, `dome-op:role`):
// the policy's own @context prefixes and full IRIs of the known vocabularies are compacted (seed 000 §2.9).

const KNOWN_NAMESPACES: ReadonlyArray<readonly [string, string]> = [
  ['http://www.w3.org/ns/odrl/2/', 'odrl:'],
  ['https://github.com/DOME-Marketplace/dome-odrl-profile#', 'dome-op:'],
  ['http://www.w3.org/2001/XMLSchema#', 'xsd:'],
  ['https://uri.etsi.org/ngsi-ld/', 'ngsi-ld:'],
];

export type PrefixMap = ReadonlyMap<string, string>;

export const NO_PREFIXES: PrefixMap = new Map();

/**
 * The prefixes a policy's @context defines (objects of the @context, or of its array: JSON-LD 1.1 §9.15 allows no
 * array in the array, and none is walked; remote contexts are not fetched).
 */
export function prefixesOf(context: unknown, into: Map<string, string> = new Map()): Map<string, string> {
  if (Array.isArray(context)) {
    for (const c of context) if (!Array.isArray(c)) prefixesOf(c, into);
  } else if (context !== null && typeof context === 'object') {
    for (const [k, v] of Object.entries(context as Record<string, unknown>)) {
      if (k.startsWith('@')) continue;
      if (typeof v === 'string') into.set(k, v);
      else if (v !== null && typeof v === 'object' && typeof (v as Record<string, unknown>)['@id'] === 'string') {
        into.set(k, (v as Record<string, unknown>)['@id'] as string);
      }
    }
  }
  return into;
}

function compactIri(iri: string): string | null {
  for (const [ns, prefix] of KNOWN_NAMESPACES) {
    if (iri.startsWith(ns)) return prefix + iri.slice(ns.length);
  }
  return null;
}

/** A word of the vocabulary in its canonical spelling; anything not recognised is returned as written. */
export function canonicalTerm(term: string, prefixes: PrefixMap): string {
  const colon = term.indexOf(':');
  if (colon < 0) return term;
  if (term.startsWith('http')) return compactIri(term) ?? term;
  if (prefixes.size === 0) return term;
  const ns = prefixes.get(term.slice(0, colon));
  if (ns === undefined || term.startsWith('//', colon + 1)) return term;
  return compactIri(ns + term.slice(colon + 1)) ?? term;
}

/** A copy of a policy node whose keys and `@type`/`@id` values are canonical terms; literals are untouched. */
export function canonicalNode(node: unknown, prefixes: PrefixMap): unknown {
  if (Array.isArray(node)) return node.map((n) => canonicalNode(n, prefixes));
  if (node === null || typeof node !== 'object') return node;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(node as Record<string, unknown>)) {
    if (k === '@context' || k === '@value') {
      out[k] = v;
    } else if (k === '@type' || k === '@id') {
      out[k] = typeof v === 'string' ? canonicalTerm(v, prefixes) : v;
    } else {
      out[k.startsWith('@') ? k : canonicalTerm(k, prefixes)] = canonicalNode(v, prefixes);
    }
  }
  return out;
}
