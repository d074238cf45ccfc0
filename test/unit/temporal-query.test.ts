// The temporal query (CIM 009 v1.8 §4.11): timerel/timeAt/endTimeAt/timeproperty/lastN into a time window, and
// each bad combination refused with a 400 that names it.
import t from 'tap';
import { parseTemporalQuery } from '../../src/ngsild/temporal/temporal-query.js';
import { LdError } from '../../src/ngsild/problem.js';

const A = '2024-01-01T00:00:00Z';
const B = '2024-01-02T00:00:00Z';

t.test('without timerel every instance is selected on observedAt by default', async (t) => {
  t.same(parseTemporalQuery({}), { timeproperty: 'observedAt' });
});

t.test('before is [-inf, timeAt), after is [timeAt, +inf), between is [timeAt, endTimeAt)', async (t) => {
  t.same(parseTemporalQuery({ timerel: 'before', timeAt: A }).window, { timeproperty: 'observedAt', to: Date.parse(A) });
  t.same(parseTemporalQuery({ timerel: 'after', timeAt: A, timeproperty: 'createdAt' }).window, {
    timeproperty: 'createdAt',
    from: Date.parse(A),
  });
  t.same(parseTemporalQuery({ timerel: 'between', timeAt: A, endTimeAt: B }).window, {
    timeproperty: 'observedAt',
    from: Date.parse(A),
    to: Date.parse(B),
  });
});

t.test('a date-time without zone is UTC, a date alone its midnight, an offset is honoured', async (t) => {
  t.equal(parseTemporalQuery({ timerel: 'after', timeAt: '2024-01-01T00:00:00' }).from, Date.parse(A));
  t.equal(parseTemporalQuery({ timerel: 'after', timeAt: '2024-01-01' }).from, Date.parse(A));
  t.equal(parseTemporalQuery({ timerel: 'after', timeAt: '2024-01-01T02:00:00+02:00' }).from, Date.parse(A));
});

t.test("an offset whose '+' an unencoded URL turned into a blank is read as the offset", async (t) => {
  t.equal(parseTemporalQuery({ timerel: 'after', timeAt: '2024-01-01T02:00:00 02:00' }).from, Date.parse(A));
  t.equal(
    parseTemporalQuery({ timerel: 'between', timeAt: '2024-01-01T02:00:00.000 02:00', endTimeAt: '2024-01-02T01:00:00 01:00' }).to,
    Date.parse(B),
  );
  t.throws(
    () => parseTemporalQuery({ timerel: 'after', timeAt: '2024-01-01 02:00' }),
    { kind: 'BadRequestData' },
    'a blank anywhere else is still refused',
  );
  t.throws(() => parseTemporalQuery({ timerel: 'after', timeAt: '2024-01-01T02:00:00  02:00' }), { kind: 'BadRequestData' });
});

t.test('lastN is a positive integer, from text or number', async (t) => {
  t.equal(parseTemporalQuery({ lastN: '5' }).lastN, 5);
  t.equal(parseTemporalQuery({ lastN: 7 }).lastN, 7);
});

t.test('bad combinations and values are 400 BadRequestData', async (t) => {
  const bad: Array<[Parameters<typeof parseTemporalQuery>[0], RegExp]> = [
    [{ timerel: 'before' }, /needs timeAt/],
    [{ timerel: 'between', timeAt: A }, /needs endTimeAt/],
    [{ timerel: 'between', timeAt: B, endTimeAt: A }, /not before endTimeAt/],
    [{ timerel: 'between', timeAt: A, endTimeAt: A }, /not before endTimeAt/],
    [{ timerel: 'after', timeAt: A, endTimeAt: B }, /only for timerel=between/],
    [{ timeAt: A }, /need timerel/],
    [{ endTimeAt: A }, /need timerel/],
    [{ timerel: 'BEFORE', timeAt: A }, /timerel/],
    [{ timerel: 'after', timeAt: '2024-01-32T00:00:00Z' }, /timeAt/],
    [{ timerel: 'after', timeAt: '2024-01-01T25:00:00Z' }, /timeAt/],
    [{ timerel: 'after', timeAt: '1704067200' }, /timeAt/],
    [{ timerel: 'between', timeAt: A, endTimeAt: 'tomorrow' }, /endTimeAt/],
    [{ timeproperty: 'expiresAt' }, /timeproperty/],
    [{ lastN: '0' }, /lastN/],
    [{ lastN: '1.5' }, /lastN/],
    [{ lastN: -1 }, /lastN/],
  ];
  for (const [input, detail] of bad) {
    try {
      parseTemporalQuery(input);
      t.fail(`accepted ${JSON.stringify(input)}`);
    } catch (e) {
      t.ok(e instanceof LdError && e.kind === 'BadRequestData', JSON.stringify(input));
      t.match((e as Error).message, detail, JSON.stringify(input));
    }
  }
});
