// Deletions as notifications show them (CIM 009 v1.8 §5.8.6, §4.5.0 NGSI-LD Null): a deleted attribute keeps its kind
// with the NGSI-LD Null as its value member, showChanges adds what it had, sysAttrs its times; an attribute deleted
// whole is one null instance; an entity's deletion shows its attributes only with showChanges. And where the
// @context of an application/ld+json notification goes (§5.3.1).
import t from 'tap';
import { compileSubscription, type CompiledSubscription } from '../../src/ngsild/subscription/compile.js';
import { matchChange } from '../../src/ngsild/subscription/match.js';
import { buildNotification } from '../../src/ngsild/subscription/payload.js';
import type { SubscriptionBody, SubscriptionDoc } from '../../src/ngsild/subscription/model.js';
import type { StoredEntity } from '../../src/ngsild/entity/model.js';
import { changeBetween, type EntityWrite } from '../../src/ngsild/entity/write-change.js';
import { mapContext, DEFAULT_VOCAB } from './helpers/map-context.js';

const ctx = mapContext();
const V = (term: string): string => DEFAULT_VOCAB + term;
const NOW = Date.parse('2025-06-01T00:00:00Z');
const AT = new Date(NOW).toISOString();
const NULL = 'urn:ngsi-ld:null';
const CREATED = '2025-01-01T00:00:00Z';

function compiled(body: Partial<SubscriptionBody>, notification: Record<string, unknown> = {}): CompiledSubscription {
  const doc: SubscriptionDoc = {
    body: {
      id: 'urn:ngsi-ld:Subscription:d',
      type: 'Subscription',
      entities: [{ type: 'Building' }],
      ...body,
      notification: { endpoint: { uri: 'http://r/n' }, ...notification },
    },
    context: null,
    createdAt: '',
    modifiedAt: '',
  };
  return compileSubscription('', doc, ctx, ctx);
}

const building = (attrs: Record<string, unknown>): StoredEntity => ({
  id: 'urn:ngsi-ld:Building:1',
  type: [V('Building')],
  createdAt: CREATED,
  modifiedAt: CREATED,
  ...attrs,
});
const w = (before: StoredEntity | undefined, after: StoredEntity | undefined): EntityWrite => ({
  before,
  after,
  change: changeBetween(before, after),
});
const times = { createdAt: CREATED, modifiedAt: CREATED };

/** One attribute of each kind, as stored. */
const ATTRS: Record<string, unknown[]> = {
  [V('name')]: [{ type: 'Property', value: 'Eiffel Tower', ...times }],
  [V('locatedAt')]: [{ type: 'Relationship', object: 'urn:ngsi-ld:City:Paris', ...times }],
  [V('location')]: [{ type: 'GeoProperty', value: { type: 'Point', coordinates: [-8.5, 41.2] }, ...times }],
  [V('street')]: [{ type: 'LanguageProperty', languageMap: { fr: 'Grand Place', nl: 'Grote Markt' }, ...times }],
  [V('category')]: [{ type: 'VocabProperty', vocab: V('monument'), ...times }],
  [V('config')]: [{ type: 'JsonProperty', json: { id: 'some-id', null: null }, ...times }],
  [V('tags')]: [{ type: 'ListProperty', valueList: [1, 2], ...times }],
  [V('links')]: [{ type: 'ListRelationship', objectList: [{ object: 'urn:ngsi-ld:Link:a' }], ...times }],
};

/** Each attribute deleted, as notified in the normalized format: its kind, the NGSI-LD Null, and what showChanges adds. */
const DELETED: Record<string, [Record<string, unknown>, Record<string, unknown>]> = {
  name: [{ type: 'Property', value: NULL }, { previousValue: 'Eiffel Tower' }],
  locatedAt: [{ type: 'Relationship', object: NULL }, { previousObject: 'urn:ngsi-ld:City:Paris' }],
  location: [{ type: 'GeoProperty', value: NULL }, { previousValue: { type: 'Point', coordinates: [-8.5, 41.2] } }],
  street: [{ type: 'LanguageProperty', languageMap: { '@none': NULL } }, { previousLanguageMap: { fr: 'Grand Place', nl: 'Grote Markt' } }],
  category: [{ type: 'VocabProperty', vocab: NULL }, { previousVocab: 'monument' }],
  config: [{ type: 'JsonProperty', json: NULL }, { previousJson: { id: 'some-id', null: null } }],
  tags: [{ type: 'ListProperty', valueList: [NULL] }, { previousValueList: [1, 2] }],
  links: [{ type: 'ListRelationship', objectList: [NULL] }, { previousObjectList: [{ object: 'urn:ngsi-ld:Link:a' }] }],
};

