// Preloaded (NODE_OPTIONS --import, test/run-all.sh and the Makefile's test targets) into the processes of a tap run of
// the tests compiled into dist/test/: they are JavaScript, so tap's TypeScript plugin need not load ts-node into each
// of them (about 0.45 s of CPU per test process, over 250 processes a run). The plugin skips it when
// TAP_TYPE_STRIP_ONLY=1, but on Node < 22 its runner sets the variable back to 0 for the test processes; this
// preload runs before the plugin's (NODE_OPTIONS' imports come first) and sets it again. `npx tap test/unit/foo.test.ts`
// does not load this file and keeps ts-node.
process.env.TAP_TYPE_STRIP_ONLY = '1';
