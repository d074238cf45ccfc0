import t from 'tap';
import { ContextService } from '../../src/pipeline/contexts/context-service.js';
import { CORE_URLS, CORE_URL_UNVERSIONED } from '../../src/ngsild/context/core-contexts.js';
import { EMBEDDED_URLS } from '../../src/pipeline/contexts/embedded.js';
import { rejectsLd } from './helpers/errors.js';
import { linkUrlIn } from '../../src/ngsild/context/resolved.js';

const NGSI = 'https://uri.etsi.org/ngsi-ld/';
const DEFAULT = 'https://uri.etsi.org/ngsi-ld/default-context/';
const CORE18 = CORE_URLS['1.8'];
const FORGE = 'https://forge.etsi.org/rep/cim/ngsi-ld-test-suite/-/raw/develop/resources/jsonld-contexts/';
const EGM = 'https://easy-global-market.github.io/ngsild-api-data-models/ngsildTestSuite/';

const resolver = new ContextService();
await resolver.init();
const core = resolver.defaultContext;

t.test('the default context is the v1.8 core context', async (t) => {
  t.equal(resolver.coreUrl, CORE18);
  t.equal(core.key, 'core-1.8');
  t.equal(core.contextValue, CORE18, 'contextValue is the core URL alone');
  t.equal(core.linkUrl, CORE18);
});

t.test('core terms expand to their NGSI-LD IRIs, other names to the default-context vocabulary', async (t) => {
  t.equal(core.expandTerm('location'), `${NGSI}location`);
  t.equal(core.expandTerm('observedAt'), `${NGSI}observedAt`);
  t.equal(core.expandTerm('value'), `${NGSI}hasValue`);
  t.equal(core.expandTerm('Property'), `${NGSI}Property`);
  t.equal(core.expandTerm('Point'), 'https://purl.org/geojson/vocab#Point');
  t.equal(core.expandTerm('type'), '@type', 'keyword alias');
  // v1.8 has no `name` term: it falls to @vocab.
  t.equal(core.expandTerm('name'), `${DEFAULT}name`);
  t.equal(core.expandTerm('Building'), `${DEFAULT}Building`);
  t.equal(core.expandTerm('ngsi-ld:foo'), `${NGSI}foo`, 'compact IRI with the core ngsi-ld prefix');
  t.equal(core.expandTerm('geojson:bbox'), 'https://purl.org/geojson/vocab#bbox');
  t.equal(core.expandTerm('http://example.org/a'), 'http://example.org/a', 'absolute IRI stays');
  t.equal(core.expandTerm('urn:ngsi-ld:x'), 'urn:ngsi-ld:x');
  t.equal(core.expandTerm('schema:name'), 'schema:name', 'an unknown prefix is an IRI scheme');
  t.equal(core.expandTerm('@id'), '@id', 'keywords stay');
  t.equal(core.expandTerm(''), '', 'empty name stays empty');
  t.equal(core.expandTerm('_:b0'), '_:b0', 'blank node id stays');
});

t.test('term types and containers come from the core definitions', async (t) => {
  t.equal(core.termType('observedAt'), `${NGSI}DateTime`);
  t.equal(core.termType('vocab'), '@vocab');
  t.equal(core.termType('json'), '@json');
  t.equal(core.termType('location'), undefined);
  t.equal(core.termType('nothing'), undefined);
  const flat = core as unknown as { termContainer(term: string): readonly string[] | undefined };
  t.same(flat.termContainer('coordinates'), ['@list']);
  t.equal(flat.termContainer('location'), undefined);
});

t.test('IRIs compact to core terms, vocab suffixes, or compact IRIs', async (t) => {
  t.equal(core.compactIri(`${NGSI}location`), 'location');
  t.equal(core.compactIri(`${NGSI}hasValue`), 'value');
  t.equal(core.compactIri(`${DEFAULT}Building`), 'Building');
  t.equal(core.compactIri(`${NGSI}foo`), 'ngsi-ld:foo');
  t.equal(core.compactIri('https://purl.org/geojson/vocab#bbox'), 'bbox', 'bbox is a core term');
  t.equal(core.compactIri('https://purl.org/geojson/vocab#foo'), 'geojson:foo');
  t.equal(core.compactIri('http://example.org/a'), 'http://example.org/a');
  t.equal(core.compactIri('@type'), 'type');
  // `location` is a core term: the default-context IRI of that name must not compact to it.
  t.equal(core.compactIri(`${DEFAULT}location`), 'ngsi-ld:default-context/location');
  t.equal(core.expandTerm(core.compactIri(`${DEFAULT}location`)), `${DEFAULT}location`);
});

