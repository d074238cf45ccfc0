// Generators of the fuzz test's hostile input: bodies of every shape on every route, query strings in and near
// the grammars of q, scopeQ, geoQ, idPattern, pick/omit and friends, odd headers, and raw HTTP that no client
// library would send. Nothing here names a host other than 127.0.0.1: the broker must never fetch outside.
import fc from 'fast-check';

export interface JunkRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string | Uint8Array;
}

const CORE = 'https://uri.etsi.org/ngsi-ld/v1/ngsi-ld-core-context-v1.8.jsonld';

/** Characters that mean something to the query grammars, escapes, and arbitrary code points. */
const GRAMMAR = '()[]{};|,.:=!<>~"\'\\/#%+*-_@$^`?& \t01239aZeEnulltrue\u00e9\u65e5';
const grammarText = fc.oneof(
  fc.string({ unit: fc.constantFrom(...GRAMMAR), maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 30 }),
  fc.string({ unit: fc.constantFrom('(', ')', '[', ']', ';', '|', 'a', '=', '1', '"'), minLength: 50, maxLength: 300 }),
);

/**
 * Sizes in UTF-8 bytes around every limit of README "Limits" (an instanceId 256 bytes, a name 512 bytes once the
 * default vocabulary's 45 characters expand it, an id 1024) and far past them (LMDB refuses a key over 1978 bytes).
 */
const SIZES = [255, 256, 257, 466, 467, 468, 511, 512, 513, 1023, 1024, 1025, 1500, 2500];

/** `prefix` then one-, two- or four-byte characters up to one of SIZES bytes. */
const long = (prefix = ''): fc.Arbitrary<string> =>
  fc
    .record({ bytes: fc.constantFrom(...SIZES), unit: fc.constantFrom('a', '\u00e9', '\u{1f600}') })
    .map(({ bytes, unit }) => prefix + unit.repeat(Math.max(1, Math.ceil((bytes - prefix.length) / Buffer.byteLength(unit)))));

/** A path segment: an id-like string, percent-encoded (fetch would refuse or rewrite raw controls). */
const segment = fc
  .oneof(
    { weight: 4, arbitrary: fc.constantFrom('urn:ngsi-ld:Fz:1', 'urn:ngsi-ld:J:1', 'x', '', '..', '%', 'urn:ngsi-ld:null') },
    { weight: 1, arbitrary: long() },
    { weight: 1, arbitrary: long('urn:ngsi-ld:J:') },
    { weight: 3, arbitrary: grammarText },
  )
  .map((s) => encodeURIComponent(s));

const ROUTES: ReadonlyArray<readonly [string, string]> = [
  ['POST', '/entities'],
  ['GET', '/entities'],
  ['DELETE', '/entities'],
  ['GET', '/entities/{id}'],
  ['PATCH', '/entities/{id}'],
  ['PUT', '/entities/{id}'],
  ['DELETE', '/entities/{id}'],
  ['POST', '/entities/{id}/attrs'],
  ['PATCH', '/entities/{id}/attrs'],
  ['PATCH', '/entities/{id}/attrs/{a}'],
  ['PUT', '/entities/{id}/attrs/{a}'],
  ['DELETE', '/entities/{id}/attrs/{a}'],
  ['POST', '/entityOperations/create'],
  ['POST', '/entityOperations/upsert'],
  ['POST', '/entityOperations/update'],
  ['POST', '/entityOperations/delete'],
  ['POST', '/entityOperations/merge'],
  ['POST', '/entityOperations/query'],
  ['POST', '/subscriptions'],
  ['GET', '/subscriptions'],
  ['GET', '/subscriptions/{id}'],
  ['PATCH', '/subscriptions/{id}'],
  ['DELETE', '/subscriptions/{id}'],
  ['POST', '/csourceRegistrations'],
  ['GET', '/csourceRegistrations'],
  ['PATCH', '/csourceRegistrations/{id}'],
  ['POST', '/temporal/entities'],
  ['GET', '/temporal/entities'],
  ['GET', '/temporal/entities/{id}'],
  ['PATCH', '/temporal/entities/{id}'],
  ['POST', '/temporal/entities/{id}/attrs'],
  ['PATCH', '/temporal/entities/{id}/attrs/{a}/{i}'],
  ['POST', '/temporal/entityOperations/query'],
  ['GET', '/types'],
  ['GET', '/types/{a}'],
  ['GET', '/attributes'],
  ['GET', '/attributes/{a}'],
  ['POST', '/jsonldContexts'],
  ['GET', '/jsonldContexts'],
  ['GET', '/jsonldContexts/{id}'],
  ['DELETE', '/jsonldContexts/{id}'],
  ['GET', '/info/conformance'],
  ['OPTIONS', '/entities'],
  ['HEAD', '/entities/{id}'],
  ['GET', '/nowhere/{id}'],
];

