// ldbroker-import keeps memory flat over a long stream (issue 21: "a 1 GB stream with flat memory"; bench/import.ts
// measures 1 GB): a 50 MB stream, generated while it is piped to the importer's standard input (no file), current
// state then history as the exporter orders it, into embdb on disk with its history. The importer's anonymous resident
// memory (RssAnon: heap and buffers, not the pages of the LMDB file it maps) is sampled from /proc while it runs; its
// growth from the first tenth of the stream to the end stays under a bound. A memory bound, never a time.
import t from 'tap';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { once } from 'node:events';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawn } from 'node:child_process';
import { IMPORT_MAIN } from './helpers/import.js';

const EX = 'https://example.org/';
const T0 = Date.parse('2023-01-01T00:00:00Z');
const STREAM_BYTES = 50e6;
/** The importer's heap is capped: a heap holding what it read fails on the cap before the bound is even asked. */
const HEAP_MB = 96;
/** Growth of RssAnon allowed past the first tenth of the stream. */
const GROWTH_MB = 48;

function rssAnonMb(pid: number): number | undefined {
  try {
    const m = /RssAnon:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m === null ? undefined : Number(m[1]) / 1024;
  } catch {
    return undefined;
  }
}

/** The records of block `b`: 100 entities, then their history (a created event and three instances each). */
function* block(b: number): Generator<object> {
  const tenant = `t${b % 3}`;
  for (let i = 0; i < 100; i++) {
    const n = b * 100 + i;
    const at = new Date(T0 + n * 1000).toISOString();
    yield {
      kind: 'entity',
      tenant,
      data: {
        id: `urn:ngsi-ld:Meter:${n}`,
        type: `${EX}Meter`,
        createdAt: at,
        modifiedAt: at,
        [`${EX}kwh`]: { type: 'Property', value: n, observedAt: at, createdAt: at, modifiedAt: at },
        [`${EX}label`]: { type: 'Property', value: `meter ${n} `.repeat(20), createdAt: at, modifiedAt: at },
      },
    };
  }
  for (let i = 0; i < 100; i++) {
    const n = b * 100 + i;
    const id = `urn:ngsi-ld:Meter:${n}`;
    yield { kind: 'temporalEntity', tenant, data: { id, type: `${EX}Meter`, op: 'created', at: new Date(T0 + n * 1000).toISOString() } };
    for (let k = 0; k < 3; k++) {
      const at = new Date(T0 + n * 1000 + k * 60_000).toISOString();
      yield {
        kind: 'temporalInstance',
        tenant,
        data: {
          id,
          type: `${EX}Meter`,
          attr: `${EX}kwh`,
          op: k === 0 ? 'created' : 'modified',
          instance: { instanceId: `urn:ngsi-ld:attribute:instance:m${n}-${k}`, type: 'Property', value: k, createdAt: at, modifiedAt: at },
        },
      };
    }
  }
}

t.test(
  'a 50 MB stream piped in as it is generated: memory flat (RssAnon growth bounded), every record imported',
  { skip: process.platform !== 'linux' ? 'RssAnon is read from /proc (Linux)' : false },
  async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'ldbroker-import-memory-'));
    t.teardown(() => rmSync(dir, { recursive: true, force: true }));
    const proc = spawn(
      process.execPath,
      [`--max-old-space-size=${HEAP_MB}`, IMPORT_MAIN, '--dbDir', join(dir, 'db'), '--troe', 'embdb', '--file', '-', '--logLevel', 'warn'],
      { stdio: ['pipe', 'ignore', 'pipe'] },
    );
    let stderr = '';
    proc.stderr.on('data', (d) => (stderr += String(d)));
    proc.stdin.on('error', () => {});
    let written = 0;
    const samples: Array<{ written: number; mb: number }> = [];
    const timer = setInterval(() => {
      const mb = rssAnonMb(proc.pid!);
      if (mb !== undefined) samples.push({ written, mb });
    }, 100);
    const exited = once(proc, 'exit');
    let records = 0;
    const counts = { entity: 0, temporalEntity: 0, temporalInstance: 0 };
    proc.stdin.write(JSON.stringify({ kind: 'header', format: 'broker-migration', version: 1, source: 'test' }) + '\n');
    for (let b = 0; written < STREAM_BYTES; b++) {
      let chunk = '';
      for (const r of block(b)) {
        chunk += JSON.stringify(r) + '\n';
        counts[(r as { kind: keyof typeof counts }).kind]++;
        records++;
      }
      written += Buffer.byteLength(chunk);
      // The importer pulls as fast as it writes: the generator waits for it, so nothing piles up in either process.
      if (!proc.stdin.write(chunk)) await once(proc.stdin, 'drain');
    }
    proc.stdin.end();
    const [code] = (await exited) as [number | null];
    clearInterval(timer);
    t.equal(code, 0, stderr.slice(-1000));
    t.equal(stderr.split('\n')[0], `entities: ${counts.entity} imported, 0 refused`);
    t.match(stderr, `temporal instances: ${counts.temporalInstance} imported, 0 refused`);
    t.ok(records > 100_000, `${records} records, ${(written / 1e6).toFixed(0)} MB`);
    const early = samples.filter((s) => s.written <= STREAM_BYTES / 10);
    const late = samples.filter((s) => s.written > STREAM_BYTES / 10);
    t.ok(early.length > 0 && late.length > 0, `memory sampled (${samples.length} samples)`);
    const base = Math.max(...early.map((s) => s.mb));
    const peak = Math.max(...late.map((s) => s.mb));
    t.ok(
      peak - base < GROWTH_MB,
      `RssAnon ${base.toFixed(0)} MB after the first tenth, at most ${peak.toFixed(0)} MB after (bound +${GROWTH_MB})`,
    );
  },
);