/** The notified entity (normalized) of the write, or undefined when the subscription is not notified. */
function notified(sub: CompiledSubscription, write: EntityWrite): Record<string, unknown> | undefined {
  const m = matchChange(sub, write, NOW);
  if (m === undefined) return undefined;
  return JSON.parse(buildNotification(sub, [m.entity], m.trigger).body).data[0];
}

function without(entity: Record<string, unknown[]>, attrIri: string): Record<string, unknown[]> {
  const out = { ...entity };
  delete out[attrIri];
  return out;
}

t.test(
  'a deleted attribute keeps its kind: the NGSI-LD Null in its value member (languageMap {"@none": null}, [null] for lists)',
  async (t) => {
    const sub = compiled({ notificationTrigger: ['attributeDeleted'] });
    for (const [name, [shape]] of Object.entries(DELETED)) {
      const data = notified(sub, w(building(ATTRS), building(without(ATTRS, V(name)))));
      t.same(data?.[name], shape, name);
      t.same(
        data?.name,
        name === 'name' ? shape : { type: 'Property', value: 'Eiffel Tower' },
        `${name}: the other attributes as they are`,
      );
    }
    const concise = compiled({ notificationTrigger: ['attributeDeleted'] }, { format: 'concise' });
    t.same(
      notified(concise, w(building(ATTRS), building(without(ATTRS, V('locatedAt')))))?.locatedAt,
      { object: NULL },
      'concise: the value member says the kind',
    );
    const keyValues = compiled({ notificationTrigger: ['attributeDeleted'] }, { format: 'keyValues' });
    t.same(notified(keyValues, w(building(ATTRS), building(without(ATTRS, V('locatedAt')))))?.locatedAt, NULL);
  },
);

t.test('showChanges: a deleted attribute carries the value it had (previousValue, previousObject, previousLanguageMap...)', async (t) => {
  const sub = compiled({ notificationTrigger: ['attributeDeleted'] }, { showChanges: true });
  for (const [name, [shape, previous]] of Object.entries(DELETED)) {
    const data = notified(sub, w(building(ATTRS), building(without(ATTRS, V(name)))));
    t.same(data?.[name], { ...shape, ...previous }, name);
  }
  const updated = notified(
    compiled({ notificationTrigger: ['entityUpdated'] }, { showChanges: true }),
    w(building(ATTRS), building(without(ATTRS, V('street')))),
  );
  t.same(
    updated?.street,
    { type: 'LanguageProperty', languageMap: { '@none': NULL }, previousLanguageMap: { fr: 'Grand Place', nl: 'Grote Markt' } },
    'entityUpdated too',
  );
});

t.test('entityDeleted: id, type and deletedAt; with showChanges every attribute it had, deleted, with its previous value', async (t) => {
  const plain = notified(compiled({ notificationTrigger: ['entityDeleted'] }), w(building(ATTRS), undefined));
  t.same(plain, { id: 'urn:ngsi-ld:Building:1', type: 'Building', deletedAt: AT });
  const shown = notified(compiled({ notificationTrigger: ['entityDeleted'] }, { showChanges: true }), w(building(ATTRS), undefined));
  const expected: Record<string, unknown> = { id: 'urn:ngsi-ld:Building:1', type: 'Building', deletedAt: AT };
  for (const [name, [shape, previous]] of Object.entries(DELETED)) expected[name] = { ...shape, ...previous };
  t.same(shown, expected);
  const some = notified(
    compiled({ notificationTrigger: ['entityDeleted'] }, { showChanges: true, attributes: ['name'] }),
    w(building(ATTRS), undefined),
  );
  t.same(
    some,
    {
      id: 'urn:ngsi-ld:Building:1',
      type: 'Building',
      deletedAt: AT,
      name: { type: 'Property', value: NULL, previousValue: 'Eiffel Tower' },
    },
    'notification.attributes still chooses',
  );
});