t.test('a user context object adds terms, prefixes and keeps the core last', async (t) => {
  const user = {
    schema: 'https://schema.org/',
    name: 'schema:name',
    Building: 'https://example.org/Building',
    speed: { '@id': 'https://example.org/speed', '@type': 'http://www.w3.org/2001/XMLSchema#double' },
  };
  const ctx = await resolver.resolve(user);
  t.equal(ctx.expandTerm('name'), 'https://schema.org/name');
  t.equal(ctx.expandTerm('schema:email'), 'https://schema.org/email');
  t.equal(ctx.expandTerm('Building'), 'https://example.org/Building');
  t.equal(ctx.expandTerm('location'), `${NGSI}location`);
  t.equal(ctx.expandTerm('other'), `${DEFAULT}other`);
  t.equal(ctx.termType('speed'), 'http://www.w3.org/2001/XMLSchema#double');
  t.equal(ctx.compactIri('https://schema.org/name'), 'name');
  t.equal(ctx.compactIri('https://schema.org/email'), 'schema:email');
  t.same(ctx.contextValue, user, 'contextValue: the user context as given (answers echo it; the core applies anyway)');
  t.equal(ctx.linkUrl, CORE18, 'an inline context links the core (no hosting yet)');
  t.match(ctx.key, /^core-1\.8 #/);
  t.equal(await resolver.resolve({ ...user }), ctx, 'an equal object resolves to the cached context');
  t.equal(resolver.cached(ctx.key), ctx, 'cached(key) finds it');
});

t.test('compaction prefers the user term over the core term for one IRI', async (t) => {
  const ctx = await resolver.resolve({
    loc: 'https://uri.etsi.org/ngsi-ld/location',
    val: { '@id': `${NGSI}hasValue`, '@type': '@id' },
    val2: `${NGSI}hasValue`,
  });
  t.equal(ctx.compactIri(`${NGSI}location`), 'loc');
  t.equal(ctx.expandTerm('location'), `${NGSI}location`, 'the core term still expands');
  t.equal(ctx.compactIri(`${NGSI}hasValue`), 'val2', 'a plain definition over one with @type');
});

t.test('a @vocab, @import and @protected in a user context are handled by JSON-LD processing', async (t) => {
  const ctx = await resolver.resolve({
    '@version': 1.1,
    '@protected': true,
    ex: 'http://ex.org/',
    T: { '@id': 'ex:T', '@context': { p: 'ex:p' } },
  });
  t.equal(ctx.expandTerm('T'), 'http://ex.org/T');
  t.equal(ctx.expandTerm('ex:x'), 'http://ex.org/x');
  t.equal(ctx.compactIri('http://ex.org/x'), 'ex:x');
  const imported = await resolver.resolve({ '@import': `${FORGE}ngsi-ld-test-suite.jsonld`, extra: 'http://ex.org/extra' });
  t.equal(imported.expandTerm('speed'), 'https://ngsi-ld-test-suite/context#speed', '@import of an embedded URL');
  t.equal(imported.expandTerm('extra'), 'http://ex.org/extra');
});

t.test(
  'arrays: URLs and objects in order, core URLs of any version dropped and replaced by the broker core; the answer echoes the spelling',
  async (t) => {
    const arr = [`${FORGE}ngsi-ld-test-suite.jsonld`, { speed: 'http://ex.org/speed' }, CORE_URLS['1.7']];
    const ctx = await resolver.resolve(arr);
    t.equal(ctx.expandTerm('speed'), 'http://ex.org/speed', 'a later user context wins over an earlier one');
    t.equal(ctx.expandTerm('fuelLevel'), 'https://ngsi-ld-test-suite/context#fuelLevel');
    t.same(ctx.contextValue, arr, 'echoed as given');
    const single = await resolver.resolve([`${FORGE}ngsi-ld-test-suite.jsonld`, CORE18]);
    const plain = await resolver.resolve(`${FORGE}ngsi-ld-test-suite.jsonld`);
    t.equal(single.expandTerm('fuelLevel'), plain.expandTerm('fuelLevel'), '[url, core] expands as url');
    t.same(single.contextValue, [`${FORGE}ngsi-ld-test-suite.jsonld`, CORE18], 'and echoes its own spelling');
    t.equal(plain.contextValue, `${FORGE}ngsi-ld-test-suite.jsonld`);
    t.equal(await resolver.resolve([`${FORGE}ngsi-ld-test-suite.jsonld`, CORE18]), single, 'one spelling resolves to one cached context');
    t.equal(single.linkUrl, `${FORGE}ngsi-ld-test-suite.jsonld`);
    t.equal(await resolver.resolve([CORE18]), resolver.coreContext, '[core] is the core context');
    t.equal(await resolver.resolve([CORE_URL_UNVERSIONED, CORE_URLS['1.9']]), resolver.coreContext, 'other core versions too');
    t.equal(await resolver.resolve([]), resolver.coreContext, 'an empty array is the core context');
  },
);

t.test('the ETSI test-suite contexts are served embedded, with every core version they name', async (t) => {
  for (const url of [
    `${FORGE}ngsi-ld-test-suite-compound.jsonld`,
    `${EGM}ngsildTestSuiteV1.8-compound.jsonld`,
    `${EGM}ngsildTestSuite-compound.jsonld`,
    `${EGM}ngsildTestSuiteV1.7-compound.jsonld`,
    `${EGM}ngsildTestSuiteV1.0-compound.jsonld`,
  ]) {
    const ctx = await resolver.resolve(url);
    t.equal(ctx.expandTerm('Building'), 'https://ngsi-ld-test-suite/context#Building', url);
    t.equal(ctx.expandTerm('location'), `${NGSI}location`);
    t.equal(ctx.compactIri('https://ngsi-ld-test-suite/context#name'), 'name');
    t.equal(ctx.contextValue, url, 'the Link URL echoed as it is');
    t.equal(ctx.linkUrl, url);
    t.equal(resolver.resolveCachedUrl(url), ctx, 'then served by the sync fast path');
  }
  const fiware = await resolver.resolve('https://fiware.github.io/NGSI-LD_TestSuite/ldContext/testContext.jsonld');
  t.equal(fiware.expandTerm('DateProp'), 'http://example.org/DateProp');
  t.equal(fiware.termType('DateProp'), 'http://uri.etsi.org/ngsi-ld/DateTime');
  t.equal(fiware.compactIri('http://example.org/zzz'), 'ex:zzz');
});

t.test('every embedded URL loads as a context document', async (t) => {
  for (const url of EMBEDDED_URLS) await t.resolves(resolver.resolve([url, { probe: 'http://ex.org/probe' }]), url);
});

t.test('every core version initializes; core terms win over user terms in all of them', async (t) => {
  for (const v of ['1.6', '1.7', '1.8', '1.9'] as const) {
    const r = new ContextService({ coreVersion: v });
    await r.init();
    t.equal(r.coreUrl, CORE_URLS[v]);
    t.equal(r.defaultContext.expandTerm('location'), `${NGSI}location`, v);
    t.equal(r.defaultContext.expandTerm('Building'), `${DEFAULT}Building`, v);
    t.equal(r.defaultContext.key, `core-${v}`);
    if (v === '1.6' || v === '1.7') {
      // Unprotected cores: a user redefinition is overridden by the trailing core, not refused.
      const ctx = await r.resolve({ location: 'http://ex.org/loc' });
      t.equal(ctx.expandTerm('location'), `${NGSI}location`, `${v}: the core wins`);
    }
  }
  const v19 = new ContextService({ coreVersion: '1.9' });
  t.equal((await v19.resolve(undefined)).expandTerm('EntityMap'), `${NGSI}EntityMap`, 'resolve() initializes on demand');
});

t.test('a user @vocab is overridden by the core @vocab, which comes last, in every core version', async (t) => {
  for (const v of ['1.7', '1.8', '1.9'] as const) {
    const r = new ContextService({ coreVersion: v });
    const ctx = await r.resolve({ '@vocab': 'http://ex.org/vocab/', a: 'http://ex.org/a' });
    t.equal(ctx.expandTerm('zzz'), `${DEFAULT}zzz`, v);
    t.equal(ctx.expandTerm('a'), 'http://ex.org/a', v);
    t.equal(ctx.compactIri(`${DEFAULT}zzz`), 'zzz', v);
  }
});

t.test('a user context that redefines a protected core term is InvalidRequest (400)', async (t) => {
  await rejectsLd(t, resolver.resolve({ location: 'http://ex.org/loc' }), 'InvalidRequest', "protected core term 'location'");
  await rejectsLd(
    t,
    resolver.resolve([{ observedAt: { '@id': `${NGSI}observedAt` } }]),
    'InvalidRequest',
    "protected core term 'observedAt'",
  );
  await rejectsLd(t, resolver.resolve({ type: 'http://ex.org/type' }), 'InvalidRequest', "protected core term 'type'");
  await rejectsLd(t, resolver.resolve({ 'ngsi-ld': 'http://ex.org/' }), 'InvalidRequest', "protected core term 'ngsi-ld'");
  await rejectsLd(t, resolver.resolve([null, { a: 'http://ex.org/a' }]), 'InvalidRequest', 'protected core terms');
  // Redefining with the same definition is allowed by JSON-LD 1.1.
  const same = await resolver.resolve({ location: 'ngsi-ld:location' });
  t.equal(same.expandTerm('location'), `${NGSI}location`);
});

t.test('invalid user contexts are InvalidRequest with a useful detail', async (t) => {
  await rejectsLd(t, resolver.resolve(42), 'InvalidRequest', 'must be a URL');
  await rejectsLd(t, resolver.resolve(true), 'InvalidRequest', 'must be a URL');
  await rejectsLd(t, resolver.resolve([1]), 'InvalidRequest', 'only URLs and context objects');
  await rejectsLd(t, resolver.resolve([[{}]]), 'InvalidRequest', 'only URLs and context objects');
  await rejectsLd(t, resolver.resolve('ctx.jsonld'), 'InvalidRequest', 'not an absolute URL');
  await rejectsLd(t, resolver.resolve(['https://ok.example/a', 'relative/b']), 'InvalidRequest', 'not an absolute URL');
  await rejectsLd(t, resolver.resolve({ a: 5 }), 'InvalidRequest', 'invalid @context');
  await rejectsLd(t, resolver.resolve({ a: { '@id': 'http://ex.org/a', '@bogus': 1 } }), 'InvalidRequest', 'invalid @context');
  await rejectsLd(t, resolver.resolve({ '@version': 2 }), 'InvalidRequest', 'invalid @context');
  await rejectsLd(t, resolver.resolve({ '@vocab': 7 }), 'InvalidRequest', 'invalid @context');
  await rejectsLd(t, resolver.resolve({ a: 'b', b: 'a' }), 'InvalidRequest', 'invalid @context');
  await rejectsLd(t, resolver.resolve({ '@import': 5 }), 'InvalidRequest', 'invalid @context');
  await rejectsLd(t, resolver.resolve({ ex: 'https://ex.org/', 'ex:a': 'https://other.org/a' }), 'InvalidRequest', 'invalid IRI mapping');
  t.equal(resolver.defaultContext.expandTerm('location'), `${NGSI}location`, 'the resolver keeps working');
});

t.test('a urn or non-http URL that nothing maps is LdContextNotAvailable (503)', async (t) => {
  await rejectsLd(t, resolver.resolve('urn:ngsi-ld:context:unknown'), 'LdContextNotAvailable', 'cannot be dereferenced');
  await rejectsLd(t, resolver.resolve('ftp://example.org/c.jsonld'), 'LdContextNotAvailable', 'cannot be dereferenced');
  t.equal(resolver.resolveCachedUrl('urn:ngsi-ld:context:unknown'), undefined, 'a failure is not cached');
});

t.test('the sync fast path answers core URLs and misses unknown ones', async (t) => {
  t.equal(resolver.resolveCachedUrl(CORE18), resolver.coreContext);
  t.equal(resolver.resolveCachedUrl(CORE_URL_UNVERSIONED), resolver.coreContext);
  t.equal(resolver.resolveCachedUrl('https://never.example/ctx.jsonld'), undefined);
  t.equal(resolver.cached('core-1.8'), resolver.coreContext);
  t.equal(resolver.cached('core-1.9'), undefined, 'a key of another core version');
  t.equal(resolver.cached('nonsense'), undefined);
});

t.test('the inlineContextUrl hook gives inline contexts their Link URL', async (t) => {
  const seen: unknown[] = [];
  const r = new ContextService({
    inlineContextUrl: (key, value) => {
      seen.push(value);
      return `https://broker.example/ngsi-ld/v1/jsonldContexts/${encodeURIComponent(key)}`;
    },
  });
  const ctx = await r.resolve({ a: 'http://ex.org/a' });
  t.match(ctx.linkUrl, /^https:\/\/broker\.example\/ngsi-ld\/v1\/jsonldContexts\/core-1\.8%20%23/);
  t.same(seen, [{ a: 'http://ex.org/a' }], 'the inline context as given');
  t.equal((await r.resolve(`${FORGE}ngsi-ld-test-suite.jsonld`)).linkUrl, `${FORGE}ngsi-ld-test-suite.jsonld`, 'a single URL links itself');
});

t.test('concurrent resolves of one context share one resolution', async (t) => {
  const r = new ContextService();
  await r.init();
  const obj = { shared: 'http://ex.org/shared' };
  const all = await Promise.all([r.resolve(obj), r.resolve({ ...obj }), r.resolve([obj, CORE18])]);
  t.equal(all[0], all[1]);
  t.equal(all[2].expandTerm('shared'), all[0].expandTerm('shared'), 'another spelling expands alike (and echoes its own)');
});

t.test('--defaultUserContext is the context of requests that carry none', async (t) => {
  const url = `${FORGE}ngsi-ld-test-suite.jsonld`;
  const r = new ContextService({ defaultUserContext: url });
  await r.init();
  t.equal(r.defaultContext.expandTerm('speed'), 'https://ngsi-ld-test-suite/context#speed');
  t.equal(r.defaultContext.contextValue, url);
  t.equal(r.defaultContext.linkUrl, url);
  t.equal(await r.resolve(undefined), r.defaultContext);
  t.equal((await r.resolve({ a: 'http://ex.org/a' })).expandTerm('speed'), `${DEFAULT}speed`, 'a request context replaces it');
  const bad = new ContextService({ defaultUserContext: 'urn:nothing:here' });
  await t.rejects(bad.init(), /--defaultUserContext urn:nothing:here/);
  const badVersion = (): ContextService => new ContextService({ coreVersion: '2.0' as never });
  t.throws(badVersion, /unknown core context version/);
});

t.test('defaultContext before init() throws a clear error', async (t) => {
  const r = new ContextService();
  t.throws(() => r.defaultContext, /init\(\)/);
});

t.test("an inline context is kept per tenant: keptFor names the tenant's copy once, again after a forget", async (t) => {
  const docs = new Map<string, Record<string, unknown>>();
  const r = new ContextService({
    hosted: {
      get: async (id) => docs.get(id),
      insert: async (id, doc) => {
        docs.set(id, doc);
        return true;
      },
    },
    brokerUrl: 'http://broker.example:1026',
  });
  await r.init();
  const ctx = await r.resolve({ Ship: 'https://example.org/Ship' });
  t.match(ctx.linkUrl, /^http:\/\/broker\.example:1026\/ngsi-ld\/v1\/jsonldContexts\/implicit-[A-Za-z0-9_-]{22}$/);
  t.equal(linkUrlIn(ctx, ''), ctx.linkUrl, 'the default tenant links the plain id');
  t.equal(linkUrlIn(ctx, 'fleet'), ctx.linkUrl.replace('/implicit-', '/fleet~implicit-'), 'a tenant links its own copy');
  t.equal(linkUrlIn(core, 'fleet'), core.linkUrl, 'the core is the same URL in every tenant');
  const path = new URL(ctx.linkUrl).pathname;
  t.equal(
    linkUrlIn(ctx, '', 'https://public.example'),
    `https://public.example${path}`,
    "at the address given (--brokerUrl, a request's Host)",
  );
  t.equal(
    linkUrlIn(ctx, 'fleet', 'http://[::1]:8080'),
    `http://[::1]:8080${path.replace('/implicit-', '/fleet~implicit-')}`,
    'in a tenant too',
  );
  t.equal(linkUrlIn(core, '', 'https://public.example'), core.linkUrl, 'the core keeps its own URL');
  const first = r.keptFor('fleet', ctx);
  t.same(
    first.map((k) => k.localId),
    [`fleet~${ctx.implicitId}`],
  );
  t.same(first[0]!.doc.context, { Ship: 'https://example.org/Ship' });
  t.equal(first[0]!.doc.kind, 'ImplicitlyCreated');
  t.same(r.keptFor('fleet', ctx, false), [], 'not when the caller keeps no implicit copy');
  r.kept(first.map((k) => k.localId));
  t.same(r.keptFor('fleet', ctx), [], 'kept once per thread and tenant');
  t.same(
    r.keptFor('', ctx).map((k) => k.localId),
    [ctx.implicitId],
    'another tenant keeps its own',
  );
  r.forget('http://nothing.example/');
  t.equal(r.keptFor('fleet', ctx).length, 1, 'after a delete anywhere, the next use keeps it again');
  t.same(r.keptFor('fleet', core), [], 'the core keeps nothing');
});
