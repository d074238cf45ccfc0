import t from 'tap';
import { ContextService } from '../../src/pipeline/contexts/context-service.js';
import type { ResolvedContext } from '../../src/ngsild/context/resolved.js';
import { rng } from './helpers/rng.js';

// Property: expandTerm(compactIri(iri)) === iri for every absolute IRI (whose scheme is not itself a term),
// in the core context and in user contexts built to collide with it.

const pick = <T>(r: () => number, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;

const BASES = [
  'https://uri.etsi.org/ngsi-ld/default-context/',
  'https://uri.etsi.org/ngsi-ld/',
  'https://uri.etsi.org/ngsi-ld/default',
  'https://purl.org/geojson/vocab#',
  'https://schema.org/',
  'https://ex.org/',
  'https://ex.org/ns#',
  'http://example.com/a/b/',
  'urn:ngsi-ld:',
  'urn:x:',
];
const NAMES = [
  'location',
  'name',
  'Building',
  'value',
  'type',
  'id',
  'observedAt',
  'hasValue',
  'special',
  'ex:alias',
  'alias',
  'foo',
  'a:b',
  'x/y',
  'q?r',
  'p#q',
  '',
  'Point',
  'bbox',
  'schema',
  '日本',
  'under_score',
  'default-context/location',
];

function randomIri(r: () => number): string {
  const name = pick(r, NAMES);
  return pick(r, BASES) + (r() < 0.3 ? name + Math.floor(r() * 100) : name);
}

const USER = {
  schema: 'https://schema.org/',
  ex: { '@id': 'https://ex.org/', '@prefix': true },
  name: 'schema:name',
  special: 'https://ex.org/special',
  'ex:alias': 'https://ex.org/alias',
  foo: 'https://other.org/foo',
  speed: { '@id': 'https://ex.org/speed', '@type': 'http://www.w3.org/2001/XMLSchema#double' },
  speed2: 'https://ex.org/speed',
  loc: 'https://uri.etsi.org/ngsi-ld/location',
  geo: 'https://purl.org/geojson/vocab#',
};

const resolver = new ContextService();
await resolver.init();
const contexts: Array<[string, ResolvedContext]> = [
  ['core', resolver.defaultContext],
  ['user', await resolver.resolve(USER)],
  [
    'user and test suite',
    await resolver.resolve([
      'https://forge.etsi.org/rep/cim/ngsi-ld-test-suite/-/raw/develop/resources/jsonld-contexts/ngsi-ld-test-suite.jsonld',
      USER,
    ]),
  ],
];

for (const [label, ctx] of contexts) {
  t.test(`${label}: expandTerm(compactIri(iri)) === iri for random IRIs`, async (t) => {
    const r = rng(label.length * 7919);
    const broken: string[] = [];
    let shortened = 0;
    for (let i = 0; i < 3000; i++) {
      const iri = randomIri(r);
      const term = ctx.compactIri(iri);
      if (term.length < iri.length) shortened++;
      if (ctx.expandTerm(term) !== iri) broken.push(`${iri} → ${term} → ${ctx.expandTerm(term)}`);
    }
    t.same(broken.slice(0, 10), [], 'no IRI changes on the round trip');
    t.ok(shortened > 1000, `most IRIs compact to something shorter (${shortened}/3000)`);
  });
}

t.test('terms round-trip through their IRI to a term with the same expansion', async (t) => {
  const ctx = contexts[1]![1];
  for (const term of [
    'name',
    'special',
    'ex:alias',
    'alias',
    'foo',
    'speed',
    'speed2',
    'location',
    'loc',
    'Building',
    'schema:email',
    'geojson:x',
    'observedAt',
  ]) {
    const iri = ctx.expandTerm(term);
    t.equal(ctx.expandTerm(ctx.compactIri(iri)), iri, `${term} → ${iri} → ${ctx.compactIri(iri)}`);
  }
  t.equal(ctx.compactIri('https://ex.org/speed'), 'speed2', 'a plain term over a typed one');
  t.equal(ctx.compactIri('https://uri.etsi.org/ngsi-ld/location'), 'loc', 'a user term over the core term');
  t.equal(ctx.compactIri('https://other.org/foo'), 'foo');
  t.equal(
    ctx.compactIri('https://uri.etsi.org/ngsi-ld/default-context/foo'),
    'ngsi-ld:default-context/foo',
    'a vocab suffix that is a user term is not used',
  );
});

t.test('memoized answers equal first answers, also past the memo bound', async (t) => {
  const ctx = await resolver.resolve({ ...USER, marker: 'https://ex.org/marker' });
  const r = rng(42);
  const seen = new Map<string, [string, string]>();
  for (let i = 0; i < 20000; i++) {
    const name = `n${Math.floor(r() * 12000)}`;
    const iri = `https://ex.org/${name}`;
    const pair: [string, string] = [ctx.expandTerm(name), ctx.compactIri(iri)];
    const prev = seen.get(name);
    if (prev === undefined) seen.set(name, pair);
    else if (prev[0] !== pair[0] || prev[1] !== pair[1]) t.fail(`${name} answered differently`);
  }
  t.equal(ctx.expandTerm('n5'), 'https://uri.etsi.org/ngsi-ld/default-context/n5');
  t.equal(ctx.compactIri('https://ex.org/n5'), 'ex:n5');
});
