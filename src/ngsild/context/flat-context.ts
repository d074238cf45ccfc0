// A ResolvedContext flattened from a processed JSON-LD active context into plain Maps, so that the hot path
// (expandTerm / compactIri) is a memo lookup and never runs a JSON-LD algorithm.
import type { ResolvedContext } from './resolved.js';
import type { JsonLdActiveContext, JsonLdTermMapping } from './jsonld-api.js';

/** Bound of each memo; a client inventing names cannot grow a context without limit (the memo restarts). */
const MEMO_MAX = 8192;

// JSON-LD 1.1 API §9 (IRI expansion): "absolute IRI" as jsonld's lib/url.js isAbsolute tests it.
const ABSOLUTE_IRI = /^([A-Za-z][A-Za-z0-9+\-.]*|_):[^\s]*$/;

/** The parts of a ResolvedContext that are not derived from term definitions. */
export interface FlatContextInfo {
  key: string;
  contextValue: unknown;
  linkUrl: string;
  /** The @vocab in force (the core's: it comes last). */
  vocab: string | undefined;
  /** What a request using it makes the broker keep in its tenant (CIM 009 v1.8 §5.13.1); absent: nothing. */
  keeps?: ContextKeeps;
}

/** The @contexts the broker keeps for the tenant of a request that uses a resolved context. */
export interface ContextKeeps {
  /** The inline context, kept as ImplicitlyCreated under `implicitId` (the Link of application/json answers). */
  implicitId?: string;
  implicitContext?: unknown;
  /** The URLs fetched (or taken from the fetch cache) to resolve it, kept as Cached, with their local ids. */
  fetched: ReadonlyArray<{ url: string; cachedId: string }>;
}

interface Candidate {
  term: string;
  user: boolean;
  plain: boolean;
  colon: boolean;
}

export class FlatContext implements ResolvedContext {
  readonly key: string;
  readonly contextValue: unknown;
  readonly linkUrl: string;
  readonly implicitId: string | undefined;
  readonly keeps: ContextKeeps | undefined;
  /** term → IRI (or keyword) for every term with a non-null @id. */
  private readonly termIri = new Map<string, string>();
  /** term → IRI for terms usable as a compact-IRI prefix (`_prefix` in jsonld). */
  private readonly prefixIri = new Map<string, string>();
  private readonly typeOf = new Map<string, string>();
  private readonly containerOf = new Map<string, readonly string[]>();
  /** IRI → the term compaction picks for it (see rank()). */
  private readonly iriTerm = new Map<string, string>();
  private readonly vocab: string | undefined;
  private readonly expandMemo = new Map<string, string>();
  private readonly compactMemo = new Map<string, string>();

  /**
   * `active` is the processed context (user contexts, core last); `core` the core context alone, which tells
   * user terms from core terms when both map the same IRI.
   */
  constructor(info: FlatContextInfo, active: JsonLdActiveContext, core: JsonLdActiveContext | undefined) {
    this.key = info.key;
    this.contextValue = info.contextValue;
    this.linkUrl = info.linkUrl;
    this.implicitId = info.keeps?.implicitId;
    this.keeps = info.keeps;
    this.vocab = info.vocab;
    const best = new Map<string, Candidate>();
    for (const [term, mapping] of active.mappings) {
      if (mapping === null || mapping === undefined || term.startsWith('@')) continue;
      const iri = mapping['@id'];
      if (typeof iri !== 'string') continue; // a null mapping: the term is explicitly not mapped
      this.termIri.set(term, iri);
      if (mapping._prefix === true) this.prefixIri.set(term, iri);
      if (typeof mapping['@type'] === 'string') this.typeOf.set(term, mapping['@type']);
      if (Array.isArray(mapping['@container']) && mapping['@container'].length > 0) this.containerOf.set(term, mapping['@container']);
      if (mapping.reverse === true) continue;
      const candidate: Candidate = {
        term,
        user: core === undefined || !sameIri(core.mappings.get(term), iri),
        plain: mapping['@type'] === undefined && mapping['@container'] === undefined,
        colon: mapping._termHasColon === true || term.includes(':'),
      };
      const held = best.get(iri);
      if (held === undefined || rank(candidate, held) < 0) best.set(iri, candidate);
    }
    for (const [iri, c] of best) this.iriTerm.set(iri, c.term);
  }

