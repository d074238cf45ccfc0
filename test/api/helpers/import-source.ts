// A broker-migration stream as the Orion-LD exporter writes it (seed 001 §2.5), for the importer's end-to-end tests:
// registrations, entities of every attribute type (two tenants), subscriptions, and the history of one entity.
export const EX = 'https://example.org/';
export const T0 = '2023-11-14T22:13:20.123Z';
export const T1 = '2023-11-14T22:15:00.500Z';
export const T2 = '2023-11-15T08:00:00.000Z';

const prop = (value: unknown, extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  type: 'Property',
  value,
  createdAt: T0,
  modifiedAt: T1,
  ...extra,
});

export const building = {
  id: 'urn:ngsi-ld:Building:B1',
  type: `${EX}Building`,
  scope: ['/Berlin/Mitte', '/Campus'],
  expiresAt: '2024-01-01T00:00:00.000Z',
  createdAt: T0,
  modifiedAt: T1,
  [`${EX}name`]: prop('Main building', { modifiedAt: T0 }),
  [`${EX}temperature`]: prop(21.5, {
    observedAt: '2023-11-14T22:14:10.250Z',
    unitCode: 'CEL',
    [`${EX}accuracy`]: { type: 'Property', value: 0.5, createdAt: T0, modifiedAt: T1 },
    [`${EX}sensor`]: { type: 'Relationship', object: 'urn:ngsi-ld:Sensor:S1', createdAt: T0, modifiedAt: T0 },
  }),
  [`${EX}owners`]: { type: 'Relationship', object: ['urn:ngsi-ld:Person:P1', 'urn:ngsi-ld:Person:P2'], createdAt: T0, modifiedAt: T0 },
  location: { type: 'GeoProperty', value: { type: 'Point', coordinates: [13.4, 52.5] }, createdAt: T0, modifiedAt: T0 },
  [`${EX}area`]: {
    type: 'GeoProperty',
    value: {
      type: 'MultiPolygon',
      coordinates: [
        [
          [
            [0, 0],
            [0, 1],
            [1, 1],
            [0, 0],
          ],
        ],
      ],
    },
    createdAt: T0,
    modifiedAt: T0,
  },
  [`${EX}label`]: { type: 'LanguageProperty', languageMap: { en: 'Hall', de: 'Halle' }, createdAt: T0, modifiedAt: T0 },
  [`${EX}category`]: { type: 'VocabProperty', vocab: `${EX}Office`, createdAt: T0, modifiedAt: T0 },
  [`${EX}config`]: { type: 'JsonProperty', json: { a: [1, 2], createdAt: 'not a system member' }, createdAt: T0, modifiedAt: T0 },
  [`${EX}tags`]: { type: 'ListProperty', valueList: ['x', 'y'], createdAt: T0, modifiedAt: T0 },
  [`${EX}speed`]: [prop(10), prop(12, { datasetId: 'urn:ngsi-ld:dataset:gps', createdAt: T1, modifiedAt: T2 })],
};

export const room = {
  id: 'urn:ngsi-ld:Room:R1',
  type: [`${EX}Room`, `${EX}Space`],
  createdAt: T0,
  modifiedAt: T0,
  [`${EX}temperature`]: prop(19, { modifiedAt: T0 }),
  [`${EX}building`]: { type: 'Relationship', object: 'urn:ngsi-ld:Building:B1', createdAt: T0, modifiedAt: T0 },
};

export const tenantRoom = { ...room, id: 'urn:ngsi-ld:Room:T1' };