const route = fc
  .record({ r: fc.constantFrom(...ROUTES), id: segment, a: segment, i: segment })
  .map(({ r, id, a, i }) => ({ method: r[0], path: r[1].replace('{id}', id).replace('{a}', a).replace('{i}', i) }));

/** Mostly `valid`, sometimes `odd`. */
const mostly = <T, U>(valid: fc.Arbitrary<T>, odd: fc.Arbitrary<U>): fc.Arbitrary<T | U> =>
  fc.oneof({ weight: 5, arbitrary: valid }, { weight: 1, arbitrary: odd });

const ATTR_TYPES = [
  'Property',
  'Relationship',
  'GeoProperty',
  'LanguageProperty',
  'VocabProperty',
  'JsonProperty',
  'ListProperty',
  'ListRelationship',
];

/** An entity-shaped object: mostly one the broker takes, each part sometimes wrong. */
const entityLike = fc
  .record(
    {
      id: mostly(
        fc.oneof({ weight: 5, arbitrary: fc.nat(20).map((n) => `urn:ngsi-ld:J:${n}`) }, { weight: 1, arbitrary: long('urn:ngsi-ld:J:') }),
        fc.oneof(grammarText, fc.jsonValue({ maxDepth: 1 })),
      ),
      type: mostly(
        fc.oneof({ weight: 5, arbitrary: fc.constantFrom<string | string[]>('J', 'K', ['J', 'K']) }, { weight: 1, arbitrary: long() }),
        fc.oneof(fc.constantFrom('Fz', null, 'urn:ngsi-ld:null', ''), grammarText),
      ),
      attrs: fc.dictionary(
        mostly(
          fc.oneof(
            { weight: 6, arbitrary: fc.constantFrom('a', 'b', 'location', 'constructor', '__proto__', 'ñ') },
            { weight: 1, arbitrary: long() },
          ),
          fc.oneof(fc.constantFrom('@context', '@id', 'id', 'type', 'scope', 'createdAt', 'observationSpace'), grammarText),
        ),
        mostly(
          fc.oneof(
            fc.record(
              {
                type: fc.constant('Property'),
                value: fc.jsonValue({ maxDepth: 3 }).filter((v) => v !== null),
                observedAt: fc.constant('2020-01-01T00:00:00Z'),
                unitCode: fc.constant('MTR'),
              },
              { requiredKeys: ['type', 'value'] },
            ),
            fc.record({ type: fc.constant('Relationship'), object: fc.constantFrom('urn:ngsi-ld:J:1', 'urn:ngsi-ld:J:2') }),
            fc.record({
              type: fc.constant('GeoProperty'),
              value: fc.constantFrom(
                { type: 'Point', coordinates: [1, 2] },
                {
                  type: 'LineString',
                  coordinates: [
                    [0, 0],
                    [1, 1],
                  ],
                },
              ),
            }),
            fc.record({
              type: fc.constant('LanguageProperty'),
              languageMap: fc.dictionary(fc.constantFrom('en', 'fr', '@none', 'x-y'), fc.string(), { minKeys: 1, maxKeys: 2 }),
            }),
            fc.jsonValue({ maxDepth: 2 }).filter((v) => v !== null),
          ),
          fc.oneof(
            fc.record({ type: fc.constantFrom(...ATTR_TYPES, 'Bogus'), value: fc.jsonValue({ maxDepth: 3 }) }, { requiredKeys: [] }),
            fc.record(
              {
                object: fc.oneof(grammarText, fc.jsonValue({ maxDepth: 2 })),
                objectList: fc.jsonValue({ maxDepth: 2 }),
                languageMap: fc.jsonValue({ maxDepth: 2 }),
                datasetId: grammarText,
                observedAt: grammarText,
                unitCode: grammarText,
              },
              { requiredKeys: [] },
            ),
            fc.record({
              type: fc.constant('GeoProperty'),
              value: fc.record(
                {
                  type: fc.constantFrom('Point', 'Polygon', 'GeometryCollection', 'LineString', 'Bogus'),
                  coordinates: fc.jsonValue({ maxDepth: 4 }),
                  geometries: fc.jsonValue({ maxDepth: 3 }),
                },
                { requiredKeys: [] },
              ),
            }),
          ),
        ),
        { maxKeys: 4 },
      ),
    },
    { requiredKeys: [] },
  )
  .map(({ id, type, attrs }) => ({ ...(id === undefined ? {} : { id }), ...(type === undefined ? {} : { type }), ...attrs }));

