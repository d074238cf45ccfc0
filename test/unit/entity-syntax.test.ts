import t from 'tap';
import { isUri, isDateTime, forbiddenNameChar, isScope, isLanguageKey } from '../../src/ngsild/entity/syntax.js';
import { mayNestDeeper, tooDeepAt } from '../../src/ngsild/entity/depth.js';
import { geometryProblem, looksLikeGeometry } from '../../src/ngsild/entity/geometry.js';
import { parseLangRanges, bestLanguage } from '../../src/ngsild/entity/lang.js';
import { isNullMarker } from '../../src/ngsild/entity/value-members.js';

t.test('isUri accepts absolute URIs and refuses everything else', async (t) => {
  for (const ok of ['urn:ngsi-ld:X:1', 'http://a.b/c?d=e#f', 'mailto:x@y.z', 'a+b.c-d:x']) t.ok(isUri(ok), ok);
  for (const bad of [
    'abc',
    '1',
    ':x',
    '1a:b',
    'urn:',
    'urn:a b',
    'urn:a\tb',
    'urn:a<b>',
    'urn:a"b',
    'ur n:x',
    '',
    5,
    null,
    undefined,
    ['urn:a'],
  ]) {
    t.notOk(isUri(bad), JSON.stringify(bad) ?? 'undefined');
  }
});

t.test('isDateTime checks the fields, not only the shape', async (t) => {
  for (const ok of ['2024-02-29T00:00:00Z', '2023-12-31T23:59:59.999999Z', '2024-01-01T00:00:00-05:30', '2024-06-30T12:00:00'])
    t.ok(isDateTime(ok), ok);
  for (const bad of [
    '2023-02-29T00:00:00Z',
    '2024-13-01T00:00:00Z',
    '2024-04-31T00:00:00Z',
    '2024-01-01T24:00:00Z',
    '2024-01-01T00:60:00Z',
    '2024-01-01',
    '2024-01-01 00:00:00Z',
    '2024-01-01T00:00Z',
    '2024-01-01T00:00:00+25:00',
    'now',
    1700000000,
  ])
    t.notOk(isDateTime(bad), String(bad));
});

t.test('forbiddenNameChar names the first forbidden character of a name', async (t) => {
  t.equal(forbiddenNameChar('temperature'), undefined);
  t.equal(forbiddenNameChar('schema:name'), undefined, 'a compact IRI is a valid name');
  t.equal(forbiddenNameChar('température'), undefined, 'non-ASCII letters are allowed');
  for (const c of ['<', '>', '"', "'", '=', ';', '(', ')', ' ', '\t', '\n', '\u0000', '\u007f'])
    t.equal(forbiddenNameChar(`a${c}b`), c, JSON.stringify(c));
});

t.test('scopes are /-separated paths without # or +', async (t) => {
  for (const ok of ['/a', '/Madrid/Gardens/ParkNorte', '/a-b_c.d']) t.ok(isScope(ok), ok);
  for (const bad of ['a', '/', '/a/', '//a', '/a//b', '/a/#', '/a+', '/a b', 1]) t.notOk(isScope(bad), String(bad));
  for (const bad of ['/a\u0000b', '/a/\u0001', '/\u007f', '/a\u001fb/c']) t.notOk(isScope(bad), JSON.stringify(bad));
  t.ok(isScope('/Zürich/Ü-Bahn'), 'letters beyond ASCII are levels');
});

t.test('language keys are BCP 47-shaped tags or @none', async (t) => {
  for (const ok of ['en', 'en-GB', 'zh-Hant-TW', '@none']) t.ok(isLanguageKey(ok), ok);
  for (const bad of ['', 'en_GB', 'en-', '-en', 'toolonglanguage', '@other', 'e n']) t.notOk(isLanguageKey(bad), bad);
});

t.test('tooDeepAt names the top-level member of the deepest value and walks arrays', async (t) => {
  t.equal(tooDeepAt({ a: { b: 1 } }, 2), undefined);
  t.equal(tooDeepAt({ a: { b: {} } }, 2), 'a');
  t.equal(tooDeepAt([[[1]]], 2), '(body)');
  t.equal(tooDeepAt('x', 0), undefined, 'a scalar has no depth');
  let v: unknown = 0;
  for (let i = 0; i < 1_000_000; i++) v = [v];
  t.equal(tooDeepAt({ deep: v }), 'deep', 'a million levels are refused without a stack overflow');
});

