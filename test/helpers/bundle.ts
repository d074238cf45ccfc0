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

/**
 * The handles a file may not leave open to the files after it: sockets and servers (a receiver, a broker's health
 * port, a client connection) and threads, such as keep the process alive. The API files listen on ephemeral ports and
 * share a process only if they close what they open; a file that does not fails its bundle here, named, instead of
 * disturbing the files after it.
 */
const HANDLES = new Set(['TCPServerWrap', 'TCPSocketWrap', 'PipeServerWrap', 'UDPWrap', 'Worker', 'MessagePort']);

function openHandles(): Map<string, number> {
  const counts = new Map<string, number>();
  for (const type of process.getActiveResourcesInfo()) if (HANDLES.has(type)) counts.set(type, (counts.get(type) ?? 0) + 1);
  return counts;
}

/** The handles open now that were not before, given the closes in flight when a file ends up to a second to finish. */
async function leftOpen(before: Map<string, number>): Promise<string[]> {
  let left: string[] = [];
  for (let waited = 0; waited <= 1000; waited += 50) {
    left = [...openHandles()]
      .filter(([type, n]) => n > (before.get(type) ?? 0))
      .map(([type, n]) => `${n - (before.get(type) ?? 0)} ${type}`);
    if (left.length === 0) return left;
    await new Promise((r) => setTimeout(r, 50));
  }
  return left;
}

/** Runs each of `files` (source path, and the compiled module's path relative to the bundle) in a subtest of its own. */
export async function runBundle(from: string, files: [source: string, module: string][]): Promise<void> {
  // Each file has the time it has alone (.taprc's timeout, handed to the test process as TAP_TIMEOUT), so a file
  // that hangs fails by its name after it, and the bundle has their sum (a loaded machine stretches every file).
  const perFile = Number(process.env.TAP_TIMEOUT ?? '30') * 1000;
  t.setTimeout(perFile * files.length);
  for (const [source, module] of files) {
    const before = openHandles();
    await t.test(source, { timeout: perFile }, async (file: Test) => {
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
    const left = await leftOpen(before);
    if (left.length > 0) t.fail(`${source} leaves open: ${left.join(', ')} (test/helpers/bundle.ts HANDLES)`);
  }
}
