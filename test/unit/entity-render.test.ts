import t from 'tap';
import { expandEntity } from '../../src/ngsild/entity/expand.js';
import { renderEntity, renderAttribute, type RenderEntityOptions } from '../../src/ngsild/entity/render.js';
import { renderGeoJson, featureCollection } from '../../src/ngsild/entity/geojson.js';
import type { AttrInstance } from '../../src/ngsild/entity/model.js';
import { mapContext, DEFAULT_VOCAB } from './helpers/map-context.js';
import { fixture } from './helpers/entity-fixtures.js';

const ctx = mapContext({ schema: 'https://schema.org/' });
const t0 = '2024-01-01T00:00:00Z';

interface RenderCase {
  name: string;
  options: {
    format: RenderEntityOptions['format'];
    attrs?: string[];
    pick?: string[];
    omit?: string[];
    lang?: string;
    datasetId?: string[];
    sysAttrs?: boolean;
  };
  expected: unknown;
}

function optionsOf(o: RenderCase['options']): RenderEntityOptions {
  const opts: RenderEntityOptions = { format: o.format };
  if (o.attrs) opts.attrs = new Set(o.attrs.map((a) => ctx.expandTerm(a)));
  if (o.pick) opts.pick = new Set(o.pick);
  if (o.omit) opts.omit = new Set(o.omit);
  if (o.lang) opts.lang = o.lang;
  if (o.datasetId) opts.datasetId = new Set(o.datasetId);
  if (o.sysAttrs) opts.sysAttrs = true;
  return opts;
}

t.test('rendering cases: formats, attrs, pick, omit, lang and datasetId', async (t) => {
  const f = fixture<{ entity: unknown; cases: RenderCase[] }>('render-building.json');
  const stored = expandEntity(f.entity, ctx, { now: t0 });
  t.strictSame(renderEntity(stored, ctx, { format: 'normalized' }), f.entity, 'normalized gives the input back');
  for (const c of f.cases) t.strictSame(renderEntity(stored, ctx, optionsOf(c.options)), c.expected, c.name);
});

t.test('sysAttrs adds createdAt and modifiedAt to the entity, attributes and sub-attributes', async (t) => {
  const e = expandEntity({ id: 'urn:x:1', type: 'T', a: { value: 1, s: { value: 2 } } }, ctx, { now: t0 });
  const out = renderEntity(e, ctx, { format: 'normalized', sysAttrs: true });
  t.strictSame(out, {
    id: 'urn:x:1',
    type: 'T',
    createdAt: t0,
    modifiedAt: t0,
    a: { type: 'Property', value: 1, s: { type: 'Property', value: 2, createdAt: t0, modifiedAt: t0 }, createdAt: t0, modifiedAt: t0 },
  });
  t.strictSame(renderEntity(e, ctx, { format: 'keyValues', sysAttrs: true }), {
    id: 'urn:x:1',
    type: 'T',
    createdAt: t0,
    modifiedAt: t0,
    a: 1,
  });
  const concise = renderEntity(e, ctx, { format: 'concise', sysAttrs: true });
  t.strictSame(
    concise.a,
    { value: 1, s: { value: 2, createdAt: t0, modifiedAt: t0 }, createdAt: t0, modifiedAt: t0 },
    'concise keeps value objects when system members are shown',
  );
});

t.test('without sysAttrs no system member appears at any level', async (t) => {
  const e = expandEntity({ id: 'urn:x:1', type: 'T', a: { value: 1, s: { value: 2 } } }, ctx, { now: t0 });
  t.notMatch(JSON.stringify(renderEntity(e, ctx, { format: 'normalized' })), /createdAt|modifiedAt/);
});

t.test('the result carries no @context', async (t) => {
  const e = expandEntity({ id: 'urn:x:1', type: 'T', a: 1 }, ctx, { now: t0 });
  for (const format of ['normalized', 'concise', 'keyValues'] as const) t.notOk('@context' in renderEntity(e, ctx, { format }), format);
});

