// `idPattern` (CIM 009 v1.8 §5.7.2, subscriptions' entities[].idPattern): a regular expression over entity ids,
// compiled with re2js so that matching time is linear in the id, whatever the pattern.
//
// The syntax is RE2's, which differs from ECMAScript and PCRE in what it leaves out: no backreferences (`\1`,
// `\k<name>`), no lookahead or lookbehind (`(?=`, `(?!`, `(?<=`, `(?<!`), no possessive or atomic groups, and
// repetition counts of at most 1000. Such patterns are refused with 400 BadRequestData rather than run slowly.
// The pattern matches anywhere in the id, as the common brokers do: `^urn:ngsi-ld:Car:` for a prefix,
// `^...$` for the whole id.

import { badRequest } from '../problem.js';
import { compileRe2 } from './re2.js';

export const ID_PATTERN_MAX_LENGTH = 2048;

export function compileIdPattern(pattern: string): (id: string) => boolean {
  if (pattern.length === 0) throw badRequest('idPattern: empty pattern');
  if (pattern.length > ID_PATTERN_MAX_LENGTH) throw badRequest(`idPattern: longer than ${ID_PATTERN_MAX_LENGTH} characters`);
  const re = compileRe2(pattern);
  if (typeof re === 'string') throw badRequest(`idPattern: invalid regular expression (${re})`);
  if (pattern === '.*') return () => true; // the usual "every id": no need to run the matcher
  return (id) => re.test(id);
}
