// Regular expressions of queries (`~=`, `!~=`, idPattern) compiled with re2js: matching is linear in the input,
// so a pattern such as `(a+)+$` cannot stall a worker the way a backtracking engine would.
//
// RE2 syntax, not ECMAScript's: no backreferences (`\1`), no lookaround (`(?=`, `(?!`, `(?<=`, `(?<!`), no
// possessive quantifiers, repetition counts at most 1000; inline flags are `(?i)`, `(?s)`, `(?m)`, `(?U)`.
// Patterns find a match anywhere in the value (anchor with `^...$` for a whole-value match).

import { RE2JS } from 're2js';

export type Re2 = RE2JS;

/** Compiles `pattern`, or returns the reason it is not a valid RE2 expression. */
export function compileRe2(pattern: string): Re2 | string {
  try {
    return RE2JS.compile(pattern);
  } catch (err) {
    // re2js throws RE2JSException subclasses (and, on pathological input, plain errors): any failure is the
    // client's pattern being unusable, never a broker fault.
    const message = err instanceof Error ? err.message : String(err);
    return message.length > 200 ? message.slice(0, 200) + '…' : message;
  }
}
