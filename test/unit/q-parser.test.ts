import t from 'tap';
import { parseQ, printQ, Q_MAX_DEPTH, Q_MAX_LENGTH, type QNode, type QPath } from '../../src/ngsild/query/q-parser.js';
import { LdError } from '../../src/ngsild/problem.js';

const p = (attr: string[], compound: string[] = []): QPath => ({ attr, compound });

function errorOf(text: string): LdError {
  try {
    parseQ(text);
  } catch (err) {
    if (err instanceof LdError) return err;
    throw err;
  }
  throw new Error(`parseQ(${JSON.stringify(text)}) did not throw`);
}

t.test('a bare attribute name is an existence term and !name a non-existence term', async (t) => {
  t.same(parseQ('temperature'), { kind: 'exists', path: p(['temperature']) });
  t.same(parseQ('!temperature'), { kind: 'notExists', path: p(['temperature']) });
  t.same(parseQ('!a.b[c]'), { kind: 'notExists', path: p(['a', 'b'], ['c']) });
});

t.test('each comparison operator parses to its own op', async (t) => {
  for (const op of ['==', '!=', '>', '>=', '<', '<='] as const) {
    t.same(parseQ(`speed${op}50`), { kind: 'compare', path: p(['speed']), op, value: { kind: 'number', value: 50 } }, op);
  }
});

t.test('~= and !~= parse to match terms holding the pattern text', async (t) => {
  t.same(parseQ('name~=^Sensor[0-9]+$'), { kind: 'match', path: p(['name']), negated: false, pattern: '^Sensor[0-9]+$' });
  t.same(parseQ('name!~=x'), { kind: 'match', path: p(['name']), negated: true, pattern: 'x' });
  t.same(parseQ('name~="a;b|c"'), { kind: 'match', path: p(['name']), negated: false, pattern: 'a;b|c' });
});

t.test('a bare pattern ends at a top-level ; | or ) but keeps its own groups and classes', async (t) => {
  t.same(parseQ('n~=(x|y)z;b'), {
    kind: 'and',
    terms: [
      { kind: 'match', path: p(['n']), negated: false, pattern: '(x|y)z' },
      { kind: 'exists', path: p(['b']) },
    ],
  });
  t.same(parseQ('(n~=[;|)]+)'), { kind: 'match', path: p(['n']), negated: false, pattern: '[;|)]+' });
  t.same(parseQ('n~=a\\;b'), { kind: 'match', path: p(['n']), negated: false, pattern: 'a\\;b' });
  t.same(parseQ('n~=a|b'), {
    kind: 'or',
    terms: [
      { kind: 'match', path: p(['n']), negated: false, pattern: 'a' },
      { kind: 'exists', path: p(['b']) },
    ],
  });
});

t.test('literals: numbers, strings with escapes, booleans, dateTime, date, time, URIs', async (t) => {
  const v = (q: string) => (parseQ(q) as Extract<QNode, { kind: 'compare' }>).value;
  t.same(v('a==-12.5e2'), { kind: 'number', value: -1250 });
  t.same(v('a==0'), { kind: 'number', value: 0 });
  t.same(v('a=="x\\"y\\\\z\\u00e9\\n"'), { kind: 'string', value: 'x"y\\zé\n' });
  t.same(v('a=="a;b|c)"'), { kind: 'string', value: 'a;b|c)' });
  t.same(v('a==true'), { kind: 'boolean', value: true });
  t.same(v('a!=false'), { kind: 'boolean', value: false });
  t.same(v('a>=2017-12-24T12:00:00Z'), { kind: 'dateTime', value: '2017-12-24T12:00:00Z' });
  t.same(v('a>=2017-12-24T12:00:00.123+02:00'), { kind: 'dateTime', value: '2017-12-24T12:00:00.123+02:00' });
  t.same(v('a<2017-12-24'), { kind: 'date', value: '2017-12-24' });
  t.same(v('a<12:30:00Z'), { kind: 'time', value: '12:30:00Z' });
  t.same(v('a==urn:ngsi-ld:OffStreetParking:Downtown1'), { kind: 'uri', value: 'urn:ngsi-ld:OffStreetParking:Downtown1' });
  t.same(v('a==https://example.org/a.b?c=d#e'), { kind: 'uri', value: 'https://example.org/a.b?c=d#e' });
  t.same(v('a=="urn:ngsi-ld:X:1"'), { kind: 'string', value: 'urn:ngsi-ld:X:1' });
});

