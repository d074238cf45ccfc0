// Runs a group of compiled test files in ONE tap process (the bundles test/helpers/compile-tests.js writes into
// dist/test/bundles/): a test process costs about 0.2 CPU-s for tap's own start and 0.25 to import the broker's
// modules, paid once per bundle instead of once per file. Each file runs inside a subtest named for its source
// (`test/unit/foo.test.ts`, which a developer runs alone with `npx tap`), one file after the other: while a file's
// module is evaluated, the root `t` it imports forwards the calls that build its tests to that subtest, so its
// tests, hooks and fixtures belong to it (a top-level t.teardown runs when that file's tests end, not at the end of
// the bundle) and a failure is reported under the file's name. run-all.sh counts a bundle's test points one level
// deeper than a file's.
import t, { type Test } from 'tap';

/** The methods of the root `t` a test file calls at its top level: to build its tests, and the assertions some make
 * there (dsec-entity-hook's `t.ok(await waitFor(…))`), so that they count as that file's. */
const FORWARDED = [
  ...['test', 'todo', 'skip', 'before', 'after', 'beforeEach', 'afterEach', 'teardown', 'testdir', 'plan', 'comment'],
  ...['pass', 'fail', 'ok', 'notOk', 'equal', 'not', 'same', 'notSame', 'strictSame', 'match', 'has', 'type'],
  ...['throws', 'doesNotThrow', 'rejects', 'resolves', 'resolveMatch', 'error'],
] as const;

/** Runs each of `files` (source path, and the compiled module's path relative to the bundle) in a subtest of its own. */
export async function runBundle(from: string, files: [source: string, module: string][]): Promise<void> {
  for (const [source, module] of files) {
    await t.test(source, async (file: Test) => {
      for (const m of FORWARDED) {
        const own = (file as unknown as Record<string, (...a: unknown[]) => unknown>)[m];
        Object.defineProperty(t, m, { configurable: true, writable: true, value: (...a: unknown[]) => own.apply(file, a) });
      }
      try {
        await import(new URL(module, from).href);
      } finally {
        for (const m of FORWARDED) delete (t as unknown as Record<string, unknown>)[m];
      }
    });
  }
}
