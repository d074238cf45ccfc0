// Entity scenarios of the first benchmark issue: retrieve by id, create, partial attribute update, batch upsert.
import { benchEntity, benchId } from '../bench-entity.js';
import type { LoadRequest } from '../load.js';
import { JSON_HEADERS, NGSI, attributePatches, seedEntities } from '../ngsi-client.js';
import type { Scenario } from '../scenario.js';

const SEEDED = 1000;
const BATCH = 100;
const BATCH_BODIES = 10;

const seededIds = Array.from({ length: SEEDED }, (_, i) => benchId(i + 1));
const seed = (baseUrl: string): Promise<void> => seedEntities(baseUrl, seededIds);

// The create body split around the id, so a request costs the load generator a concatenation, not a stringify.
const ID_SLOT = '{{id}}';
const [createHead, createTail] = JSON.stringify(benchEntity(ID_SLOT)).split(ID_SLOT) as [string, string];

const retrieve: Scenario = {
  name: 'retrieve',
  description: `GET /entities/{id} cycling over ${SEEDED} seeded entities (≈200 bytes each)`,
  targetRatio: 0.9,
  seeds: SEEDED,
  setup: seed,
  requests: () => seededIds.map((id): LoadRequest => ({ method: 'GET', path: `${NGSI}/entities/${id}` })),
};

// One counter for every run of the process: each round's creates on a broker take ids no earlier round took.
let created = 0;

const create: Scenario = {
  name: 'create',
  description: 'POST /entities, a new id every request',
  targetRatio: 0.6,
  requests: () => {
    const first = ++created;
    return [
      {
        method: 'POST',
        path: `${NGSI}/entities`,
        headers: JSON_HEADERS,
        body: `${createHead}urn:ngsi-ld:BenchCreate:${first}${createTail}`,
        next: () => ({ body: `${createHead}urn:ngsi-ld:BenchCreate:${++created}${createTail}` }),
      },
    ];
  },
};

const patch: Scenario = {
  name: 'patch',
  description: `PATCH /entities/{id}/attrs/temperature (partial attribute update) cycling over ${SEEDED} seeded entities`,
  targetRatio: 0.7,
  seeds: SEEDED,
  setup: seed,
  requests: () => attributePatches(seededIds),
};

// Ten fixed bodies of 100 entities each: the first round creates (201), later rounds replace (204).
const batchBodies = Array.from({ length: BATCH_BODIES }, (_, b) =>
  JSON.stringify(Array.from({ length: BATCH }, (_, i) => benchEntity(`urn:ngsi-ld:BenchBatch:${b * BATCH + i + 1}`))),
);

const batchUpsert: Scenario = {
  name: 'batch-upsert',
  description: `POST /entityOperations/upsert of ${BATCH} entities, cycling over ${BATCH_BODIES} bodies`,
  entitiesPerRequest: BATCH,
  targetEntitiesPerS: 150_000,
  requests: () =>
    batchBodies.map((body): LoadRequest => ({
      method: 'POST',
      path: `${NGSI}/entityOperations/upsert`,
      headers: JSON_HEADERS,
      body,
    })),
};

export const entityScenarios: Scenario[] = [retrieve, create, patch, batchUpsert];
