// ESLint (`make lint`, with tsc --noEmit): the recommended rules that hold for this code, and the layers of
// ARCHITECTURE.md as import rules, lowest first:
//   ngsild/ (semantics, no I/O, imports nothing else of src)
//   < contracts and kits (src/*/contract.ts, src/store/kit/, src/plugin/, logger.ts, features.ts, config.ts) and the plugin loaders
//   < pipeline/, notify/ and the bridge host (bridge/ but its contract and loader) < ops/ < front/ and the services (policyapi/, migrate/, build/)
//   < main.ts, broker.ts, command-line.ts, runner.ts, options.ts, import-main.ts, import-target.ts and workers/.
// A file may import its own layer and those below; plugins import contracts and the store kit (and, until the store contract carries
// them, ngsild's types and helpers); nothing but the top imports a plugin or the command line.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/** Everything directly under src/, folders and top-level modules. */
const SRC = {
  ngsild: 'ngsild',
  plugin: 'plugin',
  store: 'store',
  auth: 'auth',
  bridge: 'bridge',
  pipeline: 'pipeline',
  notify: 'notify',
  ops: 'ops',
  front: 'front',
  plugins: 'plugins',
  policyapi: 'policyapi',
  migrate: 'migrate',
  build: 'build',
};
const TOP = ['main', 'broker', 'command-line', 'runner', 'options', 'import-main', 'import-target'];
const CONTRACT_FILES = [
  'src/*/contract.ts',
  'src/store/kit/**/*.ts',
  'src/plugin/**/*.ts',
  'src/logger.ts',
  'src/features.ts',
  'src/config.ts',
];
const LOADERS = ['src/store/loader.ts', 'src/auth/loader.ts', 'src/bridge/loader.ts'];

/** A regexp matching a relative import that, from `depth` folders below src/, names one of `targets` of src/. */
function reaching(depth, targets) {
  const up = depth === 0 ? '\\./' : `(?:\\.\\./){${depth}}`;
  return `^${up}(?!\\.\\./)(?:${targets.join('|')})(?:/|\\.js$)`;
}

/** Files of `folder` at each depth below it, each refused the imports of `targets` (folders or modules of src/). */
function layer(folder, targets, message, depths = [1, 2, 3]) {
  return depths.map((extra) => ({
    files: [`src/${folder}/${'*/'.repeat(extra - 1)}*.ts`],
    ignores: [...CONTRACT_FILES, ...LOADERS],
    rules: { 'no-restricted-imports': ['error', { patterns: [{ regex: reaching(extra, targets), message }] }] },
  }));
}

const ABOVE_CONTRACTS = [
  SRC.pipeline,
  SRC.notify,
  SRC.ops,
  SRC.front,
  SRC.plugins,
  SRC.policyapi,
  SRC.migrate,
  SRC.build,
  ...TOP,
  'store/loader',
  'auth/loader',
  'bridge/loader',
  // The bridge host's modules (not its contract or loader) sit with pipeline/ and notify/.
  'bridge/(?!contract\\.js$|loader\\.js$)[^/]+',
];
const ABOVE_PIPELINE = [SRC.ops, SRC.front, SRC.plugins, SRC.policyapi, SRC.migrate, SRC.build, ...TOP];

/** Node modules that do I/O: none of them in ngsild/. */
const IO_MODULES = [
  'fs',
  'node:fs',
  'fs/promises',
  'node:fs/promises',
  'worker_threads',
  'node:worker_threads',
  'net',
  'node:net',
  'http',
  'node:http',
  'https',
  'node:https',
  'http2',
  'node:http2',
  'dgram',
  'node:dgram',
  'child_process',
  'node:child_process',
  'undici',
  'lmdb',
  'piscina',
].map((name) => ({ name, message: 'ngsild/ does no I/O: the pipeline owns it (src/pipeline/contexts for @contexts)' }));

export default tseslint.config(
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      // `_`-prefixed names are the ones a destructuring leaves out on purpose.
      '@typescript-eslint/no-unused-vars': ['error', { varsIgnorePattern: '^_', argsIgnorePattern: '^_', ignoreRestSiblings: true }],
      // A `let` declared before the closure that reads it and assigned once after is not a const.
      'prefer-const': ['error', { ignoreReadBeforeAssign: true }],
      // Start-up errors say what failed in their own words; the cause is in the message.
      'preserve-caught-error': 'off',
      // The grammars refuse control characters by naming them.
      'no-control-regex': 'off',
    },
  },
  // ngsild/: nothing else of src, no I/O.
  ...[1, 2, 3].map((depth) => ({
    files: [`src/ngsild/${'*/'.repeat(depth - 1)}*.ts`],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: IO_MODULES,
          patterns: [{ regex: `^(?:\\.\\./){${depth}}`, message: 'ngsild/ imports nothing else of src: it is the lowest layer' }],
        },
      ],
    },
  })),
  // Contracts and kits, and the loaders: ngsild and each other only.
  {
    files: [...CONTRACT_FILES, ...LOADERS],
    ignores: ['src/plugin/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: [{ regex: reaching(1, ABOVE_CONTRACTS), message: 'contracts and loaders sit below the pipeline' }] },
      ],
    },
  },
  {
    files: ['src/*.ts'],
    ignores: TOP.map((m) => `src/${m}.ts`),
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: [{ regex: reaching(0, ABOVE_CONTRACTS), message: 'contracts and kits sit below the pipeline' }] },
      ],
    },
  },
  ...layer('pipeline', ABOVE_PIPELINE, 'the pipeline sits below ops and the front: handlers are given to it, never imported'),
  ...layer('notify', ABOVE_PIPELINE, 'notify sits below ops and the front'),
  // bridge/: contract.ts and loader.ts are contracts; the bridge host (threads, sink, reader) sits with notify.
  ...layer('bridge', ABOVE_PIPELINE, 'the bridge host sits below ops and the front'),
  ...layer(
    'ops',
    [SRC.front, SRC.plugins, SRC.policyapi, SRC.migrate, SRC.build, ...TOP],
    'ops read the pipeline and below, never the front or the command line',
  ),
  ...layer(
    'front',
    [SRC.ops, SRC.notify, SRC.plugins, SRC.migrate, SRC.build, ...TOP],
    'the front hands tasks to a runner: it never imports ops',
  ),
  ...[SRC.policyapi, SRC.migrate, SRC.build].flatMap((folder) =>
    layer(
      folder,
      [SRC.ops, SRC.pipeline, SRC.notify, SRC.plugins, ...TOP],
      'services use contracts and the front kit, not the broker core',
    ),
  ),
  // Plugins: contracts only (ngsild too, until the store contract carries what embdb takes from it).
  ...[2, 3, 4].map((depth) => ({
    files: [`src/plugins/${'*/'.repeat(depth - 1)}*.ts`],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: `^(?:\\.\\./){${depth}}(?!\\.\\./)(?!ngsild/|plugin/contract\\.js$|[a-z]+/contract\\.js$|store/kit/)`,
              message: 'a plugin imports contract files only (ARCHITECTURE.md "Contracts are the walls")',
            },
          ],
        },
      ],
    },
  })),
  // The top: anything but a plugin; the workers, the pipeline's wire types, not the front's.
  {
    files: TOP.map((m) => `src/${m}.ts`),
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: [{ regex: reaching(0, [SRC.plugins]), message: 'core code loads plugins by name, never imports one' }] },
      ],
    },
  },
  {
    files: ['workers/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { regex: '^\\.\\./src/(?:front|plugins)/', message: 'a worker runs the pipeline: its wire types are src/pipeline/task.ts' },
          ],
        },
      ],
    },
  },
);
