// Micro-benchmark of what the number index (src/plugins/store/embdb/number-index.ts) costs a write: a PATCH changing a
// number of an attribute no query compares (bench/scenarios/entities.ts patch: the index must cost it nothing), a
// create, then, once a query by type with `q=temperature>=38` had the pair built, a PATCH changing a number it covers.
// CPU µs per write through the store contract (lockPrefer writes: the commit runs in this thread), median of rounds.
// Run: npm run build && node dist/bench/micro/number-index-write.js
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EmbdbStore } from '../../src/plugins/store/embdb/embdb-store.js';
import { parseQ } from '../../src/ngsild/query/q-parser.js';
import { resolveQ } from '../../src/ngsild/query/q-resolve.js';
import { anyTypeOf } from '../../src/ngsild/query/type-expression.js';
import type { StoredEntity } from '../../src/ngsild/entity/model.js';

const NS = 'https://uri.etsi.org/ngsi-ld/default-context/';
const T0 = '2026-11-21T00:00:00.000Z';
const N = 1000;
const ROUNDS = 9;
const TEMPERATURE = NS + 'temperature';

function entity(k: number, temperature: number): StoredEntity {
  return {
    id: `urn:ngsi-ld:Bench:${k}`,
    type: [NS + 'Bench'],
    createdAt: T0,
    modifiedAt: T0,
    [TEMPERATURE]: [{ type: 'Property', value: temperature, createdAt: T0, modifiedAt: T0 }],
    [NS + 'name']: [{ type: 'Property', value: `n${k}`, createdAt: T0, modifiedAt: T0 }],
  };
}

const dir = mkdtempSync(join(tmpdir(), 'number-index-write-'));
const store = new EmbdbStore({ path: join(dir, 'embdb'), sync: 'interval', compress: false, lockPrefer: 'writes', ram: true });

/** CPU µs per call of `write(k)` over N calls, median of ROUNDS. */
async function measure(name: string, write: (k: number, round: number) => Promise<unknown>): Promise<void> {
  const rounds: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    const c0 = process.cpuUsage();
    for (let k = 0; k < N; k++) await write(k, r);
    const c = process.cpuUsage(c0);
    rounds.push((c.user + c.system) / N);
  }
  rounds.sort((a, b) => a - b);
  process.stdout.write(
    `${name.padEnd(52)} ${rounds[ROUNDS >> 1]!.toFixed(2).padStart(7)} us  (rounds ${rounds[0]!.toFixed(2)}-${rounds[ROUNDS - 1]!.toFixed(2)})\n`,
  );
}

const patch = (k: number, round: number): Promise<unknown> =>
  store.mutateEntity('', `urn:ngsi-ld:Bench:${k}`, (current) => ({
    next: { ...current!, [TEMPERATURE]: [{ type: 'Property', value: k + round * N, createdAt: T0, modifiedAt: T0 }] },
    result: undefined,
  }));

for (let k = 0; k < N; k++) await store.mutateEntity('', `urn:ngsi-ld:Bench:${k}`, () => ({ next: entity(k, k % 40), result: undefined }));
await measure('PATCH of a number no query compares', patch);
let created = N;
await measure('create', () => {
  const e = entity(created, created % 40);
  created++;
  return store.mutateEntity('', e.id, () => ({ next: e, result: undefined }));
});
const query = {
  type: anyTypeOf([NS + 'Bench']),
  q: resolveQ(parseQ('temperature>=38'), (t) => NS + t),
  limit: 20,
  offset: 0,
  count: false,
};
await store.queryEntities('', query);
// The build runs behind the first query: its chunks are write transactions of this thread.
await new Promise((resolve) => setTimeout(resolve, 500));
await measure('PATCH of a number the index covers', patch);
await store.close();
rmSync(dir, { recursive: true, force: true });
