// Transpiles the TypeScript of test/ into dist/test/ once (with source maps), so that run-all.sh runs JavaScript:
// tap's typescript plugin otherwise transpiles every test file, its helpers and the src/ modules a unit test imports
// again in each test process (about half a second of CPU per file, measured on the unit tests). The same transpile
// as the plugin's (TypeScript's transpileModule, file by file, no type check: the tests never were type-checked),
// the options of tsconfig.json but ES modules. A developer still runs one file as `npx tap test/unit/foo.test.ts`.
// Usage: node test/helpers/compile-tests.js (from the repository's root; removes dist/test first).
import ts from 'typescript';
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, relative } from 'node:path';

const OUT = 'dist';
const config = ts.getParsedCommandLineOfConfigFile(
  'tsconfig.json',
  {},
  {
    ...ts.sys,
    onUnRecoverableConfigFileDiagnostic: (d) => {
      throw new Error(ts.flattenDiagnosticMessageText(d.messageText, '\n'));
    },
  },
);
// File by file: no rootDir/outDir (the paths are set here) and no NodeNext resolution (nothing is resolved).
const { rootDir, outDir, moduleResolution, ...options } = config.options;
const compilerOptions = {
  ...options,
  module: ts.ModuleKind.ESNext,
  moduleResolution: ts.ModuleResolutionKind.Bundler,
  sourceMap: true,
};

/** Every .ts file under dir (the fixtures' harness included: tests import it). */
const tsFiles = (dir) =>
  readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? tsFiles(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );

rmSync(join(OUT, 'test'), { recursive: true, force: true });
let failed = 0;
const files = tsFiles('test');
for (const file of files) {
  const out = join(OUT, file.replace(/\.ts$/, '.js'));
  const r = ts.transpileModule(readFileSync(file, 'utf8'), { compilerOptions, fileName: file, reportDiagnostics: true });
  for (const d of r.diagnostics ?? []) {
    failed++;
    process.stderr.write(`${file}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}\n`);
  }
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(out, r.outputText);
  // The map names its source relative to the output, so stack traces point at test/…/*.ts.
  const map = JSON.parse(r.sourceMapText);
  map.file = basename(out);
  map.sources = [relative(dirname(out), file)];
  writeFileSync(`${out}.map`, JSON.stringify(map));
}
if (failed > 0) process.exit(1);

// Bundles (test/helpers/bundle.ts says why): the unit test files, a few per tap process, each file in a subtest named
// for it. A file stays alone (run as its own process) when it changes what the process shares with the files run
// after it, or waits (run-all.sh's WAITING run), or is slow: the reason per file.
const ALONE = {
  'test/unit/docdb-store.test.ts': 'waits on FerretDB (run-all.sh WAITING)',
  'test/unit/store-contract/docdb.test.ts': 'waits on FerretDB (run-all.sh WAITING)',
  // In api-5, one fresh-clone CI run of four got none of the notifications its receiver waits 20 s for at /writer;
  // alone, as before this session's bundling, it never failed. Kept alone until the cause is found.
  'test/api/subscriptions-owner-contract.test.ts': 'missed its notifications once in a bundle (cause not found)',
};
// The API files bundle only when their brokers all run in the test process (startBroker, on ephemeral ports) and
// they start no process or service of their own: the reason for each pattern that keeps one alone. A server of the
// file's own (a notification receiver, a @context origin) shares the process when it listens on port 0: bundle.ts
// fails the bundle, naming the file, if one leaves a socket, server or thread open.
const API_ALONE_IF = [
  [/spawnBroker|\bspawn\(|\bfork\(|execFile/, 'starts a process (a spawned broker, a script)'],
  [/\.listen\((?!0\b)[\w'"]/, 'listens on a port of its choosing'],
  [/process\.(env|on|once|exit)|globalThis|useFakeTimers|clock/, 'changes process-wide state'],
  [/tsdb|docdb|ferret|questdb|mosquitto|mqtt|modbus|distributed/i, 'waits on a service or on other brokers'],
  [/bench|auth-dsec\.|csource-subscriptions\./, 'waits (run-all.sh WAITING)'],
];
// The files run-all.sh runs in its WAITING run (its WAITING list, as `api/websocket`): never in a bundle as well.
const WAITING = new Set(
  /^WAITING=\(([^)]*)\)/m
    .exec(readFileSync('test/run-all.sh', 'utf8'))[1]
    .split(/\s+/)
    .filter(Boolean)
    .map((name) => `test/${name}.test.ts`),
);
const aloneApi = (f) =>
  (WAITING.has(f) && 'waits (run-all.sh WAITING)') ||
  API_ALONE_IF.find(([re]) => re.test(f) || re.test(readFileSync(f, 'utf8')))?.[1] ||
  ALONE[f];
// Files per bundle: a bundle's run stays well under tap's 120 s timeout (.taprc) under load.
const PER_BUNDLE = 10;
const tests = (dir) => files.filter((f) => f.startsWith(`test/${dir}/`) && f.endsWith('.test.ts') && !f.includes('/helpers/'));
const groups = [
  ['unit', tests('unit').filter((f) => !(f in ALONE) && !WAITING.has(f))],
  ['api', tests('api').filter((f) => !aloneApi(f))],
];
const bundled = groups.flatMap(([, g]) => g).sort();
const BUNDLES = join(OUT, 'test', 'bundles');
mkdirSync(BUNDLES, { recursive: true });
let count = 0;
for (const [dir, members] of groups)
  for (let i = 0; i * PER_BUNDLE < members.length; i++, count++) {
    const group = members.sort().slice(i * PER_BUNDLE, (i + 1) * PER_BUNDLE);
    const entries = group.map((f) => [f, relative(BUNDLES, join(OUT, f.replace(/\.ts$/, '.js')))]);
    writeFileSync(
      join(BUNDLES, `${dir}-${i + 1}.test.js`),
      `// Generated by test/helpers/compile-tests.js: ${group.length} test files in one tap process.\n` +
        `import { runBundle } from '../helpers/bundle.js';\n` +
        `await runBundle(import.meta.url, ${JSON.stringify(entries, null, 2)});\n`,
    );
  }
// run-all.sh runs the bundles in place of these (their compiled paths, one a line).
writeFileSync(join(BUNDLES, 'members.txt'), bundled.map((f) => join(OUT, f.replace(/\.ts$/, '.js')) + '\n').join(''));
process.stdout.write(
  `compile-tests: ${files.length} files into ${OUT}/test, ${bundled.length} of them in ` + `${count} bundles (${BUNDLES})\n`,
);
