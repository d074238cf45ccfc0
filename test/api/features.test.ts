// The build-time switch that leaves authorization out (seed 000 §1): a copy of dist/ built with FEATURES=noauth has
// no auth code, refuses --auth with status 1, and serves the API.
import t from 'tap';
import { cpSync, existsSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { ROOT } from '../helpers/repo.js';

const root = ROOT;

t.test('FEATURES=noauth,nopolicyApi leave the auth and policy API code out; their options are refused', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'ldbroker-noauth-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  cpSync(join(root, 'dist'), join(dir, 'dist'), { recursive: true });
  symlinkSync(join(root, 'node_modules'), join(dir, 'node_modules'));
  cpSync(join(root, 'package.json'), join(dir, 'package.json'));
  const strip = spawnSync(process.execPath, [join(dir, 'dist/src/build/features.js'), 'noauth'], { encoding: 'utf8' });
  t.equal(strip.status, 0, strip.stderr);
  t.notOk(existsSync(join(dir, 'dist/src/auth')), 'no auth contract code');
  t.notOk(existsSync(join(dir, 'dist/src/plugins/auth')), 'no auth plugins');
  const refused = spawnSync(process.execPath, [join(dir, 'dist/src/main.js'), '--auth', 'dsec', '--port', '0'], {
    encoding: 'utf8',
    timeout: 20_000,
  });
  t.equal(refused.status, 1);
  t.match(refused.stderr, /built without authorization/);
  const unknown = spawnSync(process.execPath, [join(dir, 'dist/src/build/features.js'), 'nothing'], { encoding: 'utf8' });
  t.equal(unknown.status, 1, 'an unknown switch is refused');
  const strip2 = spawnSync(process.execPath, [join(dir, 'dist/src/build/features.js'), 'nopolicyApi'], { encoding: 'utf8' });
  t.equal(strip2.status, 0, strip2.stderr);
  t.notOk(existsSync(join(dir, 'dist/src/policyapi')), 'no policy API code');
  const noPap = spawnSync(process.execPath, [join(dir, 'dist/src/main.js'), '--policyApiPort', '0', '--port', '0'], {
    encoding: 'utf8',
    timeout: 20_000,
  });
  t.equal(noPap.status, 1);
  t.match(noPap.stderr, /built without the policy API/);
  const usage = spawnSync(process.execPath, [join(dir, 'dist/src/main.js'), '-u'], { encoding: 'utf8', timeout: 20_000 });
  t.equal(usage.status, 0, 'the stripped build still starts its option parsing');
});