/** Query bodies, subscriptions and registrations with their strings in the grammars' neighbourhood. */
const queryLike = fc.record(
  {
    type: fc.constantFrom('Query', 'Subscription', 'ContextSourceRegistration', 'Bogus'),
    entities: fc.oneof(
      fc.constant([{ type: 'J' }]),
      fc.array(fc.record({ type: grammarText, id: grammarText, idPattern: grammarText }, { requiredKeys: [] }), { maxLength: 3 }),
      fc.jsonValue({ maxDepth: 2 }),
    ),
    q: grammarText,
    scopeQ: grammarText,
    attrs: fc.array(grammarText, { maxLength: 3 }),
    pick: grammarText,
    geoQ: fc.record(
      {
        georel: fc.oneof(fc.constantFrom('near;maxDistance==10', 'within', 'intersects', 'near;minDistance==-1'), grammarText),
        geometry: fc.constantFrom('Point', 'Polygon', 'Bogus'),
        coordinates: fc.oneof(fc.jsonValue({ maxDepth: 5 }), grammarText),
      },
      { requiredKeys: [] },
    ),
    temporalQ: fc.record(
      { timerel: fc.constantFrom('before', 'after', 'between', 'x'), timeAt: grammarText, endTimeAt: grammarText },
      { requiredKeys: [] },
    ),
    notification: fc.record(
      {
        endpoint: fc.record(
          { uri: fc.constantFrom('http://127.0.0.1:1/n', 'mqtt://127.0.0.1:1/t', 'not a uri'), accept: grammarText },
          { requiredKeys: [] },
        ),
        format: grammarText,
      },
      { requiredKeys: [] },
    ),
    information: fc.jsonValue({ maxDepth: 3 }),
    endpoint: fc.constantFrom('http://127.0.0.1:1/csource', 'x'),
    expires: grammarText,
    throttling: fc.jsonValue({ maxDepth: 0 }),
    watchedAttributes: fc.jsonValue({ maxDepth: 1 }),
    '@context': fc.oneof(
      fc.constant(CORE),
      fc.constant({ J: 'https://example.org/J' }),
      fc.constant('urn:x:unknown-context'),
      fc.constant('http://127.0.0.1:1/ctx.jsonld'),
      fc.jsonValue({ maxDepth: 2 }),
    ),
  },
  { requiredKeys: [] },
);

/** A JSON value nested `depth` levels (arrays and objects alternate). */
const nested = fc.integer({ min: 60, max: 2000 }).map((depth) => {
  let s = '1';
  for (let i = 0; i < depth; i++) s = i % 2 === 0 ? `[${s}]` : `{"n":${s}}`;
  return s;
});

