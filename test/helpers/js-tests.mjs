// Preloaded (NODE_OPTIONS --import, test/run-all.sh and the Makefile's test targets) into the processes of a tap run of
// the tests compiled into dist/test/. It runs before tap's own preloads (NODE_OPTIONS' imports come first) and spares
// each test process three loaders it does not need; `npx tap test/unit/foo.test.ts` does not load this file.
import module from 'node:module';
import { ChildProcess } from 'node:child_process';

// The tests are JavaScript: tap's TypeScript plugin need not load ts-node (about 0.45 s of CPU per test process, over
// 250 processes a run). The plugin skips it when TAP_TYPE_STRIP_ONLY=1, but on Node < 22 its runner sets the variable
// back to 0 for the test processes; set here, it holds when the plugin's preload reads it.
process.env.TAP_TYPE_STRIP_ONLY = '1';

// Coverage is off (.taprc) and no test mocks a module (t.mockImport, t.mockRequire): the module loaders of
// @tapjs/processinfo (which sends the source of every module a test process loads back to measure its lines for
// coverage) and @tapjs/mock have nothing to do, but on Node 20 each runs every import of the process through a hooks
// thread. Importing the broker's modules (dist/src/broker.js): 0.42 CPU-s with source maps alone, 1.18 with the two
// loaders. They are not registered here (the process's record in .tap/processinfo is still written). A test that
// needs t.mockImport runs as `npx tap test/…/foo.test.ts`, or this drops the '@tapjs/mock' line.
const unused = ['/@tapjs/processinfo/', '/@tapjs/mock/'];
const register = module.register;
module.register = function (specifier, ...rest) {
  if (unused.some((u) => String(specifier).includes(u))) return;
  return register.call(this, specifier, ...rest);
};
// @tapjs/mock imports `register` by name: the named export follows the change only once synced.
module.syncBuiltinESMExports();

// Nor do the processes tap's runner and the tests start load their modules at all. tap puts both imports into the
// arguments of each test process and @tapjs/processinfo's into its NODE_OPTIONS; process-on-spawn (processinfo's)
// puts it back into the NODE_OPTIONS of every process a test starts (spawnBroker's childEnv had taken it out), and a
// child without this file before it (the importer run with NODE_OPTIONS of its own) registered the coverage loader
// there: a 40,000-entity import cost 7.6 CPU-s so against 1.5. With their loaders not registered, the two modules'
// import alone was about 0.1 CPU-s per test process. Nothing here reads what processinfo records (.tap/processinfo
// serves `tap --changed` and coverage, both unused by make test). Wrapped here, before process-on-spawn wraps them in
// turn, these run after its listeners and take the options out again of what the process gets.
const UNUSED_IMPORT = /^"?--(import|loader|experimental-loader)=\S*\/@tapjs\/(processinfo|mock)\//;
const without = (options) => {
  if (Array.isArray(options?.args)) options.args = options.args.filter((a) => !UNUSED_IMPORT.test(a));
  if (Array.isArray(options?.envPairs))
    options.envPairs = options.envPairs.map((pair) => {
      if (!pair.startsWith('NODE_OPTIONS=') || !pair.includes('/@tapjs/')) return pair;
      const kept = (pair.slice('NODE_OPTIONS='.length).match(/"(?:[^"\\]|\\.)*"|\S+/g) ?? []).filter((o) => !UNUSED_IMPORT.test(o));
      return `NODE_OPTIONS=${kept.join(' ')}`;
    });
  return options;
};
const spawnAsync = ChildProcess.prototype.spawn;
ChildProcess.prototype.spawn = function (options) {
  return spawnAsync.call(this, without(options));
};
// The binding spawnSync and execSync run on: process-on-spawn wraps the same one.
const spawnSyncBinding = process.binding('spawn_sync');
const spawnSync = spawnSyncBinding.spawn;
spawnSyncBinding.spawn = (options) => spawnSync.call(spawnSyncBinding, without(options));
