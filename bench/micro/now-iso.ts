// Micro-benchmark of the write time stamp (ops/now-iso.ts): a new Date formatted per call against the string kept
// for the current millisecond. Run: npm run build && node dist/bench/micro/now-iso.js
import { nowIso } from '../../src/ops/now-iso.js';

const N = 1_000_000;
const candidates: Array<[string, () => string]> = [
  ['before: new Date().toISOString()', () => new Date().toISOString()],
  ['current: nowIso() (once per millisecond)', nowIso],
];
for (let round = 0; round < 3; round++)
  for (const [name, fn] of candidates) {
    let sink = 0;
    const start = process.hrtime.bigint();
    for (let i = 0; i < N; i++) sink += fn().length;
    const ns = Number(process.hrtime.bigint() - start) / N;
    process.stdout.write(`${name}: ${ns.toFixed(0)} ns/call${sink === 0 ? '!' : ''}\n`);
  }
