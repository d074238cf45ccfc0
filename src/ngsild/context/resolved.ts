// The view of a resolved @context that the rest of the broker uses: expansion and compaction of names,
// built once per distinct context set and cached by its key (ARCHITECTURE.md step 6).

export interface ResolvedContext {
  /** Stable identity of this context set (core version + user context); equal keys expand identically. */
  readonly key: string;
  /**
   * Vocabulary-relative expansion (entity types, attribute names, vocab values): a term of the context → its IRI;
   * a compact IRI `prefix:suffix` with a known prefix → expanded; an absolute IRI → itself; else the @vocab
   * default (`https://uri.etsi.org/ngsi-ld/default-context/<term>` with the core context).
   */
  expandTerm(term: string): string;
  /** The reverse: IRI → term of this context, else compact IRI, else the IRI itself. */
  compactIri(iri: string): string;
  /** The term definition's `@type` (`@id`, `@vocab`, `@json`, a datatype IRI) for a term, when it has one. */
  termType(term: string): string | undefined;
  /** What an application/ld+json response carries as `@context` (the request's context, core last). */
  readonly contextValue: unknown;
  /** The URL for a `Link` header on application/json responses (of the default tenant: see linkUrlIn). */
  readonly linkUrl: string;
  /**
   * The local id (in the default tenant) of the ImplicitlyCreated @context `linkUrl` names, when the context is an
   * inline one the broker keeps (CIM 009 v1.8 §5.13.1); each tenant keeps its own copy under its own local id.
   */
  readonly implicitId?: string;
}

/** Separates the tenant from the id in the local id of a @context kept in a tenant other than the default. */
export const TENANT_SEPARATOR = '~';

/** The local id of a kept @context in `tenant`, from its local id in the default tenant. */
export function tenantLocalId(tenant: string, localId: string): string {
  return tenant === '' ? localId : tenant + TENANT_SEPARATOR + localId;
}

/**
 * The URL for a `Link` header on application/json answers to a request (or notifications) of `tenant`. For an
 * ImplicitlyCreated @context the broker names it at its configured address; `brokerUrl` (scheme, host and port)
 * puts another in its place: the one the client reached, or --brokerUrl.
 */
export function linkUrlIn(ctx: ResolvedContext, tenant: string, brokerUrl?: string): string {
  const id = ctx.implicitId;
  if (id === undefined) return ctx.linkUrl;
  let url = ctx.linkUrl;
  if (tenant !== '') url = url.slice(0, url.length - id.length) + tenantLocalId(tenant, id);
  return brokerUrl === undefined ? url : brokerUrl + url.slice(url.indexOf('/', url.indexOf('//') + 2));
}