t.test(
  'an attribute deleted whole is one null instance; a deleted datasetId instance keeps its datasetId beside the kept ones',
  async (t) => {
    const fr = { type: 'Property', value: 'Tour Eiffel', datasetId: 'urn:ngsi-ld:Dataset:fr', ...times };
    const de = { type: 'Property', value: 'Eiffelturm', datasetId: 'urn:ngsi-ld:Dataset:de', ...times };
    const multi = {
      [V('name')]: [{ type: 'Property', value: 'Eiffel Tower', ...times }, fr, de],
      [V('locatedAt')]: [
        { type: 'Relationship', object: 'urn:ngsi-ld:Ville:Paris', datasetId: 'urn:ngsi-ld:Dataset:fr', ...times },
        { type: 'Relationship', object: 'urn:ngsi-ld:City:Paris', ...times },
      ],
    };
    const sub = compiled({ notificationTrigger: ['attributeDeleted'] });
    // DELETE .../attrs/name?deleteAll=true
    const all = notified(sub, w(building(multi), building(without(multi, V('name')))));
    t.same(all?.name, { type: 'Property', value: NULL }, 'the name and the null alone');
    t.same(
      notified(sub, w(building(multi), building(without(multi, V('locatedAt')))))?.locatedAt,
      { type: 'Relationship', object: NULL },
      "the default instance's kind",
    );
    // DELETE .../attrs/name?datasetId=urn:ngsi-ld:Dataset:fr
    const one = notified(sub, w(building(multi), building({ ...multi, [V('name')]: [multi[V('name')]![0]!, de] })));
    t.same(one?.name, [
      { type: 'Property', value: 'Eiffel Tower' },
      { type: 'Property', value: 'Eiffelturm', datasetId: 'urn:ngsi-ld:Dataset:de' },
      { type: 'Property', value: NULL, datasetId: 'urn:ngsi-ld:Dataset:fr' },
    ]);
    const gone = notified(sub, w(building(multi), undefined));
    t.same(gone?.name, { type: 'Property', value: NULL }, "the entity's deletion too");
    const changes = notified(
      compiled({ notificationTrigger: ['attributeDeleted'] }, { showChanges: true }),
      w(building(multi), building(without(multi, V('name')))),
    );
    t.same(
      changes?.name,
      [
        { type: 'Property', value: NULL, previousValue: 'Eiffel Tower' },
        { type: 'Property', value: NULL, previousValue: 'Tour Eiffel', datasetId: 'urn:ngsi-ld:Dataset:fr' },
        { type: 'Property', value: NULL, previousValue: 'Eiffelturm', datasetId: 'urn:ngsi-ld:Dataset:de' },
      ],
      'showChanges: each instance with its own previous value, so each with its datasetId',
    );
    const selected = notified(
      compiled({ notificationTrigger: ['attributeDeleted'], datasetId: ['urn:ngsi-ld:Dataset:fr', 'urn:ngsi-ld:Dataset:de'] }),
      w(building(multi), building(without(multi, V('name')))),
    );
    t.same(
      selected?.name,
      [
        { type: 'Property', value: NULL, datasetId: 'urn:ngsi-ld:Dataset:fr' },
        { type: 'Property', value: NULL, datasetId: 'urn:ngsi-ld:Dataset:de' },
      ],
      'a subscription that selects datasetIds hears of each of them',
    );
    const single = notified(sub, w(building({ [V('name')]: [fr] }), building({})));
    t.same(single?.name, { type: 'Property', value: NULL, datasetId: 'urn:ngsi-ld:Dataset:fr' }, 'the only instance keeps its datasetId');
  },
);

t.test('sysAttrs: a deleted attribute has its createdAt, and the deletion as modifiedAt and deletedAt', async (t) => {
  const sub = compiled({ notificationTrigger: ['attributeDeleted'], watchedAttributes: ['name'] }, { sysAttrs: true });
  const data = notified(sub, w(building(ATTRS), building(without(ATTRS, V('name')))));
  t.same(data?.name, { type: 'Property', value: NULL, createdAt: CREATED, modifiedAt: AT, deletedAt: AT });
  const gone = notified(sub, w(building(ATTRS), undefined));
  t.same(
    gone,
    {
      id: 'urn:ngsi-ld:Building:1',
      type: 'Building',
      createdAt: CREATED,
      modifiedAt: AT,
      deletedAt: AT,
      name: { type: 'Property', value: NULL, createdAt: CREATED, modifiedAt: AT, deletedAt: AT },
    },
    "on the entity's deletion",
  );
});

t.test('application/ld+json: each entity of data carries the @context, and the Notification too; application/json links it', async (t) => {
  const terms = { Building: 'https://example.org/Building' };
  const own = mapContext(terms);
  const doc = (accept: string): SubscriptionDoc => ({
    body: {
      id: 'urn:ngsi-ld:Subscription:ld',
      type: 'Subscription',
      entities: [{ type: 'Building' }],
      notification: { endpoint: { uri: 'http://r/n', accept: accept as 'application/json' } },
    },
    context: null,
    createdAt: '',
    modifiedAt: '',
  });
  const entities = [building({ [V('name')]: ATTRS[V('name')] }), { ...building({}), id: 'urn:ngsi-ld:Building:2' }];
  const ld = buildNotification(compileSubscription('', doc('application/ld+json'), own, own), entities, 'attributeUpdated');
  const body = JSON.parse(ld.body);
  t.same(
    body.data.map((e: Record<string, unknown>) => e['@context']),
    [terms, terms],
    'CIM 009 §5.3.1: in each entity',
  );
  t.same(body['@context'], terms);
  t.notOk(ld.headers.includes('Link'));
  const json = buildNotification(compileSubscription('', doc('application/json'), own, own), entities, 'attributeUpdated');
  const plain = JSON.parse(json.body);
  t.notOk('@context' in plain.data[0]);
  t.notOk('@context' in plain);
  t.ok(json.headers.includes('Link'));
});
