// What a call threw, as a short comparable string, for tests of pure modules that refuse bad input with an LdError.
import type { Test } from 'tap';
import { LdError, ErrorStatus, type ErrorTypeName } from '../../../src/ngsild/problem.js';

/** `'<kind> <status>'` of the LdError `fn` throws, `'foreign …'` for any other throw, `'no error'` when it returns. */
export function kindOf(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    return err instanceof LdError ? `${err.kind} ${err.status}` : `foreign ${String(err)}`;
  }
  return 'no error';
}

/** Asserts that `p` rejects with an LdError of `kind`, the status of that kind, and a detail matching `fragment`. */
export async function rejectsLd(t: Test, p: Promise<unknown>, kind: ErrorTypeName, fragment: string | RegExp): Promise<void> {
  try {
    await p;
    t.fail(`resolved, expected ${kind}`);
  } catch (e) {
    t.ok(e instanceof LdError, 'an LdError');
    t.equal((e as LdError).kind, kind);
    t.equal((e as LdError).status, ErrorStatus[kind]);
    t.match((e as LdError).detail, fragment);
  }
}