  expandTerm(term: string): string {
    let iri = this.expandMemo.get(term);
    if (iri === undefined) {
      iri = this.expandUncached(term);
      if (this.expandMemo.size >= MEMO_MAX) this.expandMemo.clear();
      this.expandMemo.set(term, iri);
    }
    return iri;
  }

  compactIri(iri: string): string {
    let term = this.compactMemo.get(iri);
    if (term === undefined) {
      term = this.compactUncached(iri);
      if (this.compactMemo.size >= MEMO_MAX) this.compactMemo.clear();
      this.compactMemo.set(iri, term);
    }
    return term;
  }

  termType(term: string): string | undefined {
    return this.typeOf.get(term);
  }

  /** The term definition's `@container` values (`@list`, `@set`, `@index`, ...), when it has any. */
  termContainer(term: string): readonly string[] | undefined {
    return this.containerOf.get(term);
  }

  // JSON-LD 1.1 API §5.2.2 IRI Expansion with vocab = true, on the flattened definitions.
  private expandUncached(term: string): string {
    if (term.length === 0 || term.charCodeAt(0) === 64 /* @ */) return term;
    const mapped = this.termIri.get(term);
    if (mapped !== undefined) return mapped;
    const colon = term.indexOf(':');
    if (colon > 0) {
      const prefix = term.slice(0, colon);
      const suffix = term.slice(colon + 1);
      if (prefix === '_' || suffix.startsWith('//')) return term;
      const prefixIri = this.prefixIri.get(prefix);
      if (prefixIri !== undefined) return prefixIri + suffix;
      if (ABSOLUTE_IRI.test(term)) return term;
    }
    return this.vocab !== undefined ? this.vocab + term : term;
  }

  // JSON-LD 1.1 API §6.2 IRI Compaction with vocab = true: a term, else the @vocab suffix, else a compact IRI,
  // else the IRI. Every candidate but the exact term is checked by expanding it back, so that
  // expandTerm(compactIri(iri)) === iri holds for every absolute IRI whose scheme is not itself a prefix term.
  private compactUncached(iri: string): string {
    const term = this.iriTerm.get(iri);
    if (term !== undefined) return term;
    const vocab = this.vocab;
    if (vocab !== undefined && iri.length > vocab.length && iri.startsWith(vocab)) {
      const suffix = iri.slice(vocab.length);
      if (this.expandUncached(suffix) === iri) return suffix;
    }
    let compact: string | undefined;
    for (const [prefix, prefixIri] of this.prefixIri) {
      if (iri.length <= prefixIri.length || !iri.startsWith(prefixIri)) continue;
      const candidate = `${prefix}:${iri.slice(prefixIri.length)}`;
      if (compact !== undefined && (candidate.length > compact.length || (candidate.length === compact.length && candidate >= compact)))
        continue;
      if (this.expandUncached(candidate) === iri) compact = candidate;
    }
    return compact ?? iri;
  }
}

function sameIri(mapping: JsonLdTermMapping | null | undefined, iri: string): boolean {
  return mapping !== null && mapping !== undefined && mapping['@id'] === iri;
}

/**
 * Which of two terms for one IRI compaction returns: the user's over the core's (the client named it), a plain
 * definition over one with @type/@container (its values read the same in every position), a term without a
 * colon over one that looks like a compact IRI, then the shortest, then the least (JSON-LD's own tie-break).
 */
function rank(a: Candidate, b: Candidate): number {
  if (a.user !== b.user) return a.user ? -1 : 1;
  if (a.plain !== b.plain) return a.plain ? -1 : 1;
  if (a.colon !== b.colon) return a.colon ? 1 : -1;
  if (a.term.length !== b.term.length) return a.term.length - b.term.length;
  return a.term < b.term ? -1 : a.term > b.term ? 1 : 0;
}
