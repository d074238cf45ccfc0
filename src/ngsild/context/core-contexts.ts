// The NGSI-LD core @context files, embedded (the broker never fetches them), and the other well-known
// context URLs served from files shipped with the broker (the ETSI test suite's).
import { readFileSync } from 'node:fs';

export type CoreVersion = '1.6' | '1.7' | '1.8' | '1.9';

export const CORE_URLS: Record<CoreVersion, string> = {
  '1.6': 'https://uri.etsi.org/ngsi-ld/v1/ngsi-ld-core-context-v1.6.jsonld',
  '1.7': 'https://uri.etsi.org/ngsi-ld/v1/ngsi-ld-core-context-v1.7.jsonld',
  '1.8': 'https://uri.etsi.org/ngsi-ld/v1/ngsi-ld-core-context-v1.8.jsonld',
  '1.9': 'https://uri.etsi.org/ngsi-ld/v1/ngsi-ld-core-context-v1.9.jsonld',
};

/** URL → file under ./core (relative to this module; the build copies the directory next to it). */
const EMBEDDED: Record<string, string> = {
  'https://uri.etsi.org/ngsi-ld/v1/ngsi-ld-core-context.jsonld': 'ngsi-ld-core-context.jsonld',
  [CORE_URLS['1.6']]: 'ngsi-ld-core-context-v1.6.jsonld',
  [CORE_URLS['1.7']]: 'ngsi-ld-core-context-v1.7.jsonld',
  [CORE_URLS['1.8']]: 'ngsi-ld-core-context-v1.8.jsonld',
  [CORE_URLS['1.9']]: 'ngsi-ld-core-context-v1.9.jsonld',
  'https://forge.etsi.org/rep/cim/ngsi-ld-test-suite/-/raw/develop/resources/jsonld-contexts/ngsi-ld-test-suite-compound.jsonld': 'test-suite/ngsi-ld-test-suite-compound.jsonld',
  'https://forge.etsi.org/rep/cim/ngsi-ld-test-suite/-/raw/develop/resources/jsonld-contexts/ngsi-ld-test-suite.jsonld': 'test-suite/ngsi-ld-test-suite.jsonld',
  'https://easy-global-market.github.io/ngsild-api-data-models/ngsildTestSuite/ngsildTestSuiteV1.8-compound.jsonld': 'test-suite/ngsildTestSuite/ngsildTestSuiteV1.8-compound.jsonld',
  'https://easy-global-market.github.io/ngsild-api-data-models/ngsildTestSuite/ngsildTestSuite.jsonld': 'test-suite/ngsildTestSuite/ngsildTestSuite.jsonld',
  'https://easy-global-market.github.io/ngsild-api-data-models/ngsildTestSuite/ngsildTestSuite-compound.jsonld': 'test-suite/ngsildTestSuite/ngsildTestSuite-compound.jsonld',
  'https://easy-global-market.github.io/ngsild-api-data-models/ngsildTestSuite/ngsildTestSuiteV1.7-compound.jsonld': 'test-suite/ngsildTestSuite/ngsildTestSuiteV1.7-compound.jsonld',
  'https://easy-global-market.github.io/ngsild-api-data-models/ngsildTestSuite/ngsildTestSuiteV1.0-compound.jsonld': 'test-suite/ngsildTestSuite/ngsildTestSuiteV1.0-compound.jsonld',
  'https://fiware.github.io/NGSI-LD_TestSuite/ldContext/testContext.jsonld': 'test-suite/external/testContext.jsonld',
};

const loaded = new Map<string, unknown>();

/** The parsed document of an embedded URL, or undefined when the URL is not embedded. */
export function embeddedDocument(url: string): unknown {
  const file = EMBEDDED[url];
  if (file === undefined) return undefined;
  let doc = loaded.get(url);
  if (doc === undefined) {
    doc = JSON.parse(readFileSync(new URL(`./core/${file}`, import.meta.url), 'utf8')) as unknown;
    loaded.set(url, doc);
  }
  return doc;
}