t.test('mayNestDeeper rules out only texts with too few brackets to nest past the bound', async (t) => {
  t.equal(mayNestDeeper('{"a":{"b":1}}', 2), false, 'two containers, bound 2');
  t.equal(mayNestDeeper('{"a":{"b":[1]}}', 2), true, 'three containers');
  t.equal(mayNestDeeper('{"a":"[[[{{{"}', 2), true, 'brackets in a string count: the walk decides');
  t.equal(mayNestDeeper('[1,2,3]', 0), true);
  t.equal(mayNestDeeper('"x"', 0), false, 'a scalar');
  // Wherever the bound is, what tooDeepAt refuses is never ruled out.
  for (const text of ['[[[1]]]', '{"a":{"b":{}}}', '[{"a":[{}]}]', '{"a":1,"b":[[2]],"c":{"d":{"e":{}}}}']) {
    for (let max = 0; max <= 5; max++) {
      if (tooDeepAt(JSON.parse(text), max) !== undefined) t.ok(mayNestDeeper(text, max), `${text}, bound ${max}`);
    }
  }
});

t.test('geometryProblem refuses a GeometryCollection inside a GeometryCollection and bad positions', async (t) => {
  const point = { type: 'Point', coordinates: [0, 0] };
  t.equal(geometryProblem(point), undefined);
  t.match(
    geometryProblem({ type: 'GeometryCollection', geometries: [{ type: 'GeometryCollection', geometries: [point] }] }),
    'nests a GeometryCollection',
  );
  t.match(geometryProblem({ type: 'Point', coordinates: [0, 0, 0, 0] }), 'is not a position');
  t.match(geometryProblem({ type: 'Point', coordinates: [Infinity, 0] }), 'is not a number');
  t.match(geometryProblem({ type: 'Polygon', coordinates: [] }), 'non-empty array of linear rings');
  t.match(geometryProblem({ type: 'MultiPoint', coordinates: 'x' }), 'is not an array of positions');
  t.match(geometryProblem([0, 0]), 'is not a GeoJSON geometry object');
  t.notOk(looksLikeGeometry({ type: 'Feature' }));
  t.ok(looksLikeGeometry({ type: 'Polygon' }), 'a geometry type claims geometry, valid or not');
});

t.test('parseLangRanges orders by q, drops q=0, and lowercases', async (t) => {
  t.strictSame(parseLangRanges('fr-CH, fr;q=0.9, en;q=0.8, *;q=0.5'), [
    { range: 'fr-ch', q: 1 },
    { range: 'fr', q: 0.9 },
    { range: 'en', q: 0.8 },
    { range: '*', q: 0.5 },
  ]);
  t.strictSame(parseLangRanges('en;q=0.1,de'), [
    { range: 'de', q: 1 },
    { range: 'en', q: 0.1 },
  ]);
  t.strictSame(parseLangRanges('en;q=0'), []);
});

t.test('bestLanguage: exact, then prefix, then truncation, then @none, then the first', async (t) => {
  const map = { nl: 'a', 'fr-BE': 'b', de: 'c' };
  t.equal(bestLanguage(map, parseLangRanges('de')), 'de');
  t.equal(bestLanguage(map, parseLangRanges('fr')), 'fr-BE');
  t.equal(bestLanguage(map, parseLangRanges('de-AT')), 'de');
  t.equal(bestLanguage(map, parseLangRanges('ja')), 'nl');
  t.equal(bestLanguage({ ...map, '@none': 'x' }, parseLangRanges('ja')), '@none');
  t.equal(bestLanguage({ '@none': 'x', en: 'y' }, parseLangRanges('*')), 'en', '* prefers a real language');
  t.equal(bestLanguage({}, parseLangRanges('en')), undefined);
});

t.test('isNullMarker recognises urn:ngsi-ld:null in every value member shape', async (t) => {
  for (const v of ['urn:ngsi-ld:null', ['urn:ngsi-ld:null'], [{ object: 'urn:ngsi-ld:null' }], { '@none': 'urn:ngsi-ld:null' }])
    t.ok(isNullMarker(v), JSON.stringify(v));
  for (const v of ['urn:x:1', null, ['urn:ngsi-ld:null', 'urn:x:1'], { en: 'x' }, {}, [], 0]) t.notOk(isNullMarker(v), JSON.stringify(v));
});
