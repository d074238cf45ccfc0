// Issue 21 benchmark: ldbroker-import into embdb on disk. Writes a generated broker-migration stream of --bytes (1 GB
// by default: entities with a few attributes, a history of instances per entity, spread over tenants) to a file,
// runs the built importer on it into a fresh --dbDir (with --troe embdb), samples the importer's resident memory
// (VmRSS) every 200 ms, and reports records per second and the memory at 10 %, 50 % and 100 % of the file (flat
// memory: the last should be about the first; anonymous memory, not the mapped store file). Not part of `make test`; `--smoke` runs a 5 MB stream.
// The importer's V8 heap is capped (--heapMb, 64): a stream 15 times larger going through is the proof of flat memory.
// `--pipe` generates the stream while the importer reads it on standard input (no file on disk, so any --bytes) and
// prints a line every --every records (100,000) with the peak anonymous RSS so far; the shares are then of the bytes
// piped. `node dist/bench/import.js [--bytes 1000000000] [--pipe [--every 100000]] [--heapMb 64]
// [--database embdb,docdb] [--troe embdb|none|tsdb]
// [--dbURI mongodb://…] [--smoke] [--out file] [-- <history options>]`; one row per store, the table replaces the
// "Import" section of bench/RESULTS.md (or goes to --out). docdb: a database of its own (b<hex>) on --dbURI
// (MONGO_URL, else 127.0.0.1:27017), dropped after; beside docdb the history is --troe none (the stream then holds
// no history records: they would be refused) unless --troe tsdb.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createWriteStream, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { once } from 'node:events';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import type { Writable } from 'node:stream';
import { machineAtStart, sectionMarkers, writeResultsSection } from './results-section.js';

const IMPORT_MAIN = fileURLToPath(new URL('../src/import-main.js', import.meta.url));
const { values, positionals } = parseArgs({
  options: {
    bytes: { type: 'string', default: String(1e9) },
    troe: { type: 'string', default: 'embdb' },
    database: { type: 'string', default: 'embdb,docdb' },
    dbURI: { type: 'string', default: process.env.MONGO_URL ?? 'mongodb://127.0.0.1:27017/' },
    smoke: { type: 'boolean', default: false },
    heapMb: { type: 'string', default: '64' },
    pipe: { type: 'boolean', default: false },
    every: { type: 'string', default: '100000' },
    out: { type: 'string' },
  },
  allowPositionals: true,
});
const targetBytes = values.smoke ? 5e6 : Number(values.bytes);
if (!(targetBytes > 0)) throw new Error(`--bytes ${values.bytes}: not a positive number`);
const EX = 'https://example.org/';
const T0 = Date.parse('2023-01-01T00:00:00Z');

/** Writes the stream to a file. */
async function writeStream(file: string, history: boolean): Promise<{ records: number; bytes: number }> {
  const out = createWriteStream(file);
  const written = await generate(out, history);
  out.end();
  await once(out, 'finish');
  return written;
}

/**
 * Generates the stream into `out` (a file, or the importer's standard input with --pipe), waiting for it to drain:
 * per block of 100 entities their records, then their history (as the exporter orders it). `progress` is called
 * after each block with the records and bytes written so far.
 */
