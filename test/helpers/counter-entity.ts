// A stored entity holding one number, for tests of concurrent writers (no update lost): `counter(id, n)`, its
// value, and the mutation that adds one.
import type { StoredEntity } from '../../src/store/contract.js';

const NS = 'https://example.org/ns/';
const T0 = '2026-01-01T00:00:00.000Z';

export const counter = (id: string, n: number): StoredEntity => ({
  id,
  type: [NS + 'Counter'],
  createdAt: T0,
  modifiedAt: T0,
  [NS + 'n']: [{ type: 'Property', value: n }],
});

export const valueOf = (e: StoredEntity | undefined): number => (e![NS + 'n'] as Array<{ value: number }>)[0]!.value;
