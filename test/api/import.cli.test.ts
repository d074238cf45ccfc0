// The ldbroker-import command (seed 001 §2.7, §4.3): exit status 0 when every record went in, 1 when any was
// refused, 2 when nothing could be imported; pino on standard output, the report alone on standard error; the
// broker's option names; a store another process holds open refused with a clear line; the feature switch.
import t from 'tap';
import {
  cpSync,
  createWriteStream,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { once } from 'node:events';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawn, spawnSync } from 'node:child_process';
import { spawnBroker, startBroker, call, NGSI } from './helpers/broker.js';
import { IMPORT_MAIN, importCommand, ndjson, runImporter } from './helpers/import.js';
import { ROOT, ROOT_URL } from '../helpers/repo.js';

const EX = 'https://example.org/';
const T0 = '2023-11-14T22:13:20.123Z';
const entity = (n: number, type = `${EX}Thing`): Record<string, unknown> => ({
  kind: 'entity',
  data: { id: `urn:ngsi-ld:Thing:${n}`, type, createdAt: T0, modifiedAt: T0 },
});

const tmp = (t: { teardown(fn: () => void): void }): string => {
  const dir = mkdtempSync(join(tmpdir(), 'ldbroker-import-cli-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
};

const REPORT = (entities: string): string[] => [
  `entities: ${entities}`,
  'subscriptions: 0 imported, 0 refused',
  'registrations: 0 imported, 0 refused',
  'temporal entity events: 0 imported, 0 refused',
  'temporal instances: 0 imported, 0 refused',
];

t.test('exit 0, the log on standard output, the report exactly on standard error', async (t) => {
  const dir = tmp(t);
  const file = join(dir, 'stream.ndjson');
  writeFileSync(file, ndjson([entity(1), entity(2)]));
  const r = await runImporter(['-db', 'embdb', '--dbDir', join(dir, 'db'), '--troe', 'embdb', '--file', file]);
  t.equal(r.code, 0, r.stderr);
  t.same(r.stderr.split('\n'), [...REPORT('2 imported, 0 refused'), 'created rows (history): 2 written, 0 failed', '']);
  const logs = r.stdout
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
  t.ok(logs.length >= 2 && logs.every((l) => typeof l.level === 'number' && typeof l.msg === 'string'), 'pino JSON lines');
  t.match(logs.at(-1), { msg: 'import finished', records: 2, refused: false });
  t.notMatch(r.stderr, /\r/, 'no progress line on a pipe');
});

t.test('exit 1 when a record is refused: its line above the report; --file - reads standard input', async (t) => {
  const dir = tmp(t);
  const r = await importCommand(['--file', '-'], ndjson([entity(1), entity(2, 'Thing')]), { BROKER_DBDIR: join(dir, 'db') });
  t.equal(r.code, 1);
  const lines = r.stderr.split('\n');
  t.match(lines[0], /^line 2: entity urn:ngsi-ld:Thing:2 refused: BadRequestData: entity type: "Thing" is not expanded/);
  t.same(lines.slice(1), [...REPORT('1 imported, 1 refused'), 'created rows (history): 0 written, 0 failed', '']);
});

t.test('exit 2 when nothing can be imported, with the reason', async (t) => {
  const dir = tmp(t);
  const cases: Array<[string, string[], RegExp]> = [
    ['no --file', ['--dbDir', dir], /--file is required/],
    ['an unknown option', ['--dbDir', dir, '--file', '-', '--port', '1'], /unknown option '--port'/],
    ['a file that is not there', ['--dbDir', dir, '--file', join(dir, 'nothing')], /ENOENT/],
    ['a store in memory', ['--file', '-'], /without --dbDir is a store in memory/],
    ['an unknown store', ['--database', 'nosuch', '--dbDir', dir, '--file', '-'], /nosuch/],
    ['embdb history with another store', ['--database', 'docdb', '--troe', 'embdb', '--file', '-'], /needs --database embdb/],
  ];
  for (const [what, args, why] of cases) {
    const r = await importCommand(args);
    t.equal(r.code, 2, what);
    t.match(r.stderr, why, what);
  }
  const u = await importCommand(['-u']);
  t.equal(u.code, 0);
  t.match(u.stdout, /Usage: ldbroker-import/);
  t.match(u.stdout, /--dbDir/, "the store plugin's options by the broker's names");
  t.notMatch(u.stdout, /--port/);
});

t.test('a store a broker holds open is refused with a clear line; once it stopped, the import goes in', async (t) => {
  const dir = tmp(t);
  const db = join(dir, 'db');
  // The broker in this process, the importer in its own: the store is held by this process and freed by its stop.
  const broker = await startBroker(['--dbDir', db]);
  t.equal((await call(broker, 'GET', `${NGSI}/entities?type=Thing`)).status, 200);
  const held = await runImporter(['--dbDir', db, '--file', '-'], ndjson([entity(1)]));
  t.equal(held.code, 2);
  t.match(held.stderr, new RegExp(`the store is in use by another process \\(.* is open in process ${process.pid}\\): stop the broker`));
  await broker.stop();
  const after = await runImporter(['--dbDir', db, '--file', '-'], ndjson([entity(1)]));
  t.equal(after.code, 0, after.stderr);
});

t.test('a store a broker holds open is refused before anything is written to it (no index rebuild of an older store)', async (t) => {
  const dir = tmp(t);
  const db = join(dir, 'db');
  const broker = await spawnBroker(['--dbDir', db]);
  t.teardown(() => broker.stop());
  const made = await call(broker, 'POST', `${NGSI}/entities`, { body: { id: 'urn:ngsi-ld:Thing:old', type: 'Thing' } });
  t.equal(made.status, 201);
  // The store marked as of an older index format, as one a previous version wrote: a primary open rebuilds it.
  const { open } = await import('lmdb');
  const { KEY_CODEC } = (await import(new URL('dist/src/plugins/store/embdb/keys.js', ROOT_URL).href)) as {
    KEY_CODEC: Record<string, unknown>;
  };
  const env = open({ path: join(db, 'embdb'), maxDbs: 32 });
  const meta = env.openDB<number, string>({ ...KEY_CODEC, name: 'meta' });
  await meta.put('indexFormat', 4);
  await env.close();
  const held = await runImporter(['--dbDir', db, '--file', '-'], ndjson([entity(1)]));
  t.equal(held.code, 2);
  t.match(held.stderr, /the store is in use by another process/);
  t.notMatch(held.stdout, /rebuilding/, 'no rebuild under the running broker');
  const env2 = open({ path: join(db, 'embdb'), maxDbs: 32 });
  t.equal(env2.openDB<number, string>({ ...KEY_CODEC, name: 'meta' }).get('indexFormat'), 4, 'the store as it was');
  await env2.close();
});

t.test('FEATURES=noimporter leaves the importer out of the build', async (t) => {
  const root = ROOT;
  const dir = tmp(t);
  cpSync(join(root, 'dist'), join(dir, 'dist'), { recursive: true });
  symlinkSync(join(root, 'node_modules'), join(dir, 'node_modules'));
  cpSync(join(root, 'package.json'), join(dir, 'package.json'));
  t.ok(existsSync(join(dir, 'dist/src/import-main.js')), 'built by default');
  const strip = spawnSync(process.execPath, [join(dir, 'dist/src/build/features.js'), 'noimporter'], { encoding: 'utf8' });
  t.equal(strip.status, 0, strip.stderr);
  t.notOk(existsSync(join(dir, 'dist/src/import-main.js')));
  t.notOk(existsSync(join(dir, 'dist/src/migrate/import')));
  const usage = spawnSync(process.execPath, [join(dir, 'dist/src/main.js'), '-u'], { encoding: 'utf8', timeout: 20_000 });
  t.equal(usage.status, 0, 'the broker still starts its option parsing');
});

t.test('a generated stream of 25 MB goes in whole with the importer heap capped (bench/import.ts checks 1 GB with 64 MB)', async (t) => {
  const dir = tmp(t);
  const file = join(dir, 'big.ndjson');
  const out = createWriteStream(file);
  const n = 40_000;
  const pad = 'p'.repeat(400);
  for (let i = 0; i < n; i++) {
    const e = entity(i);
    const data = e.data as Record<string, unknown>;
    data[`${EX}pad`] = { type: 'Property', value: pad, createdAt: T0, modifiedAt: T0 };
    if (!out.write(JSON.stringify(e) + '\n')) await once(out, 'drain');
  }
  out.end();
  await once(out, 'finish');
  const bytes = statSync(file).size;
  t.ok(bytes > 20e6, `${(bytes / 1e6).toFixed(0)} MB`);
  const r = await runImporter(['--dbDir', join(dir, 'db'), '--file', file], undefined, { NODE_OPTIONS: '--max-old-space-size=48' });
  t.equal(r.code, 0, r.stderr.slice(-500));
  t.equal(r.stderr.split('\n')[0], `entities: ${n} imported, 0 refused`);
});

t.test('interrupted: exit 2 with a line saying what stays, its temporary file removed', async (t) => {
  const dir = tmp(t);
  const tmpDir = join(dir, 'tmp');
  mkdirSync(tmpDir);
  const proc = spawn(process.execPath, [IMPORT_MAIN, '--dbDir', join(dir, 'db'), '--troe', 'embdb', '--file', '-'], {
    env: { ...process.env, TMPDIR: tmpDir },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  proc.stdout.on('data', (d) => (stdout += String(d)));
  proc.stderr.on('data', (d) => (stderr += String(d)));
  // Standard input stays open: the importer waits for more lines until the signal.
  proc.stdin.write(ndjson([entity(1)]));
  // The importer makes its temporary file once its import runs, just after it logs 'import started': wait for both.
  for (let i = 0; i < 200 && !(stdout.includes('import started') && readdirSync(tmpDir).length > 0); i++)
    await new Promise((r) => setTimeout(r, 50));
  t.ok(readdirSync(tmpDir).length > 0, 'a temporary file while importing');
  proc.kill('SIGINT');
  const [code] = (await once(proc, 'exit')) as [number | null];
  t.equal(code, 2);
  t.match(stderr, /ldbroker-import: interrupted \(SIGINT\): the records written so far stay/);
  t.same(readdirSync(tmpDir), [], 'the temporary file removed');
});
