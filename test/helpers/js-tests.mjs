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

// Nor do the processes a test starts (spawned brokers, the importer, tune, bench, main.js -u): @tapjs/processinfo
// adds its --import to the NODE_OPTIONS of every child (process-on-spawn, which wraps ChildProcess.prototype.spawn and
// the spawnSync binding), and there, without this file before it, it registers its loader: every module the child
// and each of its threads imports went through a hooks thread and back for coverage. A 40,000-entity import took 7.6
// CPU-s so against 1.6 bare. Wrapped here, before process-on-spawn wraps them in turn, these run after its listeners
// and take the option out again of what the child gets. Only in test processes (tap gives them TAP_CHILD_ID, and their
// children inherit it): tap's runner starts the test processes with it as it means to.
const TAP_PRELOAD = '@tapjs/processinfo';
const withoutTapPreload = (options) => {
  if (Array.isArray(options?.envPairs))
    options.envPairs = options.envPairs.map((pair) => {
      if (!pair.startsWith('NODE_OPTIONS=') || !pair.includes(TAP_PRELOAD)) return pair;
      const kept = (pair.slice('NODE_OPTIONS='.length).match(/"(?:[^"\\]|\\.)*"|\S+/g) ?? []).filter((o) => !o.includes(TAP_PRELOAD));
      return `NODE_OPTIONS=${kept.join(' ')}`;
    });
  return options;
};
if (process.env.TAP_CHILD_ID !== undefined) {
  const spawnAsync = ChildProcess.prototype.spawn;
  ChildProcess.prototype.spawn = function (options) {
    return spawnAsync.call(this, withoutTapPreload(options));
  };
  // The binding spawnSync and execSync run on: process-on-spawn wraps the same one.
  const spawnSyncBinding = process.binding('spawn_sync');
  const spawnSync = spawnSyncBinding.spawn;
  spawnSyncBinding.spawn = (options) => spawnSync.call(spawnSyncBinding, withoutTapPreload(options));
}