t.test('== and != take value lists and ranges of one kind', async (t) => {
  const v = (q: string) => (parseQ(q) as Extract<QNode, { kind: 'compare' }>).value;
  t.same(v('a==1,2,3'), { kind: 'list', items: [1, 2, 3].map((value) => ({ kind: 'number', value })) });
  t.same(v('a!="red","black",true,urn:x:y'), {
    kind: 'list',
    items: [
      { kind: 'string', value: 'red' },
      { kind: 'string', value: 'black' },
      { kind: 'boolean', value: true },
      { kind: 'uri', value: 'urn:x:y' },
    ],
  });
  t.same(v('a==1..5'), { kind: 'range', min: { kind: 'number', value: 1 }, max: { kind: 'number', value: 5 } });
  t.same(v('a==1.5..2.5'), { kind: 'range', min: { kind: 'number', value: 1.5 }, max: { kind: 'number', value: 2.5 } });
  t.same(v('a!="a".."f"'), { kind: 'range', min: { kind: 'string', value: 'a' }, max: { kind: 'string', value: 'f' } });
  t.same(v('a==2020-01-01T00:00:00Z..2021-01-01T00:00:00Z'), {
    kind: 'range',
    min: { kind: 'dateTime', value: '2020-01-01T00:00:00Z' },
    max: { kind: 'dateTime', value: '2021-01-01T00:00:00Z' },
  });
});

t.test('attribute paths: dotted sub-attributes, compound members in one or several brackets', async (t) => {
  const path = (q: string) => (parseQ(q) as Extract<QNode, { kind: 'compare' }>).path;
  t.same(path('temperature.observedAt>=2017-12-24T12:00:00Z'), p(['temperature', 'observedAt']));
  t.same(path('address[city]=="Berlin"'), p(['address'], ['city']));
  t.same(path('sensor.rawdata[airquality.particulate]==40'), p(['sensor', 'rawdata'], ['airquality', 'particulate']));
  t.same(path('a[b][c]==1'), p(['a'], ['b', 'c']));
  t.same(path('a.b[c]==1'), p(['a', 'b'], ['c']));
  t.same(path('name[en]=="red"'), p(['name'], ['en']));
  t.same(path('name[*]=="red"'), p(['name'], ['*']));
  t.same(path('list[0]==1'), p(['list'], ['0']));
  t.same(path('température_2==1'), p(['température_2']));
});

t.test('compact and absolute IRIs name attributes; %2E stands for a dot inside a name', async (t) => {
  const path = (q: string) => (parseQ(q) as Extract<QNode, { kind: 'compare' }>).path;
  t.same(path('ex:temp>1'), p(['ex:temp']));
  t.same(path('https://example%2Eorg/ns#temp>1'), p(['https://example.org/ns#temp']));
  t.same(path('https://example%2eorg/temp.https://example%2Eorg/sub>1'), p(['https://example.org/temp', 'https://example.org/sub']));
  t.equal(printQ(parseQ('https://example%2eorg/temp>1')), 'https://example%2Eorg/temp>1');
});

