// A ResolvedContext over a plain Map, for unit tests of expansion and rendering: user terms from the map, the core
// geo terms under the NGSI-LD namespace, and every other term under the default context (@vocab), as the core does.
import type { ResolvedContext } from '../../../src/ngsild/context/resolved.js';

export const NGSI_LD = 'https://uri.etsi.org/ngsi-ld/';
export const DEFAULT_VOCAB = 'https://uri.etsi.org/ngsi-ld/default-context/';

const CORE_TERMS = ['location', 'observationSpace', 'operationSpace'];

export interface TermDefinition {
  id: string;
  type?: string;
}

export function mapContext(terms: Record<string, string | TermDefinition> = {}): ResolvedContext {
  const byTerm = new Map<string, TermDefinition>();
  for (const t of CORE_TERMS) byTerm.set(t, { id: NGSI_LD + t });
  const prefixes = new Map<string, string>();
  for (const [term, def] of Object.entries(terms)) {
    const d = typeof def === 'string' ? { id: def } : def;
    byTerm.set(term, d);
    if (d.id.endsWith('/') || d.id.endsWith('#')) prefixes.set(term, d.id);
  }
  const byIri = new Map<string, string>();
  for (const [term, d] of byTerm) if (!byIri.has(d.id)) byIri.set(d.id, term);

  return {
    key: 'test:' + JSON.stringify(terms),
    expandTerm(term: string): string {
      const d = byTerm.get(term);
      if (d !== undefined) return d.id;
      const colon = term.indexOf(':');
      if (colon > 0) {
        const prefix = prefixes.get(term.slice(0, colon));
        if (prefix !== undefined) return prefix + term.slice(colon + 1);
        return term;
      }
      return DEFAULT_VOCAB + term;
    },
    compactIri(iri: string): string {
      const term = byIri.get(iri);
      if (term !== undefined) return term;
      if (iri.startsWith(DEFAULT_VOCAB) && iri.length > DEFAULT_VOCAB.length) return iri.slice(DEFAULT_VOCAB.length);
      for (const [p, ns] of prefixes) if (iri.startsWith(ns) && iri.length > ns.length) return p + ':' + iri.slice(ns.length);
      return iri;
    },
    termType(term: string): string | undefined {
      return byTerm.get(term)?.type;
    },
    contextValue: terms,
    linkUrl: 'http://example.org/test-context.jsonld',
  };
}
