// The NGSI-LD core @context URLs, one per version, and the other well-known context URLs the broker never fetches
// (src/pipeline/contexts/embedded.ts serves them all from files shipped with the broker).

export type CoreVersion = '1.6' | '1.7' | '1.8' | '1.9';

export const CORE_VERSIONS: readonly CoreVersion[] = ['1.6', '1.7', '1.8', '1.9'];

export const CORE_URLS: Record<CoreVersion, string> = {
  '1.6': 'https://uri.etsi.org/ngsi-ld/v1/ngsi-ld-core-context-v1.6.jsonld',
  '1.7': 'https://uri.etsi.org/ngsi-ld/v1/ngsi-ld-core-context-v1.7.jsonld',
  '1.8': 'https://uri.etsi.org/ngsi-ld/v1/ngsi-ld-core-context-v1.8.jsonld',
  '1.9': 'https://uri.etsi.org/ngsi-ld/v1/ngsi-ld-core-context-v1.9.jsonld',
};

/** The unversioned URL; it serves the 1.0-era context (see src/pipeline/contexts/core/SOURCES.md), never the latest version. */
export const CORE_URL_UNVERSIONED = 'https://uri.etsi.org/ngsi-ld/v1/ngsi-ld-core-context.jsonld';

const CORE_URL_SET: ReadonlySet<string> = new Set([CORE_URL_UNVERSIONED, ...Object.values(CORE_URLS)]);

/** True for the URL of any NGSI-LD core context version (the broker's own core stands for all of them). */
export function isCoreContextUrl(url: string): boolean {
  return CORE_URL_SET.has(url);
}