const bodyText: fc.Arbitrary<string | Uint8Array> = fc.oneof(
  entityLike.map((o) => JSON.stringify(o)),
  fc.array(entityLike, { maxLength: 4 }).map((a) => JSON.stringify(a)),
  queryLike.map((o) => JSON.stringify(o)),
  fc.json({ maxDepth: 4 }),
  nested,
  nested.map((n) => `{"id":"urn:ngsi-ld:J:1","type":"J","a":{"type":"Property","value":${n}}}`),
  fc.constantFrom(
    '',
    '{',
    '[',
    'null',
    '"x"',
    '{"a":1,"a":2}',
    '{"id":"urn:ngsi-ld:J:1","type":"J","a\\ud800":1}',
    '{"x":"\\udfff"}',
    '{"id":"urn:ngsi-ld:J:1","type":"J","@context":"http://127.0.0.1:1/c.jsonld"}',
    '1e99999',
    '-0',
    '{"__proto__":{"polluted":1}}',
  ),
  fc.uint8Array({ maxLength: 64 }),
);

const CONTENT_TYPES = [
  'application/json',
  'application/ld+json',
  'application/merge-patch+json',
  'application/geo+json',
  'text/plain',
  'application/json; charset=utf-16',
  'application/ld+json;profile="x"',
  '*/*',
  'application/json;;;',
  '',
];
const ACCEPTS = [
  'application/json',
  'application/ld+json',
  'application/geo+json',
  'application/problem+json',
  '*/*',
  'text/html',
  'application/json;q=0',
  'application/*, */*;q=0.1',
  '',
];

/** Header values fetch can carry: visible ASCII and spaces (raw HTTP covers the rest). */
const headerText = fc.string({ unit: fc.constantFrom(...' !#$%&\'()*+,-./0123456789:;<=>?@AZaz[]^_`{|}~"\\'), maxLength: 60 });

const linkHeader = fc.oneof(
  fc.constant(`<${CORE}>; rel="http://www.w3.org/ns/json-ld#context"; type="application/ld+json"`),
  fc.constant('<http://127.0.0.1:1/ctx.jsonld>; rel="http://www.w3.org/ns/json-ld#context"; type="application/ld+json"'),
  fc.constant('<http://127.0.0.1:1/ngsi-ld/v1/jsonldContexts/nothing>; rel="http://www.w3.org/ns/json-ld#context"'),
  headerText.map((s) => `<${s}>; rel="http://www.w3.org/ns/json-ld#context"`),
  headerText,
);

/** `arb` one time in `in_`, else absent. */
const sometimes = <T>(arb: fc.Arbitrary<T>, in_: number): fc.Arbitrary<T | null> =>
  fc.oneof({ weight: in_ - 1, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: arb });

/** Mostly the headers a client sends, sometimes odd ones: too much oddness and every answer is a 406 or a 415. */
export const headersArb: fc.Arbitrary<Record<string, string>> = fc
  .record({
    'content-type': fc.oneof(
      { weight: 8, arbitrary: fc.constant('application/json') },
      { weight: 3, arbitrary: fc.constant('application/ld+json') },
      { weight: 1, arbitrary: fc.constant('application/merge-patch+json') },
      { weight: 2, arbitrary: fc.constantFrom(...CONTENT_TYPES) },
      { weight: 1, arbitrary: headerText },
    ),
    accept: sometimes(fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...ACCEPTS) }, { weight: 1, arbitrary: headerText }), 3),
    link: sometimes(linkHeader, 4),
    'ngsild-tenant': fc.oneof(
      { weight: 6, arbitrary: fc.constant('fuzzjunk') },
      { weight: 2, arbitrary: fc.constantFrom('FuzzJunk', 'nosuch', '', 'a'.repeat(60)) },
      { weight: 1, arbitrary: headerText },
    ),
    'ngsild-scope': sometimes(headerText, 5),
    'ngsild-date': sometimes(headerText, 5),
    authorization: sometimes(headerText, 5),
  })
  .map((h) => {
    const out: Record<string, string> = {};
    for (const [k, v] of Object.entries(h)) if (v !== null) out[k] = v;
    return out;
  });