async function generate(
  out: Writable,
  history: boolean,
  progress?: (records: number, bytes: number) => void,
): Promise<{ records: number; bytes: number }> {
  let bytes = 0;
  let records = 0;
  const put = async (r: object): Promise<void> => {
    const line = JSON.stringify(r) + '\n';
    bytes += Buffer.byteLength(line);
    records++;
    if (!out.write(line)) await once(out, 'drain');
  };
  await put({ kind: 'header', format: 'broker-migration', version: 1, source: 'bench' });
  for (let block = 0; bytes < targetBytes; block++) {
    const tenant = `t${block % 4}`;
    const ids: string[] = [];
    for (let i = 0; i < 100; i++) {
      const n = block * 100 + i;
      const at = new Date(T0 + n * 1000).toISOString();
      const id = `urn:ngsi-ld:Meter:${n}`;
      ids.push(id);
      await put({
        kind: 'entity',
        tenant,
        data: {
          id,
          type: `${EX}Meter`,
          createdAt: at,
          modifiedAt: at,
          [`${EX}kwh`]: { type: 'Property', value: n, unitCode: 'KWH', observedAt: at, createdAt: at, modifiedAt: at },
          [`${EX}name`]: { type: 'Property', value: `meter ${n}`, createdAt: at, modifiedAt: at },
          location: {
            type: 'GeoProperty',
            value: { type: 'Point', coordinates: [n % 180, (n % 170) - 85] },
            createdAt: at,
            modifiedAt: at,
          },
        },
      });
    }
    progress?.(records, bytes);
    if (!history) continue;
    for (const [i, id] of ids.entries()) {
      const at0 = T0 + (block * 100 + i) * 1000;
      await put({ kind: 'temporalEntity', tenant, data: { id, type: `${EX}Meter`, op: 'created', at: new Date(at0).toISOString() } });
      for (let k = 0; k < 5; k++) {
        const at = new Date(at0 + k * 60_000).toISOString();
        await put({
          kind: 'temporalInstance',
          tenant,
          data: {
            id,
            type: `${EX}Meter`,
            attr: `${EX}kwh`,
            op: k === 0 ? 'created' : 'modified',
            instance: {
              instanceId: `urn:ngsi-ld:attribute:instance:${id.slice(18)}-${k}`,
              createdAt: at,
              modifiedAt: at,
              type: 'Property',
              value: k,
              observedAt: at,
            },
          },
        });
      }
    }
    progress?.(records, bytes);
  }
  return { records, bytes };
}

/**
 * The importer's anonymous resident memory (RssAnon: its heap and buffers), in MB. VmRSS would count the pages of
 * the LMDB file it has mapped and touched, which grow with the store and are the page cache's to drop, not memory
 * the importer holds.
 */
function rssMb(pid: number): number | undefined {
  try {
    const m = /RssAnon:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m === null ? undefined : Number(m[1]) / 1024;
  } catch {
    return undefined;
  }
}

interface Run {
  store: string;
  troe: string;
  records: number;
  bytes: number;
  seconds: number;
  at: (share: number) => string;
  report: string;
}

/**
 * Runs the importer into `target` (its store and history arguments) on `input`: a file written before, or with
 * --pipe the stream generated while the importer reads it on standard input (no file: any --bytes on any disk).
 */
