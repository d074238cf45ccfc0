// The simplified temporal representation of LanguageProperty, JsonProperty and VocabProperty (CIM 009 v1.8.1 §4.5.9):
// each value of a [value, time] pair wrapped in the member that tells its kind under the core @context (languageMap,
// json, vocab), vocabs compacted with the request's @context, the other attribute types bare as before.
import t from 'tap';
import { startBroker, call, NGSI, type Broker } from './helpers/broker.js';
import { troeArgs } from './helpers/troe.js';

let broker: Broker;
const id = 'urn:ngsi-ld:Place:simplified';
const T = (m: number): string => `2020-08-01T12:0${m}:00Z`;
const LINK =
  '<https://uri.etsi.org/ngsi-ld/v1/ngsi-ld-core-context-v1.8.jsonld>; rel="http://www.w3.org/ns/json-ld#context"; type="application/ld+json"';

t.before(async () => {
  broker = await startBroker(troeArgs());
  const r = await call(broker, 'POST', `${NGSI}/temporal/entities`, {
    body: {
      id,
      type: 'Place',
      street: [
        { type: 'LanguageProperty', languageMap: { fr: 'Grand Place', nl: 'Grote Markt' }, observedAt: T(3) },
        { type: 'LanguageProperty', languageMap: { fr: 'Grand Marché' }, observedAt: T(5) },
      ],
      config: [
        { type: 'JsonProperty', json: { value: 120 }, observedAt: T(3) },
        { type: 'JsonProperty', json: [1, { a: null }], observedAt: T(5) },
      ],
      category: [
        { type: 'VocabProperty', vocab: 'monument', observedAt: T(3) },
        { type: 'VocabProperty', vocab: ['monument', 'https://example.org/sightseeing'], observedAt: T(5) },
      ],
      speed: { type: 'Property', value: { value: 1 }, observedAt: T(3) },
      owner: { type: 'Relationship', object: 'urn:ngsi-ld:Org:1', observedAt: T(3) },
    },
  });
  if (r.status !== 201) throw new Error(`seed: ${r.status} ${r.text}`);
});
t.teardown(async () => {
  await broker.stop();
});

const simplified = async (q = ''): Promise<any> => {
  const r = await call(broker, 'GET', `${NGSI}/temporal/entities/${id}?options=temporalValues${q}`, { headers: { link: LINK } });
  if (r.status !== 200) throw new Error(`${r.status} ${r.text}`);
  return r.json;
};

t.test('a LanguageProperty: [{languageMap}, time] pairs', async (t) => {
  t.same((await simplified()).street, {
    type: 'LanguageProperty',
    languageMaps: [
      [{ languageMap: { fr: 'Grand Place', nl: 'Grote Markt' } }, T(3)],
      [{ languageMap: { fr: 'Grand Marché' } }, T(5)],
    ],
  });
});

t.test('a JsonProperty: [{json}, time] pairs, the JSON value as given', async (t) => {
  t.same((await simplified()).config, {
    type: 'JsonProperty',
    jsons: [
      [{ json: { value: 120 } }, T(3)],
      [{ json: [1, { a: null }] }, T(5)],
    ],
  });
});

t.test('a VocabProperty: [{vocab}, time] pairs, compacted with the request @context', async (t) => {
  t.same((await simplified()).category, {
    type: 'VocabProperty',
    vocabs: [
      [{ vocab: 'monument' }, T(3)],
      [{ vocab: ['monument', 'https://example.org/sightseeing'] }, T(5)],
    ],
  });
});

t.test('Property and Relationship values stay bare, an object value too', async (t) => {
  const e = await simplified();
  t.same(e.speed, { type: 'Property', values: [[{ value: 1 }, T(3)]] });
  t.same(e.owner, { type: 'Relationship', objects: [['urn:ngsi-ld:Org:1', T(3)]] });
});

t.test('the normalized representation of the same attributes is unchanged', async (t) => {
  const r = await call(broker, 'GET', `${NGSI}/temporal/entities/${id}`, { headers: { link: LINK } });
  t.same(
    r.json.category.map((i: any) => i.vocab),
    ['monument', ['monument', 'https://example.org/sightseeing']],
  );
  t.same(r.json.street[0].languageMap, { fr: 'Grand Place', nl: 'Grote Markt' });
  t.same(r.json.config[0].json, { value: 120 });
});