/** A request on any route with any body and headers; never one in the model's tenant. */
export const junkRequestArb: fc.Arbitrary<JunkRequest> = fc
  .record({ route, headers: headersArb, body: fc.oneof({ weight: 1, arbitrary: fc.constant(null) }, { weight: 4, arbitrary: bodyText }) })
  .map(({ route: r, headers, body }) => ({
    ...r,
    headers,
    ...(body === null || r.method === 'GET' || r.method === 'HEAD' ? {} : { body }),
  }));

const QUERY_VALUES = fc.oneof(
  { weight: 1, arbitrary: grammarText },
  { weight: 1, arbitrary: long() },
  {
    weight: 4,
    arbitrary: fc.constantFrom(
      'J',
      'a',
      'a,s,l',
      'true',
      '0',
      '-1',
      '1001',
      'keyValues,concise',
      'sysAttrs',
      'near;maxDistance==1',
      'Point',
      '[1,2]',
      '[[[0,0],[1,0],[1,1],[0,0]]]',
      '2020-01-01T00:00:00Z',
      'after',
      'a>0;s=="text"',
      'o[b]==1',
      'l.en=="one"',
      '/a/b',
      'urn:ngsi-ld:J:.*',
      '(a+)+$',
      'flat',
      'inline',
      '2',
      'en,fr;q=0.5',
      'urn:ngsi-ld:Dataset:d',
      '@none',
    ),
  },
);

/** The parameters each kind of path takes: a query string of others is refused before any of them is parsed. */
const ENTITY_QUERY = [
  'q',
  'scopeQ',
  'idPattern',
  'pick',
  'omit',
  'attrs',
  'id',
  'type',
  'options',
  'limit',
  'offset',
  'count',
  'lang',
  'format',
  'datasetId',
  'join',
  'joinLevel',
  'expandValues',
  'csf',
  'local',
  'geoproperty',
  'containedBy',
];
const ENTITY_RETRIEVE = [
  'attrs',
  'pick',
  'omit',
  'options',
  'format',
  'lang',
  'geometryProperty',
  'datasetId',
  'join',
  'joinLevel',
  'containedBy',
];
const TEMPORAL = [
  'q',
  'scopeQ',
  'attrs',
  'pick',
  'omit',
  'options',
  'lastN',
  'timeproperty',
  'aggrMethods',
  'aggrPeriodDuration',
  'lang',
  'limit',
  'count',
  'format',
  'datasetId',
  'endTimeAt',
  'idPattern',
  'geoproperty',
];
const QUERY_BASES: ReadonlyArray<readonly [string, readonly string[]]> = [
  ['/entities?type=J&', ENTITY_QUERY],
  ['/entities?local=true&', ENTITY_QUERY],
  ['/entities?', ENTITY_QUERY],
  ['/entities/urn:ngsi-ld:J:1?', ENTITY_RETRIEVE],
  ['/entities/urn:ngsi-ld:J:2?', ENTITY_RETRIEVE],
  ['/temporal/entities?type=J&timerel=after&timeAt=2000-01-01T00:00:00Z&', TEMPORAL],
  ['/temporal/entities/urn:ngsi-ld:J:1?', TEMPORAL],
  ['/types?', ['details']],
  ['/types/J?', []],
  ['/attributes?', ['details']],
  ['/attributes/a?', []],
  ['/subscriptions?', ['limit', 'offset', 'count']],
  ['/jsonldContexts?', ['details', 'kind']],
];