async function runImporter(
  store: string,
  troe: string,
  target: string[],
  input: { file: string; records: number; bytes: number } | { pipe: boolean },
): Promise<Run> {
  const piped = 'pipe' in input;
  const args = [...target, '--troe', troe, '--file', piped ? '-' : input.file, '--logLevel', 'warn', ...positionals];
  const started = Date.now();
  // The importer's heap is capped far below the stream's size: an import that held what it read would fail.
  const child = spawn(process.execPath, [`--max-old-space-size=${Number(values.heapMb)}`, IMPORT_MAIN, ...args], {
    stdio: [piped ? 'pipe' : 'ignore', 'inherit', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (d) => (stderr += String(d)));
  // Memory against the share of the stream read. From a file the child's read offset (/proc/<pid>/fdinfo) is not
  // portable, so the share is the time elapsed over the whole run, mapped afterwards; piped, it is the bytes
  // written so far (the importer reads them as fast as it imports: the pipe holds little).
  const samples: Array<{ t: number; bytes: number; rss: number }> = [];
  let fed = 0;
  const timer = setInterval(() => {
    const rss = rssMb(child.pid!);
    if (rss !== undefined) samples.push({ t: Date.now() - started, bytes: fed, rss });
  }, 200);
  const exited = once(child, 'exit');
  let records = 'pipe' in input ? 0 : input.records;
  let bytes = 'pipe' in input ? 0 : input.bytes;
  if (piped) {
    const every = Number(values.every);
    let next = every;
    child.stdin!.on('error', () => {});
    const written = await generate(child.stdin!, troe !== 'none', (r, b) => {
      fed = b;
      if (r < next) return;
      next += every;
      const peak = Math.max(0, ...samples.map((s) => s.rss));
      process.stdout.write(`${store}: ${r} records, ${(b / 1e6).toFixed(0)} MB piped, peak anonymous RSS ${peak.toFixed(0)} MB\n`);
    });
    child.stdin!.end();
    ({ records, bytes } = written);
  }
  const [code] = (await exited) as [number | null];
  clearInterval(timer);
  const seconds = (Date.now() - started) / 1000;
  if (code !== 0) throw new Error(`the importer (${store}) exited with ${code}:\n${stderr.slice(-2000)}`);
  const at = (share: number): string => {
    const upTo = samples.filter((s) => (piped ? s.bytes <= share * bytes : s.t <= share * seconds * 1000));
    return upTo.length === 0 ? '-' : Math.max(...upTo.map((s) => s.rss)).toFixed(0);
  };
  return { store, troe, records, bytes, seconds, at, report: stderr.trim().split('\n').slice(-6).join('; ') };
}

async function dropDocdb(uri: string, dbName: string): Promise<void> {
  const { MongoClient } = await import('mongodb');
  const client = new MongoClient(uri, { serverSelectionTimeoutMS: 5000 });
  try {
    const { databases } = await client.db('admin').admin().listDatabases({ nameOnly: true });
    for (const { name } of databases) if (name === dbName || name.startsWith(dbName + '-')) await client.db(name).dropDatabase();
  } finally {
    await client.close();
  }
}

const dir = mkdtempSync(join(tmpdir(), 'ldbroker-bench-import-'));
try {
  const streams = new Map<boolean, { file: string; records: number; bytes: number }>();
  const streamOf = async (history: boolean): Promise<{ file: string; records: number; bytes: number }> => {
    let s = streams.get(history);
    if (s === undefined) {
      const file = join(dir, history ? 'stream.ndjson' : 'current.ndjson');
      s = { file, ...(await writeStream(file, history)) };
      streams.set(history, s);
    }
    return s;
  };
  const runs: Run[] = [];
  for (const store of values.database!.split(',')) {
    if (store === 'embdb') {
      const input = values.pipe ? { pipe: true } : await streamOf(values.troe !== 'none');
      runs.push(await runImporter('embdb (disk)', values.troe!, ['--database', 'embdb', '--dbDir', join(dir, 'db')], input));
    } else if (store === 'docdb') {
      const troe = values.troe === 'tsdb' ? 'tsdb' : 'none';
      const input = values.pipe ? { pipe: true } : await streamOf(troe !== 'none');
      const dbName = `b${randomBytes(4).toString('hex')}`;
      try {
        runs.push(await runImporter('docdb', troe, ['--database', 'docdb', '--dbURI', values.dbURI!, '--dbName', dbName], input));
      } finally {
        await dropDocdb(values.dbURI!, dbName);
      }
    } else throw new Error(`--database ${store}: embdb or docdb`);
  }
  const { begin, end } = sectionMarkers('import');
  const body = [
    begin,
    '## Import (ldbroker-import, issue 21)',
    '',
    `${machineAtStart()}; streams of about ${(targetBytes / 1e6).toFixed(0)} MB (entities, and with a history: temporalEntity, temporalInstance), the importer's heap capped at ${values.heapMb} MB.`,
    '',
    '| store | history | records | seconds | records/s | anonymous RSS MB at 10 % | at 50 % | at 100 % |',
    '|---|---|---|---|---|---|---|---|',
    ...runs.map(
      (r) =>
        `| ${r.store} | ${r.troe} | ${r.records} | ${r.seconds.toFixed(1)} | ${Math.round(r.records / r.seconds)} | ${r.at(0.1)} | ${r.at(0.5)} | ${r.at(1)} |`,
    ),
    '',
    ...runs.map((r) => `(${r.store}: ${r.bytes} bytes; the report: ${r.report})`),
    end,
  ].join('\n');
  if (values.smoke) process.stdout.write(body + '\n');
  else writeResultsSection('import', body, values.out);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
