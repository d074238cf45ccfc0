// Micro-benchmark of the @context hot path: resolveCachedUrl, then expandTerm/compactIri on the memoized Maps
// (cached) against memo misses (uncached), with jsonld's own IRI algorithms on the same active context as the
// baseline the Maps replace. Prints ops/s; run after `npm run build` (which copies src/pipeline/contexts/core):
// node dist/bench/micro/context-expand.js

import { createRequire } from 'node:module';
import { ContextService } from '../../src/pipeline/contexts/context-service.js';
import { CORE_URLS } from '../../src/ngsild/context/core-contexts.js';
import { embeddedDocument } from '../../src/pipeline/contexts/embedded.js';
import { initialContext, processContext } from '../../src/ngsild/context/jsonld-api.js';

const TEST_SUITE =
  'https://forge.etsi.org/rep/cim/ngsi-ld-test-suite/-/raw/develop/resources/jsonld-contexts/ngsi-ld-test-suite-compound.jsonld';

function report(name: string, ops: number, ms: number): void {
  process.stdout.write(
    `${name.padEnd(56)} ${Math.round((ops / ms) * 1000)
      .toLocaleString('en')
      .padStart(14)} ops/s\n`,
  );
}

let sink = 0;

/** Calls fn(i) with i running over 0..n-1 repeatedly for at least minMs; `sink` keeps the results alive. */
function measure(name: string, n: number, fn: (i: number) => string, minMs = 700): void {
  for (let i = 0; i < 20_000; i++) sink += fn(i % n).length;
  let ops = 0;
  let i = 0;
  const start = performance.now();
  let elapsed = 0;
  while (elapsed < minMs) {
    for (let k = 0; k < 1000; k++) {
      sink += fn(i).length;
      if (++i === n) i = 0;
    }
    ops += 1000;
    elapsed = performance.now() - start;
  }
  report(name, ops, elapsed);
}

const resolver = new ContextService();
await resolver.init();
const ctx = await resolver.resolve(TEST_SUITE);

// What entity bodies use: core terms, user terms, unknown names (→ @vocab), compact IRIs.
const hotTerms = [
  'type',
  'id',
  'location',
  'observedAt',
  'Building',
  'name',
  'speed',
  'airQualityLevel',
  'unitCode',
  'value',
  'brandName',
  'temperature',
  'ngsi-ld:foo',
  'datasetId',
];
const hotIris = hotTerms.map((term) => ctx.expandTerm(term)).filter((iri) => !iri.startsWith('@'));
// Distinct names, far more than the memo holds: every call misses.
const coldTerms = Array.from({ length: 200_000 }, (_, i) => `attribute${i}`);
const coldIris = coldTerms.map((term) => `https://uri.etsi.org/ngsi-ld/default-context/${term}`);

const require = createRequire(import.meta.url);
const jsonldContext = require('jsonld/lib/context.js') as {
  expandIri(ctx: unknown, value: string, relativeTo: object, options: object): string;
};
const jsonldCompact = require('jsonld/lib/compact.js') as {
  compactIri(args: { activeCtx: unknown; iri: string; relativeTo: object }): string;
};
const loader = async (url: string): Promise<{ contextUrl: null; documentUrl: string; document: unknown }> => ({
  contextUrl: null,
  documentUrl: url,
  document: structuredClone(embeddedDocument(url)),
});
const active = await processContext(await initialContext(), [TEST_SUITE, CORE_URLS['1.8']], { documentLoader: loader });

measure('resolveCachedUrl (same Link header)', 1, () => (resolver.resolveCachedUrl(TEST_SUITE) === ctx ? 'y' : ''));
measure('expandTerm cached (14 hot names)', hotTerms.length, (i) => ctx.expandTerm(hotTerms[i]!));
measure('expandTerm uncached (distinct names)', coldTerms.length, (i) => ctx.expandTerm(coldTerms[i]!));
measure('baseline: jsonld expandIri (hot names)', hotTerms.length, (i) =>
  jsonldContext.expandIri(active, hotTerms[i]!, { vocab: true }, {}),
);
measure('compactIri cached (hot IRIs)', hotIris.length, (i) => ctx.compactIri(hotIris[i]!));
measure('compactIri uncached (distinct IRIs)', coldIris.length, (i) => ctx.compactIri(coldIris[i]!));
measure('baseline: jsonld compactIri (hot IRIs)', hotIris.length, (i) =>
  jsonldCompact.compactIri({ activeCtx: active, iri: hotIris[i]!, relativeTo: { vocab: true } }),
);
if (sink === 0) process.stdout.write('(nothing measured)\n');
