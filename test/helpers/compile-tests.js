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
process.stdout.write(`compile-tests: ${files.length} files into ${OUT}/test\n`);
