// Post-build step for feature switches: `node dist/src/build/features.js noauth` turns the built FEATURES.auth off
// and deletes the authorization code from dist/, so such a build cannot load a plugin at all.
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const dist = fileURLToPath(new URL('../', import.meta.url));

const REMOVED: Record<string, string[]> = {
  noauth: [
    'auth',
    'plugins/auth',
    'front/front-auth.js',
    'pipeline/auth-load.js',
    'pipeline/auth-request.js',
    'pipeline/auth-verdict.js',
    'notify/owner-filter.js',
    'notify/owner-request.js',
  ],
  nopolicyApi: ['policyapi'],
  noimporter: ['migrate/import', 'import-main.js', 'import-main.js.map', 'import-target.js', 'import-target.js.map'],
};

for (const word of process.argv
  .slice(2)
  .flatMap((a) => a.split(','))
  .filter((w) => w !== '')) {
  const paths = REMOVED[word];
  if (paths === undefined) {
    process.stderr.write(`features: unknown switch '${word}' (known: ${Object.keys(REMOVED).join(', ')})\n`);
    process.exit(1);
  }
  const feature = word.slice(2);
  const file = `${dist}features.js`;
  writeFileSync(file, readFileSync(file, 'utf8').replace(new RegExp(`${feature}: true`), `${feature}: false`));
  for (const p of paths) rmSync(`${dist}${p}`, { recursive: true, force: true });
  process.stdout.write(`features: ${feature} left out of the build\n`);
}
