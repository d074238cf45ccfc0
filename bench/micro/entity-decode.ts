// Micro-benchmark of decoding one stored entity (the query path reads 20 per request): the msgpackr settings lmdb
// gave the entities database before (records defined inline in every value) against the candidates.
// Run: npm run build && node dist/bench/micro/entity-decode.js
import { Packr } from 'msgpackr';

const NS = 'https://example.org/ns/';
const N = 20_000;
const ROUNDS = 5;

function entity(i: number): Record<string, unknown> {
  return {
    id: `urn:ngsi-ld:QBench:${i}`,
    type: [NS + 'QBench'],
    createdAt: '2026-11-21T19:00:00.000Z',
    modifiedAt: '2026-11-21T19:00:00.000Z',
    [NS + 'temperature']: [
      { type: 'Property', value: i % 40, createdAt: '2026-11-21T19:00:00.000Z', modifiedAt: '2026-11-21T19:00:00.000Z' },
    ],
    [NS + 'name']: [{ type: 'Property', value: `n${i}`, createdAt: '2026-11-21T19:00:00.000Z', modifiedAt: '2026-11-21T19:00:00.000Z' }],
  };
}

interface Codec {
  name: string;
  encode(v: unknown): Uint8Array;
  decode(b: Uint8Array): unknown;
}

// lmdb's child databases do not inherit the root's `encoder` options: each got `new Packr({ copyBuffers: true })`.
const inline = new Packr({ copyBuffers: true });
const maps = new Packr({ copyBuffers: true, useRecords: false });
const shared = new Packr({ copyBuffers: true, structures: [], maxSharedStructures: 64 });
const textEncoder = new TextEncoder();
const textDecoder = new TextDecoder();

const codecs: Codec[] = [
  { name: 'current: records inline (lmdb default)', encode: (v) => inline.pack(v), decode: (b) => inline.unpack(b) },
  { name: 'candidate: plain maps (useRecords false)', encode: (v) => maps.pack(v), decode: (b) => maps.unpack(b) },
  { name: 'candidate: shared structures', encode: (v) => shared.pack(v), decode: (b) => shared.unpack(b) },
  { name: 'candidate: JSON text', encode: (v) => textEncoder.encode(JSON.stringify(v)), decode: (b) => JSON.parse(textDecoder.decode(b)) },
];

for (const c of codecs) {
  // Copies, as lmdb hands out a fresh view of each value.
  const buffers = Array.from({ length: N }, (_, i) => Uint8Array.from(c.encode(entity(i))));
  let best = 0;
  let sink = 0;
  for (let r = 0; r < ROUNDS; r++) {
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < N; i++) sink += (c.decode(buffers[i]!) as { id: string }).id.length;
    best = Math.max(best, N / (Number(process.hrtime.bigint() - t0) / 1e9));
  }
  process.stdout.write(
    `${c.name.padEnd(44)} ${(best / 1e6).toFixed(3).padStart(7)} M decodes/s, ${buffers[0]!.length} bytes${sink === 0 ? ' (?)' : ''}\n`,
  );
}