export const subscriptions = [
  {
    id: 'urn:ngsi-ld:Subscription:S1',
    type: 'Subscription',
    subscriptionName: 'Hot buildings',
    entities: [{ type: `${EX}Building` }, { idPattern: 'urn:ngsi-ld:Building:.*', type: `${EX}Building` }],
    watchedAttributes: [`${EX}temperature`],
    q: 'https://example%2Eorg/temperature>20;https://example%2Eorg/name=="Main building"',
    isActive: true,
    expiresAt: '2099-12-31T10:00:00.000Z',
    throttling: 5,
    createdAt: T0,
    modifiedAt: T1,
    notification: {
      attributes: [`${EX}temperature`],
      format: 'normalized',
      endpoint: { uri: 'http://127.0.0.1:9/notify', accept: 'application/json', receiverInfo: [{ key: 'X-Auth', value: 'abc' }] },
      timesSent: 42,
      timesFailed: 2,
      lastNotification: '2023-11-14T23:03:20.000Z',
      lastSuccess: '2023-11-14T23:03:20.000Z',
      lastFailure: '2023-11-14T22:46:40.750Z',
    },
  },
  {
    id: 'urn:ngsi-ld:Subscription:S2',
    type: 'Subscription',
    entities: [{ type: `${EX}Room` }],
    isActive: false,
    createdAt: T0,
    modifiedAt: T0,
    notification: { endpoint: { uri: 'http://127.0.0.1:9/s2' }, format: 'keyValues', timesSent: 0, timesFailed: 0 },
  },
  {
    // Valid when it was created; expired since: imported with the clock at its createdAt, shown expired.
    id: 'urn:ngsi-ld:Subscription:S3',
    type: 'Subscription',
    entities: [{ type: `${EX}Room` }],
    expiresAt: '2024-01-01T00:00:00.000Z',
    createdAt: T0,
    modifiedAt: T0,
    notification: { endpoint: { uri: 'http://127.0.0.1:9/s3' }, timesSent: 0, timesFailed: 0 },
  },
];

export const registrations = [
  {
    id: 'urn:ngsi-ld:ContextSourceRegistration:REG1',
    type: 'ContextSourceRegistration',
    information: [{ entities: [{ idPattern: 'urn:ngsi-ld:Room:.*', type: `${EX}Room` }], propertyNames: [`${EX}humidity`] }],
    endpoint: 'http://127.0.0.1:9/legacy',
    createdAt: '2023-07-22T04:26:40.000Z',
    modifiedAt: T0,
  },
  {
    id: 'urn:ngsi-ld:ContextSourceRegistration:REG2',
    type: 'ContextSourceRegistration',
    information: [{ entities: [{ id: 'urn:ngsi-ld:Room:R9', type: `${EX}Room` }], propertyNames: [`${EX}co2`] }],
    endpoint: 'http://127.0.0.1:9/exclusive',
    mode: 'exclusive',
    createdAt: T0,
    modifiedAt: T0,
  },
];

const inst = (n: number, at: string, extra: Record<string, unknown>): Record<string, unknown> => ({
  instanceId: `urn:ngsi-ld:attribute:instance:b${n}`,
  createdAt: at,
  modifiedAt: at,
  ...extra,
});

export const history = [
  { kind: 'temporalEntity', data: { id: building.id, type: `${EX}Building`, op: 'created', at: T0 } },
  {
    kind: 'temporalInstance',
    data: {
      id: building.id,
      type: `${EX}Building`,
      attr: `${EX}temperature`,
      op: 'created',
      instance: inst(1, T0, { type: 'Property', value: 20, observedAt: '2023-11-14T22:13:00.000Z', unitCode: 'CEL' }),
    },
  },
  {
    kind: 'temporalInstance',
    data: {
      id: building.id,
      type: `${EX}Building`,
      attr: `${EX}temperature`,
      op: 'modified',
      instance: inst(2, T1, { type: 'Property', value: 21.5, observedAt: '2023-11-14T22:14:10.250Z' }),
    },
  },
  {
    kind: 'temporalInstance',
    data: {
      id: building.id,
      type: `${EX}Building`,
      attr: `${EX}speed`,
      op: 'created',
      instance: inst(3, T1, { type: 'Property', value: 12, datasetId: 'urn:ngsi-ld:dataset:gps' }),
    },
  },
  {
    kind: 'temporalInstance',
    data: {
      id: building.id,
      type: `${EX}Building`,
      attr: `${EX}gone`,
      op: 'created',
      instance: inst(4, T0, { type: 'Relationship', object: 'urn:x:1' }),
    },
  },
  {
    // A deletion without a type: the tombstone takes the type of the attribute's last instance (a Relationship).
    kind: 'temporalInstance',
    data: {
      id: building.id,
      type: `${EX}Building`,
      attr: `${EX}gone`,
      op: 'deleted',
      instance: { instanceId: 'urn:ngsi-ld:attribute:instance:b5', deletedAt: T1 },
    },
  },
];

export const source = [
  { kind: 'header', format: 'broker-migration', version: 1, source: 'Orion-LD' },
  ...registrations.map((data) => ({ kind: 'registration', data })),
  { kind: 'entity', data: building },
  { kind: 'entity', data: room },
  { kind: 'entity', tenant: 'Acme', data: tenantRoom },
  ...subscriptions.map((data) => ({ kind: 'subscription', data })),
  ...history,
];
