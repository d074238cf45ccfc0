import t from 'tap';
import { mkdtempSync, mkdirSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ContextService } from '../../src/pipeline/contexts/context-service.js';
import { CORE_URLS } from '../../src/ngsild/context/core-contexts.js';
import { LdError } from '../../src/ngsild/problem.js';

// --contextDir serves mapped URLs from files: no server exists for any URL below (.invalid never resolves).

const dirs: string[] = [];
t.teardown(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function contextDir(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'ldbroker-ctxdir-'));
  dirs.push(dir);
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(join(dir, name, '..'), { recursive: true });
    writeFileSync(join(dir, name), text);
  }
  return dir;
}

const BUILDING = 'https://models.invalid/building.jsonld';
const PARKING = 'urn:example:context:parking';
const good = contextDir({
  'index.json': JSON.stringify({
    [BUILDING]: 'building.jsonld',
    [PARKING]: 'sub/parking.jsonld',
    'https://models.invalid/both.jsonld': 'both.jsonld',
  }),
  'building.jsonld': JSON.stringify({
    '@context': { Building: 'https://models.invalid/Building', floors: 'https://models.invalid/floors' },
  }),
  'sub/parking.jsonld': JSON.stringify({ '@context': { Parking: 'https://models.invalid/Parking' } }),
  'both.jsonld': JSON.stringify({ '@context': [BUILDING, PARKING] }),
});

t.test('a mapped URL is served from its file, also when another context names it', async (t) => {
  const r = new ContextService({ contextDir: good, fetchTimeoutMs: 200 });
  await r.init();
  const b = await r.resolve(BUILDING);
  t.equal(b.expandTerm('Building'), 'https://models.invalid/Building');
  t.equal(b.compactIri('https://models.invalid/floors'), 'floors');
  t.equal(b.linkUrl, BUILDING);
  t.equal((await r.resolve(PARKING)).expandTerm('Parking'), 'https://models.invalid/Parking', 'a urn URL maps too');
  const both = await r.resolve('https://models.invalid/both.jsonld');
  t.equal(both.expandTerm('floors'), 'https://models.invalid/floors');
  t.equal(both.expandTerm('Parking'), 'https://models.invalid/Parking');
  t.equal((await r.resolve({ '@import': BUILDING })).expandTerm('floors'), 'https://models.invalid/floors', '@import of a mapped URL');
});

t.test('the configured core version can be replaced from the directory', async (t) => {
  const dir = contextDir({
    'index.json': JSON.stringify({ [CORE_URLS['1.8']]: 'core.jsonld' }),
    'core.jsonld': JSON.stringify({
      '@context': {
        '@version': 1.1,
        '@protected': true,
        'ngsi-ld': 'https://uri.etsi.org/ngsi-ld/',
        location: 'ngsi-ld:location',
        '@vocab': 'https://local.invalid/vocab/',
      },
    }),
  });
  const r = new ContextService({ contextDir: dir });
  await r.init();
  t.equal(r.defaultContext.expandTerm('Building'), 'https://local.invalid/vocab/Building');
  t.equal(r.defaultContext.expandTerm('observedAt'), 'https://local.invalid/vocab/observedAt', 'only the local file’s terms');
});

t.test('--defaultUserContext can come from the directory', async (t) => {
  const r = new ContextService({ contextDir: good, defaultUserContext: BUILDING });
  await r.init();
  t.equal(r.defaultContext.expandTerm('floors'), 'https://models.invalid/floors');
});

t.test('an unmapped URL still goes to the network (and fails here)', async (t) => {
  const r = new ContextService({ contextDir: good, fetchTimeoutMs: 300 });
  await r.init();
  const e = await r.resolve('urn:example:context:other').then(
    () => undefined,
    (err: unknown) => err,
  );
  t.ok(e instanceof LdError && e.kind === 'LdContextNotAvailable', 'LdContextNotAvailable');
});

t.test('a missing or invalid index stops init() with a message naming the problem', async (t) => {
  const cases: Array<[string, Record<string, string>, RegExp]> = [
    ['no index', { 'a.jsonld': '{}' }, /index\.json cannot be read/],
    ['index not JSON', { 'index.json': '{"a": ' }, /index\.json is not valid JSON/],
    ['index is an array', { 'index.json': '["a"]' }, /must be a JSON object mapping context URLs/],
    [
      'index value not a string',
      { 'index.json': JSON.stringify({ [BUILDING]: 3 }) },
      /entry for https:\/\/models\.invalid\/building\.jsonld must be a file path/,
    ],
    [
      'index key not a URL',
      { 'index.json': JSON.stringify({ 'building.jsonld': 'building.jsonld' }) },
      /key 'building\.jsonld' is not an absolute URL/,
    ],
    [
      'file missing',
      { 'index.json': JSON.stringify({ [BUILDING]: 'nope.jsonld' }) },
      /nope\.jsonld \(for https:\/\/models\.invalid\/building\.jsonld\) cannot be read/,
    ],
    ['path leaves the directory', { 'index.json': JSON.stringify({ [BUILDING]: '../etc/passwd' }) }, /must be a path inside the directory/],
    ['absolute path', { 'index.json': JSON.stringify({ [BUILDING]: '/etc/passwd' }) }, /must be a path inside the directory/],
    ['file not JSON', { 'index.json': JSON.stringify({ [BUILDING]: 'b.jsonld' }), 'b.jsonld': 'nope' }, /b\.jsonld .*is not valid JSON/],
    [
      'file without @context',
      { 'index.json': JSON.stringify({ [BUILDING]: 'b.jsonld' }), 'b.jsonld': '{"a": 1}' },
      /b\.jsonld .*a JSON object with an @context member/,
    ],
  ];
  for (const [name, files, message] of cases) {
    const r = new ContextService({ contextDir: contextDir(files) });
    await t.rejects(r.init(), message, name);
  }
  await t.rejects(
    new ContextService({ contextDir: join(good, 'does-not-exist') }).init(),
    /--contextDir .*does-not-exist: index\.json cannot be read/,
    'no directory',
  );
});

t.test('a mapped file that is not a valid JSON-LD context fails the request that uses it, with 400', async (t) => {
  const dir = contextDir({
    'index.json': JSON.stringify({ [BUILDING]: 'b.jsonld' }),
    'b.jsonld': JSON.stringify({ '@context': { location: 'https://models.invalid/location' } }),
  });
  const r = new ContextService({ contextDir: dir });
  await r.init();
  const e = await r.resolve(BUILDING).then(
    () => undefined,
    (err: unknown) => err,
  );
  t.ok(e instanceof LdError && e.kind === 'InvalidRequest', 'InvalidRequest');
  t.match((e as LdError).detail, "protected core term 'location'");
});
