// The entity every scenario stores and the bare server answers: one shape, padded so that its normalized
// rendering is 200 bytes, the size the bare baseline returns (issue: "a fixed 200-byte entity").

export const ENTITY_BYTES = 200;
export const ENTITY_TYPE = 'Bench';

function entityWithName(id: string, name: string, temperature: number): Record<string, unknown> {
  return {
    id,
    type: ENTITY_TYPE,
    temperature: { type: 'Property', value: temperature },
    name: { type: 'Property', value: name },
  };
}

// Padded for the shortest seeded id; ids up to 1000 render at most three bytes longer.
const PAD = ENTITY_BYTES - JSON.stringify(entityWithName(benchId(1), '', 21.5)).length;
const NAME = 'n'.repeat(PAD);

export function benchId(k: number): string {
  return `urn:ngsi-ld:Bench:${k}`;
}

/** A normalized NGSI-LD entity of about ENTITY_BYTES bytes. */
export function benchEntity(id: string, temperature = 21.5): Record<string, unknown> {
  return entityWithName(id, NAME, temperature);
}

/** The bare server's fixed body: exactly ENTITY_BYTES bytes of JSON. */
export const BARE_BODY = JSON.stringify(benchEntity(benchId(1)));