/** A geo-query's three parameters, each in or near its grammar. */
const geoParams = fc
  .tuple(
    fc.oneof(
      fc.constantFrom(
        'near;maxDistance==1000',
        'near;minDistance==1',
        'within',
        'intersects',
        'disjoint',
        'equals',
        'contains',
        'overlaps',
      ),
      grammarText,
    ),
    fc.oneof(fc.constantFrom('Point', 'Polygon', 'LineString', 'MultiPolygon', 'Bogus'), grammarText),
    fc.oneof(
      fc.constantFrom(
        '[0.5,0.5]',
        '[[[0,0],[1,0],[1,1],[0,0]]]',
        '[[0,0],[2,2]]',
        '[[[[0,0],[1,0],[1,1],[0,0]]]]',
        '[181,91]',
        '[[[0,0],[1,0]]]',
        '[]',
      ),
      grammarText,
      fc.jsonValue({ maxDepth: 4 }).map((v) => JSON.stringify(v)),
    ),
  )
  .map(
    ([georel, geometry, coordinates]) =>
      [
        ['georel', georel],
        ['geometry', geometry],
        ['coordinates', coordinates],
      ] as Array<[string, string]>,
  );

const encode = (pairs: Array<[string, string]>): string =>
  pairs.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join('&');

export const queryPathArb: fc.Arbitrary<string> = fc.constantFrom(...QUERY_BASES).chain(([base, names]) =>
  fc
    .tuple(
      names.length === 0
        ? fc.constant([] as Array<[string, string]>)
        : fc.uniqueArray(fc.tuple(fc.constantFrom(...names), QUERY_VALUES), { maxLength: 3, selector: (p) => p[0] }),
      fc.oneof({ weight: 3, arbitrary: fc.constant([] as Array<[string, string]>) }, { weight: 1, arbitrary: geoParams }),
      // now and then a parameter the path does not take, or one given twice
      fc.oneof(
        { weight: 6, arbitrary: fc.constant([] as Array<[string, string]>) },
        { weight: 1, arbitrary: fc.tuple(fc.oneof(fc.constantFrom('q', 'type', 'bogus'), grammarText), QUERY_VALUES).map((p) => [p]) },
      ),
    )
    .map(
      ([params, geo, odd]) =>
        base + encode([...params, ...(base.startsWith('/entities?') || base.startsWith('/temporal/entities?') ? geo : []), ...odd]),
    ),
);

/** Raw HTTP/1.x, well-formed or not, with what a library would never send. */
const token = fc.oneof(
  fc.constantFrom('OPTIONS', 'CONNECT', 'PRI', 'get', 'G ET', 'FOO', 'Mh*', ''),
  fc.string({ unit: 'binary-ascii', maxLength: 10 }),
);
const GOOD_TARGETS = [
  '/ngsi-ld/v1/entities',
  '/ngsi-ld/v1/entities?type=J',
  '/ngsi-ld/v1/types',
  '/ngsi-ld/v1/entities/%',
  '/ngsi-ld/v1/entities/%ED%A0%80',
  '/ngsi-ld/v1/../../etc/passwd',
  '//',
  '/ngsi-ld/v1/entities?q=' + '('.repeat(5000),
  '/' + 'a'.repeat(20_000),
];
const odd = (text: string): { text: string; good: boolean } => ({ text, good: false });
const good = (text: string): { text: string; good: boolean } => ({ text, good: true });
const target = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...GOOD_TARGETS).map(good) },
  { weight: 1, arbitrary: fc.constantFrom('*', 'x', 'http://127.0.0.1/ngsi-ld/v1/types', '').map(odd) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary-ascii', maxLength: 40 }).map(odd) },
);
const version = fc.constantFrom('HTTP/1.0', 'HTTP/2.0', 'HTTP/1.1 x', 'http/1.1', 'HTTP/9', '');
const eol = fc.constantFrom('\n', '\r', '\r\r\n');
const rawHeader = fc.oneof(
  {
    weight: 3,
    arbitrary: fc
      .constantFrom(
        'Content-Type: application/json',
        'Content-Type: application/ld+json',
        'NGSILD-Tenant: fuzzjunk',
        'NGSILD-Tenant: ../x',
        'Accept: application/ld+json',
        'Accept: text/html',
        'Authorization: Bearer a.b.c',
        'Link: <' + 'x'.repeat(10_000) + '>',
        'X-Big: ' + 'y'.repeat(70_000),
      )
      .map(good),
  },
  {
    weight: 1,
    arbitrary: fc
      .constantFrom(
        'Content-Length: -1',
        'Content-Length: 99999999999999999999',
        'Content-Length: 3, 4',
        'Transfer-Encoding: chunked',
        'Transfer-Encoding: gzip, chunked',
        'Transfer-Encoding: chunked\r\nContent-Length: 3',
        ' folded: continuation',
        'Expect: 100-continue',
        'Connection: upgrade',
        'Upgrade: websocket',
        'X: \u0000',
        ': no-name',
        'No-Colon',
      )
      .map(odd),
  },
  {
    weight: 1,
    arbitrary: fc
      .tuple(fc.string({ unit: 'binary-ascii', maxLength: 12 }), fc.string({ unit: 'binary-ascii', maxLength: 30 }))
      .map(([n, v]) => odd(`${n}: ${v}`)),
  },
);

