// Names of stored subscriptions (src/ngsild/subscription/names.ts): type selectors keep their structure when each
// type name is expanded or compacted; '*' stays '*'; the other members are left alone.
import t from 'tap';
import { mapTypeSelector, mapSubscriptionNames } from '../../src/ngsild/subscription/names.js';
import type { SubscriptionBody } from '../../src/ngsild/subscription/model.js';

const V = 'https://example.org/v/';
const expand = (term: string): string => (term.includes(':') ? term : V + term);
const compact = (iri: string): string => (iri.startsWith(V) ? iri.slice(V.length) : iri);

t.test('a type expression maps each type name and keeps its operators', async (t) => {
  t.equal(mapTypeSelector('Car', expand), `${V}Car`);
  t.equal(mapTypeSelector('*', expand), '*');
  const expanded = mapTypeSelector('(Car;Bus)|Truck', expand);
  t.equal(expanded, `(${V}Car;${V}Bus),${V}Truck`);
  t.equal(mapTypeSelector(expanded, compact), '(Car;Bus),Truck', 'compacting the expanded form gives the terms back');
});

t.test('a subscription maps entity types, watched and notified attributes only', async (t) => {
  const body: SubscriptionBody = {
    id: 'urn:s',
    type: 'Subscription',
    entities: [{ id: 'urn:ngsi-ld:Car:1', type: 'Car' }],
    watchedAttributes: ['speed'],
    q: 'speed>1',
    notification: { attributes: ['speed'], pick: ['speed'], endpoint: { uri: 'http://x/' } },
  };
  const out = mapSubscriptionNames(body, expand);
  t.same(out.entities, [{ id: 'urn:ngsi-ld:Car:1', type: `${V}Car` }]);
  t.same(out.watchedAttributes, [`${V}speed`]);
  t.same(out.notification.attributes, [`${V}speed`]);
  t.equal(out.q, 'speed>1', "q stays in the terms of the subscription's own @context");
  t.same(out.notification.pick, ['speed']);
  t.same(body.watchedAttributes, ['speed'], 'the input is not changed');
});