t.test('names are compacted with the context: terms, prefixes, default vocabulary, unknown IRIs kept', async (t) => {
  const e = expandEntity({ id: 'urn:x:1', type: 'http://other.org/T', 'schema:name': 'x', 'http://other.org/p': 1 }, ctx, { now: t0 });
  t.strictSame(renderEntity(e, ctx, { format: 'keyValues' }), {
    id: 'urn:x:1',
    type: 'http://other.org/T',
    'schema:name': 'x',
    'http://other.org/p': 1,
  });
  const other = mapContext({ nm: 'https://schema.org/name' });
  t.strictSame(renderEntity(e, other, { format: 'keyValues' }).nm, 'x', 'a different context compacts differently');
});

t.test('concise keeps Property values that would read back as something else in a value object', async (t) => {
  const e = expandEntity(
    {
      id: 'urn:x:1',
      type: 'T',
      typed: { type: 'Property', value: { type: 'Thing', name: 'x' } },
      holder: { type: 'Property', value: { value: 1 } },
      objects: { type: 'Property', value: [{ a: 1 }, { b: 2 }] },
      prims: { type: 'Property', value: [1, 2] },
      empty: { type: 'Property', value: [] },
    },
    ctx,
    { now: t0 },
  );
  const concise = renderEntity(e, ctx, { format: 'concise' });
  t.strictSame(concise, {
    id: 'urn:x:1',
    type: 'T',
    typed: { value: { type: 'Thing', name: 'x' } },
    holder: { value: { value: 1 } },
    objects: { value: [{ a: 1 }, { b: 2 }] },
    prims: [1, 2],
    empty: [],
  });
  t.strictSame(expandEntity(concise, ctx, { now: t0 }), e, 'and it reads back as the same entity');
});

t.test('renderAttribute renders one attribute alone, honouring datasetId', async (t) => {
  const e = expandEntity({ id: 'urn:x:1', type: 'T', s: [{ value: 1 }, { value: 2, datasetId: 'urn:d:1' }] }, ctx, { now: t0 });
  const instances = e[DEFAULT_VOCAB + 's'] as AttrInstance[];
  t.strictSame(renderAttribute(instances, ctx, { format: 'normalized' }), [
    { type: 'Property', value: 1 },
    { type: 'Property', value: 2, datasetId: 'urn:d:1' },
  ]);
  t.strictSame(renderAttribute(instances, ctx, { format: 'normalized', datasetId: new Set(['urn:d:1']) }), {
    type: 'Property',
    value: 2,
    datasetId: 'urn:d:1',
  });
  t.equal(renderAttribute(instances, ctx, { format: 'normalized', datasetId: new Set(['urn:d:9']) }), undefined);
});

t.test('a LanguageProperty under lang prefers @none over an arbitrary language when nothing matches', async (t) => {
  const e = expandEntity({ id: 'urn:x:1', type: 'T', l: { languageMap: { en: 'hello', '@none': 'hi' } } }, ctx, { now: t0 });
  t.strictSame(renderEntity(e, ctx, { format: 'normalized', lang: 'ja' }).l, { type: 'Property', value: 'hi' });
  t.strictSame(
    renderEntity(e, ctx, { format: 'normalized', lang: 'EN' }).l,
    { type: 'Property', value: 'hello', lang: 'en' },
    'tags match case-insensitively',
  );
  t.strictSame(
    renderEntity(e, ctx, { format: 'normalized', lang: 'en;q=0,ja' }).l,
    { type: 'Property', value: 'hi' },
    'q=0 excludes a language',
  );
});

t.test('lang applies to LanguageProperty sub-attributes too', async (t) => {
  const e = expandEntity({ id: 'urn:x:1', type: 'T', a: { value: 1, label: { languageMap: { en: 'one', fr: 'un' } } } }, ctx, { now: t0 });
  t.strictSame(renderEntity(e, ctx, { format: 'normalized', lang: 'fr' }).a, {
    type: 'Property',
    value: 1,
    label: { type: 'Property', value: 'un', lang: 'fr' },
  });
});