/** Raw bytes, and whether they are a well-formed HTTP/1.1 request (which must be answered, not only closed or left waiting). */
export interface RawRequest {
  bytes: Buffer;
  wellFormed: boolean;
}

/** A request framed right, or nearly: a few mistakes (an odd method, target, version or header, bad line ends, bytes inserted, a cut, a wrong length). */
export const rawHttpArb: fc.Arbitrary<RawRequest> = fc
  .record({
    method: fc.oneof(
      { weight: 5, arbitrary: fc.constantFrom('GET', 'POST', 'PATCH', 'DELETE', 'PUT').map(good) },
      { weight: 1, arbitrary: token.map(odd) },
    ),
    target,
    version: fc.oneof({ weight: 5, arbitrary: fc.constant(good('HTTP/1.1')) }, { weight: 1, arbitrary: version.map(odd) }),
    headers: fc.array(rawHeader, { maxLength: 3 }),
    close: fc.boolean(),
    body: fc.oneof(
      fc.constantFrom('', '{}', '5\r\nhello\r\n0\r\n\r\n', '{"id":"urn:ngsi-ld:J:9","type":"J"}'),
      fc.string({ unit: 'binary-ascii', maxLength: 40 }),
    ),
    length: fc.oneof(
      { weight: 4, arbitrary: fc.constant(good('right')) },
      { weight: 1, arbitrary: fc.constantFrom('none', 'short', 'long').map(odd) },
    ),
    eol: fc.oneof({ weight: 6, arbitrary: fc.constant(good('\r\n')) }, { weight: 1, arbitrary: eol.map(odd) }),
    noise: fc.oneof(
      { weight: 3, arbitrary: fc.constant(null) },
      { weight: 1, arbitrary: fc.tuple(fc.nat(), fc.uint8Array({ minLength: 1, maxLength: 8 })) },
    ),
    cut: fc.oneof({ weight: 4, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: fc.nat() }),
  })
  .map((r) => {
    const e = r.eol.text;
    const lines = [`${r.method.text} ${r.target.text} ${r.version.text}`, 'Host: 127.0.0.1', ...r.headers.map((h) => h.text)];
    if (r.close) lines.push('Connection: close');
    const n = Buffer.byteLength(r.body, 'latin1');
    const length = r.length.text;
    if (length !== 'none') lines.push(`Content-Length: ${length === 'right' ? n : length === 'short' ? Math.max(0, n - 1) : n + 5}`);
    let bytes = Buffer.from(lines.join(e) + e + e + r.body, 'latin1');
    if (r.noise !== null) {
      const at = r.noise[0] % (bytes.length + 1);
      bytes = Buffer.concat([bytes.subarray(0, at), Buffer.from(r.noise[1]), bytes.subarray(at)]);
    }
    if (r.cut !== null) bytes = bytes.subarray(0, r.cut % (bytes.length + 1));
    const wellFormed =
      r.method.good &&
      r.target.good &&
      r.version.good &&
      r.length.good &&
      r.eol.good &&
      r.headers.every((h) => h.good) &&
      r.noise === null &&
      r.cut === null;
    return { bytes, wellFormed };
  });