t.test('AND binds tighter than OR; parentheses group; nested groups are kept', async (t) => {
  const e = (n: string): QNode => ({ kind: 'exists', path: p([n]) });
  t.same(parseQ('a;b|c'), { kind: 'or', terms: [{ kind: 'and', terms: [e('a'), e('b')] }, e('c')] });
  t.same(parseQ('a|b;c'), { kind: 'or', terms: [e('a'), { kind: 'and', terms: [e('b'), e('c')] }] });
  t.same(parseQ('a;(b|c)'), { kind: 'and', terms: [e('a'), { kind: 'or', terms: [e('b'), e('c')] }] });
  t.same(parseQ('((a))'), e('a'));
  t.same(parseQ('(a;b);c'), { kind: 'and', terms: [{ kind: 'and', terms: [e('a'), e('b')] }, e('c')] });
  t.same(parseQ('a;b;c'), { kind: 'and', terms: [e('a'), e('b'), e('c')] });
});

t.test('the spec examples of §4.9 parse and print back to themselves', async (t) => {
  for (const q of [
    'temperature==20',
    'brandName!="Mercedes"',
    'isParked=="urn:ngsi-ld:OffStreetParking:Downtown1"',
    'speed>50;brandName!="Mercedes"',
    'isMonitoredBy',
    '((speed>50|rpm>3000);brandName=="Mercedes")',
    '(temperature>=20;temperature<=25)|capacity<=10',
    'temperature.observedAt>=2017-12-24T12:00:00Z',
    'address[city]=="Berlin"',
    'sensor.rawdata[airquality.particulate]==40',
  ]) {
    const tree = parseQ(q);
    t.same(parseQ(printQ(tree)), tree, q);
  }
  t.equal(printQ(parseQ('((speed>50|rpm>3000);brandName=="Mercedes")')), '(speed>50|rpm>3000);brandName=="Mercedes"');
});

t.test('printQ writes patterns quoted and numbers in JSON form', async (t) => {
  t.equal(printQ(parseQ('a~=x;b==1e3')), 'a~="x";b==1000');
  t.equal(printQ(parseQ('a!~="q\\"r"')), 'a!~="q\\"r"');
});

t.test('unparsable expressions answer InvalidRequest naming the position and what was expected', async (t) => {
  const cases: [string, number, string][] = [
    ['a==', 3, 'expected a value'],
    ['a=1', 1, 'expected an operator'],
    ['a>true', 2, 'true, false and URIs only go with == and !='],
    ['a>urn:x:y', 2, 'true, false and URIs only go with == and !='],
    ['a>1,2', 3, 'a value list only goes with == and !='],
    ['a<1..2', 3, 'a range only goes with == and !='],
    ['a==1..true', 6, 'expected a number, string'],
    ['a==1.."z"', 6, 'expected a number as the upper bound'],
    ['a==true..false', 3, 'a range bound must be'],
    ['a==urn:x:y,1..2', 12, 'a value list cannot hold a range'],
    ['a==1..2,3', 7, 'a value list cannot hold a range'],
    ['a==1..2..3', 7, "expected ';', '|', ')' or the end"],
    ['(a', 2, "expected ')'"],
    ['a)', 1, "unbalanced ')'"],
    ['()', 1, 'expected an attribute name'],
    ['a;', 2, 'expected an attribute name'],
    ['|a', 0, 'expected an attribute name'],
    ['a||b', 2, 'expected an attribute name'],
    ['1a', 0, 'expected an attribute name'],
    ['a.', 2, "expected an attribute name after '.'"],
    ['a..b', 2, "expected an attribute name after '.'"],
    ['a[]', 2, "expected a member name after '['"],
    ['a[b', 3, "expected '.' or ']'"],
    ['a[b].c', 4, 'expected an operator'],
    ['a=="x', 3, 'unterminated string'],
    ['a=="\\q"', 4, 'invalid escape'],
    ['a=="\\u12"', 4, 'invalid \\u escape'],
    ['a=="\u0001"', 4, 'control character'],
    ['a==Male', 3, 'expected a value'],
    ['a==1a', 4, 'or the end after a value'],
    ['a==1e999', 3, 'number out of range'],
    ['a==2021-02-30', 3, 'invalid date'],
    ['a==2021-01-01T25:00:00Z', 3, 'invalid dateTime'],
    ['a==24:00:00Z', 3, 'invalid time'],
    ['a == 1 2', 6, 'or the end after a value'],
    ['a b', 2, 'expected an operator'],
    ['a == "x" y', 9, "expected ',', '..', ';', '|', ')' or the end"],
    ['a>1"', 3, 'or the end after a value'],
    ['!a==1', 2, 'after a non-existence term'],
    ['a~=', 3, 'expected a regular expression'],
    ['a~=(', 3, 'invalid regular expression'],
    ['a~=x(?=y)', 3, 'invalid regular expression'],
    ['a~=(a)\\1', 3, 'invalid regular expression'],
    ['a~=[x', 3, "unterminated '['"],
    ['a~="x"y', 6, "expected ';', '|', ')' or the end"],
    [' ', 1, 'expected an attribute name'],
    ['a\n==1', 1, 'expected an operator'],
  ];
  for (const [q, pos, what] of cases) {
    const err = errorOf(q);
    t.equal(err.kind, 'InvalidRequest', q);
    t.equal(err.status, 400, q);
    t.match(err.detail, what, q);
    t.match(err.detail, new RegExp(`^q: .* at position ${pos}$`), q);
  }
});

