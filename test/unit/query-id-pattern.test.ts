import t from 'tap';
import { compileIdPattern, ID_PATTERN_MAX_LENGTH } from '../../src/ngsild/query/id-pattern.js';
import { LdError } from '../../src/ngsild/problem.js';
import { kindOf } from './helpers/errors.js';

t.test('an idPattern matches anywhere in the id unless anchored', async (t) => {
  const m = compileIdPattern('Car');
  t.equal(m('urn:ngsi-ld:Car:1'), true);
  t.equal(m('urn:ngsi-ld:Bus:1'), false);
  const anchored = compileIdPattern('^urn:ngsi-ld:Car:[0-9]+$');
  t.equal(anchored('urn:ngsi-ld:Car:12'), true);
  t.equal(anchored('urn:ngsi-ld:Car:12x'), false);
  t.equal(anchored('x:urn:ngsi-ld:Car:12'), false);
  t.equal(compileIdPattern('.*')(''), true);
  t.equal(compileIdPattern('(?i)^URN:NGSI-LD:car')('urn:ngsi-ld:Car:1'), true);
});

t.test('patterns RE2 cannot run are refused with 400 BadRequestData', async (t) => {
  for (const p of ['(', '[a-', 'a{2,1}', '(?=x)', '(?!x)', '(?<=x)a', '(a)\\1', 'a{1001}', '*a', '']) {
    try {
      compileIdPattern(p);
      t.fail(`${p} compiled`);
    } catch (err) {
      t.ok(err instanceof LdError, p);
      t.equal((err as LdError).kind, 'BadRequestData', p);
      t.equal((err as LdError).status, 400, p);
      t.match((err as LdError).detail, /^idPattern: /, p);
    }
  }
  t.equal(
    kindOf(() => compileIdPattern('a'.repeat(ID_PATTERN_MAX_LENGTH + 1))),
    'BadRequestData 400',
  );
});

t.test('a catastrophic-backtracking pattern over a long non-matching id completes', async (t) => {
  const id = 'urn:' + 'a'.repeat(100000) + 'b';
  t.equal(compileIdPattern('^urn:(a+)+$')(id), false);
  t.equal(compileIdPattern('(a|aa)+$')(id), false);
  t.equal(compileIdPattern('^urn:(a+)+b$')(id), true);
  t.equal(compileIdPattern('(x+x+)+y')('x'.repeat(50000)), false);
});