t.test('GeoJSON: a Feature with the location geometry and the entity as properties', async (t) => {
  const f = fixture<{ entity: unknown; keyValues: unknown; normalizedOnObservationSpace: unknown }>('geojson-building.json');
  const e = expandEntity(f.entity, ctx, { now: t0 });
  t.strictSame(renderGeoJson(e, ctx, { format: 'keyValues' }), f.keyValues);
  t.strictSame(renderGeoJson(e, ctx, { format: 'normalized', geometryProperty: 'observationSpace' }), f.normalizedOnObservationSpace);
});

t.test('GeoJSON: geometry is null without the geometry property, and properties follow the projection', async (t) => {
  const e = expandEntity({ id: 'urn:x:1', type: 'T', name: 'x', location: { type: 'Point', coordinates: [1, 2] } }, ctx, { now: t0 });
  t.strictSame(renderGeoJson(e, ctx, { format: 'keyValues', geometryProperty: 'operationSpace' }), {
    id: 'urn:x:1',
    type: 'Feature',
    geometry: null,
    properties: { type: 'T', name: 'x', location: { type: 'Point', coordinates: [1, 2] } },
  });
  t.strictSame(renderGeoJson(e, ctx, { format: 'keyValues', pick: new Set(['name']) }), {
    id: 'urn:x:1',
    type: 'Feature',
    geometry: { type: 'Point', coordinates: [1, 2] },
    properties: { name: 'x' },
  });
  const notGeo = expandEntity({ id: 'urn:x:2', type: 'T', name: 'x' }, ctx, { now: t0 });
  t.equal(renderGeoJson(notGeo, ctx, { format: 'keyValues', geometryProperty: 'name' }).geometry, null, 'a Property is no geometry');
});

t.test('GeoJSON: featureCollection wraps the features', async (t) => {
  const e = expandEntity({ id: 'urn:x:1', type: 'T' }, ctx, { now: t0 });
  const feature = renderGeoJson(e, ctx, { format: 'normalized' });
  t.strictSame(featureCollection([feature]), { type: 'FeatureCollection', features: [feature] });
  t.strictSame(featureCollection([]), { type: 'FeatureCollection', features: [] });
});

t.test('an attribute or sub-attribute named __proto__ is rendered as a member in every format, never as the prototype', async (t) => {
  const body = JSON.parse(
    '{"id":"urn:x:p","type":"T","__proto__":{"type":"Property","value":1,"__proto__":{"type":"Property","value":2}},"constructor":{"type":"Property","value":3}}',
  ) as unknown;
  const e = expandEntity(body, ctx, { now: t0 });
  for (const format of ['normalized', 'concise', 'keyValues'] as const) {
    const out = renderEntity(e, ctx, { format });
    t.equal(Object.getPrototypeOf(out), Object.prototype, `${format}: the prototype is untouched`);
    t.ok(Object.hasOwn(out, '__proto__'), `${format}: __proto__ is an own member`);
    const text = JSON.parse(JSON.stringify(out)) as Record<string, unknown>;
    t.ok(Object.hasOwn(text, '__proto__'), `${format}: and it is serialized`);
    t.equal(Object.hasOwn(text, 'constructor'), true, `${format}: constructor too`);
  }
  const normalized = JSON.parse(JSON.stringify(renderEntity(e, ctx, { format: 'normalized' }))) as Record<string, any>;
  t.equal(Object.getOwnPropertyDescriptor(normalized, '__proto__')!.value.value, 1);
  t.equal(
    Object.getOwnPropertyDescriptor(Object.getOwnPropertyDescriptor(normalized, '__proto__')!.value, '__proto__')!.value.value,
    2,
    'the sub-attribute too',
  );
  const geo = JSON.parse(JSON.stringify(renderGeoJson(e, ctx, { format: 'normalized' }))) as { properties: Record<string, unknown> };
  t.ok(Object.hasOwn(geo.properties, '__proto__'), 'GeoJSON properties too');
});