t.test('blanks around operators, values, ; | , .. and parentheses are skipped, as Orion-LD does; strings keep theirs', async (t) => {
  t.same(parseQ(' temperature > 0 '), parseQ('temperature>0'));
  t.same(parseQ('a == 1 ; ( b != "x y" | ! c )'), parseQ('a==1;(b!="x y"|!c)'));
  t.same(parseQ('a == 1 , 2 ,3'), parseQ('a==1,2,3'));
  t.same(parseQ('a == 1 .. 5'), parseQ('a==1..5'));
  t.same(parseQ('a\t>=\t2020-01-01T00:00:00Z\t'), parseQ('a>=2020-01-01T00:00:00Z'));
  t.same(parseQ('a == urn:x:y | b'), parseQ('a==urn:x:y|b'));
  t.same(parseQ('n ~= ^a b$ ; c'), parseQ('n~=^a b$;c'), 'a bare pattern keeps its inner blanks, not those around it');
  t.same((parseQ('a == " x "') as Extract<QNode, { kind: 'compare' }>).value, { kind: 'string', value: ' x ' });
  t.same((parseQ('n ~= " y "') as Extract<QNode, { kind: 'match' }>).pattern, ' y ', 'a quoted pattern keeps them');
});

t.test('an empty q is refused', async (t) => {
  t.equal(errorOf('').kind, 'InvalidRequest');
});

t.test('linked-entity paths (attr{...}) answer OperationNotSupported', async (t) => {
  const err = errorOf('sensor{humidity}==40');
  t.equal(err.kind, 'OperationNotSupported');
  t.match(err.detail, 'position 6');
});

t.test('input longer than the bound is refused before parsing', async (t) => {
  const long = Array.from({ length: Q_MAX_LENGTH }, () => 'a').join('');
  t.same(parseQ(long), { kind: 'exists', path: p([long]) });
  const err = errorOf(long + 'a');
  t.equal(err.kind, 'InvalidRequest');
  t.match(err.detail, `longer than ${Q_MAX_LENGTH}`);
});

t.test('parentheses nested beyond the depth bound answer 400, up to it they parse', async (t) => {
  const nest = (n: number) => '('.repeat(n) + 'a' + ')'.repeat(n);
  t.same(parseQ(nest(Q_MAX_DEPTH)), { kind: 'exists', path: p(['a']) });
  const err = errorOf(nest(Q_MAX_DEPTH + 1));
  t.equal(err.kind, 'InvalidRequest');
  t.match(err.detail, `nested deeper than ${Q_MAX_DEPTH} at position ${Q_MAX_DEPTH}`);
  t.equal(errorOf('('.repeat(4000)).kind, 'InvalidRequest');
});
