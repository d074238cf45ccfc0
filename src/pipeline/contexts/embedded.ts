// The @context documents shipped with the broker (the NGSI-LD core files of every version, the ETSI test suite's,
// the W3C ones the core names), read from the files beside this module: the broker never fetches these URLs.
import { readFileSync } from 'node:fs';
import { CORE_URLS, CORE_URL_UNVERSIONED } from '../../ngsild/context/core-contexts.js';

/** Directory of the data files, relative to this module; the build copies src/pipeline/contexts/core next to it. */
const EMBEDDED_DIR = './core/';

const CORE_FILES: Record<string, string> = {
  [CORE_URL_UNVERSIONED]: 'ngsi-ld-core-context.jsonld',
  [CORE_URLS['1.6']]: 'ngsi-ld-core-context-v1.6.jsonld',
  [CORE_URLS['1.7']]: 'ngsi-ld-core-context-v1.7.jsonld',
  [CORE_URLS['1.8']]: 'ngsi-ld-core-context-v1.8.jsonld',
  [CORE_URLS['1.9']]: 'ngsi-ld-core-context-v1.9.jsonld',
};

const FORGE = 'https://forge.etsi.org/rep/cim/ngsi-ld-test-suite/-/raw/develop/resources/jsonld-contexts/';
const EGM = 'https://easy-global-market.github.io/ngsild-api-data-models/ngsildTestSuite/';

/** URL → file under EMBEDDED_DIR, for every URL the broker serves without the network. */
const EMBEDDED: ReadonlyMap<string, string> = new Map([
  ...Object.entries(CORE_FILES),
  [`${FORGE}ngsi-ld-test-suite-compound.jsonld`, 'test-suite/ngsi-ld-test-suite-compound.jsonld'],
  [`${FORGE}ngsi-ld-test-suite.jsonld`, 'test-suite/ngsi-ld-test-suite.jsonld'],
  [`${EGM}ngsildTestSuiteV1.8-compound.jsonld`, 'test-suite/ngsildTestSuite/ngsildTestSuiteV1.8-compound.jsonld'],
  [`${EGM}ngsildTestSuite.jsonld`, 'test-suite/ngsildTestSuite/ngsildTestSuite.jsonld'],
  [`${EGM}ngsildTestSuite-compound.jsonld`, 'test-suite/ngsildTestSuite/ngsildTestSuite-compound.jsonld'],
  [`${EGM}ngsildTestSuiteV1.7-compound.jsonld`, 'test-suite/ngsildTestSuite/ngsildTestSuiteV1.7-compound.jsonld'],
  [`${EGM}ngsildTestSuiteV1.0-compound.jsonld`, 'test-suite/ngsildTestSuite/ngsildTestSuiteV1.0-compound.jsonld'],
  ['https://fiware.github.io/NGSI-LD_TestSuite/ldContext/testContext.jsonld', 'test-suite/external/testContext.jsonld'],
  // Named by the v1.9 core's scoped context of `ngsildproof`, which JSON-LD processing validates.
  ['https://w3id.org/security/data-integrity/v2', 'w3c/data-integrity-v2.jsonld'],
]);

/** Every URL served from an embedded file. */
export const EMBEDDED_URLS: readonly string[] = [...EMBEDDED.keys()];

const loaded = new Map<string, unknown>();

/**
 * The parsed document of an embedded URL, or undefined when the URL is not embedded. The object is shared:
 * callers that hand it to code which may mutate it (jsonld's @import merge does) must clone it.
 */
export function embeddedDocument(url: string): unknown {
  const file = EMBEDDED.get(url);
  if (file === undefined) return undefined;
  let doc = loaded.get(url);
  if (doc === undefined) {
    doc = JSON.parse(readFileSync(new URL(EMBEDDED_DIR + file, import.meta.url), 'utf8')) as unknown;
    loaded.set(url, doc);
  }
  return doc;
}
