// Micro-benchmark of compiled q evaluation: evaluations per second of `temperature>20;status=="ok"` (and a few
// other shapes) over 100k stored entities. Run: node --import=@tapjs/typescript/import bench/micro/q-eval.ts

import type { StoredEntity } from '../../src/ngsild/entity/model.js';
import { parseQ } from '../../src/ngsild/query/q-parser.js';
import { compileQ } from '../../src/ngsild/query/q-eval.js';

const NS = 'https://example.org/ns/';
const expand = (term: string): string => (term.includes(':') ? term : NS + term);
const N = 100_000;
const ROUNDS = 5;

const STATUSES = ['ok', 'degraded', 'down'];
const entities: StoredEntity[] = [];
for (let i = 0; i < N; i++) {
  entities.push({
    id: `urn:ngsi-ld:Sensor:${i}`,
    type: [NS + 'Sensor'],
    createdAt: '2024-01-01T00:00:00Z',
    modifiedAt: '2024-01-01T00:00:00Z',
    [NS + 'temperature']: [{ type: 'Property', value: (i * 7919) % 40, observedAt: '2024-05-01T10:00:00Z', unitCode: 'CEL' }],
    [NS + 'status']: [{ type: 'Property', value: STATUSES[i % 3] }],
    [NS + 'name']: [{ type: 'Property', value: `sensor-${i}` }],
    [NS + 'controlledBy']: [{ type: 'Relationship', object: `urn:ngsi-ld:Device:${i % 100}` }],
  });
}

function run(q: string): void {
  const match = compileQ(parseQ(q), expand);
  let hits = 0;
  let best = 0;
  for (let r = 0; r < ROUNDS; r++) {
    const t0 = process.hrtime.bigint();
    hits = 0;
    for (let i = 0; i < N; i++) if (match(entities[i]!)) hits++;
    const secs = Number(process.hrtime.bigint() - t0) / 1e9;
    best = Math.max(best, N / secs);
  }
  process.stdout.write(`${q.padEnd(48)} ${(best / 1e6).toFixed(2).padStart(7)} M evals/s  (${hits} of ${N} match)\n`);
}

for (const q of [
  'temperature>20;status=="ok"',
  'temperature==10..20',
  'status=="ok","down"',
  'temperature.observedAt>=2024-01-01T00:00:00Z',
  'controlledBy==urn:ngsi-ld:Device:7',
  'name~=^sensor-1[0-9]$',
  '(temperature<5|temperature>35);!missing',
])
  run(q);
